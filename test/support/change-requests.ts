import type { OperatorRole } from '../../functions/domain/access/principals';
import type { CatalogDocument } from '../../functions/schemas/catalog-document';

/**
 * Publishing over HTTP in tests: catalog data goes in only through a change request approved by two operators
 * other than its author (four-eyes), so tests that change the catalog open one and have two reviewers approve it.
 */
export interface TestOperator {
  readonly name: string;
  readonly token: string;
  readonly roles: readonly OperatorRole[];
  readonly machine?: boolean;
}

/** Reviewers that tests' local stacks accept besides `admin` (each with its own token). */
export const TEST_REVIEWERS: readonly TestOperator[] = [
  { name: 'alice', token: 'adm_test_alice_0123456789abcdef', roles: ['author', 'approver', 'auditor'] },
  { name: 'bob', token: 'adm_test_bob_0123456789abcdef0', roles: ['author', 'approver', 'auditor'] },
];

/** `admins` for `startLocalStack`: `admin` with the given token (every role but approver), then the reviewers. */
export const testAdmins = (adminToken: string): readonly TestOperator[] => [
  { name: 'admin', token: adminToken, roles: ['author', 'endpoint_admin', 'auditor'] },
  ...TEST_REVIEWERS,
];

export interface HttpAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

export const adminRequest = async (
  baseUrl: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<HttpAnswer> => {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
};

/**
 * Imports a whole catalog document as `admin`, then approves it as both reviewers (acknowledging whatever
 * guardrails it trips). Returns the published change request; throws with the answer when a step fails.
 */
export const publishCatalog = async (
  baseUrl: string,
  adminToken: string,
  document: unknown,
): Promise<HttpAnswer> => {
  const opened = await adminRequest(baseUrl, adminToken, 'POST', '/admin/catalog/import', document);
  if (opened.status !== 202)
    throw new Error(`import answered ${opened.status}: ${JSON.stringify(opened.body)}`);
  return approveByReviewers(baseUrl, opened.body);
};

/** Approves an open change request as both reviewers, acknowledging its guardrails. */
export const approveByReviewers = async (
  baseUrl: string,
  changeRequest: Record<string, unknown>,
): Promise<HttpAnswer> => {
  const crId = String(changeRequest.cr_id);
  const acknowledge = [
    ...new Set(
      ((changeRequest.guardrails as { code: string }[] | undefined) ?? []).map((finding) => finding.code),
    ),
  ];
  let answer: HttpAnswer = { status: 0, body: {} };
  for (const reviewer of TEST_REVIEWERS) {
    answer = await adminRequest(baseUrl, reviewer.token, 'POST', `/admin/change-requests/${crId}/approve`, {
      acknowledge,
    });
    if (answer.status !== 200)
      throw new Error(`approve answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  }
  return answer;
};

/**
 * A pricelist change request's payload from an exported catalog: the first item of the primary list at `price`
 * (the other sections dropped, as a pricelist change carries only the price lists).
 */
export const priceChangeOf = (
  exported: CatalogDocument & { effective_from?: string },
  price: string,
): { sku: string; payload: Record<string, unknown> } => {
  const {
    effective_from: _from,
    fx_rates: _fx,
    settlement_rates: _s,
    tax_rules: _t,
    promotions: _p,
    ...rest
  } = exported;
  const [primary, ...others] = rest.pricelists;
  const [first, ...items] = primary?.items ?? [];
  if (!primary || !first) throw new Error('the demo catalog has a primary price list');
  return {
    sku: first.sku_id,
    payload: {
      ...rest,
      pricelists: [{ ...primary, items: [{ ...first, base_price: price }, ...items] }, ...others],
    },
  };
};
