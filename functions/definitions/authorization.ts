/**
 * The authorization matrix (docs/security.md): what each kind of credential gets on each route, derived from the
 * route table's `auth`, `scopes` and `roles`. `docs/security.md` holds it as a table (`npm run security-matrix`
 * writes it, `--check` fails when it is stale), and an e2e test sends every route × credential over HTTP and
 * expects what the table says.
 */
import type { CallerScope, OperatorRole } from '../domain/access/principals';
import { ROUTES, type RouteDefinition } from './routes';

export type CredentialKind =
  | 'none'
  | 'storefront_a'
  | 'storefront_b'
  | 'scopeless_a'
  | 'chargeback_a'
  | 'partner_a'
  | 'partner_b'
  | 'author'
  | 'approver'
  | 'endpoint_admin'
  | 'auditor'
  | 'machine';

export interface CredentialColumn {
  readonly kind: CredentialKind;
  readonly title: string;
  readonly describe: string;
  /** What the credential is: a caller key's scopes, an operator's roles, a partner key, or nothing. */
  readonly holds:
    | { readonly type: 'none' }
    | { readonly type: 'caller'; readonly scopes: readonly CallerScope[] }
    | { readonly type: 'partner' }
    | { readonly type: 'operator'; readonly roles: readonly OperatorRole[]; readonly machine?: boolean };
}

export const CREDENTIALS: readonly CredentialColumn[] = [
  { kind: 'none', title: 'none', describe: 'no credential', holds: { type: 'none' } },
  {
    kind: 'storefront_a',
    title: 'store A',
    describe: "tenant A's storefront key: prices:read quotes:write receipts:read refunds:write",
    holds: { type: 'caller', scopes: ['prices:read', 'quotes:write', 'receipts:read', 'refunds:write'] },
  },
  {
    kind: 'storefront_b',
    title: 'store B',
    describe: "tenant B's storefront key (same scopes, another tenant)",
    holds: { type: 'caller', scopes: ['prices:read', 'quotes:write', 'receipts:read', 'refunds:write'] },
  },
  {
    kind: 'scopeless_a',
    title: 'A, prices only',
    describe: "a key of tenant A with prices:read only (lacks every other route's scope)",
    holds: { type: 'caller', scopes: ['prices:read'] },
  },
  {
    kind: 'chargeback_a',
    title: 'PSP A',
    describe: "tenant A's payment provider: chargebacks:write only",
    holds: { type: 'caller', scopes: ['chargebacks:write'] },
  },
  {
    kind: 'partner_a',
    title: 'partner A',
    describe: 'partner key of an endpoint of tenant A',
    holds: { type: 'partner' },
  },
  {
    kind: 'partner_b',
    title: 'partner B',
    describe: 'partner key of an endpoint of tenant B',
    holds: { type: 'partner' },
  },
  {
    kind: 'author',
    title: 'author',
    describe: 'operator with role author',
    holds: { type: 'operator', roles: ['author'] },
  },
  {
    kind: 'approver',
    title: 'approver',
    describe: 'operator with role approver',
    holds: { type: 'operator', roles: ['approver'] },
  },
  {
    kind: 'endpoint_admin',
    title: 'endpoint admin',
    describe: 'operator with role endpoint_admin',
    holds: { type: 'operator', roles: ['endpoint_admin'] },
  },
  {
    kind: 'auditor',
    title: 'auditor',
    describe: 'operator with role auditor (read-only)',
    holds: { type: 'operator', roles: ['auditor'] },
  },
  {
    kind: 'machine',
    title: 'machine',
    describe: 'machine principal with role author (automation; never approves)',
    holds: { type: 'operator', roles: ['author'], machine: true },
  },
];

/**
 * `allowed`: the credential passes authorization (the answer is then the route's own: 2xx, or 400/404/409 for
 * what the request asks). `401`: not authenticated for this kind of route. `403`: authenticated, not permitted.
 */
export type Access = 'allowed' | 401 | 403;

/**
 * What `credential` gets on `route`. A refund's scope depends on its kind: the matrix sends a return, so the
 * payment provider's key (chargebacks only) is refused there; it records chargebacks (a test of its own).
 */
export const accessOf = (route: RouteDefinition, credential: CredentialColumn): Access => {
  const { holds } = credential;
  switch (route.auth) {
    case 'none':
      return 'allowed';
    case 'partner':
      return holds.type === 'partner' ? 'allowed' : 401;
    case 'api_key': {
      if (holds.type !== 'caller') return 401;
      const wanted = route.operation === 'refund' ? ['refunds:write'] : (route.scopes ?? []);
      return wanted.some((scope) => holds.scopes.includes(scope as CallerScope)) ? 'allowed' : 403;
    }
    case 'admin': {
      // A valid caller key is known but not an operator (403); a partner key is no operator credential (401).
      if (holds.type === 'caller') return 403;
      if (holds.type !== 'operator') return 401;
      const roles = holds.roles.filter((role) => !(holds.machine && role === 'approver'));
      return (route.roles ?? []).some((role) => roles.includes(role)) ? 'allowed' : 403;
    }
  }
};

const cell = (access: Access): string => (access === 'allowed' ? '✓' : String(access));

export const MATRIX_BEGIN = '<!-- authorization-matrix:begin (npm run security-matrix) -->';
export const MATRIX_END = '<!-- authorization-matrix:end -->';

/** The matrix as a Markdown table between its markers (what docs/security.md holds). */
export const renderAuthorizationMatrix = (routes: readonly RouteDefinition[] = ROUTES): string => {
  const header = `| Route | Needs | ${CREDENTIALS.map((credential) => credential.title).join(' | ')} |`;
  const rule = `|---|---|${CREDENTIALS.map(() => ':-:').join('|')}|`;
  const rows = routes.map((route) => {
    const needs =
      route.auth === 'api_key'
        ? `key: ${(route.scopes ?? []).join(' or ')}`
        : route.auth === 'admin'
          ? `operator: ${(route.roles ?? []).join(' or ')}`
          : route.auth === 'partner'
            ? 'partner key'
            : 'nothing';
    const cells = CREDENTIALS.map((credential) => cell(accessOf(route, credential)));
    return `| \`${route.method} ${route.path}\` | ${needs} | ${cells.join(' | ')} |`;
  });
  return [MATRIX_BEGIN, header, rule, ...rows, MATRIX_END].join('\n');
};

/** The matrix read back from a document's table: route key → credential kind → access. */
export const parseAuthorizationMatrix = (markdown: string): Map<string, Map<CredentialKind, Access>> => {
  const start = markdown.indexOf(MATRIX_BEGIN);
  const end = markdown.indexOf(MATRIX_END);
  if (start < 0 || end < start) throw new Error('no authorization matrix between its markers');
  const lines = markdown
    .slice(start + MATRIX_BEGIN.length, end)
    .split('\n')
    .filter((line) => line.startsWith('| `'));
  const matrix = new Map<string, Map<CredentialKind, Access>>();
  for (const line of lines) {
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((text) => text.trim());
    const route = (cells[0] ?? '').replaceAll('`', '');
    const accesses = new Map<CredentialKind, Access>();
    CREDENTIALS.forEach((credential, index) => {
      const text = cells[index + 2];
      accesses.set(credential.kind, text === '✓' ? 'allowed' : (Number(text) as 401 | 403));
    });
    matrix.set(route, accesses);
  }
  return matrix;
};
