/**
 * `npm run smoke -- --url <base> [--api-key <key>] [--token <admin token> | --sigv4] [--receiver <url>]`
 *
 * The check to run after `npm run deploy` (or against `npm start`): health, the JWKS, a price, a quote and its
 * commit with a caller key, the receipt verified offline against the JWKS (bin/verify-receipt.ts), and — with
 * `--receiver` — a test event delivered to the receiver the user names, through a temporary endpoint registered
 * and deleted again with the admin API. Prints a table (check, result, ms, detail); exits 0 only when every
 * check passed (C35), 1 when one failed, 2 for a wrong command line (bin/cli.ts).
 */
import { randomUUID } from 'node:crypto';
import type { z } from 'zod';
import type { JsonObject } from '../functions/domain/receipts/receipt';
import {
  jwksResponseSchema,
  livenessResponseSchema,
  priceResponseSchema,
  quoteResponseSchema,
  receiptResponseSchema,
} from '../functions/schemas/responses';
import {
  endpointWithSecretResponseSchema,
  eventAcceptedResponseSchema,
  eventHistoryResponseSchema,
} from '../functions/schemas/webhooks';
import {
  AdminClient,
  type ConnectOptions,
  credentialsFile,
  DEFAULT_DATA_DIR,
  describeFailure,
  isDeployed,
} from './admin-client';
import {
  type CliIo,
  EXIT_FAILURE,
  EXIT_OK,
  type Help,
  isHelp,
  parseToolLine,
  runCli,
  runMain,
  UsageError,
} from './cli';
import { checkReceipt } from './verify-receipt';

/** A SKU of the demo catalog (`npm start`), priced in EUR in Germany. */
export const DEFAULT_SKU = { sku: 'GAME-STARFALL-PS5', currency: 'EUR', region: 'DE' } as const;
/** How long one request may take. */
export const REQUEST_TIMEOUT_MS = 10_000;
/** How long the test event may take to reach the receiver, by default. */
export const DEFAULT_WAIT_SECONDS = 30;
/** The test event's type: its topic `smoke` is the one the temporary endpoint subscribes to. */
export const SMOKE_EVENT_TYPE = 'smoke.test';
const POLL_MS = 250;

export const USAGE = `usage: npm run smoke -- --url <base> [--api-key <key>] [--token <admin token> | --sigv4]
       [--receiver <url>] [--sku <sku> --currency <code> --region <code>] [--wait <seconds>]
checks, one row each (check, result, ms, detail):
  health            GET /health answers 200 {"status":"ok"}
  keys              GET /keys is a JWKS with at least one key
  price             GET /catalog/prices of --sku in --currency and --region
                    (default ${DEFAULT_SKU.sku} ${DEFAULT_SKU.currency} ${DEFAULT_SKU.region}, the demo catalog)
  quote, commit     POST /pricing/quote of it, POST /pricing/commit: a real receipt of the key's tenant
                    (use a test tenant's key)
  receipt           the receipt's hash and signature verified offline against the JWKS
  webhook endpoint  with --receiver: a temporary endpoint for it (topic smoke; admin API)
  webhook event     a ${SMOKE_EVENT_TYPE} event published (POST /webhooks/events)
  webhook delivery  delivered to <receiver>/smoke with a 2xx within --wait seconds (default ${DEFAULT_WAIT_SECONDS})
  webhook cleanup   the endpoint deleted
  without --receiver the webhook checks are skipped (a note, not a failure)
caller key: --api-key, else API_KEY, else (a local stack) api_key in $DATA_DIR/credentials.json
operator (webhook checks): --token, else ADMIN_TOKEN, else admin_token in $DATA_DIR/credentials.json (the
local stack, DATA_DIR default ${DEFAULT_DATA_DIR}); --sigv4 (or API_AUTH=sigv4) for a deployed API: IAM SigV4 with
the default AWS credential chain, an operator role with endpoint_admin
exit: 0 every check passed, 1 a check failed, 2 usage error`;

export interface SmokeOptions {
  readonly url: string;
  readonly apiKey?: string;
  readonly token?: string;
  readonly sigv4: boolean;
  readonly receiver?: string;
  readonly sku: string;
  readonly currency: string;
  readonly region: string;
  readonly waitSeconds: number;
}

/** An http(s) URL, without a trailing slash; a UsageError naming the option otherwise. */
const httpUrl = (value: string, option: string): string => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(`${option}: ${value} is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new UsageError(`${option} must be http(s)`);
  return value.replace(/\/+$/, '');
};

export const parseOptions = (argv: readonly string[]): SmokeOptions | Help => {
  const line = parseToolLine(argv, {
    url: { type: 'string', value: 'the base URL of the API' },
    'api-key': { type: 'string', value: 'a caller key' },
    token: { type: 'string', value: 'an admin token' },
    sigv4: { type: 'boolean' },
    receiver: { type: 'string', value: 'a webhook receiver URL' },
    sku: { type: 'string' },
    currency: { type: 'string' },
    region: { type: 'string' },
    wait: { type: 'string', value: 'seconds' },
  });
  if (isHelp(line)) return line;
  if (line.positionals.length > 0)
    throw new UsageError(`unexpected arguments: ${line.positionals.join(' ')}`);
  const { values } = line;
  if (values.url === undefined)
    throw new UsageError('smoke needs --url <base> (the API, e.g. http://127.0.0.1:3000)');
  if (values.token !== undefined && values.sigv4)
    throw new UsageError('give --token (the local stack) or --sigv4 (a deployed API), not both');
  if (values.wait !== undefined && !/^[1-9]\d{0,3}$/.test(values.wait))
    throw new UsageError('--wait must be a number of seconds from 1 to 9999');
  return {
    url: httpUrl(values.url, '--url'),
    sigv4: values.sigv4 === true,
    sku: values.sku ?? DEFAULT_SKU.sku,
    currency: values.currency ?? DEFAULT_SKU.currency,
    region: values.region ?? DEFAULT_SKU.region,
    waitSeconds: values.wait === undefined ? DEFAULT_WAIT_SECONDS : Number(values.wait),
    ...(values['api-key'] === undefined ? {} : { apiKey: values['api-key'] }),
    ...(values.token === undefined ? {} : { token: values.token }),
    ...(values.receiver === undefined ? {} : { receiver: httpUrl(values.receiver, '--receiver') }),
  };
};

// ---------------------------------------------------------------------------------------------------------
// Checks

export type CheckResult = 'pass' | 'fail' | 'skip';

export interface CheckRow {
  readonly check: string;
  readonly result: CheckResult;
  readonly ms: number;
  readonly detail: string;
}

/** Why a check failed, in one line. */
class CheckFailed extends Error {}

/** The table the checks fill, and the checks themselves. */
class Checks {
  readonly rows: CheckRow[] = [];

  /** Runs a check: a passing row with its detail and its value, or a failing row with why (undefined). */
  async run<T>(
    check: string,
    body: () => Promise<{ readonly detail: string; readonly value: T }>,
  ): Promise<T | undefined> {
    const started = performance.now();
    try {
      const { detail, value } = await body();
      this.rows.push({ check, result: 'pass', ms: performance.now() - started, detail });
      return value;
    } catch (error) {
      const detail = error instanceof Error ? error.message : String(error);
      this.rows.push({ check, result: 'fail', ms: performance.now() - started, detail });
      return undefined;
    }
  }

  skip(check: string, detail: string): void {
    this.rows.push({ check, result: 'skip', ms: 0, detail });
  }
}

/** The table: one row per check, then the counts. */
export const describeRows = (rows: readonly CheckRow[]): string => {
  const header = { check: 'check', result: 'result', ms: 'ms', detail: 'detail' };
  const cells = [header, ...rows.map((row) => ({ ...row, ms: String(Math.round(row.ms)) }))];
  const width = (key: 'check' | 'result' | 'ms') => Math.max(...cells.map((cell) => cell[key].length));
  const lines = cells.map(
    (cell) =>
      `${cell.check.padEnd(width('check'))}  ${cell.result.padEnd(width('result'))}  ` +
      `${cell.ms.padStart(width('ms'))}  ${cell.detail}`,
  );
  const count = (result: CheckResult) => rows.filter((row) => row.result === result).length;
  return `${lines.join('\n')}\n${count('pass')} passed, ${count('fail')} failed, ${count('skip')} skipped\n`;
};

interface Answer {
  readonly status: number;
  readonly body: unknown;
}

/** The answer's body as `schema` describes it when the status is `expected`; why not otherwise. */
const expectAnswer = <S extends z.ZodType>(
  what: string,
  answer: Answer,
  expected: number,
  schema: S,
): z.infer<S> => {
  if (answer.status !== expected)
    throw new CheckFailed(`${what}: ${describeFailure(answer.status, answer.body).split('\n')[0]}`);
  const parsed = schema.safeParse(answer.body);
  if (!parsed.success)
    throw new CheckFailed(
      `${what}: the answer is not the documented one (${parsed.error.issues
        .slice(0, 3)
        .map((issue) => `${issue.path.join('.') || '$'}: ${issue.message}`)
        .join('; ')})`,
    );
  return parsed.data;
};

/** The caller-key routes and the public ones, with a timeout per request. */
const publicApi =
  (io: CliIo, options: SmokeOptions, apiKey: string) =>
  async (method: 'GET' | 'POST', route: string, body?: unknown): Promise<Answer> => {
    let response: Response;
    try {
      response = await io.fetch(`${options.url}${route}`, {
        method,
        headers: {
          accept: 'application/json',
          'x-api-key': apiKey,
          ...(body === undefined
            ? {}
            : { 'content-type': 'application/json', 'idempotency-key': randomUUID() }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
    } catch (error) {
      const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
      throw new CheckFailed(
        `${method} ${route}: cannot reach ${options.url}: ${error instanceof Error ? error.message : String(error)}${cause}`,
      );
    }
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text.length === 0 ? undefined : JSON.parse(text);
    } catch {
      // Not JSON: the text is the body.
    }
    return { status: response.status, body: parsed };
  };

/** The caller key: `--api-key`, else API_KEY, else the local stack's `api_key` (a loopback URL only). */
const callerKey = async (io: CliIo, options: SmokeOptions): Promise<string | undefined> => {
  const given = options.apiKey ?? (io.env.API_KEY || undefined);
  if (given !== undefined || isDeployed(new URL(options.url), false)) return given;
  try {
    const credentials: unknown = JSON.parse(await io.readFile(credentialsFile(io)));
    const key = typeof credentials === 'object' && credentials !== null && 'api_key' in credentials;
    return key && typeof credentials.api_key === 'string' ? credentials.api_key : undefined;
  } catch {
    return undefined;
  }
};

/** One run of the checks: what it was asked, its world, its table. */
interface SmokeRun {
  readonly options: SmokeOptions;
  readonly io: CliIo;
  readonly clientOptions: ConnectOptions;
  readonly api: ReturnType<typeof publicApi>;
  readonly checks: Checks;
}

/** A price, a quote of it and its commit: the receipt (its JSON), when every step passed. */
const checkout = async ({ checks, api, options }: SmokeRun) => {
  const query = new URLSearchParams({ sku: options.sku, currency: options.currency, region: options.region });
  const price = await checks.run('price', async () => {
    const body = expectAnswer(
      'price',
      await api('GET', `/catalog/prices?${query}`),
      200,
      priceResponseSchema,
    );
    return {
      detail: `${body.sku}: ${body.unit_price} ${body.currency} in ${options.region} (pricelist_version ${body.pricelist_version}, ${body.fx_version})`,
      value: body,
    };
  });
  const rules = price?.quantity_rules;
  const quantity = Math.max(rules?.min ?? 1, rules?.increment ?? 1);
  const quote = await checks.run('quote', async () => {
    const body = expectAnswer(
      'quote',
      await api('POST', '/pricing/quote', {
        items: [{ sku_id: options.sku, quantity }],
        region: options.region,
        currency: options.currency,
        buyer_type: 'consumer',
      }),
      201,
      quoteResponseSchema,
    );
    return {
      detail: `${body.quote_id}: ${quantity} × ${options.sku}, total ${body.total} ${body.currency}`,
      value: body,
    };
  });
  if (quote === undefined) {
    checks.skip('commit', 'needs the quote');
    return undefined;
  }
  return checks.run('commit', async () => {
    const answer = await api('POST', '/pricing/commit', {
      quote_id: quote.quote_id,
      signature: quote.signature,
    });
    const body = expectAnswer('commit', answer, 201, receiptResponseSchema);
    const total = `${body.computed_totals.total} ${body.computed_totals.currency}`;
    if (body.computed_totals.total !== quote.total || body.computed_totals.currency !== quote.currency)
      throw new CheckFailed(
        `${body.receipt_id}: total ${total}, but the quote's is ${quote.total} ${quote.currency}`,
      );
    return {
      detail: `${body.receipt_id}: total ${total}, signed by ${body.key_id}`,
      value: answer.body as JsonObject,
    };
  });
};

/** Polls the event until its delivery to the endpoint is delivered (the detail), failed, or out of time. */
const awaitDelivery = async (target: {
  readonly client: AdminClient;
  readonly eventId: string;
  readonly endpointId: string;
  readonly waitSeconds: number;
}): Promise<string> => {
  const { client, eventId, endpointId, waitSeconds } = target;
  const deadline = Date.now() + waitSeconds * 1000;
  for (;;) {
    const { body } = await client.get(`/webhooks/events/${encodeURIComponent(eventId)}`);
    const history = eventHistoryResponseSchema.parse(body);
    const delivery = history.deliveries.find((entry) => entry.endpoint_id === endpointId);
    const last = delivery?.attempts.at(-1);
    const attempt =
      last === undefined
        ? ''
        : ` (attempt ${last.attempt}: ${last.http_status === undefined ? (last.error ?? last.outcome) : `HTTP ${last.http_status}`}${last.reason ? `, ${last.reason}` : ''})`;
    if (delivery?.status === 'delivered')
      return `${eventId} delivered${attempt} in ${last?.duration_ms ?? '?'} ms`;
    if (delivery !== undefined && delivery.status !== 'pending')
      throw new CheckFailed(`${eventId}: ${delivery.status}${attempt}`);
    if (Date.now() >= deadline)
      throw new CheckFailed(
        `${eventId}: not delivered after ${waitSeconds} s (${delivery === undefined ? 'not fanned out to the endpoint' : delivery.status}${attempt})`,
      );
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
};

const WEBHOOK_CHECKS = ['webhook endpoint', 'webhook event', 'webhook delivery', 'webhook cleanup'] as const;

/** A temporary endpoint for the receiver, a test event to it, its delivery, and the endpoint deleted again. */
const webhook = async ({ checks, io, options, clientOptions }: SmokeRun): Promise<void> => {
  const receiver = options.receiver;
  if (receiver === undefined) {
    checks.skip('webhook', 'no --receiver given: no test event sent');
    return;
  }
  const env = { ...io.env, API_URL: options.url, ...(options.token ? { ADMIN_TOKEN: options.token } : {}) };
  // Every admin request with the same timeout as the others.
  const timedFetch: CliIo['fetch'] = (url, init) =>
    io.fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
  const smokeId = randomUUID();
  const registered = await checks.run(WEBHOOK_CHECKS[0], async () => {
    const client = await AdminClient.connect(
      { ...io, env, fetch: timedFetch },
      {
        ...clientOptions,
        sigv4: options.sigv4,
      },
    );
    const { body } = await client.post('/webhooks/endpoints', {
      url: receiver,
      topics: ['smoke'],
      description: `npm run smoke ${smokeId}`,
    });
    const endpoint = endpointWithSecretResponseSchema.parse(body);
    return {
      detail: `${endpoint.endpoint_id} for ${endpoint.url} (topic smoke)`,
      value: { client, endpoint },
    };
  });
  if (registered === undefined) {
    for (const check of WEBHOOK_CHECKS.slice(1)) checks.skip(check, 'needs the endpoint');
    return;
  }
  const { client, endpoint } = registered;
  const eventId = await checks.run(WEBHOOK_CHECKS[1], async () => {
    const { body } = await client.post('/webhooks/events', {
      event_id: `smoke-${smokeId}`,
      type: SMOKE_EVENT_TYPE,
      producer: 'smoke',
      data: { smoke_id: smokeId, sent_at: new Date().toISOString() },
    });
    const { event_id } = eventAcceptedResponseSchema.parse(body);
    return { detail: `${event_id} (${SMOKE_EVENT_TYPE})`, value: event_id };
  });
  if (eventId === undefined) checks.skip(WEBHOOK_CHECKS[2], 'needs the event');
  else
    await checks.run(WEBHOOK_CHECKS[2], async () => ({
      detail: await awaitDelivery({
        client,
        eventId,
        endpointId: endpoint.endpoint_id,
        waitSeconds: options.waitSeconds,
      }),
      value: true,
    }));
  await checks.run(WEBHOOK_CHECKS[3], async () => {
    await client.delete(`/webhooks/endpoints/${encodeURIComponent(endpoint.endpoint_id)}`);
    return { detail: `${endpoint.endpoint_id} deleted`, value: true };
  });
};

/** Runs every check against `options.url` with the caller key `apiKey`; the rows of the table. */
export const smoke = async (
  io: CliIo,
  options: SmokeOptions,
  apiKey: string,
  clientOptions: ConnectOptions = {},
): Promise<CheckRow[]> => {
  const run: SmokeRun = {
    options,
    io,
    clientOptions,
    api: publicApi(io, options, apiKey),
    checks: new Checks(),
  };
  const { checks, api } = run;
  await checks.run('health', async () => {
    const body = expectAnswer('health', await api('GET', '/health'), 200, livenessResponseSchema);
    return { detail: `status ${body.status}`, value: body };
  });
  const jwks = await checks.run('keys', async () => {
    const body = expectAnswer('keys', await api('GET', '/keys'), 200, jwksResponseSchema);
    if (body.keys.length === 0) throw new CheckFailed('GET /keys lists no key');
    return {
      detail: `${body.keys.length} key(s): ${body.keys.map((key) => key.kid).join(', ')}`,
      value: body,
    };
  });
  const receipt = await checkout(run);
  if (receipt === undefined || jwks === undefined) {
    checks.skip('receipt', `needs ${receipt === undefined ? 'the receipt' : 'the JWKS'}`);
  } else {
    await checks.run('receipt', async () => {
      const check = checkReceipt(receipt, jwks);
      if (!check.valid) throw new CheckFailed(check.line);
      return { detail: `${check.line}, offline against GET /keys`, value: true };
    });
  }
  await webhook(run);
  return checks.rows;
};

/** Exit code 0 when every check passed, 1 when one failed, 2 for a wrong command line. */
export const run = (
  argv: readonly string[],
  io: CliIo,
  clientOptions: ConnectOptions = {},
): Promise<number> =>
  runCli(
    {
      usage: USAGE,
      parse: parseOptions,
      execute: async (options, smokeIo) => {
        const apiKey = await callerKey(smokeIo, options);
        if (apiKey === undefined)
          throw new UsageError("smoke needs a caller key: --api-key <key> or API_KEY (a test tenant's key)");
        smokeIo.stdout(`smoke test of ${options.url}\n`);
        const rows = await smoke(smokeIo, options, apiKey, clientOptions);
        smokeIo.stdout(describeRows(rows));
        return rows.some((row) => row.result === 'fail') ? EXIT_FAILURE : EXIT_OK;
      },
    },
    argv,
    io,
  );

await runMain(import.meta.url, run);
