import type { Logger } from '@aws-lambda-powertools/logger';
import type { EgressPolicy } from '../adapters/http/guarded-http-client';
import type { FunctionId } from '../definitions';
import type { AwsOperatorRole } from '../domain/access/principals';
import type { GuardrailSettings } from '../domain/change-control/guardrails';
import type { SimulatedFeed } from '../domain/rates/simulated';
import type { RetryPolicy } from '../domain/webhooks/retry-policy';
import type { ApiKeyStore } from '../ports/api-keys';
import type { CatalogRepository } from '../ports/catalog';
import type { CatalogFiles } from '../ports/catalog-files';
import type { ChangeRequestStore } from '../ports/change-requests';
import type { CheckoutRepository, ReceiptItemSource } from '../ports/checkout';
import type { Clock } from '../ports/clock';
import type { HealthProbe } from '../ports/health';
import type { IdempotencyLedger } from '../ports/idempotency';
import type { ObjectiveFiguresReader, ServiceMetrics } from '../ports/metrics';
import type { ObjectStore } from '../ports/object-store';
import type { MessageQueue, QueueDepths } from '../ports/queue';
import type { RateStateStore } from '../ports/rates';
import type { OneTimeScheduler } from '../ports/scheduler';
import type { SecretValues } from '../ports/secrets';
import type { DataCipher, MacSigner, ReceiptSigner } from '../ports/signing';
import type { CallerUsagePlan } from '../ports/usage-plan';
import type { CloudDestinationSender } from '../ports/webhook-destinations';
import type { WebhookHttpClient } from '../ports/webhook-http';
import type {
  DeliveryRepository,
  DeliverySequencer,
  DpopProofVerifier,
  DpopReplayCache,
  EndpointLimiter,
  EndpointRepository,
  EndpointStatsStore,
  EventStore,
  ReplayRepository,
  SenderKeyStore,
} from '../ports/webhooks';
import type { Journal } from '../usecases/audit/journal';
import type { PriceCacheStore } from '../usecases/catalog/price-cache';
import type { ReceiptExportSettings } from '../usecases/receipts/export';
import type { PublicKeySource } from '../usecases/receipts/key-set';
import type { WebhookSettings } from '../usecases/webhooks/context';

/**
 * Everything a handler may use: ports and settings, never clients or resource names. Built by `composeService`
 * (`service.ts`) for one function on a platform (AWS or the local stack), each member on first use and only
 * what the function declares (`functions/definitions/access.ts`). Handlers receive it; they never build adapters.
 */
export interface ServiceDependencies {
  readonly clock: Clock;
  readonly createLogger: (functionId: FunctionId) => Logger;
  readonly queue: MessageQueue & QueueDepths;
  readonly scheduler: OneTimeScheduler;
  readonly receiptSigner: ReceiptSigner;
  /** Receipt keys no longer signing, still listed by `GET /keys` (C10; AWS: `RETIRED_RECEIPT_KEY_IDS`). */
  readonly retiredReceiptKeys: readonly PublicKeySource[];
  readonly quoteMac: MacSigner;
  /** Application secrets (endpoint secrets, client-certificate keys, sealed answers): the `secrets` key. */
  readonly secretsCipher: DataCipher;
  readonly healthProbes: readonly HealthProbe[];
  readonly catalogRepository: CatalogRepository;
  /** Quotes and receipts (C9, C10): saved, committed in one transaction, refunded. */
  readonly checkoutRepository: CheckoutRepository;
  /** The shared tier of the price cache (C18); each instance keeps its own local tier in front of it. */
  readonly priceCacheStore: PriceCacheStore;
  /** Change requests (C23): the only way catalog data is written. */
  readonly changeRequests: ChangeRequestStore;
  /** Limits beyond which a change needs each approver's acknowledgement. */
  readonly guardrails: GuardrailSettings;
  /** Catalog documents too large for one request or response: exports as download links, uploads to import. */
  readonly catalogFiles: CatalogFiles;
  /** The write-once audit journal (releases, rate publications, protection decisions) with signed heads. */
  readonly journal: Journal;
  /** FX ingestion: per-pair state (ticks, breaker, held ticks) and the local stack's pace. */
  readonly rates: RateIngestionDependencies;
  /** Webhook delivery: the outbox and its records, the guarded HTTP client, the retry policy, lifetimes. */
  readonly webhooks: WebhookDependencies;
  /** The finance export: the receipts bucket's write-once objects and when daily manifests are built. */
  readonly receiptExport: ReceiptExportResources;
  /** The service-level objectives: where functions record their measurements, and where they are read back. */
  readonly metrics: MetricsDependencies;
  /** Every POST's `Idempotency-Key` (C8, C25): the ledger its effects complete atomically. */
  readonly idempotency: IdempotencyDependencies;
  /** Caller keys (C26): issued by operators, read by the caller-key authorizer. */
  readonly apiKeys: ApiKeyStore;
  /** Where caller keys' usage identifiers are registered for the per-key throttle (AWS: the usage plan). */
  readonly callerUsagePlan: CallerUsagePlan;
  /** The IAM roles of operators (C27, AWS): how an admin request's IAM principal becomes an operator. */
  readonly operatorRoles: readonly AwsOperatorRole[];
}

export interface IdempotencyDependencies {
  readonly ledger: IdempotencyLedger;
  /** Told of each named point of an idempotent request (the local stack's crash hook, `CRASH_AT`). */
  readonly onCheckpoint?: (operation: string, point: string) => void;
}

export interface MetricsDependencies {
  /** A function's recorder (EMF with its `service` dimension in AWS; one shared in-process recorder locally). */
  readonly recorder: (functionId: FunctionId) => ServiceMetrics;
  /** The measured figures: CloudWatch's last 24 h in AWS, the in-process counters locally. */
  readonly figures: ObjectiveFiguresReader;
}

export interface ReceiptExportResources {
  readonly objects: ObjectStore;
  readonly settings: ReceiptExportSettings;
  /** The stored receipts, for a backfill of what the stream could not export. */
  readonly receipts: ReceiptItemSource;
}

export interface WebhookDependencies {
  readonly events: EventStore;
  readonly endpoints: EndpointRepository;
  readonly deliveries: DeliveryRepository;
  readonly replays: ReplayRepository;
  /** Per-endpoint limits shared by every deliver instance. */
  readonly limiter: EndpointLimiter;
  readonly sequencer: DeliverySequencer;
  /** The service's Ed25519 webhook signing keys (C33). */
  readonly senderKeys: SenderKeyStore;
  /** Endpoints' attempts in 5-minute slots (stats). */
  readonly stats: EndpointStatsStore;
  /** DPoP proofs' `jti`s already seen (partner callbacks). */
  readonly dpopReplays: DpopReplayCache;
  /** Verifies DPoP proofs' JWS signatures (partner callbacks). */
  readonly dpopVerifier: DpopProofVerifier;
  readonly http: WebhookHttpClient;
  /** Partners' SQS queues and EventBridge buses, through their roles (C34). */
  readonly destinations: CloudDestinationSender;
  /** Whom partners' roles trust (the service's account); only functions that register endpoints know it. */
  readonly trustPrincipal: string;
  readonly policy: RetryPolicy;
  readonly settings: WebhookSettings;
}

/** FX ingestion's own dependencies: its state, and the local stack's faster pace when configured. */
export interface RateIngestionDependencies {
  readonly state: RateStateStore;
  /** Every pair ticks at this interval instead of its policy's (the local stack's `FX_TICK_SECONDS`). */
  readonly intervalOverrideSeconds?: number;
  /** Step of the simulated feed (seconds): one move of its random walk. */
  readonly simulatedStepSeconds: number;
  /**
   * The process's simulated feed once a policy needed it (the local stack and tests drive it: an outage, a
   * spike). Filled on the first ingestion run.
   */
  readonly simulated: { feed?: SimulatedFeed };
  /**
   * Where rate sources may connect: their GETs go through the webhooks' egress guard (C17) under this policy.
   * Default `AWS_EGRESS` (https to public unicast addresses only); the local stack passes its webhook policy.
   */
  readonly egress?: EgressPolicy;
  /**
   * Provider credentials named by a source's `auth.secret_ref` (Secrets Manager in AWS, files locally).
   * Without it, a source with `auth` fails every fetch as "credential unavailable" (nothing is sent).
   */
  readonly secrets?: SecretValues;
}
