import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Logger } from '@aws-lambda-powertools/logger';
import { ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { ListQueuesCommand } from '@aws-sdk/client-sqs';
import type {
  APIGatewayAuthorizerResult,
  APIGatewayProxyEvent,
  APIGatewayProxyResult,
  APIGatewayRequestAuthorizerEvent,
  DynamoDBBatchResponse,
  DynamoDBStreamEvent,
  SQSEvent,
} from 'aws-lambda';
import { type AwsClients, destroyAwsClients } from '../../adapters/aws/clients';
import { AwsCloudDestinations } from '../../adapters/aws/cloud-destinations';
import { KmsDataCipher, KmsMacSigner, KmsReceiptSigner } from '../../adapters/aws/kms-signing';
import { SqsMessageQueue } from '../../adapters/aws/sqs-queue';
import type { EgressPolicy } from '../../adapters/http/guarded-http-client';
import { queueOfArnIn, startAwsTwin } from '../../adapters/local/aws-twin';
import { type ProvisionedResources, provisionResources } from '../../adapters/local/bootstrap';
import { BundleHost } from '../../adapters/local/bundle-host';
import { ADMIN_ROLES } from '../../adapters/local/config';
import { type DynamoDbLocalProcess, startDynamoDbLocalOnFreePort } from '../../adapters/local/dynamodb-local';
import { type FauxqsServer, startFauxqsServer } from '../../adapters/local/fauxqs';
import { FunctionPool, type LambdaHandler } from '../../adapters/local/function-pool';
import { enforceFunctionGrants } from '../../adapters/local/iam-guard';
import { InProcessMetrics } from '../../adapters/local/in-process-metrics';
import {
  assertPortFree,
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  localEngineClients,
} from '../../adapters/local/local-aws';
import { loadOrCreateLocalKeys } from '../../adapters/local/local-signing';
import { startPartnerAws } from '../../adapters/local/partner-aws';
import { LocalOneTimeScheduler, ScheduleDispatcher } from '../../adapters/local/scheduler';
import { SqsPoller } from '../../adapters/local/sqs-poller';
import { StreamPoller } from '../../adapters/local/stream-poller';
import {
  type DirectKeyId,
  EVENT_SOURCE_MAPPINGS,
  type EventSourceMappingDefinition,
  EXPORTER_RATE_MINUTES,
  FUNCTIONS,
  type FunctionId,
  KEYS,
  RATES_RATE_MINUTES,
  type RateLimit,
  type ServiceTableId,
  SWEEPER_RATE_MINUTES,
  TABLES,
  TUNABLE_SETTINGS,
} from '../../definitions';
import { type CallerScope, STOREFRONT_SCOPES } from '../../domain/access/principals';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../../domain/webhooks/retry-policy';
import { createAuthorizerHandler } from '../../handlers/authorizer';
import type { ExporterResult } from '../../handlers/exporter';
import type { RatesRunReport } from '../../handlers/rates';
import type { Clock } from '../../ports/clock';
import type { HealthProbe } from '../../ports/health';
import { systemClock } from '../../shared/clock';
import { createLogger, type LoggerOptions } from '../../shared/logger';
import { ensureConfiguredKey } from '../../usecases/access/api-keys';
import { publishSeedCatalog } from '../../usecases/change-requests/bootstrap';
import type { WebhookSettings } from '../../usecases/webhooks/context';
import { changeRequestDependencies } from '../change-requests';
import type { RateIngestionDependencies, ServiceDependencies } from '../dependencies';
import { integerSetting } from '../environment';
import { FUNCTION_FACTORIES } from '../functions';
import { crashHookFromEnv } from '../idempotency';
import { fxTickSecondsFromEnv, localRateSourceAccess } from '../rates';
import { composeService, type ServicePlatform } from '../service';
import { LOCAL_EGRESS } from '../webhooks';
import {
  LOCAL_ACCOUNT,
  LOCAL_CALLER_USAGE_PLAN,
  lambdaEnvironmentOnEngines,
  localKeyArn,
} from './function-environment';
import { type GatewayOperator, type HttpFunctionPool, startGateway } from './gateway';

export interface LocalStackOptions {
  /** Interface the gateway listens on. Default `127.0.0.1`. */
  readonly host?: string;
  /** Gateway port; 0 picks a free one. */
  readonly port: number;
  /** The built web pages and their headers (`lib/web-build.ts`), served at `/console/` and `/portal/`. */
  readonly web?: { readonly dir: string; readonly headers: Readonly<Record<string, string>> };
  /** Persistent state (DynamoDB Local, fauxqs SQLite, keys); omitted → in memory, gone at stop. */
  readonly dataDir?: string;
  /**
   * Engines already running (`LOCAL_DYNAMODB_ENDPOINT`, `LOCAL_FAUXQS_ENDPOINT`): the stack attaches to them instead of
   * starting its own, and leaves them running at stop, as AWS's services outlive a function that crashes.
   */
  readonly engines?: AttachedEngines;
  /** The demo tenant's storefront key (every scope but `chargebacks:write`), created on start when missing. */
  readonly apiKey: string;
  /** The demo tenant's payment-provider key (`chargebacks:write`), created on start when missing. */
  readonly chargebackKey?: string;
  /** More caller keys created on start when missing (tests: other tenants, narrower scopes). */
  readonly callerKeys?: readonly ConfiguredCallerKey[];
  /** How long the gateway's authorizer remembers a key (API Gateway's authorizer cache). */
  readonly callerKeyCacheSeconds?: number;
  readonly adminToken: string;
  /** Operators with their tokens and roles (default: only `admin` with `adminToken` and ADMIN_ROLES). */
  readonly admins?: readonly GatewayOperator[];
  readonly logLevel?: LoggerOptions['logLevel'];
  readonly clock?: Clock;
  /** How often due schedules are dispatched. Default 250 ms. */
  readonly schedulerIntervalMs?: number;
  /** How often an idle stream shard is polled. Default 200 ms. */
  readonly streamPollIntervalMs?: number;
  /** Per-API-key rate limit of the gateway (default: the usage plan's, `CATALOG_RATE_LIMIT`). */
  readonly rateLimit?: RateLimit;
  /** A catalog document published when the data directory has none yet (the demo catalog for `npm start`). */
  readonly seedCatalog?: unknown;
  /** How often the `rates` function runs (default: `FX_TICK_SECONDS`, else every minute as in AWS). */
  readonly ratesIntervalMs?: number;
  /**
   * How often the exporter's scheduled run builds the missing manifests of closed days (EventBridge Scheduler's
   * rate in AWS). Default EXPORTER_RATE_MINUTES (hourly).
   */
  readonly exportIntervalMs?: number;
  /** Settings read from the environment in AWS (guardrails, journal slices, rate ingestion). */
  readonly environment?: Readonly<Record<string, string | undefined>>;
  /** Progress lines while starting and stopping. */
  readonly progress?: (line: string) => void;
  /**
   * Sees the stack's SDK clients as soon as they exist, before anything is sent: measurements attach their
   * middleware here (the partition load model records every DynamoDB request's consumed capacity).
   */
  readonly onAwsClients?: (clients: AwsClients) => void;
  /**
   * Run every function from its deployed bundle (`LOCAL_BUNDLES=1 npm start`): the entry file of each function's
   * esbuild bundle, as `npm run deploy` builds it. Each instance is a process of its own with exactly the
   * environment the function's template gives it (resolved to the local engines), calling KMS, EventBridge
   * Scheduler and API Gateway through the AWS twin. Settings reach the bundles as in AWS, through variables
   * (`environment`): options given as objects here (`webhooks.policy`, `webhooks.settings`) do not.
   */
  readonly bundles?: Readonly<Record<FunctionId, string>>;
  /** Webhook delivery: egress (default loopback over http allowed), retry policy and lifetimes, sweeper period. */
  readonly webhooks?: {
    readonly egress?: EgressPolicy;
    readonly policy?: RetryPolicy;
    readonly settings?: Partial<WebhookSettings>;
    /** How often the outbox sweeper runs (EventBridge Scheduler's rate in AWS). Default 60 000 ms. */
    readonly sweepIntervalMs?: number;
  };
}

/** The tenant of the keys `npm start` prints. */
export const DEMO_TENANT = 'demo';
/** The customer groups (C29) the demo storefront key may name: the demo catalog's `b2b-gold` and `trade`. */
export const DEMO_CUSTOMER_GROUPS: readonly string[] = ['b2b-gold', 'trade'];

export interface ConfiguredCallerKey {
  readonly key: string;
  readonly tenant: string;
  readonly scopes: readonly CallerScope[];
  /** The customer groups its requests may name (C29); none by default. */
  readonly customer_groups?: readonly string[];
  readonly description?: string;
}

/** DynamoDB Local and fauxqs (SQS and S3) endpoints of engines that outlive the stack. */
export interface AttachedEngines {
  readonly dynamoDbEndpoint: string;
  readonly sqsEndpoint: string;
}

export interface LocalStack {
  readonly url: string;
  readonly dynamoDbEndpoint: string;
  /**
   * The pid of DynamoDB Local's supervisor process (Java is its child), for resource measurements; undefined when
   * the stack attached to running engines.
   */
  readonly dynamoDbSupervisorPid: number | undefined;
  readonly sqsEndpoint: string;
  /**
   * The partner account's twin (IAM roles, STS, EventBridge) for SQS and EventBridge destinations: a partner creates
   * its role here (`aws iam create-role --endpoint-url`) and its queues in fauxqs.
   */
  readonly partnerAwsEndpoint: string;
  readonly dataDir: string | undefined;
  readonly resources: ProvisionedResources;
  readonly deps: ServiceDependencies;
  readonly clients: AwsClients;
  /**
   * Invokes a function that is not behind the gateway as `aws lambda invoke` would (e.g. the exporter with
   * `{ "manifest_date": "YYYY-MM-DD" }`): through its pool, with its timeout.
   */
  invoke(functionId: InvocableFunctionId, event: unknown): Promise<unknown>;
  stop(): Promise<void>;
}

/** Functions the local stack runs outside the gateway: schedules, stream and queue consumers. */
export type InvocableFunctionId = 'sweeper' | 'rates' | 'fanout' | 'deliver' | 'exporter';

type Stoppable = { stop(): Promise<void> };

/** A component of the local stack that runs in-process and reports its own health. */
const componentProbe = (component: string, healthy: () => boolean): HealthProbe => ({
  component,
  check: async () => {
    if (!healthy()) throw new Error(`${component} is not running`);
  },
});

/**
 * Starts the whole local stack in one process tree: DynamoDB Local (Java) and fauxqs (SQS + S3) unless it attaches
 * to running ones (`engines`), the resources from the definitions module, local keys, the scheduler twin, the
 * event source mapping twins and the API gateway, all wired to the same handlers as the Lambda functions. `stop()`
 * ends every part it started, Java included; attached engines keep running.
 */
export const startLocalStack = async (options: LocalStackOptions): Promise<LocalStack> => {
  const host = options.host ?? '127.0.0.1';
  const progress = options.progress ?? (() => undefined);
  const clock = options.clock ?? systemClock;
  const stopStack: Stoppable[] = [];
  const stopAll = async () => {
    for (const part of stopStack.splice(0).reverse()) {
      await part.stop().catch(() => undefined);
    }
  };

  try {
    if (options.port !== 0) await assertPortFree(options.port, host);
    const scratch = options.dataDir ? undefined : mkdtempSync(path.join(tmpdir(), 'pricing-local-'));
    if (scratch) stopStack.push({ stop: async () => rmSync(scratch, { recursive: true, force: true }) });
    const root = options.dataDir ?? (scratch as string);

    const { dynamo, fauxqs } = await startOrAttachEngines(options, root, progress);
    stopStack.push(...dynamo.owned, ...fauxqs.owned);

    const clients = localEngineClients({ dynamoDbEndpoint: dynamo.endpoint, sqsEndpoint: fauxqs.endpoint });
    stopStack.push({ stop: async () => destroyAwsClients(clients) });
    if (options.engines) await probeAttachedEngines(clients, options.engines);
    options.onAwsClients?.(clients);

    progress('creating tables, queues and buckets from the definitions');
    const visibility = integerSetting(options.environment ?? {}, 'LOCAL_QUEUE_VISIBILITY_SECONDS', 5, 43_200);
    const resources = await provisionResources({
      dynamoDb: clients.dynamoDb,
      sqs: clients.sqs,
      s3: clients.s3,
      ...(visibility ? { visibilityTimeoutSeconds: visibility } : {}),
    });
    // As in AWS, a function reaches only what its declaration grants (the CDK builds its role from the same).
    // The local stack's own tables (its scheduler's, its stream checkpoints) stand for AWS services: not checked.
    const tableIds = new Map(
      (Object.entries(resources.tableNames) as [ServiceTableId, string][])
        .filter(([id]) => TABLES[id]?.scope === 'service')
        .map(([id, name]) => [name, id]),
    );
    enforceFunctionGrants(clients.dynamoDb, (name) => tableIds.get(name));
    const keys = await loadOrCreateLocalKeys(path.join(root, 'keys'));
    // The twin of EventBridge Scheduler one-time schedules: the functions' (in process) and the AWS twin's (bundles).
    const scheduler = new LocalOneTimeScheduler(
      clients.documents,
      resources.tableNames.localSchedules,
      clock,
    );
    // On bundles, the functions call KMS, Scheduler and API Gateway as in AWS: the twin answers with these keys.
    const twin = options.bundles
      ? await startAwsTwin({
          keys: keys.kms,
          scheduler,
          queueOfArn: queueOfArnIn(resources.queueUrls),
          usagePlans: [LOCAL_CALLER_USAGE_PLAN],
          region: LOCAL_REGION,
          account: LOCAL_ACCOUNT,
          host,
        })
      : undefined;
    if (twin) stopStack.push(twin);
    const signing = twin ? twinSigning(twin.endpoint, stopStack) : keys;
    // Partners' accounts, for SQS and EventBridge destinations: their roles and buses (their queues are fauxqs').
    const partnerAws = await startPartnerAws({ serviceAccount: LOCAL_ACCOUNT, sqs: clients.sqs, host });
    stopStack.push(partnerAws);

    const loggers = new Map<string, Logger>();
    const loggerFor = (name: string): Logger => {
      let logger = loggers.get(name);
      if (!logger) {
        logger = createLogger({ serviceName: name, logLevel: options.logLevel ?? 'INFO' });
        loggers.set(name, logger);
      }
      return logger;
    };
    const stackLogger = loggerFor('pricing-local');
    const queue = new SqsMessageQueue(clients.sqs, (id) => resources.queueUrls[id]);
    const dispatcher = new ScheduleDispatcher(scheduler, queue, stackLogger, options.schedulerIntervalMs);

    const pollers: { healthy: boolean; start(): void; stop(): Promise<void> }[] = [];
    const fxTick = fxTickSecondsFromEnv(options.environment ?? {});
    // One recorder for every function instance of the stack, read back by GET /admin/slo.
    const metrics = new InProcessMetrics(clock);
    const env = options.environment ?? {};
    const egress = options.webhooks?.egress ?? LOCAL_EGRESS;
    const serviceTable = (id: ServiceTableId): string => resources.tableNames[id];
    // The process's simulated FX feed: one for the rates function and for the tests that drive it.
    const rateIngestion: Omit<RateIngestionDependencies, 'state'> = {
      ...(fxTick ? { intervalOverrideSeconds: fxTick } : {}),
      simulatedStepSeconds: fxTick ?? 60,
      simulated: {},
      ...localRateSourceAccess(root, egress),
    };
    const onCheckpoint = crashHookFromEnv(env);
    const platform: ServicePlatform = {
      env,
      clock,
      createLogger: (functionId) =>
        createLogger({ serviceName: `pricing-${functionId}`, logLevel: options.logLevel ?? 'INFO' }),
      clients: () => clients,
      tableName: serviceTable,
      queueUrl: (id) => resources.queueUrls[id],
      bucketName: (id) => resources.bucketNames[id],
      receiptSigner: () => signing.receiptSigner,
      // The local stack signs with one key for its whole life: none retired.
      retiredReceiptKeys: () => [],
      quoteMac: () => signing.quoteMac,
      secretsCipher: () => signing.secretsCipher,
      scheduler: () => scheduler,
      egress: () => egress,
      trustPrincipal: () => `arn:aws:iam::${LOCAL_ACCOUNT}:root`,
      cloudDestinations: () =>
        new AwsCloudDestinations({
          region: LOCAL_REGION,
          egress,
          stsEndpoint: partnerAws.endpoint,
          eventBridgeEndpoint: partnerAws.endpoint,
          credentials: LOCAL_CREDENTIALS,
          emulatorQueues: true,
        }),
      retryPolicy: () => options.webhooks?.policy ?? DEFAULT_RETRY_POLICY,
      // Partners' queues are fauxqs' here.
      webhookSettings: { emulatorQueues: true, ...options.webhooks?.settings },
      rates: () => rateIngestion,
      metrics: () => ({ recorder: () => metrics, figures: metrics }),
      // Local operators come from ADMIN_TOKENS through the gateway, not from IAM.
      operatorRoles: () => [],
      // The local gateway throttles per key id itself (TokenBuckets): there is no usage plan to register with.
      callerUsagePlan: () => ({ register: async () => undefined, remove: async () => undefined }),
      extraHealthProbes: () => [
        componentProbe('event_source_mappings', () => pollers.every((poller) => poller.healthy)),
        componentProbe('scheduler', () => dispatcher.healthy),
      ],
      ...(onCheckpoint ? { onCheckpoint } : {}),
    };
    // Each function gets only what it declares, as in AWS; `deps` (for tests and the stack's own start-up) all.
    const deps = composeService(platform);
    const depsOf = (id: FunctionId): ServiceDependencies => composeService(platform, id);

    // In process, an instance is the function's handler; on bundles, a process running the function's bundle.
    const engines = twin
      ? {
          resources,
          dynamoDbEndpoint: dynamo.endpoint,
          sqsEndpoint: fauxqs.endpoint,
          twinEndpoint: twin.endpoint,
          partnerEndpoint: partnerAws.endpoint,
        }
      : undefined;
    const pool = <Event, Result>(id: FunctionId, factory: () => LambdaHandler<Event, Result>) => {
      const file = options.bundles?.[id];
      if (!file || !engines) return new FunctionPool<Event, Result>(FUNCTIONS[id], factory);
      const bundleHost = new BundleHost<Event, Result>({
        functionId: id,
        file,
        env: lambdaEnvironmentOnEngines(id, engines, bundleSettings(env, egress, options.logLevel)),
        // Lambda's log stream: printed as the in-process functions' logs are; CloudWatch's metrics from EMF.
        output: (line) => {
          twin?.ingestLogLine(line);
          if (options.logLevel !== 'SILENT') process.stdout.write(`${line}\n`);
        },
      });
      stopStack.push(bundleHost);
      return new FunctionPool<Event, Result>(
        FUNCTIONS[id],
        bundleHost.createInstance,
        undefined,
        bundleHost.dispose,
      );
    };
    const httpPools: Partial<Record<FunctionId, HttpFunctionPool>> = {
      api: pool<APIGatewayProxyEvent, APIGatewayProxyResult>('api', () =>
        FUNCTION_FACTORIES.api(depsOf('api')),
      ),
      catalog: pool<APIGatewayProxyEvent, APIGatewayProxyResult>('catalog', () =>
        FUNCTION_FACTORIES.catalog(depsOf('catalog')),
      ),
      checkout: pool<APIGatewayProxyEvent, APIGatewayProxyResult>('checkout', () =>
        FUNCTION_FACTORIES.checkout(depsOf('checkout')),
      ),
      admin: pool<APIGatewayProxyEvent, APIGatewayProxyResult>('admin', () =>
        FUNCTION_FACTORIES.admin(depsOf('admin')),
      ),
      webhooks: pool<APIGatewayProxyEvent, APIGatewayProxyResult>('webhooks', () =>
        FUNCTION_FACTORIES.webhooks(depsOf('webhooks')),
      ),
    };
    const authorizerPool = pool<APIGatewayRequestAuthorizerEvent, APIGatewayAuthorizerResult>(
      'authorizer',
      () =>
        createAuthorizerHandler(depsOf('authorizer'), {
          ...(options.callerKeyCacheSeconds === undefined
            ? {}
            : { cacheSeconds: options.callerKeyCacheSeconds }),
        }),
    );
    const sweeperPool = pool<unknown, { swept: number }>('sweeper', () =>
      FUNCTION_FACTORIES.sweeper(depsOf('sweeper')),
    );
    const ratesPool = pool<unknown, RatesRunReport>('rates', () => FUNCTION_FACTORIES.rates(depsOf('rates')));
    const fanoutPool = pool<
      DynamoDBStreamEvent,
      Awaited<ReturnType<ReturnType<typeof FUNCTION_FACTORIES.fanout>>>
    >('fanout', () => FUNCTION_FACTORIES.fanout(depsOf('fanout')));
    const deliverPool = pool<SQSEvent, Awaited<ReturnType<ReturnType<typeof FUNCTION_FACTORIES.deliver>>>>(
      'deliver',
      () => FUNCTION_FACTORIES.deliver(depsOf('deliver')),
    );
    const exporterPool = pool<unknown, ExporterResult>('exporter', () =>
      FUNCTION_FACTORIES.exporter(depsOf('exporter')),
    );
    const invocable: Record<InvocableFunctionId, { invoke(event: never): Promise<unknown> }> = {
      sweeper: sweeperPool,
      rates: ratesPool,
      fanout: fanoutPool,
      deliver: deliverPool,
      exporter: exporterPool,
    };
    // Each stream mapping hands its batches to its own function.
    const streamConsumers: Partial<
      Record<FunctionId, (event: DynamoDBStreamEvent) => Promise<DynamoDBBatchResponse | undefined>>
    > = {
      fanout: (event) => fanoutPool.invoke(event),
      exporter: async (event) => (await exporterPool.invoke(event)) as DynamoDBBatchResponse,
    };

    for (const mapping of Object.values(EVENT_SOURCE_MAPPINGS) as EventSourceMappingDefinition[]) {
      if (mapping.kind === 'dynamodb-stream') {
        const streamArn = resources.streamArns[mapping.table];
        if (!streamArn) throw new Error(`table ${mapping.table} has no stream`);
        const consumer = streamConsumers[mapping.function];
        if (!consumer) throw new Error(`mapping ${mapping.id}: no local consumer for ${mapping.function}`);
        pollers.push(
          new StreamPoller({
            mapping,
            streamArn,
            streams: clients.streams,
            documents: clients.documents,
            checkpointTable: resources.tableNames.localStreamCheckpoints,
            invoke: consumer,
            sendToOnFailure: async (body) => {
              await queue.send(mapping.onFailureQueue, body);
            },
            clock,
            logger: stackLogger,
            ...(options.streamPollIntervalMs ? { pollIntervalMs: options.streamPollIntervalMs } : {}),
          }),
        );
      } else {
        pollers.push(
          new SqsPoller({
            mapping,
            sqs: clients.sqs,
            queueUrl: resources.queueUrls[mapping.queue],
            queueArn: resources.queueArns[mapping.queue],
            invoke: (event) => deliverPool.invoke(event),
            logger: stackLogger,
            ...(mapping.localConcurrency !== undefined ? { concurrency: mapping.localConcurrency } : {}),
          }),
        );
      }
    }
    for (const poller of pollers) {
      poller.start();
      stopStack.push(poller);
    }
    dispatcher.start();
    stopStack.push(dispatcher);
    // The outbox sweeper's rate schedule (EventBridge Scheduler in AWS).
    const sweeper = new IntervalTask(
      async () => {
        await sweeperPool.invoke({});
      },
      options.webhooks?.sweepIntervalMs ?? SWEEPER_RATE_MINUTES * 60_000,
      (error) => stackLogger.error('outbox sweep failed', { error: error as Error }),
    );
    sweeper.start();
    stopStack.push(sweeper);
    // The finance export's manifests of closed days (EventBridge Scheduler's hourly rate in AWS).
    const exporter = new IntervalTask(
      async () => {
        await exporterPool.invoke({});
      },
      options.exportIntervalMs ?? EXPORTER_RATE_MINUTES * 60_000,
      (error) => stackLogger.error('receipts manifest run failed', { error: error as Error }),
    );
    exporter.start();
    stopStack.push(exporter);
    // Also once now: days that closed while the stack was stopped get their manifests without waiting an hour.
    exporter.runNow();

    // FX ingestion, journal slices and unfinished approved changes (EventBridge Scheduler's rate in AWS): once
    // now, so governed rates are fresh before the first request, then every FX_TICK_SECONDS (default a minute).
    const runRates = async () => {
      const report = await ratesPool.invoke({});
      if (report.ingestion?.fx_version) progress(`published ${report.ingestion.fx_version} (rate ingestion)`);
    };
    const rates = new IntervalTask(
      runRates,
      options.ratesIntervalMs ?? (fxTick ?? RATES_RATE_MINUTES * 60) * 1000,
      (error) => stackLogger.error('rates run failed', { error: error as Error }),
    );

    if (options.seedCatalog !== undefined && !(await deps.catalogRepository.current())) {
      const seeded = await publishSeedCatalog(
        changeRequestDependencies(deps),
        options.seedCatalog,
        'the demo catalog, published on an empty data directory',
      );
      // Seal the history from version 1: the first signed tree head covers the seed's release.
      await deps.journal.closeSliceIfDue({ force: true });
      const versions = seeded.publication?.versions;
      progress(
        `published the demo catalog through ${seeded.cr_id} (approved by the built-in local operators): ` +
          `pricelist_version ${versions?.pricelist_version}, ${versions?.fx_version}, ` +
          `tax_rule_version ${versions?.tax_rule_version}`,
      );
    }

    await runRates().catch((error: unknown) =>
      stackLogger.error('rates run failed', { error: error as Error }),
    );
    rates.start();
    stopStack.push(rates);

    // The demo tenant's keys (printed by `npm start`) and any others asked for, created once: a key stored
    // before (an existing data directory) is kept as it is, so a demo key from before customer groups names none.
    const keyDeps = { store: deps.apiKeys, clock };
    for (const configured of [
      {
        key: options.apiKey,
        tenant: DEMO_TENANT,
        scopes: STOREFRONT_SCOPES,
        customer_groups: DEMO_CUSTOMER_GROUPS,
        description: 'demo storefront (API_KEY)',
      },
      ...(options.chargebackKey
        ? [
            {
              key: options.chargebackKey,
              tenant: DEMO_TENANT,
              scopes: ['chargebacks:write'] as const,
              description: 'demo payment provider',
            },
          ]
        : []),
      ...(options.callerKeys ?? []),
    ]) {
      await ensureConfiguredKey(keyDeps, { description: 'configured', ...configured });
    }

    const gateway = await startGateway({
      host,
      port: options.port,
      functions: httpPools,
      authorizer: (event) => authorizerPool.invoke(event),
      admins: options.admins ?? [{ name: 'admin', token: options.adminToken, roles: ADMIN_ROLES }],
      clock,
      ...(options.rateLimit ? { rateLimit: options.rateLimit } : {}),
      onError: (error) => stackLogger.error('gateway error', { error: error as Error }),
      ...(options.web ? { web: options.web } : {}),
    });
    stopStack.push({ stop: () => closeServer(gateway.server) });

    return {
      url: gateway.url,
      dynamoDbEndpoint: dynamo.endpoint,
      dynamoDbSupervisorPid: dynamo.pid,
      sqsEndpoint: fauxqs.endpoint,
      partnerAwsEndpoint: partnerAws.endpoint,
      dataDir: options.dataDir,
      resources,
      deps,
      clients,
      invoke: (functionId, event) =>
        (invocable[functionId].invoke as (event: unknown) => Promise<unknown>)(event),
      stop: async () => {
        progress('stopping');
        await stopAll();
      },
    };
  } catch (error) {
    await stopAll();
    throw error;
  }
};

interface Engine {
  readonly endpoint: string;
  readonly pid?: number;
  /** What the stack started and so stops (nothing when it attached). */
  readonly owned: readonly Stoppable[];
}

/** How long an attached engine has to answer a first request before the start fails. */
const ATTACHED_ENGINE_TIMEOUT_MS = 5_000;

/** An error naming an attached engine that does not answer as the engine it should be. */
export class AttachedEngineError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'AttachedEngineError';
  }
}

/**
 * Asks each attached engine one cheap question (DynamoDB `ListTables`, SQS `ListQueues`) within a few seconds:
 * a wrong port, or a server that accepts connections and never answers, fails the start at once, naming it.
 */
const probeAttachedEngines = async (clients: AwsClients, engines: AttachedEngines): Promise<void> => {
  const probe = async (name: string, endpoint: string, ask: (signal: AbortSignal) => Promise<unknown>) => {
    try {
      await ask(AbortSignal.timeout(ATTACHED_ENGINE_TIMEOUT_MS));
    } catch (error) {
      throw new AttachedEngineError(
        `${name} at ${endpoint} did not answer within ${ATTACHED_ENGINE_TIMEOUT_MS / 1000} s: ${(error as Error).message}`,
        { cause: error },
      );
    }
  };
  await probe('DynamoDB Local', engines.dynamoDbEndpoint, (abortSignal) =>
    clients.dynamoDb.send(new ListTablesCommand({ Limit: 1 }), { abortSignal }),
  );
  await probe('fauxqs', engines.sqsEndpoint, (abortSignal) =>
    clients.sqs.send(new ListQueuesCommand({ MaxResults: 1 }), { abortSignal }),
  );
};

/** DynamoDB Local and fauxqs: the running ones named by `options.engines`, else started in `root` (or memory). */
const startOrAttachEngines = async (
  options: LocalStackOptions,
  root: string,
  progress: (line: string) => void,
): Promise<{ dynamo: Engine; fauxqs: Engine }> => {
  if (options.engines) {
    if (!options.dataDir) {
      // The engines keep the data; the keys that signed and encrypted it must outlive the stack as well.
      throw new Error('a stack attached to running engines needs a data directory for its keys');
    }
    progress(
      `attaching to DynamoDB Local at ${options.engines.dynamoDbEndpoint} and fauxqs at ${options.engines.sqsEndpoint}`,
    );
    return {
      dynamo: { endpoint: options.engines.dynamoDbEndpoint, owned: [] },
      fauxqs: { endpoint: options.engines.sqsEndpoint, owned: [] },
    };
  }
  progress(`starting DynamoDB Local and fauxqs (${options.dataDir ? `data in ${root}` : 'in memory'})`);
  const [dynamo, fauxqs]: [DynamoDbLocalProcess, FauxqsServer] = await Promise.all([
    startDynamoDbLocalOnFreePort({
      workDir: root,
      ...(options.dataDir ? { dbPath: path.join(root, 'dynamodb') } : {}),
    }),
    startFauxqsServer(options.dataDir ? { dataDir: path.join(root, 'fauxqs') } : {}),
  ]);
  return {
    dynamo: { endpoint: dynamo.endpoint, pid: dynamo.pid, owned: [dynamo] },
    fauxqs: { endpoint: fauxqs.endpoint, owned: [fauxqs] },
  };
};

/** Runs a task every `intervalMs`, one run at a time; `stop()` waits for a run in progress. */
class IntervalTask {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(
    private readonly task: () => Promise<void>,
    private readonly intervalMs: number,
    private readonly onError: (error: unknown) => void,
  ) {}

  start(): void {
    this.timer = setInterval(() => this.runNow(), this.intervalMs);
    this.timer.unref();
  }

  /** Starts a run now unless one is in progress (`stop()` waits for it). */
  runNow(): void {
    if (this.running) return;
    this.running = this.task()
      .catch(this.onError)
      .finally(() => {
        this.running = undefined;
      });
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }
}

const closeServer = (server: Server): Promise<void> =>
  new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });

/** The in-process stack's signers on bundles: KMS's adapters through the twin, with the keys' ARNs. */
const twinSigning = (endpoint: string, stopStack: Stoppable[]) => {
  const kms = new KMSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint });
  stopStack.push({ stop: async () => kms.destroy() });
  const arn = (id: DirectKeyId) => localKeyArn(KEYS[id].id);
  return {
    receiptSigner: new KmsReceiptSigner(kms, arn('receiptSigning')),
    quoteMac: new KmsMacSigner(kms, arn('quoteMac')),
    secretsCipher: new KmsDataCipher(kms, arn('secrets')),
  };
};

/**
 * What the bundles are configured with besides their template's variables: the service's settings from the
 * environment (`TUNABLE_SETTINGS`, read the same way in AWS; not the SDK's endpoint variables, which must point at
 * the local engines whatever the shell has exported), the stack's webhook egress (loopback receivers over http by
 * default) and its log level.
 */
const bundleSettings = (
  environment: Readonly<Record<string, string | undefined>>,
  egress: EgressPolicy,
  logLevel: LoggerOptions['logLevel'] | undefined,
): Record<string, string> => ({
  ...Object.fromEntries(
    Object.entries(environment).filter(
      (entry): entry is [string, string] =>
        entry[1] !== undefined &&
        TUNABLE_SETTINGS.test(entry[0]) &&
        !entry[0].startsWith('AWS_ENDPOINT_URL_'),
    ),
  ),
  WEBHOOK_ALLOW_HTTP: String(egress.allowHttp),
  WEBHOOK_ALLOWED_CIDRS: egress.allowedCidrs.join(','),
  WEBHOOK_EMULATOR_QUEUES: 'true',
  ...(logLevel ? { POWERTOOLS_LOG_LEVEL: String(logLevel) } : {}),
});
