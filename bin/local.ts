/**
 * `npm start`: the whole service on this machine — DynamoDB Local, fauxqs, the local twins of Lambda's event
 * source mappings, EventBridge Scheduler and KMS, and an API gateway in front of the same handlers as AWS.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigurationError, loadLocalConfig } from '../functions/adapters/local/config';
import { JavaMissingError } from '../functions/adapters/local/dynamodb-local';
import { PortInUseError } from '../functions/adapters/local/local-aws';
import { LOCAL_PARTNER_ACCOUNT } from '../functions/adapters/local/partner-aws';
import {
  localRuntimeOf,
  removeLocalRuntime,
  writeLocalRuntime,
} from '../functions/adapters/local/runtime-file';
import {
  AttachedEngineError,
  DEMO_TENANT,
  type LocalStack,
  startLocalStack,
} from '../functions/composition/local/stack';
import {
  egressPolicyFromEnv,
  LOCAL_EGRESS,
  retryPolicyFromEnv,
  webhookSettingsFromEnv,
} from '../functions/composition/webhooks';
import { bundleFiles, type SynthesizedBundles, synthesizeFunctionBundles } from '../lib/function-bundles';
import { buildWebApps, WEB_SECURITY_HEADERS } from '../lib/web-build';
import { exitOnStartFailure, printBanner, progressLine, stopOnSignals } from './process-lifecycle';

/** Published on first start (empty data directory) so the API has something to price. */
const DEMO_CATALOG = fileURLToPath(new URL('../catalog/demo-catalog.json', import.meta.url));

const say = progressLine('local');

const main = async (): Promise<void> => {
  const config = loadLocalConfig(process.env, process.cwd());
  const started = Date.now();
  let stack: LocalStack | undefined;
  let bundles: SynthesizedBundles | undefined;
  // The runtime file says where the running stack is (`npm run receipts` reads the bucket through it).
  const signals = stopOnSignals(say, async () => {
    if (config.dataDir) await removeLocalRuntime(config.dataDir);
    await stack?.stop();
    bundles?.cleanup();
  });

  const seedCatalog: unknown = JSON.parse(readFileSync(DEMO_CATALOG, 'utf8'));
  // LOCAL_BUNDLES=1: the bundles `npm run deploy` uploads, synthesized now, run instead of the sources.
  if (config.bundles) {
    say('building the function bundles as npm run deploy does (cdk synth with esbuild)');
    bundles = synthesizeFunctionBundles({ cache: true });
    const count = Object.keys(bundles.bundles).length;
    say(
      bundles.synthMs > 0
        ? `built ${count} bundles in ${(bundles.synthMs / 1000).toFixed(1)}s`
        : `reused the ${count} bundles built from these same sources (node_modules/.cache/pricing-bundles)`,
    );
  }
  // The console and the partner portal, built from web/ at each start (esbuild: about a second).
  const webDir = path.join(config.dataDir ?? mkdtempSync(path.join(tmpdir(), 'pricing-web-')), 'web');
  say('building the console and the partner portal (web/)');
  await buildWebApps(webDir);
  try {
    stack = await startLocalStack({
      web: { dir: webDir, headers: WEB_SECURITY_HEADERS },
      ...(bundles ? { bundles: bundleFiles(bundles) } : {}),
      seedCatalog,
      host: config.host,
      port: config.port,
      ...(config.dataDir ? { dataDir: config.dataDir } : {}),
      ...(config.engines ? { engines: config.engines } : {}),
      apiKey: config.apiKey,
      chargebackKey: config.chargebackKey,
      adminToken: config.adminToken,
      admins: config.admins,
      environment: process.env,
      logLevel: config.logLevel,
      progress: say,
      // WEBHOOK_BACKOFF_SECONDS, WEBHOOK_DAILY_RETRY_DAYS, WEBHOOK_ATTEMPT_TIMEOUT_MS, WEBHOOK_ALLOWED_CIDRS,
      // WEBHOOK_ALLOW_HTTP and WEBHOOK_CA_CERTS (a local TLS receiver's CA), read the same way as in AWS
      // (defaults: the production schedule; loopback over http; the public roots).
      webhooks: {
        policy: retryPolicyFromEnv(process.env),
        egress: egressPolicyFromEnv(process.env, LOCAL_EGRESS),
        settings: webhookSettingsFromEnv(process.env),
      },
    });
  } catch (error) {
    // A stack that did not start leaves no bundles behind.
    bundles?.cleanup();
    throw error;
  }
  if (signals.stopping()) return;
  if (config.dataDir) await writeLocalRuntime(config.dataDir, localRuntimeOf(stack));
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  printBanner([
    `  Pricing service (local) is up in ${seconds}s`,
    `  Base URL     ${stack.url}`,
    `  Health       curl ${stack.url}/health`,
    `  Console      ${stack.url}/console/   (sign in with an operator token below)`,
    `  Portal       ${stack.url}/portal/    (sign in with an endpoint's partner_key)`,
    `  Data         ${
      config.engines
        ? `in the attached engines (kept when the stack stops); keys and credentials in ${config.dataDir}`
        : (config.dataDir ?? 'in memory (IN_MEMORY=true): discarded at stop')
    }`,
    `  API key      ${config.apiKey}   (x-api-key of tenant ${DEMO_TENANT}: prices, quotes, receipts, returns; ${config.generated.apiKey ? 'generated and saved' : 'from API_KEY or saved'})`,
    `  PSP key      ${config.chargebackKey}   (x-api-key of tenant ${DEMO_TENANT}: chargebacks only)`,
    `  Admin token  ${config.adminToken}   (Authorization: Bearer; roles ${config.admins[0]?.roles.join('+')}; ${config.generated.adminToken ? 'generated and saved' : 'from ADMIN_TOKEN or saved'})`,
    ...config.admins
      .slice(1)
      .map(
        (admin) =>
          `  Operator     ${admin.name}: ${admin.token}   (Bearer; roles ${admin.roles.join('+')}${admin.machine ? ', machine' : ''}: --as ${admin.name})`,
      ),
    `  DynamoDB     ${stack.dynamoDbEndpoint}    SQS/S3 ${stack.sqsEndpoint}`,
    `  Partner AWS  ${stack.partnerAwsEndpoint}   (IAM roles, STS and EventBridge of account ${LOCAL_PARTNER_ACCOUNT}: SQS and EventBridge destinations)`,
    ...(bundles ? ['  Functions    the deployed bundles, one process per instance (LOCAL_BUNDLES=1)'] : []),
  ]);
};

main().catch(
  exitOnStartFailure(say, [JavaMissingError, PortInUseError, ConfigurationError, AttachedEngineError]),
);
