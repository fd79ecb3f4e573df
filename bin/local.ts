/**
 * `npm start`: the whole service on this machine — DynamoDB Local, fauxqs, the local twins of Lambda's event
 * source mappings, EventBridge Scheduler and KMS, and an API gateway in front of the same handlers as AWS.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigurationError, loadLocalConfig } from '../functions/adapters/local/config';
import { JavaMissingError } from '../functions/adapters/local/dynamodb-local';
import { PortInUseError } from '../functions/adapters/local/local-aws';
import { type LocalStack, startLocalStack } from '../functions/adapters/local/stack';
import { egressPolicyFromEnv, LOCAL_EGRESS, retryPolicyFromEnv } from '../functions/composition/webhooks';

/** Published on first start (empty data directory) so the API has something to price. */
const DEMO_CATALOG = fileURLToPath(new URL('../catalog/demo-catalog.json', import.meta.url));

/** A second Ctrl-C later than this after the first ends the process without waiting for a clean stop. */
const FORCE_QUIT_AFTER_MS = 2_000;

const say = (line: string) => process.stderr.write(`[local] ${line}\n`);

const main = async (): Promise<void> => {
  const config = loadLocalConfig(process.env, process.cwd());
  const started = Date.now();
  let stack: LocalStack | undefined;
  let stoppingSince: number | undefined;
  const shutdown = async (signal: string) => {
    if (stoppingSince !== undefined) {
      // One Ctrl-C reaches this process more than once (directly, and relayed by npm); only a signal sent well
      // after the first means "stop waiting".
      if (Date.now() - stoppingSince < FORCE_QUIT_AFTER_MS) return;
      say(`${signal} again: exiting now`);
      process.exit(1);
    }
    stoppingSince = Date.now();
    say(`${signal} received, stopping`);
    await stack?.stop();
    say('stopped; nothing left running');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));

  const seedCatalog: unknown = JSON.parse(readFileSync(DEMO_CATALOG, 'utf8'));
  stack = await startLocalStack({
    seedCatalog,
    host: config.host,
    port: config.port,
    ...(config.dataDir ? { dataDir: config.dataDir } : {}),
    apiKey: config.apiKey,
    adminToken: config.adminToken,
    logLevel: config.logLevel,
    progress: say,
    // WEBHOOK_BACKOFF_SECONDS, WEBHOOK_DAILY_RETRY_DAYS, WEBHOOK_ATTEMPT_TIMEOUT_MS, WEBHOOK_ALLOWED_CIDRS and
    // WEBHOOK_ALLOW_HTTP, read the same way as in AWS (defaults: the production schedule; loopback over http).
    webhooks: {
      policy: retryPolicyFromEnv(process.env),
      egress: egressPolicyFromEnv(process.env, LOCAL_EGRESS),
    },
  });
  if (stoppingSince !== undefined) return;
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  const banner = [
    '',
    `  Pricing service (local) is up in ${seconds}s`,
    `  Base URL     ${stack.url}`,
    `  Health       curl ${stack.url}/health`,
    `  Data         ${config.dataDir ?? 'in memory (IN_MEMORY=true): discarded at stop'}`,
    `  API key      ${config.apiKey}   (x-api-key; ${config.generated.apiKey ? 'generated and saved' : 'from API_KEY or saved'})`,
    `  Admin token  ${config.adminToken}   (Authorization: Bearer; ${config.generated.adminToken ? 'generated and saved' : 'from ADMIN_TOKEN or saved'})`,
    `  DynamoDB     ${stack.dynamoDbEndpoint}    SQS/S3 ${stack.sqsEndpoint}`,
    '  Ctrl-C stops everything.',
    '',
  ];
  process.stdout.write(`${banner.join('\n')}\n`);
};

main().catch((error: unknown) => {
  if (
    error instanceof JavaMissingError ||
    error instanceof PortInUseError ||
    error instanceof ConfigurationError
  ) {
    say(`cannot start: ${error.message}`);
  } else {
    say(`cannot start: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  }
  process.exit(1);
});
