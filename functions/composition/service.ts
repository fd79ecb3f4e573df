/**
 * The one description of the service's dependencies, for both platforms. A platform (`aws.ts`: Lambda's
 * environment and AWS clients; `local.ts`: the local engines and key files) supplies only what differs — clients,
 * the names of tables, queues and buckets, keys, the retry scheduler, metrics, egress — and this module builds the
 * repositories, stores and settings from them the same way for both.
 *
 * Built for one function, the dependencies hold only what that function declares in
 * `functions/definitions/access.ts` (the declaration the CDK grants and sets the environment from): every member
 * is built on first use, and reaching a table, queue, bucket or key the function does not declare fails at once,
 * naming both. Built for no function (the local stack's test view), every member is available.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { DynamoApiKeyStore } from '../adapters/aws/api-key-store';
import { S3CatalogFiles } from '../adapters/aws/catalog-files';
import { DynamoCatalogRepository } from '../adapters/aws/catalog-repository';
import { DynamoChangeRequestStore } from '../adapters/aws/change-request-store';
import { DynamoCheckoutRepository, DynamoReceiptItemSource } from '../adapters/aws/checkout-repository';
import type { AwsClients } from '../adapters/aws/clients';
import { DynamoDeliverySequencer } from '../adapters/aws/delivery-sequencer';
import { DynamoEndpointLimiter } from '../adapters/aws/endpoint-limiter';
import { DynamoEndpointStatsStore } from '../adapters/aws/endpoint-stats-store';
import { dynamoDbProbe, s3Probe, sqsProbe } from '../adapters/aws/health-probes';
import { DynamoJournalStore, S3JournalMirror } from '../adapters/aws/journal-store';
import { S3ObjectStore } from '../adapters/aws/object-store';
import { DynamoPriceCacheStore } from '../adapters/aws/price-cache-store';
import { DynamoRateStateStore } from '../adapters/aws/rate-state-store';
import { DynamoSenderKeyStore } from '../adapters/aws/sender-key-store';
import { SqsMessageQueue } from '../adapters/aws/sqs-queue';
import {
  DynamoDeliveryRepository,
  DynamoDpopReplayCache,
  DynamoEndpointRepository,
  DynamoEventStore,
  DynamoReplayRepository,
} from '../adapters/aws/webhook-store';
import { createDpopVerifier } from '../adapters/http/dpop-verifier';
import { createGuardedHttpClient, type EgressPolicy } from '../adapters/http/guarded-http-client';
import {
  type BucketId,
  bucketsOf,
  FUNCTION_ACCESS,
  type FunctionId,
  HEALTH_PROBES,
  type KeyId,
  operatorFunctions,
  type QueueId,
  queuesOf,
  READ_RETIRED_INDEXES_ENV_VAR,
  retiredIndexesOfTable,
  retiredIndexesReadBy,
  type ServiceTableId,
  tablesOf,
} from '../definitions';
import type { AwsOperatorRole } from '../domain/access/principals';
import type { RetryPolicy } from '../domain/webhooks/retry-policy';
import type { Clock } from '../ports/clock';
import type { HealthProbe } from '../ports/health';
import type { OneTimeScheduler } from '../ports/scheduler';
import type { DataCipher, MacSigner, ReceiptSigner } from '../ports/signing';
import type { CallerUsagePlan } from '../ports/usage-plan';
import type { CloudDestinationSender } from '../ports/webhook-destinations';
import { Journal } from '../usecases/audit/journal';
import type { PublicKeySource } from '../usecases/receipts/key-set';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookSettings } from '../usecases/webhooks/context';
import { guardrailsFromEnv } from './change-requests';
import type {
  IdempotencyDependencies,
  MetricsDependencies,
  RateIngestionDependencies,
  ServiceDependencies,
} from './dependencies';
import type { Environment } from './environment';
import { idempotencyDependencies } from './idempotency';
import { JOURNAL_LOG_ID, journalSlicing } from './journal';
import { lazyObject } from './lazy';
import { receiptExportSettings } from './receipts';

/** What differs between AWS and the local stack; every member is asked for only when a function needs it. */
export interface ServicePlatform {
  /** Settings (guardrails, journal slices, lifetimes): Lambda's environment, or the local stack's. */
  readonly env: Environment;
  readonly clock: Clock;
  readonly createLogger: (functionId: FunctionId) => Logger;
  readonly clients: () => Pick<AwsClients, 'dynamoDb' | 'documents' | 's3' | 'sqs'>;
  readonly tableName: (id: ServiceTableId) => string;
  readonly queueUrl: (id: QueueId) => string;
  readonly bucketName: (id: BucketId) => string;
  readonly receiptSigner: () => ReceiptSigner;
  /** Receipt keys no longer signing, still listed by `GET /keys` (C10). */
  readonly retiredReceiptKeys: () => readonly PublicKeySource[];
  readonly quoteMac: () => MacSigner;
  readonly secretsCipher: () => DataCipher;
  readonly scheduler: () => OneTimeScheduler;
  readonly egress: () => EgressPolicy;
  /** Partners' SQS queues and EventBridge buses (C34): STS and the services in AWS, the partner twin locally. */
  readonly cloudDestinations: () => CloudDestinationSender;
  /** The service's account as partners' roles trust it (`PARTNER_TRUST_PRINCIPAL` in AWS). */
  readonly trustPrincipal: () => string;
  readonly retryPolicy: () => RetryPolicy;
  readonly webhookSettings?: Partial<WebhookSettings>;
  /** FX ingestion's sources, pace and the process's simulated feed (its state store is built here). */
  readonly rates: () => Omit<RateIngestionDependencies, 'state'>;
  readonly metrics: () => MetricsDependencies;
  readonly operatorRoles: () => readonly AwsOperatorRole[];
  readonly callerUsagePlan: () => CallerUsagePlan;
  /** Probes of the platform's own parts (the local stack's pollers and scheduler), after the service's. */
  readonly extraHealthProbes?: () => readonly HealthProbe[];
  /** The local stack's crash hook (`CRASH_AT`). */
  readonly onCheckpoint?: IdempotencyDependencies['onCheckpoint'];
}

/** What a function may reach, from its declaration; everything when built for no function. */
const reachOf = (platform: ServicePlatform, functionId: FunctionId | undefined) => {
  const access = functionId ? FUNCTION_ACCESS[functionId] : undefined;
  const allowed = <Id extends string>(kind: string, granted: readonly Id[] | undefined, id: Id): void => {
    if (granted && !granted.includes(id))
      throw new Error(
        `the ${functionId} function has no access to ${kind} ${id}: declare it in functions/definitions/access.ts`,
      );
  };
  const keys = access ? (Object.keys(access.keys) as KeyId[]) : undefined;
  return {
    table: (id: ServiceTableId) => {
      allowed('table', access && tablesOf(access), id);
      return platform.tableName(id);
    },
    queueUrl: (id: QueueId) => {
      allowed('queue', access && queuesOf(access), id);
      return platform.queueUrl(id);
    },
    bucket: (id: BucketId) => {
      allowed('bucket', access && bucketsOf(access), id);
      return platform.bucketName(id);
    },
    key: <T>(id: KeyId, build: () => T): T => {
      allowed('key', keys, id);
      return build();
    },
    publishesKeys: <T>(build: () => T): T => {
      if (access && !access.publishesReceiptKeys)
        throw new Error(
          `the ${functionId} function does not publish receipt keys (functions/definitions/access.ts)`,
        );
      return build();
    },
    assumesPartnerRoles: () => {
      if (access && !access.assumesPartnerRoles)
        throw new Error(
          `the ${functionId} function does not assume partners' roles (functions/definitions/access.ts)`,
        );
      return platform.cloudDestinations();
    },
    trustPrincipal: () => {
      if (access && !access.tables.endpoints?.actions.includes('PutItem'))
        throw new Error(
          `the ${functionId} function does not register endpoints (functions/definitions/access.ts)`,
        );
      return platform.trustPrincipal();
    },
    schedules: () => {
      if (access && !access.schedulesRetries)
        throw new Error(
          `the ${functionId} function does not schedule retries (functions/definitions/access.ts)`,
        );
      return platform.scheduler();
    },
  };
};

/** The dependencies of one function (or, with no function, of the whole service) on a platform. */
export const composeService = (platform: ServicePlatform, functionId?: FunctionId): ServiceDependencies => {
  const reach = reachOf(platform, functionId);
  const documents = () => platform.clients().documents;
  const { env, clock } = platform;
  // Only a function that queries a replacement index is told to read retired ones instead.
  const readRetired = (table: 'events' | 'deliveries'): ReadonlySet<string> =>
    functionId === undefined || retiredIndexesReadBy(functionId).length > 0
      ? retiredIndexesOfTable(env[READ_RETIRED_INDEXES_ENV_VAR], table)
      : new Set();
  const deps: ServiceDependencies = lazyObject<ServiceDependencies>({
    clock: () => clock,
    createLogger: () => platform.createLogger,
    queue: () => new SqsMessageQueue(platform.clients().sqs, reach.queueUrl),
    scheduler: () => reach.schedules(),
    receiptSigner: () => reach.key('receiptSigning', platform.receiptSigner),
    retiredReceiptKeys: () => reach.publishesKeys(platform.retiredReceiptKeys),
    quoteMac: () => reach.key('quoteMac', platform.quoteMac),
    secretsCipher: () => reach.key('secrets', platform.secretsCipher),
    healthProbes: () => [
      dynamoDbProbe(platform.clients().dynamoDb, reach.table(HEALTH_PROBES.table)),
      sqsProbe(platform.clients().sqs, reach.queueUrl(HEALTH_PROBES.queue)),
      s3Probe(platform.clients().s3, reach.bucket(HEALTH_PROBES.bucket)),
      ...(platform.extraHealthProbes?.() ?? []),
    ],
    // The outbox is given only to functions that publish (their catalog events go in the same transaction).
    catalogRepository: () =>
      new DynamoCatalogRepository(
        documents(),
        reach.table('catalog'),
        canReach(functionId, 'events') ? reach.table('events') : undefined,
        // Large part versions' copies: read by the functions that may, written by those that also publish.
        canReachBucket(functionId, 'catalogFiles')
          ? new S3ObjectStore(platform.clients().s3, reach.bucket('catalogFiles'))
          : undefined,
        // Cold starts fall back to one partition's chunks: worth a warning (a wrong grant, a deleted object).
        (key, reason) =>
          platform
            .createLogger(functionId ?? 'api')
            .warn('catalog part copy unusable: read from the chunks', { key, reason }),
      ),
    priceCacheStore: () => new DynamoPriceCacheStore(documents(), reach.table('priceCache')),
    checkoutRepository: () =>
      new DynamoCheckoutRepository(documents(), {
        quotes: reach.table('quotes'),
        receipts: reach.table('receipts'),
      }),
    changeRequests: () => new DynamoChangeRequestStore(documents(), reach.table('changeRequests')),
    guardrails: () => guardrailsFromEnv(env),
    catalogFiles: () => new S3CatalogFiles(platform.clients().s3, reach.bucket('catalogFiles')),
    journal: () =>
      new Journal({
        store: new DynamoJournalStore(documents(), reach.table('journal')),
        mirror: new S3JournalMirror(platform.clients().s3, reach.bucket('journal')),
        signer: deps.receiptSigner,
        clock,
        logId: JOURNAL_LOG_ID,
        ...journalSlicing(env),
      }),
    rates: () => ({
      state: new DynamoRateStateStore(documents(), reach.table('rateState')),
      ...platform.rates(),
    }),
    webhooks: () =>
      lazyObject<ServiceDependencies['webhooks']>({
        events: () =>
          new DynamoEventStore(documents(), reach.table('events'), clock, {
            readRetiredIndexes: readRetired('events'),
          }),
        endpoints: () => new DynamoEndpointRepository(documents(), reach.table('endpoints')),
        deliveries: () =>
          new DynamoDeliveryRepository(documents(), reach.table('deliveries'), {
            readRetiredIndexes: readRetired('deliveries'),
          }),
        replays: () => new DynamoReplayRepository(documents(), reach.table('replays')),
        limiter: () => new DynamoEndpointLimiter(documents(), reach.table('endpointLimits')),
        sequencer: () =>
          new DynamoDeliverySequencer(documents(), reach.table('deliveryOrder'), reach.table('deliveries')),
        stats: () => new DynamoEndpointStatsStore(documents(), reach.table('endpointStats')),
        senderKeys: () => new DynamoSenderKeyStore(documents(), reach.table('senderKeys')),
        // DPoP proofs' `jti`s are remembered in the idempotency table (items `dpop-jti#…`).
        dpopReplays: () => new DynamoDpopReplayCache(documents(), reach.table('idempotency')),
        dpopVerifier: () => createDpopVerifier(),
        http: () => createGuardedHttpClient({ policy: platform.egress() }),
        destinations: () => reach.assumesPartnerRoles(),
        trustPrincipal: () => reach.trustPrincipal(),
        policy: () => platform.retryPolicy(),
        settings: () => ({ ...DEFAULT_WEBHOOK_SETTINGS, ...platform.webhookSettings }),
      }),
    receiptExport: () =>
      lazyObject<ServiceDependencies['receiptExport']>({
        objects: () => new S3ObjectStore(platform.clients().s3, reach.bucket('receipts')),
        settings: () => receiptExportSettings(env),
        receipts: () => new DynamoReceiptItemSource(documents(), reach.table('receipts')),
      }),
    metrics: () => platform.metrics(),
    idempotency: () =>
      idempotencyDependencies(documents(), reach.table('idempotency'), env, platform.onCheckpoint),
    apiKeys: () => new DynamoApiKeyStore(documents(), reach.table('apiKeys')),
    callerUsagePlan: () => platform.callerUsagePlan(),
    // Only the functions behind admin routes map IAM principals to operators; no one is an operator elsewhere.
    operatorRoles: () =>
      functionId === undefined || operatorFunctions().includes(functionId) ? platform.operatorRoles() : [],
  });
  return deps;
};

/** Whether a function declares a bucket (every bucket when built for no function). */
const canReachBucket = (functionId: FunctionId | undefined, bucket: BucketId): boolean =>
  functionId === undefined || bucketsOf(FUNCTION_ACCESS[functionId]).includes(bucket);

/** Whether a function declares a table (every table when built for no function). */
const canReach = (functionId: FunctionId | undefined, table: ServiceTableId): boolean =>
  functionId === undefined || tablesOf(FUNCTION_ACCESS[functionId]).includes(table);
