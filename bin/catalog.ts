/**
 * `npm run catalog -- <command>`: catalog changes through four-eyes change requests (C20, C23), and exports.
 * Run `npm run catalog -- help` for the commands.
 *
 * - `import <file>` opens a change request of kind `catalog` for a whole document (`POST /admin/catalog/import`);
 *   `request <kind> <payload.json>` one of any kind (`POST /admin/change-requests`; `patch <operations.json>` is
 *   `request patch`, its file the operations). Nothing is published until
 *   two operators other than the author approve it: `approve <cr_id>` (acknowledging every guardrail the change
 *   trips), the second approval publishes; `reject <cr_id> --comment …` closes it.
 * - `change-requests` (alias `list`) and `show <cr_id>` read them; `release <cr_id>` prints the signed release
 *   (DSSE envelope, `GET /audit/releases/{cr_id}`) of a published one; `export` a catalog revision.
 *
 * Talks to the admin routes of `API_URL` (default `http://127.0.0.1:3000`, the local stack) through the admin
 * client (bin/admin-client.ts): `Authorization: Bearer <ADMIN_TOKEN>` locally, the token defaulting to
 * `admin_token` in `<DATA_DIR>/credentials.json` (`DATA_DIR` defaults to `.local/data`). `--as <name>` (or
 * `ADMIN_AS`) acts as another local operator with its own token (`admin_tokens[name]` in the same file, which the
 * local stack generates for the reviewers `alice` and `bob`; ADMIN_TOKEN is then not used). Against a deployed
 * API (C7), IAM SigV4 signed requests with `--sigv4` or `API_AUTH=sigv4`: the operator is the IAM principal of
 * the AWS credentials, and `--as` is refused.
 *
 * Prints the result JSON on stdout; for a change request, a short summary on stderr (counts, guardrails, the
 * next step). A refusal prints the error with its description, details and, for 400, every problem with its
 * path, on stderr (with a hint for a refused approval). Exit codes as every tool in bin/ (bin/cli.ts): 0 done, 1
 * refused or failed, 2 a wrong command line (the message and the usage on stderr).
 */
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { MAX_REQUEST_BODY_BYTES } from '../functions/definitions/limits';
import { type ChangeRequestStatus, REQUIRED_APPROVALS } from '../functions/domain/change-control/approvals';
import { GUARDRAIL_CODES, type GuardrailCode } from '../functions/domain/change-control/guardrails';
import { CHANGE_KINDS, type ChangeKind } from '../functions/ports/change-requests';
import {
  ADMIN_CLI_ENVIRONMENT,
  AdminApiError,
  type AdminClient,
  type ConnectOptions,
  localOperators,
  OPERATOR_NAME,
  operatorIdentity,
  pageLimit,
  runAdminCli,
} from './admin-client';
import {
  atMost,
  type CliIo,
  type CliOptions,
  type CommandParser,
  commaList,
  type Help,
  isHelp,
  oneOf,
  parseCommandLine,
  parseLine,
  runMain,
  UsageError,
} from './cli';

// What the other CLIs (bin/verify-receipt.ts) and the tests import from here.
export {
  adminToken,
  type CliIo,
  DEFAULT_API_URL,
  DEFAULT_DATA_DIR,
  describeFailure,
  isDeployed,
  UsageError,
} from './admin-client';

/** A change request id: `cr_` and a ULID (Crockford base 32). */
export const CR_ID = /^cr_[0-9A-HJKMNP-TV-Z]{26}$/;

/** The statuses `change-requests --status` filters on (every status, checked by the compiler). */
const STATUS_SET: Readonly<Record<ChangeRequestStatus, true>> = {
  pending_approval: true,
  approved: true,
  published: true,
  rejected: true,
  stale: true,
};
export const CHANGE_REQUEST_STATUSES = Object.keys(STATUS_SET) as readonly ChangeRequestStatus[];

/** Longest `--comment` / `--note` the API takes. */
const MAX_TEXT = 2000;

export type Command = (
  | { readonly kind: 'import'; readonly file: string }
  | { readonly kind: 'export'; readonly revision?: number; readonly out?: string }
  | {
      readonly kind: 'request';
      readonly change: ChangeKind;
      readonly file: string;
      readonly effectiveFrom?: string;
      readonly note?: string;
    }
  | {
      readonly kind: 'change-requests';
      readonly status?: ChangeRequestStatus;
      readonly limit?: number;
      readonly cursor?: string;
    }
  | { readonly kind: 'show'; readonly crId: string }
  | {
      readonly kind: 'approve';
      readonly crId: string;
      readonly comment?: string;
      readonly acknowledge?: readonly GuardrailCode[];
    }
  | { readonly kind: 'reject'; readonly crId: string; readonly comment: string }
  | { readonly kind: 'release'; readonly crId: string; readonly out?: string }
) & {
  /** `--sigv4`: sign the requests with IAM SigV4 (a deployed API). */
  readonly sigv4?: true;
  /** `--as <name>`: act as this local operator (its own token). */
  readonly as?: string;
};

export const USAGE = `usage: npm run catalog -- <command> [options] [--as name | --sigv4]

change requests (nothing is published until two operators other than the author approve):
  npm run catalog -- import <file.json>
      opens a change request of kind catalog for the whole document (it may carry effective_from)
  npm run catalog -- request <kind> <payload.json> [--effective-from ISO] [--note text]
      kinds: ${CHANGE_KINDS.join(', ')}
      the payload is in the import format: a whole document for catalog, else only the kind's sections;
      for patch, the operations ([{"op":"set","path":"/pricelists/<id>/items/<sku>","value":{…}}, …])
  npm run catalog -- patch <operations.json> [--effective-from ISO] [--note text]
      the same as request patch: set or remove single entries named by id (C30)
  npm run catalog -- change-requests [--status S] [--limit N] [--cursor C]      (alias: list)
      statuses: ${CHANGE_REQUEST_STATUSES.join(', ')}; --limit 1 to 200 (default 50)
  npm run catalog -- show <cr_id>
  npm run catalog -- approve <cr_id> [--comment text] [--acknowledge code,code]
      the second approval publishes the change; each approver acknowledges every guardrail it trips
      (codes: ${GUARDRAIL_CODES.join(', ')})
  npm run catalog -- reject <cr_id> --comment text
  npm run catalog -- release <cr_id> [--out file.json]
      the signed release (DSSE envelope) of a published change request

catalog revisions:
  npm run catalog -- export [--revision N] [--out file.json]

operators:
  --as <name>  act as another local operator with its own token: admin_tokens[name] in
               $DATA_DIR/credentials.json (the local stack generates alice and bob; admin: ADMIN_TOKEN,
               else admin_token). Not with --sigv4 or a deployed API.
  --sigv4      sign with IAM SigV4 (a deployed API): the operator is the IAM principal of your AWS credentials
  e.g. import as admin, then approve --as alice, then approve --as bob

cr ids: cr_ and 26 characters (Crockford base 32); times: ISO 8601 (2026-12-01T00:00:00Z, 2026-12-01),
sent as UTC with milliseconds

${ADMIN_CLI_ENVIRONMENT}
  ADMIN_AS     like --as (--as wins)
  ADMIN_TOKENS name:token,… when the local stack runs with it: the operators' tokens for --as`;

// ---------------------------------------------------------------------------------------------------------
// Arguments

/** `--as` and `--sigv4`, anywhere on the line. */
const GLOBAL_OPTIONS = {
  as: { type: 'string', value: 'an operator name (admin, alice, bob, …)' },
  sigv4: { type: 'boolean' },
} as const satisfies CliOptions;

/** The one change request id of `<verb> <cr_id>`. */
const crIdOf = (positionals: readonly string[], verb: string): string => {
  const [crId] = atMost(positionals, 1);
  if (crId === undefined) throw new UsageError(`${verb} needs a change request id (cr_…)`);
  if (!CR_ID.test(crId))
    throw new UsageError(`${crId} is not a change request id (cr_ and 26 characters of Crockford base 32)`);
  return crId;
};

/** A `--comment` / `--note`: trimmed, not empty, at most 2000 characters. */
const textOf = (value: string | undefined, option: string): string | undefined => {
  if (value === undefined) return undefined;
  const text = value.trim();
  if (text.length === 0) throw new UsageError(`${option} must not be empty`);
  if (text.length > MAX_TEXT) throw new UsageError(`${option} is longer than ${MAX_TEXT} characters`);
  return text;
};

/** An ISO 8601 date or time with its offset, as the API takes it (UTC with milliseconds). */
const isoTime = (value: string | undefined, option: string): string | undefined => {
  if (value === undefined) return undefined;
  const text = value.trim();
  const millis = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,3})?)?(?:Z|[+-]\d{2}:\d{2}))?$/i.test(
    text,
  )
    ? Date.parse(text)
    : Number.NaN;
  if (Number.isNaN(millis))
    throw new UsageError(
      `${option}: ${value} is not an ISO 8601 date or time with its offset (2026-12-01T00:00:00Z, 2026-12-01)`,
    );
  return new Date(millis).toISOString();
};

const acknowledgeOf = (value: string | undefined): GuardrailCode[] | undefined => {
  if (value === undefined) return undefined;
  const given = commaList(value);
  if (given.length === 0) throw new UsageError('--acknowledge needs guardrail codes (code,code)');
  const unknown = given.filter((code) => !GUARDRAIL_CODES.some((known) => known === code));
  if (unknown.length > 0)
    throw new UsageError(
      `--acknowledge: unknown guardrail codes ${unknown.join(', ')} (codes: ${GUARDRAIL_CODES.join(', ')})`,
    );
  return GUARDRAIL_CODES.filter((code) => given.includes(code));
};

const optional = <K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } =>
  (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };

/** `request <kind> <payload.json>`, or `patch <operations.json>` (which is `request patch <operations.json>`). */
const parseRequest = (args: readonly string[], verb: 'request' | 'patch'): Command => {
  const { values, positionals } = parseLine(
    args,
    { 'effective-from': { type: 'string' }, note: { type: 'string' } },
    verb,
  );
  const [kind, file] = atMost(verb === 'patch' ? ['patch', ...positionals] : positionals, 2);
  if (verb === 'patch' && file === undefined)
    throw new UsageError('patch needs an operations file: patch <operations.json>');
  if (kind === undefined || file === undefined)
    throw new UsageError('request needs a kind and a payload file: request <kind> <payload.json>');
  const change = CHANGE_KINDS.find((known) => known === kind);
  if (change === undefined)
    throw new UsageError(`request: unknown kind ${kind} (kinds: ${CHANGE_KINDS.join(', ')})`);
  return {
    kind: 'request',
    change,
    file,
    ...optional('effectiveFrom', isoTime(values['effective-from'], '--effective-from')),
    ...optional('note', textOf(values.note, '--note')),
  };
};

const parseChangeRequests = (args: readonly string[], verb: string): Command => {
  const { values, positionals } = parseLine(
    args,
    { status: { type: 'string' }, limit: { type: 'string' }, cursor: { type: 'string' } },
    verb,
  );
  atMost(positionals, 0);
  if (values.cursor?.length === 0) throw new UsageError('--cursor must not be empty');
  return {
    kind: 'change-requests',
    ...optional('status', oneOf(values.status, CHANGE_REQUEST_STATUSES, '--status')),
    ...optional('limit', pageLimit(values.limit)),
    ...optional('cursor', values.cursor),
  };
};

/** Each command's own arguments (after its name and the global options) as the command. */
const COMMANDS = {
  import: (args) => {
    const [file] = atMost(parseLine(args, {}, 'import').positionals, 1);
    if (file === undefined) throw new UsageError('import needs a file');
    return { kind: 'import', file };
  },
  export: (args) => {
    const { values, positionals } = parseLine(
      args,
      { revision: { type: 'string' }, out: { type: 'string' } },
      'export',
    );
    atMost(positionals, 0);
    if (values.revision !== undefined && !/^[1-9]\d{0,9}$/.test(values.revision))
      throw new UsageError('--revision must be a positive integer');
    return {
      kind: 'export',
      ...optional('revision', values.revision === undefined ? undefined : Number(values.revision)),
      ...optional('out', values.out),
    };
  },
  request: (args) => parseRequest(args, 'request'),
  patch: (args) => parseRequest(args, 'patch'),
  'change-requests': parseChangeRequests,
  list: parseChangeRequests,
  show: (args) => ({ kind: 'show', crId: crIdOf(parseLine(args, {}, 'show').positionals, 'show') }),
  approve: (args) => {
    const { values, positionals } = parseLine(
      args,
      { comment: { type: 'string' }, acknowledge: { type: 'string' } },
      'approve',
    );
    return {
      kind: 'approve',
      crId: crIdOf(positionals, 'approve'),
      ...optional('comment', textOf(values.comment, '--comment')),
      ...optional('acknowledge', acknowledgeOf(values.acknowledge)),
    };
  },
  reject: (args) => {
    const { values, positionals } = parseLine(args, { comment: { type: 'string' } }, 'reject');
    const crId = crIdOf(positionals, 'reject');
    const comment = textOf(values.comment, '--comment');
    if (comment === undefined) throw new UsageError('reject needs --comment (why the change is rejected)');
    return { kind: 'reject', crId, comment };
  },
  release: (args) => {
    const { values, positionals } = parseLine(args, { out: { type: 'string' } }, 'release');
    return { kind: 'release', crId: crIdOf(positionals, 'release'), ...optional('out', values.out) };
  },
} satisfies Readonly<Record<string, CommandParser<Command>>>;

/** The command line (after `npm run catalog --`) as a command, HELP, or a UsageError naming what is wrong. */
export const parseArgs = (argv: readonly string[]): Command | Help => {
  const line = parseCommandLine(argv, GLOBAL_OPTIONS, COMMANDS);
  if (isHelp(line)) return line;
  const { command, global } = line;
  const { as, sigv4 } = global;
  if (as !== undefined && !OPERATOR_NAME.test(as))
    throw new UsageError(`--as: ${as} is not an operator name (letters, digits, _ . -, at most 64)`);
  if (sigv4 && as !== undefined)
    throw new UsageError(
      "--as picks a local operator's token; with --sigv4 the operator is the IAM principal of your AWS " +
        'credentials: give one of them',
    );
  return { ...command, ...(sigv4 ? { sigv4: true } : {}), ...optional('as', as) };
};

// ---------------------------------------------------------------------------------------------------------
// Change requests as the API answers them (read leniently: a summary is a convenience, the JSON is the answer)

interface Finding {
  readonly code: string;
  readonly path: string;
  readonly message: string;
}

interface ChangeRequestView {
  readonly crId: string;
  readonly kind: string;
  readonly status: string;
  readonly author: string;
  readonly note?: string;
  readonly effectiveFrom?: string;
  readonly guardrails: readonly Finding[];
  readonly approvers: readonly string[];
  readonly summary?: Readonly<Record<string, unknown>>;
  readonly publication?: Readonly<Record<string, unknown>>;
  readonly rejection?: Readonly<Record<string, unknown>>;
  readonly staleReason?: string;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

const viewOf = (body: unknown): ChangeRequestView | undefined => {
  if (!isRecord(body) || typeof body.cr_id !== 'string' || typeof body.status !== 'string') return undefined;
  const guardrails = (Array.isArray(body.guardrails) ? body.guardrails : []).filter(
    (finding): finding is Finding =>
      isRecord(finding) && typeof finding.code === 'string' && typeof finding.message === 'string',
  );
  const approvers = (Array.isArray(body.approvals) ? body.approvals : [])
    .map((approval) => (isRecord(approval) ? text(approval.by) : undefined))
    .filter((by): by is string => by !== undefined);
  return {
    crId: body.cr_id,
    kind: text(body.kind) ?? '?',
    status: body.status,
    author: text(body.author) ?? '?',
    guardrails: guardrails.map((finding) => ({ ...finding, path: text(finding.path) ?? '' })),
    approvers: [...new Set(approvers)],
    ...optional('note', text(body.note)),
    ...optional('effectiveFrom', text(body.effective_from)),
    ...optional('summary', isRecord(body.summary) ? body.summary : undefined),
    ...optional('publication', isRecord(body.publication) ? body.publication : undefined),
    ...optional('rejection', isRecord(body.rejection) ? body.rejection : undefined),
    ...optional('staleReason', text(body.stale_reason)),
  };
};

const count = (summary: Readonly<Record<string, unknown>>, field: string): string =>
  typeof summary[field] === 'number' ? String(summary[field]) : '?';

/** Who acts: how the next step names the approvers (`--as <name>` locally, IAM principals with SigV4). */
export interface Acting {
  readonly sigv4: boolean;
  /** Local operators, `admin` first (bin/admin-client.ts `localOperators`). */
  readonly operators: readonly string[];
}

const CLI = 'npm run catalog --';

const nextSteps = (view: ChangeRequestView, acting: Acting): string[] => {
  const codes = GUARDRAIL_CODES.filter((code) => view.guardrails.some((finding) => finding.code === code));
  const acknowledge = codes.length > 0 ? ` --acknowledge ${codes.join(',')}` : '';
  const needed = Math.max(REQUIRED_APPROVALS - view.approvers.length, 1);
  const reject = `  or: ${CLI} reject ${view.crId} --comment "why"`;
  if (acting.sigv4) {
    return [
      `next: ${needed === 1 ? 'one more IAM principal' : `${needed} IAM principals`} other than the author ` +
        `approve${needed === 1 ? 's' : ''}: ${CLI} approve ${view.crId}${acknowledge} --sigv4`,
      `${reject} --sigv4`,
    ];
  }
  // Reviewers before `admin`, never the author nor who approved already.
  const candidates = [
    ...acting.operators.filter((name) => name !== 'admin'),
    ...acting.operators.filter((name) => name === 'admin'),
  ].filter((name) => name !== view.author && !view.approvers.includes(name));
  const steps = Array.from(
    { length: needed },
    (_, index) => `${CLI} approve ${view.crId} --as ${candidates[index] ?? '<operator>'}${acknowledge}`,
  );
  return [`next: ${steps[0]}`, ...steps.slice(1).map((step) => `  then ${step}`), reject];
};

/** The change request in a few lines for stderr: counts, guardrails, approvals and the next step. */
export const summarizeChangeRequest = (body: unknown, acting: Acting): string | undefined => {
  const view = viewOf(body);
  if (view === undefined) return undefined;
  const lines = [
    `change request ${view.crId} (${view.kind}): ${view.status}, by ${view.author}` +
      `${view.note === undefined ? '' : ` (${view.note})`}`,
  ];
  if (view.effectiveFrom !== undefined) lines.push(`  effective from ${view.effectiveFrom}`);
  if (view.summary !== undefined) {
    const sections = Array.isArray(view.summary.sections_changed)
      ? view.summary.sections_changed.filter((section) => typeof section === 'string')
      : [];
    lines.push(
      `  changes: ${sections.length > 0 ? sections.join(', ') : 'none'}; prices ` +
        `+${count(view.summary, 'prices_added')} -${count(view.summary, 'prices_removed')} ` +
        `~${count(view.summary, 'prices_changed')}; tax rates ${count(view.summary, 'tax_rates_changed')}, ` +
        `FX rates ${count(view.summary, 'fx_rates_changed')} changed`,
    );
  }
  if (view.guardrails.length === 0) {
    lines.push('  guardrails: none');
  } else {
    lines.push(`  guardrails (${view.guardrails.length}, each approver acknowledges them):`);
    for (const finding of view.guardrails)
      lines.push(`    ${finding.code}${finding.path ? ` at ${finding.path}` : ''}: ${finding.message}`);
  }
  lines.push(
    `  approvals: ${view.approvers.length} of ${REQUIRED_APPROVALS}` +
      `${view.approvers.length > 0 ? ` (${view.approvers.join(', ')})` : ''}`,
  );
  const sigv4 = acting.sigv4 ? ' --sigv4' : '';
  if (view.status === 'pending_approval') {
    lines.push(...nextSteps(view, acting));
  } else if (view.status === 'published' && view.publication !== undefined) {
    const versions = isRecord(view.publication.versions)
      ? Object.entries(view.publication.versions)
          .map(([name, value]) => `${name} ${String(value)}`)
          .join(', ')
      : '';
    lines.push(
      `published: revision ${String(view.publication.revision)}${versions ? ` (${versions})` : ''}` +
        `${typeof view.publication.effective_from === 'string' ? `, in force from ${view.publication.effective_from}` : ''}`,
      `  release: ${CLI} release ${view.crId} --out release.json${sigv4}`,
    );
  } else if (view.status === 'approved') {
    lines.push(`approved, being published: ${CLI} show ${view.crId}${sigv4}`);
  } else if (view.status === 'rejected') {
    const by = text(view.rejection?.by);
    const comment = text(view.rejection?.comment);
    lines.push(`rejected${by ? ` by ${by}` : ''}${comment ? `: ${comment}` : ''}`);
  } else if (view.status === 'stale') {
    lines.push(
      `stale${view.staleReason ? `: ${view.staleReason}` : ''}; request the change again against what is in force`,
    );
  }
  return `${lines.join('\n')}\n`;
};

/** One line per change request for stderr: id, kind, status, author, approvals, created. */
const listLines = (body: unknown): string => {
  const items = isRecord(body) && Array.isArray(body.items) ? body.items : [];
  if (items.length === 0) return 'no change requests\n';
  return items
    .map((item) => {
      const view = viewOf(item);
      if (view === undefined) return '?';
      const created = isRecord(item) ? (text(item.created_at) ?? '') : '';
      return [
        view.crId,
        view.kind,
        view.status,
        `by ${view.author}`,
        `${view.approvers.length}/${REQUIRED_APPROVALS} approvals`,
        created,
      ].join('\t');
    })
    .map((line) => `${line}\n`)
    .join('');
};

// ---------------------------------------------------------------------------------------------------------
// Running

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

/** The JSON of a file, or undefined after saying why it cannot be read. */
const readJson = async (io: CliIo, file: string): Promise<{ readonly value: unknown } | undefined> => {
  try {
    return { value: JSON.parse(await io.readFile(path.resolve(io.cwd, file))) };
  } catch (error) {
    io.stderr(`cannot read ${file} as JSON: ${(error as Error).message}\n`);
    return undefined;
  }
};

/** A refused approval or rejection: the refusal, then what to do about it. */
const refusalHint = (error: AdminApiError, command: Command, acting: string): string | undefined => {
  if (command.kind !== 'approve' && command.kind !== 'reject') return undefined;
  if (error.status === 403 && error.error === 'forbidden') {
    return command.kind === 'approve'
      ? `hint: the author cannot approve their own change: approve as another operator (${
          command.sigv4 ? 'the credentials of another IAM principal' : '--as <name>'
        })`
      : undefined;
  }
  if (error.status === 409)
    return `hint: the change request is no longer pending: ${CLI} show ${command.crId}`;
  const details = isRecord(error.body) && isRecord(error.body.details) ? error.body.details : undefined;
  const missing = Array.isArray(details?.missing_acknowledgements)
    ? details.missing_acknowledgements.filter((code): code is string => typeof code === 'string')
    : [];
  if (command.kind === 'approve' && error.status === 422 && missing.length > 0) {
    const codes = GUARDRAIL_CODES.filter(
      (code) => missing.includes(code) || (command.acknowledge ?? []).includes(code),
    );
    return `hint: acknowledge them: ${CLI} approve ${command.crId}${acting} --acknowledge ${codes.join(',')}`;
  }
  return undefined;
};

const changeRequestPath = (crId: string, action?: 'approve' | 'reject'): string =>
  `/admin/change-requests/${encodeURIComponent(crId)}${action === undefined ? '' : `/${action}`}`;

const operationsOf = (value: unknown): unknown =>
  typeof value === 'object' && value !== null && 'operations' in value ? value.operations : value;

/** The answer of one command (a change request, a page, a release or an export), sent. */
const send = async (
  command: Command,
  client: AdminClient,
  io: CliIo,
): Promise<{ readonly body: unknown; readonly revision?: number } | undefined> => {
  switch (command.kind) {
    case 'import': {
      const document = await readJson(io, command.file);
      if (!document) return undefined;
      const text = JSON.stringify(document.value);
      if (Buffer.byteLength(text) <= MAX_REQUEST_BODY_BYTES)
        return client.post('/admin/catalog/import', document.value);
      // Larger than a request body: uploaded through a link, then imported by its id.
      const gzipped = gzipSync(text);
      const upload = (await client.post('/admin/catalog/uploads', { bytes: gzipped.byteLength })).body as {
        upload_id: string;
        url: string;
      };
      await transferFile(io, upload.url, { method: 'PUT', body: gzipped });
      const { effective_from } = document.value as { effective_from?: unknown };
      return client.post('/admin/catalog/import', {
        upload_id: upload.upload_id,
        ...(typeof effective_from === 'string' ? { effective_from } : {}),
      });
    }
    case 'request': {
      const payload = await readJson(io, command.file);
      return (
        payload &&
        (await client.post('/admin/change-requests', {
          kind: command.change,
          // A patch file is the operations (a list, or `{ "operations": [...] }`).
          ...(command.change === 'patch'
            ? { operations: Array.isArray(payload.value) ? payload.value : operationsOf(payload.value) }
            : { payload: payload.value }),
          ...optional('effective_from', command.effectiveFrom),
          ...optional('note', command.note),
        }))
      );
    }
    case 'change-requests':
      return client.get('/admin/change-requests', {
        status: command.status,
        limit: command.limit,
        cursor: command.cursor,
      });
    case 'show':
      return client.get(changeRequestPath(command.crId));
    case 'approve':
      return client.post(changeRequestPath(command.crId, 'approve'), {
        ...optional('comment', command.comment),
        ...optional('acknowledge', command.acknowledge),
      });
    case 'reject':
      return client.post(changeRequestPath(command.crId, 'reject'), { comment: command.comment });
    case 'release':
      return client.get(`/audit/releases/${encodeURIComponent(command.crId)}`);
    case 'export': {
      const response = await client.get(
        '/admin/catalog/export',
        command.revision === undefined ? undefined : { revision: command.revision },
      );
      // Past 5 MB the answer is a 303 to a download link of the gzip document.
      const body =
        response.status === 303
          ? JSON.parse(
              gunzipSync(
                await transferFile(io, (response.body as { url: string }).url, { method: 'GET' }),
              ).toString('utf8'),
            )
          : response.body;
      return {
        body,
        ...optional('revision', Number(response.headers.get('x-catalog-revision')) || undefined),
      };
    }
  }
};

/**
 * One request to a pre-signed file link, without the API's credentials (the link carries its own): the bytes
 * of a download, or nothing for an upload; a refusal names the status.
 */
const transferFile = async (
  io: CliIo,
  url: string,
  init: { readonly method: 'GET' } | { readonly method: 'PUT'; readonly body: Uint8Array },
): Promise<Buffer> => {
  const response = await io.fetch(url, {
    method: init.method,
    ...(init.method === 'PUT' ? { body: init.body, headers: { 'Content-Type': 'application/gzip' } } : {}),
  });
  const bytes = Buffer.from(await response.arrayBuffer());
  if (!response.ok)
    throw new Error(
      `the file link answered ${response.status} to the ${init.method === 'PUT' ? 'upload' : 'download'}: ${bytes
        .toString('utf8')
        .slice(0, 200)}`,
    );
  return bytes;
};

const execute = async (command: Command, client: AdminClient, io: CliIo): Promise<number> => {
  const identity = operatorIdentity(command.as, io.env);
  let answer: Awaited<ReturnType<typeof send>>;
  try {
    answer = await send(command, client, io);
  } catch (error) {
    if (!(error instanceof AdminApiError)) throw error;
    const hint = refusalHint(error, command, identity === undefined ? '' : ` --as ${identity}`);
    io.stderr(`${error.describe()}${hint === undefined ? '' : `${hint}\n`}`);
    return 1;
  }
  if (answer === undefined) return 1;
  const { body } = answer;
  if ((command.kind === 'export' || command.kind === 'release') && command.out !== undefined) {
    await io.writeFile(path.resolve(io.cwd, command.out), json(body));
    io.stdout(
      json(
        command.kind === 'export'
          ? { revision: answer.revision, out: command.out }
          : { cr_id: command.crId, out: command.out },
      ),
    );
    return 0;
  }
  io.stdout(json(body));
  if (command.kind === 'change-requests') {
    io.stderr(listLines(body));
    const cursor = isRecord(body) ? text(body.cursor) : undefined;
    if (cursor !== undefined) {
      const options = [
        ...(command.status === undefined ? [] : [`--status ${command.status}`]),
        ...(command.limit === undefined ? [] : [`--limit ${command.limit}`]),
      ];
      io.stderr(`more: ${CLI} change-requests ${[...options, `--cursor ${cursor}`].join(' ')}\n`);
    }
  } else if (command.kind !== 'export' && command.kind !== 'release') {
    const sigv4 = client.auth === 'sigv4';
    const summary = summarizeChangeRequest(body, {
      sigv4,
      operators: sigv4 ? [] : await localOperators(io),
    });
    if (summary !== undefined) io.stderr(summary);
  }
  return 0;
};

/**
 * Runs one command: 0 on success, 1 when it failed, 2 for a wrong command line (bin/cli.ts). The operator is
 * `--as` (else `ADMIN_AS`) when given: the client connects with that operator's token.
 */
export const run = (argv: readonly string[], io: CliIo, options: ConnectOptions = {}): Promise<number> =>
  runAdminCli(
    {
      usage: USAGE,
      parse: parseArgs,
      execute,
      identity: (command, commandIo) => operatorIdentity(command.as, commandIo.env),
    },
    argv,
    io,
    options,
  );

await runMain(import.meta.url, run);
