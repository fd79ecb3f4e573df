/**
 * `npm run ops -- <command>`: webhook operations over the admin routes (replay, history, dead letters,
 * endpoints). Run `npm run ops -- help` for the commands.
 *
 * Authentication as for `npm run catalog` (bin/admin-client.ts): the local stack's admin token by default
 * (`ADMIN_TOKEN`, else `admin_token` in `<DATA_DIR>/credentials.json`), IAM SigV4 against a deployed API with
 * `--sigv4` or `API_AUTH=sigv4`.
 *
 * Output: the answer as pretty JSON on stdout (`dlq` prints one line per dead delivery, JSON with `--json`);
 * notes, refusals (with every problem and the trace id) and usage errors on stderr. Exit codes as every tool in
 * bin/ (bin/cli.ts): 0 on success, 1 when the command failed, 2 for a wrong command line.
 */

import type { z } from 'zod';
import {
  DELIVERY_STATUSES,
  type DeliveryStatus,
  ENVELOPE_VERSIONS,
} from '../functions/domain/webhooks/envelope';
import type { EventFilter } from '../functions/domain/webhooks/filter';
import type { EndpointOrdering } from '../functions/domain/webhooks/ordering';
import { SIGNATURE_SCHEMES } from '../functions/domain/webhooks/standard-webhooks';
import type { EndpointRateLimit } from '../functions/domain/webhooks/throttle';
import {
  type CreateEndpointRequest,
  createEndpointSchema,
  endpointFilterSchema,
  endpointIdSchema,
  endpointOrderingSchema,
  endpointRateLimitSchema,
  eventIdSchema,
  type ReplayRequest,
  replayIdSchema,
  topicName,
  type UpdateEndpointRequest,
} from '../functions/schemas/webhooks';
import {
  ADMIN_CLI_ENVIRONMENT,
  type AdminClient,
  type CliIo,
  type ConnectOptions,
  pageLimit,
  runAdminCli,
  UsageError,
} from './admin-client';
import {
  atMost,
  type CliOptions,
  type CommandParser,
  commaList,
  type Help,
  isHelp,
  type OptionValues,
  oneOf,
  parseCommandLine,
  parseLine,
  runMain,
} from './cli';

/** `dlq` looks this far back by default. */
export const DLQ_DEFAULT_WINDOW_MS = 7 * 86_400_000;
/** `--wait` polls the replay this often, at most this long. */
export const REPLAY_POLL_MS = 1_000;
export const REPLAY_WAIT_MAX_MS = 10 * 60_000;
/** Page size when following cursors (`--all`, `dlq`): the API's maximum. */
const FULL_PAGE = 200;

/** A time window; either end may be left to `run` (defaults relative to now). */
export interface Window {
  readonly from?: string;
  readonly to?: string;
}

/** `GET /webhooks/events` query as the CLI sends it. */
export interface EventsQuery {
  readonly status?: DeliveryStatus;
  readonly endpoint_id?: string;
  readonly from?: string;
  readonly to?: string;
  readonly limit?: number;
}

export type OpsCommand = (
  | { readonly kind: 'replay'; readonly request: ReplayRequest; readonly wait: boolean }
  | { readonly kind: 'replay-show'; readonly replayId: string; readonly wait: boolean }
  | { readonly kind: 'events'; readonly query: EventsQuery; readonly all: boolean }
  | { readonly kind: 'events-show'; readonly eventId: string }
  | {
      readonly kind: 'dlq';
      readonly window: Window;
      readonly endpointId?: string;
      readonly json: boolean;
    }
  | {
      readonly kind: 'dlq-replay';
      readonly window: Window;
      readonly endpointId?: string;
      readonly force: boolean;
      readonly wait: boolean;
    }
  | { readonly kind: 'endpoints-list'; readonly limit?: number; readonly all: boolean }
  | { readonly kind: 'endpoints-show'; readonly endpointId: string }
  | { readonly kind: 'endpoints-create'; readonly body: CreateEndpointRequest }
  | { readonly kind: 'endpoints-update'; readonly endpointId: string; readonly body: UpdateEndpointRequest }
  | { readonly kind: 'endpoints-delete'; readonly endpointId: string }
  | { readonly kind: 'endpoints-rotate-secret'; readonly endpointId: string }
) & {
  /** `--sigv4`: sign the requests with IAM SigV4 (a deployed API). */
  readonly sigv4?: true;
};

export const USAGE = `usage: npm run ops -- <command> [options] [--sigv4]

replays (POST /webhooks/replay, GET /webhooks/replays/{id}):
  replay --event-ids evt_a,evt_b [--endpoint ep_…] [--status s] [--force] [--wait]
  replay --from <iso> --to <iso> [--status dead] [--endpoint ep_…] [--force] [--wait]
  replay --show rpl_… [--wait]
      --wait polls the replay until done (at most 10 minutes) and prints its final progress

history (GET /webhooks/events):
  events [--status s] [--endpoint ep_…] [--from iso] [--to iso] [--limit n] [--all]
      the window defaults to the last 24 hours; --all follows the cursor to the end
  events show evt_…

dead letters (status dead, window defaults to the last 7 days):
  dlq [--from iso] [--to iso] [--endpoint ep_…] [--json]
      one line per dead delivery: event_id endpoint_id type ts (tab-separated)
  dlq replay [--from iso] [--to iso] [--endpoint ep_…] [--force] [--wait]

endpoints (/webhooks/endpoints):
  endpoints list [--limit n] [--all]
  endpoints show ep_…
  endpoints create --url <url> [--topics a,b] [--event-types a.b,c.d] [--filter '<json>'] [--rate-limit per_second=n,max_in_flight=n]
                   [--ordering endpoint|tenant|data.<field>] [--signature-scheme native|standard-webhooks]
                   [--description text] [--tenant t] [--version ${ENVELOPE_VERSIONS.join('|')}]
      prints the signing secret, once
  endpoints update ep_… [--url u] [--topics a,b] [--event-types a.b] [--filter '<json>'|none] [--rate-limit …|none]
                   [--ordering …|none] [--signature-scheme …] [--description text] [--version v] [--enable|--disable]
  endpoints delete ep_…
  endpoints rotate-secret ep_…
      prints the new secret, once; the previous one is still sent beside it for a while

statuses: ${DELIVERY_STATUSES.join(', ')}
times: ISO 8601 (2026-11-02T10:00:00Z, 2026-11-02); sent as UTC with milliseconds

${ADMIN_CLI_ENVIRONMENT}`;

// ---------------------------------------------------------------------------------------------------------
// Arguments

/** `--sigv4`, anywhere on the line. */
const GLOBAL_OPTIONS = { sigv4: { type: 'boolean' } } as const satisfies CliOptions;

/** The one positional id of `<command> <id>`, checked with its schema. */
const onePositionalId = (
  positionals: readonly string[],
  context: string,
  what: string,
  schema: { safeParse(value: unknown): { success: boolean } },
): string => {
  const [id] = atMost(positionals, 1);
  if (id === undefined) throw new UsageError(`${context} needs ${what}`);
  if (!schema.safeParse(id).success) throw new UsageError(`${id} is not ${what}`);
  return id;
};

const checkedId = (
  value: string | undefined,
  option: string,
  what: string,
  schema: { safeParse(value: unknown): { success: boolean } },
): string | undefined => {
  if (value === undefined) return undefined;
  if (!schema.safeParse(value).success) throw new UsageError(`${option}: ${value} is not ${what}`);
  return value;
};

const endpointOf = (value: string | undefined) =>
  checkedId(value, '--endpoint', 'an ep_ id', endpointIdSchema);

/** An ISO 8601 time as the API takes it (UTC with milliseconds). */
const isoTime = (value: string | undefined, option: string): string | undefined => {
  if (value === undefined) return undefined;
  const millis = /^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/i.test(value.trim())
    ? Date.parse(value.trim())
    : Number.NaN;
  if (Number.isNaN(millis)) throw new UsageError(`${option}: ${value} is not an ISO 8601 time`);
  return new Date(millis).toISOString();
};

const WINDOW_OPTIONS = { from: { type: 'string' }, to: { type: 'string' } } as const satisfies CliOptions;

const windowOf = (values: OptionValues<typeof WINDOW_OPTIONS>): Window => {
  const from = isoTime(values.from, '--from');
  const to = isoTime(values.to, '--to');
  if (from !== undefined && to !== undefined && from > to) throw new UsageError('--from is after --to');
  return { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
};

const topicsOf = (value: string | undefined): string[] | undefined => {
  if (value === undefined) return undefined;
  const topics = commaList(value);
  const bad = topics.filter((topic) => !topicName.safeParse(topic).success);
  if (bad.length > 0)
    throw new UsageError(`--topics: not topic names (lower-case, digits, _): ${bad.join(', ')}`);
  return topics;
};

const urlOf = (value: string | undefined): string | undefined => {
  if (value === undefined) return undefined;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`--url: ${value} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UsageError('--url must be http(s)');
  return value;
};

const parseReplay = (args: readonly string[]): OpsCommand => {
  const { values, positionals } = parseLine(
    args,
    {
      'event-ids': { type: 'string' },
      ...WINDOW_OPTIONS,
      status: { type: 'string' },
      endpoint: { type: 'string' },
      show: { type: 'string' },
      force: { type: 'boolean' },
      wait: { type: 'boolean' },
    },
    'replay',
  );
  atMost(positionals, 0);
  const wait = values.wait === true;
  if (values.show !== undefined) {
    const others = Object.keys(values).filter((name) => name !== 'show' && name !== 'wait');
    if (others.length > 0)
      throw new UsageError(
        `--show takes no other option than --wait (got ${others.map((name) => `--${name}`).join(', ')})`,
      );
    return {
      kind: 'replay-show',
      replayId: checkedId(values.show, '--show', 'an rpl_ id', replayIdSchema) as string,
      wait,
    };
  }
  const eventIds = values['event-ids'];
  const hasWindow = values.from !== undefined || values.to !== undefined;
  if (eventIds !== undefined && hasWindow)
    throw new UsageError('give either --event-ids or --from/--to, not both');
  const status = oneOf(values.status, DELIVERY_STATUSES, '--status');
  const endpointId = endpointOf(values.endpoint);
  const common = {
    ...(endpointId === undefined ? {} : { endpoint_id: endpointId }),
    ...(status === undefined ? {} : { status }),
    ...(values.force ? { force: true } : {}),
  };
  if (eventIds !== undefined) {
    const ids = commaList(eventIds);
    if (ids.length === 0) throw new UsageError('--event-ids needs at least one event id');
    if (ids.length > 1000) throw new UsageError('--event-ids takes at most 1000 ids');
    const bad = ids.filter((id) => !eventIdSchema.safeParse(id).success);
    if (bad.length > 0) throw new UsageError(`--event-ids: not event ids: ${bad.join(', ')}`);
    return { kind: 'replay', request: { event_ids: [...new Set(ids)], ...common }, wait };
  }
  if (!hasWindow) throw new UsageError('replay needs --event-ids, a --from/--to window or --show');
  const window = windowOf(values);
  if (window.from === undefined || window.to === undefined)
    throw new UsageError('a replay window needs both --from and --to');
  return { kind: 'replay', request: { from: window.from, to: window.to, ...common }, wait };
};

const parseEvents = (args: readonly string[]): OpsCommand => {
  const { values, positionals } = parseLine(
    args,
    {
      status: { type: 'string' },
      endpoint: { type: 'string' },
      ...WINDOW_OPTIONS,
      limit: { type: 'string' },
      all: { type: 'boolean' },
    },
    'events',
  );
  atMost(positionals, 0);
  const status = oneOf(values.status, DELIVERY_STATUSES, '--status');
  const endpointId = endpointOf(values.endpoint);
  const limit = pageLimit(values.limit);
  return {
    kind: 'events',
    query: {
      ...(status === undefined ? {} : { status }),
      ...(endpointId === undefined ? {} : { endpoint_id: endpointId }),
      ...windowOf(values),
      ...(limit === undefined ? {} : { limit }),
    },
    all: values.all === true,
  };
};

const DLQ_OPTIONS = { ...WINDOW_OPTIONS, endpoint: { type: 'string' } } as const satisfies CliOptions;

/** The window and the endpoint of `dlq` and `dlq replay`. */
const dlqScope = (values: OptionValues<typeof DLQ_OPTIONS>) => {
  const endpointId = endpointOf(values.endpoint);
  return { window: windowOf(values), ...(endpointId === undefined ? {} : { endpointId }) };
};

/** `endpoints show|delete|rotate-secret <ep_…>`. */
const parseEndpointId =
  (verb: 'show' | 'delete' | 'rotate-secret') =>
  (args: readonly string[], context: string): OpsCommand => ({
    kind: `endpoints-${verb}`,
    endpointId: onePositionalId(
      parseLine(args, {}, context).positionals,
      context,
      'an ep_ id',
      endpointIdSchema,
    ),
  });

const ENDPOINT_OPTIONS = {
  url: { type: 'string' },
  topics: { type: 'string' },
  'event-types': { type: 'string' },
  filter: { type: 'string' },
  'rate-limit': { type: 'string' },
  ordering: { type: 'string' },
  'signature-scheme': { type: 'string' },
  description: { type: 'string' },
  version: { type: 'string' },
} as const satisfies CliOptions;

/** A value checked by the API's own schema; its first problem is the usage error, naming the option. */
const checked = <T>(option: string, schema: z.ZodType<T>, value: unknown): T => {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const [issue] = parsed.error.issues;
  const path = issue && issue.path.length > 0 ? ` (${issue.path.join('.')})` : '';
  throw new UsageError(`${option}: ${issue?.message ?? 'not valid'}${path}`);
};

/** `--filter '<json>'` (C31), or `none` to remove it (update). */
const filterOf = (value: string | undefined): EventFilter | null | undefined => {
  if (value === undefined) return undefined;
  if (value === 'none') return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new UsageError('--filter: not JSON (e.g. \'{"data.currency":"EUR"}\')');
  }
  return checked('--filter', endpointFilterSchema, parsed);
};

/** `--rate-limit per_second=20,max_in_flight=5` (either or both), or `none` to remove the limits (update). */
const rateLimitOf = (value: string | undefined): EndpointRateLimit | null | undefined => {
  if (value === undefined) return undefined;
  if (value === 'none') return null;
  const limit: Record<string, number> = {};
  for (const part of commaList(value)) {
    const [name, number, extra] = part.split('=');
    if ((name !== 'per_second' && name !== 'max_in_flight') || number === undefined || extra !== undefined)
      throw new UsageError(`--rate-limit: ${part} is not per_second=<n> or max_in_flight=<n>`);
    limit[name] = Number(number);
  }
  return checked('--rate-limit', endpointRateLimitSchema, limit);
};

/** `--ordering data.payout_id` (or `endpoint`, `tenant`), or `none` to remove it (update). */
const orderingOf = (value: string | undefined): EndpointOrdering | null | undefined => {
  if (value === undefined) return undefined;
  if (value === 'none') return null;
  return checked('--ordering', endpointOrderingSchema, { key: value });
};

/** The fields of `endpoints create` and `update` that were given (`null`: remove it, update only). */
const endpointFields = (values: OptionValues<typeof ENDPOINT_OPTIONS>) => {
  const url = urlOf(values.url);
  const topics = topicsOf(values.topics);
  const eventTypes =
    values['event-types'] === undefined
      ? undefined
      : checked('--event-types', createEndpointSchema.shape.event_types, commaList(values['event-types']));
  const filter = filterOf(values.filter);
  const rateLimit = rateLimitOf(values['rate-limit']);
  const ordering = orderingOf(values.ordering);
  const version = oneOf(values.version, ENVELOPE_VERSIONS, '--version');
  const signatureScheme = oneOf(values['signature-scheme'], SIGNATURE_SCHEMES, '--signature-scheme');
  return {
    ...(url === undefined ? {} : { url }),
    ...(topics === undefined ? {} : { topics }),
    ...(eventTypes === undefined ? {} : { event_types: eventTypes }),
    ...(filter === undefined ? {} : { filter }),
    ...(rateLimit === undefined ? {} : { rate_limit: rateLimit }),
    ...(ordering === undefined ? {} : { ordering }),
    ...(signatureScheme === undefined ? {} : { signature_scheme: signatureScheme }),
    ...(values.description === undefined ? {} : { description: values.description }),
    ...(version === undefined ? {} : { version }),
  };
};

/** Each command's own arguments (after its words and `--sigv4`) as the command. */
const COMMANDS = {
  replay: parseReplay,
  events: parseEvents,
  'events show': (args, context) => ({
    kind: 'events-show',
    eventId: onePositionalId(parseLine(args, {}, context).positionals, context, 'an event id', eventIdSchema),
  }),
  dlq: (args, context) => {
    const { values, positionals } = parseLine(args, { ...DLQ_OPTIONS, json: { type: 'boolean' } }, context);
    atMost(positionals, 0);
    return { kind: 'dlq', ...dlqScope(values), json: values.json === true };
  },
  'dlq replay': (args, context) => {
    const { values, positionals } = parseLine(
      args,
      { ...DLQ_OPTIONS, force: { type: 'boolean' }, wait: { type: 'boolean' } },
      context,
    );
    atMost(positionals, 0);
    return {
      kind: 'dlq-replay',
      ...dlqScope(values),
      force: values.force === true,
      wait: values.wait === true,
    };
  },
  'endpoints list': (args, context) => {
    const { values, positionals } = parseLine(
      args,
      { limit: { type: 'string' }, all: { type: 'boolean' } },
      context,
    );
    atMost(positionals, 0);
    const limit = pageLimit(values.limit);
    return { kind: 'endpoints-list', ...(limit === undefined ? {} : { limit }), all: values.all === true };
  },
  'endpoints show': parseEndpointId('show'),
  'endpoints create': (args, context) => {
    const { values, positionals } = parseLine(
      args,
      { ...ENDPOINT_OPTIONS, tenant: { type: 'string' } },
      context,
    );
    atMost(positionals, 0);
    const { url, filter, rate_limit, ordering, ...fields } = endpointFields(values);
    if (url === undefined) throw new UsageError('endpoints create needs --url');
    if (filter === null || rate_limit === null || ordering === null)
      throw new UsageError('none removes a filter, rate limit or ordering: use it with endpoints update');
    return {
      kind: 'endpoints-create',
      body: {
        url,
        ...fields,
        ...(filter === undefined ? {} : { filter }),
        ...(rate_limit === undefined ? {} : { rate_limit }),
        ...(ordering === undefined ? {} : { ordering }),
        ...(values.tenant === undefined ? {} : { tenant: values.tenant }),
      },
    };
  },
  'endpoints update': (args, context) => {
    const { values, positionals } = parseLine(
      args,
      { ...ENDPOINT_OPTIONS, enable: { type: 'boolean' }, disable: { type: 'boolean' } },
      context,
    );
    const endpointId = onePositionalId(positionals, context, 'an ep_ id', endpointIdSchema);
    if (values.enable && values.disable) throw new UsageError('give --enable or --disable, not both');
    const body: UpdateEndpointRequest = {
      ...endpointFields(values),
      ...(values.enable ? { status: 'enabled' as const } : {}),
      ...(values.disable ? { status: 'disabled' as const } : {}),
    };
    if (Object.keys(body).length === 0)
      throw new UsageError(
        'endpoints update needs something to change: --url, --topics, --event-types, --filter, --rate-limit, --ordering, --description, --version, --enable or --disable',
      );
    return { kind: 'endpoints-update', endpointId, body };
  },
  'endpoints delete': parseEndpointId('delete'),
  'endpoints rotate-secret': parseEndpointId('rotate-secret'),
} satisfies Readonly<Record<string, CommandParser<OpsCommand>>>;

/** The command line (after `npm run ops --`) as a command, HELP, or a UsageError naming what is wrong. Pure. */
export const parseArgs = (argv: readonly string[]): OpsCommand | Help => {
  const line = parseCommandLine(argv, GLOBAL_OPTIONS, COMMANDS);
  if (isHelp(line)) return line;
  return line.global.sigv4 ? { ...line.command, sigv4: true } : line.command;
};

// ---------------------------------------------------------------------------------------------------------
// Running

/** The CLI's world; `sleep` and `now` let tests run `--wait` and the `dlq` window without real time. */
export interface OpsIo extends CliIo {
  readonly sleep?: (ms: number) => Promise<void>;
  readonly now?: () => Date;
}

/** An answer that was not the shape this CLI relies on (a field it reads is missing). */
export class UnexpectedAnswerError extends Error {
  constructor(what: string) {
    super(`unexpected answer: ${what}`);
    this.name = 'UnexpectedAnswerError';
  }
}

/** `--wait` ran out of time before the replay was done. */
export class ReplayWaitTimeoutError extends Error {
  constructor(replayId: string, minutes: number) {
    super(`replay ${replayId} is not done after ${minutes} minutes (its last progress is on stdout)`);
    this.name = 'ReplayWaitTimeoutError';
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

interface Page {
  readonly items: readonly unknown[];
  readonly cursor?: string;
}

const pageOf = (body: unknown, route: string): Page => {
  if (!isRecord(body) || !Array.isArray(body.items)) throw new UnexpectedAnswerError(`${route} has no items`);
  return {
    items: body.items,
    ...(typeof body.cursor === 'string' && body.cursor.length > 0 ? { cursor: body.cursor } : {}),
  };
};

/** Every item of a paginated listing, following `cursor` to the end. */
const allPages = async (
  client: AdminClient,
  route: string,
  query: Readonly<Record<string, string | number | undefined>>,
): Promise<unknown[]> => {
  const items: unknown[] = [];
  let cursor: string | undefined;
  do {
    const page = pageOf((await client.get(route, { ...query, ...(cursor ? { cursor } : {}) })).body, route);
    items.push(...page.items);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return items;
};

const json = (value: unknown): string => `${JSON.stringify(value, null, 2)}\n`;

const pick = (body: unknown, fields: readonly string[]): Record<string, unknown> => {
  if (!isRecord(body)) throw new UnexpectedAnswerError('not a JSON object');
  return Object.fromEntries(fields.filter((field) => field in body).map((field) => [field, body[field]]));
};

/** One dead delivery, as `dlq` prints it. */
export interface DeadDelivery {
  readonly event_id: string;
  readonly endpoint_id: string;
  readonly type: string;
  readonly ts: string;
  readonly attempts: number;
}

/** The dead deliveries of a `GET /webhooks/events?status=dead` listing's rows. */
export const deadDeliveries = (rows: readonly unknown[]): DeadDelivery[] =>
  rows.flatMap((row) => {
    if (!isRecord(row) || !Array.isArray(row.deliveries)) return [];
    return row.deliveries.filter(isRecord).flatMap((delivery) =>
      delivery.status === 'dead'
        ? [
            {
              event_id: String(row.event_id),
              endpoint_id: String(delivery.endpoint_id),
              type: String(row.type),
              ts: String(row.ts),
              attempts: typeof delivery.attempts === 'number' ? delivery.attempts : 0,
            },
          ]
        : [],
    );
  });

/** The `dlq` window: `--to` or now, `--from` or seven days before the end. */
const dlqWindow = (window: Window, now: Date): { from: string; to: string } => {
  const to = window.to ?? now.toISOString();
  const from = window.from ?? new Date(Date.parse(to) - DLQ_DEFAULT_WINDOW_MS).toISOString();
  if (from > to) throw new UsageError('--from is after the end of the window (now, without --to)');
  return { from, to };
};

const replayPath = (replayId: string) => `/webhooks/replays/${encodeURIComponent(replayId)}`;

/** Polls a replay until `done`; prints its final progress (or the last one seen, then fails). */
const waitForReplay = async (client: AdminClient, io: OpsIo, replayId: string): Promise<void> => {
  const now = io.now ?? (() => new Date());
  const sleep = io.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  const deadline = now().getTime() + REPLAY_WAIT_MAX_MS;
  for (;;) {
    const { body } = await client.get(replayPath(replayId));
    if (!isRecord(body) || typeof body.done !== 'boolean')
      throw new UnexpectedAnswerError(`replay ${replayId} has no done`);
    if (body.done) {
      io.stdout(json(body));
      return;
    }
    if (now().getTime() >= deadline) {
      io.stdout(json(body));
      throw new ReplayWaitTimeoutError(replayId, REPLAY_WAIT_MAX_MS / 60_000);
    }
    await sleep(REPLAY_POLL_MS);
  }
};

const startReplay = async (
  client: AdminClient,
  io: OpsIo,
  request: ReplayRequest,
  wait: boolean,
): Promise<void> => {
  const accepted = pick((await client.post('/webhooks/replay', request)).body, [
    'replay_id',
    'matched',
    'enqueued',
    'skipped',
  ]);
  if (!wait) {
    io.stdout(json(accepted));
    return;
  }
  const replayId = accepted.replay_id;
  if (typeof replayId !== 'string') throw new UnexpectedAnswerError('the replay has no replay_id');
  io.stderr(
    `replay ${replayId}: matched ${String(accepted.matched)}, enqueued ${String(accepted.enqueued)}, ` +
      `skipped ${String(accepted.skipped)}; waiting until done…\n`,
  );
  await waitForReplay(client, io, replayId);
};

const endpointPath = (endpointId: string) => `/webhooks/endpoints/${encodeURIComponent(endpointId)}`;

const execute = async (command: OpsCommand, client: AdminClient, io: OpsIo) => {
  switch (command.kind) {
    case 'replay':
      return startReplay(client, io, command.request, command.wait);
    case 'replay-show':
      if (command.wait) return waitForReplay(client, io, command.replayId);
      io.stdout(json((await client.get(replayPath(command.replayId))).body));
      return;
    case 'events': {
      const query = { ...command.query };
      if (!command.all) {
        io.stdout(json((await client.get('/webhooks/events', query)).body));
        return;
      }
      const items = await allPages(client, '/webhooks/events', { limit: FULL_PAGE, ...query });
      io.stdout(json({ items }));
      return;
    }
    case 'events-show':
      io.stdout(json((await client.get(`/webhooks/events/${encodeURIComponent(command.eventId)}`)).body));
      return;
    case 'dlq': {
      const window = dlqWindow(command.window, (io.now ?? (() => new Date()))());
      const rows = await allPages(client, '/webhooks/events', {
        status: 'dead',
        ...window,
        endpoint_id: command.endpointId,
        limit: FULL_PAGE,
      });
      const dead = deadDeliveries(rows);
      if (command.json) {
        io.stdout(json(dead));
      } else {
        for (const row of dead) io.stdout(`${row.event_id}\t${row.endpoint_id}\t${row.type}\t${row.ts}\n`);
      }
      io.stderr(
        `${dead.length} dead ${dead.length === 1 ? 'delivery' : 'deliveries'} from ${window.from} to ${window.to}\n`,
      );
      return;
    }
    case 'dlq-replay': {
      const window = dlqWindow(command.window, (io.now ?? (() => new Date()))());
      return startReplay(
        client,
        io,
        {
          ...window,
          status: 'dead',
          ...(command.endpointId === undefined ? {} : { endpoint_id: command.endpointId }),
          ...(command.force ? { force: true } : {}),
        },
        command.wait,
      );
    }
    case 'endpoints-list': {
      if (!command.all) {
        io.stdout(json((await client.get('/webhooks/endpoints', { limit: command.limit })).body));
        return;
      }
      io.stdout(
        json({ items: await allPages(client, '/webhooks/endpoints', { limit: command.limit ?? FULL_PAGE }) }),
      );
      return;
    }
    case 'endpoints-show':
      io.stdout(json((await client.get(endpointPath(command.endpointId))).body));
      return;
    case 'endpoints-create': {
      const { body } = await client.post('/webhooks/endpoints', command.body);
      io.stdout(json(body));
      io.stderr(
        'The signing secret above is shown once: store it now (it cannot be read again; ' +
          '`endpoints rotate-secret` makes a new one).\n',
      );
      return;
    }
    case 'endpoints-update':
      io.stdout(json((await client.patch(endpointPath(command.endpointId), command.body)).body));
      return;
    case 'endpoints-delete':
      await client.delete(endpointPath(command.endpointId));
      io.stdout(json({ endpoint_id: command.endpointId, deleted: true }));
      return;
    case 'endpoints-rotate-secret': {
      const { body } = await client.post(`${endpointPath(command.endpointId)}/rotate-secret`);
      io.stdout(json(body));
      const expires = isRecord(body) ? body.previous_secret_expires_at : undefined;
      io.stderr(
        'The new signing secret above is shown once: store it now. Deliveries carry both signatures' +
          `${typeof expires === 'string' ? ` until ${expires}` : ' for a while'}.\n`,
      );
      return;
    }
  }
};

/** Runs one command: 0 on success, 1 when it failed, 2 for a wrong command line (bin/cli.ts). */
export const run = (argv: readonly string[], io: OpsIo, options: ConnectOptions = {}): Promise<number> =>
  runAdminCli({ usage: USAGE, parse: parseArgs, execute }, argv, io, options);

await runMain(import.meta.url, run);
