/**
 * `npm run ops -- <command>`: webhook operations over the admin routes (replay, history, dead letters,
 * endpoints). Run `npm run ops -- help` for the commands.
 *
 * Authentication as for `npm run catalog` (bin/admin-client.ts): the local stack's admin token by default
 * (`ADMIN_TOKEN`, else `admin_token` in `<DATA_DIR>/credentials.json`), IAM SigV4 against a deployed API with
 * `--sigv4` or `API_AUTH=sigv4`.
 *
 * Output: the answer as pretty JSON on stdout (`dlq` prints one line per dead delivery, JSON with `--json`);
 * notes, refusals (with every problem and the trace id) and usage errors on stderr. Exit codes follow
 * `npm run catalog`: 0 on success, 1 on any failure, usage errors included.
 */
import {
  DELIVERY_STATUSES,
  type DeliveryStatus,
  ENVELOPE_VERSIONS,
} from '../functions/domain/webhooks/envelope';
import {
  type CreateEndpointRequest,
  endpointIdSchema,
  eventIdSchema,
  type ReplayRequest,
  replayIdSchema,
  topicName,
  type UpdateEndpointRequest,
} from '../functions/schemas/webhooks';
import { type AdminClient, type CliIo, UsageError } from './admin-client';
import {
  ADMIN_CLI_ENVIRONMENT,
  adminCliRunner,
  type Flags,
  isMainModule,
  parseFlags,
  processIo,
} from './cli';

/** Exit code of a wrong command line: 1, as `npm run catalog` (which exits 1 on any failure). */
export { EXIT_FAILURE, EXIT_USAGE } from './cli';

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
  | { readonly kind: 'help' }
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
  endpoints create --url <url> [--topics a,b] [--description text] [--tenant t] [--version ${ENVELOPE_VERSIONS.join('|')}]
      prints the signing secret, once
  endpoints update ep_… [--url u] [--topics a,b] [--description text] [--version v] [--enable|--disable]
  endpoints delete ep_…
  endpoints rotate-secret ep_…
      prints the new secret, once; the previous one is still sent beside it for a while

statuses: ${DELIVERY_STATUSES.join(', ')}
times: ISO 8601 (2026-11-02T10:00:00Z, 2026-11-02); sent as UTC with milliseconds

${ADMIN_CLI_ENVIRONMENT}`;

// ---------------------------------------------------------------------------------------------------------
// Arguments

const noPositionals = (flags: Flags): void => {
  if (flags.positionals.length > 0)
    throw new UsageError(`unexpected arguments: ${flags.positionals.join(' ')}`);
};

/** The one positional id of `<command> <id>`, checked with its schema. */
const onePositionalId = (
  flags: Flags,
  context: string,
  what: string,
  schema: { safeParse(value: unknown): { success: boolean } },
): string => {
  const [id, ...extra] = flags.positionals;
  if (id === undefined) throw new UsageError(`${context} needs ${what}`);
  if (extra.length > 0) throw new UsageError(`unexpected arguments: ${extra.join(' ')}`);
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

/** An ISO 8601 time as the API takes it (UTC with milliseconds). */
const isoTime = (value: string | undefined, option: string): string | undefined => {
  if (value === undefined) return undefined;
  const millis = /^\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?$/i.test(value.trim())
    ? Date.parse(value.trim())
    : Number.NaN;
  if (Number.isNaN(millis)) throw new UsageError(`${option}: ${value} is not an ISO 8601 time`);
  return new Date(millis).toISOString();
};

const windowOf = (flags: Flags): Window => {
  const from = isoTime(flags.values.get('--from'), '--from');
  const to = isoTime(flags.values.get('--to'), '--to');
  if (from !== undefined && to !== undefined && from > to) throw new UsageError('--from is after --to');
  return { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) };
};

/** The value of `flag` when it is one of `known` (undefined when not given); a UsageError otherwise. */
const oneOf =
  <T extends string>(flag: string, known: readonly T[]) =>
  (value: string | undefined): T | undefined => {
    if (value === undefined) return undefined;
    const found = known.find((candidate) => candidate === value);
    if (found === undefined) throw new UsageError(`${flag} must be one of ${known.join(', ')}, not ${value}`);
    return found;
  };

const statusOf = oneOf('--status', DELIVERY_STATUSES);

const limitOf = (value: string | undefined): number | undefined => {
  if (value === undefined) return undefined;
  if (!/^\d{1,3}$/.test(value) || Number(value) < 1 || Number(value) > 200)
    throw new UsageError('--limit must be an integer from 1 to 200');
  return Number(value);
};

/** A comma-separated list; empty entries dropped. */
const listOf = (value: string): string[] =>
  value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);

const topicsOf = (value: string | undefined): string[] | undefined => {
  if (value === undefined) return undefined;
  const topics = listOf(value);
  const bad = topics.filter((topic) => !topicName.safeParse(topic).success);
  if (bad.length > 0)
    throw new UsageError(`--topics: not topic names (lower-case, digits, _): ${bad.join(', ')}`);
  return topics;
};

const versionOf = oneOf('--version', ENVELOPE_VERSIONS);

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
  const flags = parseFlags(
    args,
    'replay',
    ['--event-ids', '--from', '--to', '--status', '--endpoint', '--show'],
    ['--force', '--wait'],
  );
  noPositionals(flags);
  const wait = flags.switches.has('--wait');
  const show = flags.values.get('--show');
  if (show !== undefined) {
    const others = [...flags.values.keys(), ...flags.switches].filter(
      (name) => name !== '--show' && name !== '--wait',
    );
    if (others.length > 0)
      throw new UsageError(`--show takes no other option than --wait (got ${others.join(', ')})`);
    return {
      kind: 'replay-show',
      replayId: checkedId(show, '--show', 'an rpl_ id', replayIdSchema) as string,
      wait,
    };
  }
  const eventIds = flags.values.get('--event-ids');
  const hasWindow = flags.values.has('--from') || flags.values.has('--to');
  if (eventIds !== undefined && hasWindow)
    throw new UsageError('give either --event-ids or --from/--to, not both');
  const status = statusOf(flags.values.get('--status'));
  const endpointId = checkedId(flags.values.get('--endpoint'), '--endpoint', 'an ep_ id', endpointIdSchema);
  const common = {
    ...(endpointId === undefined ? {} : { endpoint_id: endpointId }),
    ...(status === undefined ? {} : { status }),
    ...(flags.switches.has('--force') ? { force: true } : {}),
  };
  if (eventIds !== undefined) {
    const ids = listOf(eventIds);
    if (ids.length === 0) throw new UsageError('--event-ids needs at least one event id');
    if (ids.length > 1000) throw new UsageError('--event-ids takes at most 1000 ids');
    const bad = ids.filter((id) => !eventIdSchema.safeParse(id).success);
    if (bad.length > 0) throw new UsageError(`--event-ids: not event ids: ${bad.join(', ')}`);
    return { kind: 'replay', request: { event_ids: [...new Set(ids)], ...common }, wait };
  }
  if (!hasWindow) throw new UsageError('replay needs --event-ids, a --from/--to window or --show');
  const window = windowOf(flags);
  if (window.from === undefined || window.to === undefined)
    throw new UsageError('a replay window needs both --from and --to');
  return { kind: 'replay', request: { from: window.from, to: window.to, ...common }, wait };
};

const parseEvents = (args: readonly string[]): OpsCommand => {
  if (args[0] === 'show') {
    const flags = parseFlags(args.slice(1), 'events show', []);
    return {
      kind: 'events-show',
      eventId: onePositionalId(flags, 'events show', 'an event id', eventIdSchema),
    };
  }
  const flags = parseFlags(
    args,
    'events',
    ['--status', '--endpoint', '--from', '--to', '--limit'],
    ['--all'],
  );
  noPositionals(flags);
  const status = statusOf(flags.values.get('--status'));
  const endpointId = checkedId(flags.values.get('--endpoint'), '--endpoint', 'an ep_ id', endpointIdSchema);
  const limit = limitOf(flags.values.get('--limit'));
  return {
    kind: 'events',
    query: {
      ...(status === undefined ? {} : { status }),
      ...(endpointId === undefined ? {} : { endpoint_id: endpointId }),
      ...windowOf(flags),
      ...(limit === undefined ? {} : { limit }),
    },
    all: flags.switches.has('--all'),
  };
};

const parseDlq = (args: readonly string[]): OpsCommand => {
  const replay = args[0] === 'replay';
  const flags = replay
    ? parseFlags(args.slice(1), 'dlq replay', ['--from', '--to', '--endpoint'], ['--force', '--wait'])
    : parseFlags(args, 'dlq', ['--from', '--to', '--endpoint'], ['--json']);
  noPositionals(flags);
  const endpointId = checkedId(flags.values.get('--endpoint'), '--endpoint', 'an ep_ id', endpointIdSchema);
  const common = { window: windowOf(flags), ...(endpointId === undefined ? {} : { endpointId }) };
  return replay
    ? {
        kind: 'dlq-replay',
        ...common,
        force: flags.switches.has('--force'),
        wait: flags.switches.has('--wait'),
      }
    : { kind: 'dlq', ...common, json: flags.switches.has('--json') };
};

const parseEndpoints = (args: readonly string[]): OpsCommand => {
  const [verb, ...rest] = args;
  const context = `endpoints ${verb ?? ''}`.trim();
  switch (verb) {
    case 'list': {
      const flags = parseFlags(rest, context, ['--limit'], ['--all']);
      noPositionals(flags);
      const limit = limitOf(flags.values.get('--limit'));
      return {
        kind: 'endpoints-list',
        ...(limit === undefined ? {} : { limit }),
        all: flags.switches.has('--all'),
      };
    }
    case 'show':
    case 'delete':
    case 'rotate-secret': {
      const endpointId = onePositionalId(
        parseFlags(rest, context, []),
        context,
        'an ep_ id',
        endpointIdSchema,
      );
      return { kind: `endpoints-${verb}`, endpointId };
    }
    case 'create': {
      const flags = parseFlags(rest, context, [
        '--url',
        '--topics',
        '--description',
        '--tenant',
        '--version',
      ]);
      noPositionals(flags);
      const url = urlOf(flags.values.get('--url'));
      if (url === undefined) throw new UsageError('endpoints create needs --url');
      const topics = topicsOf(flags.values.get('--topics'));
      const description = flags.values.get('--description');
      const tenant = flags.values.get('--tenant');
      const version = versionOf(flags.values.get('--version'));
      return {
        kind: 'endpoints-create',
        body: {
          url,
          ...(topics === undefined ? {} : { topics }),
          ...(description === undefined ? {} : { description }),
          ...(tenant === undefined ? {} : { tenant }),
          ...(version === undefined ? {} : { version }),
        },
      };
    }
    case 'update': {
      const flags = parseFlags(
        rest,
        context,
        ['--url', '--topics', '--description', '--version'],
        ['--enable', '--disable'],
      );
      const endpointId = onePositionalId(flags, context, 'an ep_ id', endpointIdSchema);
      if (flags.switches.has('--enable') && flags.switches.has('--disable'))
        throw new UsageError('give --enable or --disable, not both');
      const url = urlOf(flags.values.get('--url'));
      const topics = topicsOf(flags.values.get('--topics'));
      const description = flags.values.get('--description');
      const version = versionOf(flags.values.get('--version'));
      const body: UpdateEndpointRequest = {
        ...(url === undefined ? {} : { url }),
        ...(topics === undefined ? {} : { topics }),
        ...(description === undefined ? {} : { description }),
        ...(version === undefined ? {} : { version }),
        ...(flags.switches.has('--enable') ? { status: 'enabled' as const } : {}),
        ...(flags.switches.has('--disable') ? { status: 'disabled' as const } : {}),
      };
      if (Object.keys(body).length === 0)
        throw new UsageError(
          'endpoints update needs something to change: --url, --topics, --description, --version, --enable or --disable',
        );
      return { kind: 'endpoints-update', endpointId, body };
    }
    case undefined:
      throw new UsageError('endpoints needs a command: list, show, create, update, delete or rotate-secret');
    default:
      throw new UsageError(`unknown command endpoints ${verb}`);
  }
};

/** The command line (after `npm run ops --`) as a command, or a UsageError naming what is wrong. Pure. */
export const parseArgs = (argv: readonly string[]): OpsCommand => {
  if (argv.includes('--help') || argv.includes('-h')) return { kind: 'help' };
  const sigv4 = argv.includes('--sigv4');
  const [verb, ...rest] = argv.filter((arg) => arg !== '--sigv4');
  let command: OpsCommand;
  switch (verb) {
    case undefined:
    case 'help':
      return { kind: 'help' };
    case 'replay':
      command = parseReplay(rest);
      break;
    case 'events':
      command = parseEvents(rest);
      break;
    case 'dlq':
      command = parseDlq(rest);
      break;
    case 'endpoints':
      command = parseEndpoints(rest);
      break;
    default:
      throw new UsageError(`unknown command ${verb}`);
  }
  return sigv4 ? { ...command, sigv4: true } : command;
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

const execute = async (command: Exclude<OpsCommand, { kind: 'help' }>, client: AdminClient, io: OpsIo) => {
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

/** Runs one command; the exit code is 0 on success, 1 on any failure (usage errors included, as catalog). */
export const run = adminCliRunner<OpsCommand, OpsIo>({ usage: USAGE, parse: parseArgs, execute });

if (isMainModule(import.meta.url)) {
  process.exitCode = await run(process.argv.slice(2), processIo());
}
