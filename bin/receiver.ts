/**
 * `npm run receiver`: the reference webhook receiver on this machine, with DynamoDB Local behind it — a
 * partner's receiver to point the service's deliveries at (register the printed URL as an endpoint).
 *
 * Environment:
 * - `WEBHOOK_SECRETS` (required): the endpoint's signing secret(s), `whsec_…`, comma-separated;
 * - `PORT` (default 4000), `HOST` (default 127.0.0.1);
 * - `DATA_DIR` (default `.local/receiver`): DynamoDB Local's data; `IN_MEMORY=true` keeps nothing on disk;
 * - `RECEIVER_TABLE_NAME` (default `webhook-receiver`), `HANDLER_VERSION` (default `reference-1`),
 *   `DEDUP_DAYS` (default 7).
 *
 * Ctrl-C stops the HTTP server and DynamoDB Local (Java) before exiting. It takes no arguments: `--help` prints the
 * usage (exit 0), anything else is a usage error (exit 2); it exits 1 when it cannot start.
 */
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDbLocalProcess,
  JavaMissingError,
  startDynamoDbLocal,
} from '../functions/adapters/local/dynamodb-local';
import {
  assertPortFree,
  freePort,
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  PortInUseError,
} from '../functions/adapters/local/local-aws';
import {
  createReceiverFromConfig,
  ReceiverConfigurationError,
  readReceiverConfig,
} from '../functions/receiver/reference/lambda';
import {
  type LocalServer,
  rawTargetOf,
  serveProxyHandler,
} from '../functions/receiver/reference/local-server';
import { signedPathOf } from '../functions/receiver/reference/receiver';
import { SecretsConfigurationError } from '../functions/receiver/reference/secrets';
import { ensureReceiverTable } from '../functions/receiver/reference/table';
import { atMost, type Help, isHelp, parseToolLine, startMain } from './cli';
import { exitOnStartFailure, printBanner, progressLine, stopOnSignals } from './process-lifecycle';

export const DEFAULT_RECEIVER_PORT = 4000;
export const DEFAULT_RECEIVER_DATA_DIR = '.local/receiver';
export const DEFAULT_RECEIVER_TABLE = 'webhook-receiver';

export const USAGE = `usage: WEBHOOK_SECRETS=whsec_…[,whsec_…] npm run receiver
the reference webhook receiver on http://$HOST:$PORT/webhooks/v1, with DynamoDB Local; it takes no arguments
environment:
  WEBHOOK_SECRETS      the endpoint's signing secret(s), whsec_…, comma-separated (required)
  PORT, HOST           default ${DEFAULT_RECEIVER_PORT}, 127.0.0.1
  DATA_DIR             DynamoDB Local's data (default ${DEFAULT_RECEIVER_DATA_DIR}); IN_MEMORY=true keeps nothing
  RECEIVER_TABLE_NAME  default ${DEFAULT_RECEIVER_TABLE}; HANDLER_VERSION (default reference-1), DEDUP_DAYS (7)`;

/** The command line: nothing but `--help`. */
export const parseArgs = (argv: readonly string[]): Record<string, never> | Help => {
  const line = parseToolLine(argv, {});
  if (isHelp(line)) return line;
  atMost(line.positionals, 0);
  return {};
};

type Env = Readonly<Record<string, string | undefined>>;

const truthy = (value: string | undefined): boolean => value !== undefined && /^(1|true|yes)$/i.test(value);

export interface LocalReceiverSettings {
  readonly port: number;
  readonly host: string;
  /** undefined: in memory. */
  readonly dataDir: string | undefined;
  readonly workDir: string;
  readonly env: Env;
}

/** Settings from the environment; throws ReceiverConfigurationError with what to set. */
export const localReceiverSettings = (env: Env, cwd: string): LocalReceiverSettings => {
  if (!env.WEBHOOK_SECRETS?.trim()) {
    throw new ReceiverConfigurationError(
      'WEBHOOK_SECRETS is required: the signing secret(s) of the endpoint you registered, whsec_…, ' +
        'comma-separated (e.g. WEBHOOK_SECRETS=whsec_… npm run receiver)',
    );
  }
  if (env.WEBHOOK_SECRETS_PARAMETER?.trim()) {
    throw new ReceiverConfigurationError(
      'WEBHOOK_SECRETS_PARAMETER (SSM) is for AWS; locally use WEBHOOK_SECRETS',
    );
  }
  const portText = env.PORT?.trim() || String(DEFAULT_RECEIVER_PORT);
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port < 1 || port > 65_535) {
    throw new ReceiverConfigurationError(`PORT must be a TCP port, 1–65535 (got "${portText}")`);
  }
  const inMemory = truthy(env.IN_MEMORY);
  const dataDir = path.resolve(cwd, env.DATA_DIR?.trim() || DEFAULT_RECEIVER_DATA_DIR);
  return {
    port,
    host: env.HOST?.trim() || '127.0.0.1',
    dataDir: inMemory ? undefined : dataDir,
    workDir: dataDir,
    env: { ...env, RECEIVER_TABLE_NAME: env.RECEIVER_TABLE_NAME?.trim() || DEFAULT_RECEIVER_TABLE },
  };
};

export interface RunningReceiver {
  readonly url: string;
  readonly webhookBaseUrl: string;
  readonly dynamoDbEndpoint: string;
  readonly tableName: string;
  stop(): Promise<void>;
}

/** Starts DynamoDB Local, creates the table when missing, and serves the reference receiver over HTTP. */
export const startLocalReceiver = async (
  settings: LocalReceiverSettings,
  progress: (line: string) => void = () => undefined,
): Promise<RunningReceiver> => {
  const config = readReceiverConfig(settings.env);
  await assertPortFree(settings.port, settings.host);
  let dynamo: DynamoDbLocalProcess | undefined;
  let server: LocalServer | undefined;
  const dynamoDb = { client: undefined as DynamoDBClient | undefined };
  const stop = async () => {
    await server?.close();
    dynamoDb.client?.destroy();
    await dynamo?.stop();
  };
  try {
    progress(`starting DynamoDB Local (${settings.dataDir ? `data in ${settings.dataDir}` : 'in memory'})`);
    dynamo = await startDynamoDbLocal({
      port: await freePort(),
      workDir: settings.workDir,
      ...(settings.dataDir ? { dbPath: path.join(settings.dataDir, 'dynamodb') } : {}),
    });
    dynamoDb.client = new DynamoDBClient({
      endpoint: dynamo.endpoint,
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
    });
    if (await ensureReceiverTable(dynamoDb.client, config.tableName))
      progress(`created table ${config.tableName}`);
    const receiver = createReceiverFromConfig(config, {
      dynamoDb: dynamoDb.client,
      signedPath: (event) => rawTargetOf(event) ?? signedPathOf(event),
    });
    server = await serveProxyHandler({
      handler: receiver,
      host: settings.host,
      port: settings.port,
      onError: (error) => progress(`request failed: ${error instanceof Error ? error.name : String(error)}`),
    });
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url: server.url,
    webhookBaseUrl: `${server.url}/webhooks/v1`,
    dynamoDbEndpoint: dynamo.endpoint,
    tableName: config.tableName,
    stop,
  };
};

const say = progressLine('receiver');

const main = async (): Promise<void> => {
  const settings = localReceiverSettings(process.env, process.cwd());
  let running: RunningReceiver | undefined;
  const signals = stopOnSignals(say, () => running?.stop());

  running = await startLocalReceiver(settings, say);
  if (signals.stopping()) {
    await running.stop();
    return;
  }
  const config = readReceiverConfig(settings.env);
  printBanner([
    '  Reference webhook receiver (local) is up',
    `  Register     ${running.webhookBaseUrl}    (events arrive at <url>/<topic>)`,
    `  Status       curl ${running.url}/webhooks/status/<event_id>`,
    `  Acknowledge  curl -X POST ${running.url}/webhooks/ack -d '{"event_id":"…","acknowledged_by":"you"}'`,
    `  Table        ${running.tableName}  (DynamoDB Local ${running.dynamoDbEndpoint})`,
    `  Data         ${settings.dataDir ?? 'in memory (IN_MEMORY=true): discarded at stop'}`,
    `  Secrets      ${config.secrets.kind === 'list' ? config.secrets.secrets.length : 0} from WEBHOOK_SECRETS   Handler ${config.handlerVersion}   Dedup ${config.dedupDays} days`,
  ]);
};

startMain(import.meta.url, { usage: USAGE, parse: parseArgs }, () =>
  main().catch(
    exitOnStartFailure(say, [
      ReceiverConfigurationError,
      SecretsConfigurationError,
      JavaMissingError,
      PortInUseError,
    ]),
  ),
);
