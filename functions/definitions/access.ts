/**
 * What each function may touch (C26, C27: least privilege), in one place: the CDK grants exactly this
 * (`lib/stacks/service-stack.ts`), the environment of each function is derived from it (`environmentOf`), and the
 * composition root builds a function only the capabilities it declares (`functions/composition/service.ts`).
 */

import type { FunctionId } from './functions';
import { type IndexMigrationStage, retiredIndexesReadAt, tableIndexesAt } from './index-migration';
import { API_NAME_ENV_VAR, METRICS_NAMESPACE_ENV_VAR } from './objectives';
import {
  BUCKETS,
  type BucketId,
  KEYS,
  type KeyId,
  type KeyKind,
  QUEUES,
  type QueueId,
  type RetiredGlobalSecondaryIndexDefinition,
  SCHEDULER,
  type ServiceTableId,
  TABLES,
  type TableDefinition,
} from './resources';
import { ROUTES } from './routes';

/**
 * The DynamoDB item actions a function may be granted on a table, by name (`dynamodb:<name>`). A transaction is
 * authorized per item (`Put` → PutItem, `Update` → UpdateItem, `Delete` → DeleteItem, `ConditionCheck` →
 * ConditionCheckItem), so there is no transaction action to grant.
 */
export type TableItemAction =
  | 'GetItem'
  | 'BatchGetItem'
  | 'Query'
  | 'Scan'
  | 'ConditionCheckItem'
  | 'PutItem'
  | 'UpdateItem'
  | 'DeleteItem'
  | 'BatchWriteItem';

/**
 * What a function may do with a key of each kind, one use at a time, each the exact KMS action(s) the adapter
 * calls (`functions/adapters/aws/kms-signing.ts`): signing receipts is `kms:Sign` and serving the JWKS is
 * `kms:GetPublicKey` alone, so a function that only publishes the public key cannot sign.
 */
export const KEY_USES = {
  ECC_NIST_P256_SIGN: { sign: ['kms:Sign'], publicKey: ['kms:GetPublicKey'] },
  HMAC_256: { generateMac: ['kms:GenerateMac'], verifyMac: ['kms:VerifyMac'] },
  SYMMETRIC: { encrypt: ['kms:Encrypt'], decrypt: ['kms:Decrypt'] },
} as const satisfies Record<KeyKind, Record<string, readonly string[]>>;

/** The uses of a key of one kind (`sign`, `publicKey`, `encrypt`…). */
export type KeyUse<Kind extends KeyKind> = keyof (typeof KEY_USES)[Kind];

/** The global secondary index names of a table, as its definition spells them. */
export type IndexNameOf<T extends ServiceTableId> = (typeof TABLES)[T] extends {
  readonly globalSecondaryIndexes: readonly (infer Index)[];
}
  ? Index extends { readonly name: infer Name extends string }
    ? Name
    : never
  : never;

/** Keys a function may use directly: all but the data key, which only DynamoDB, SQS and S3 use. */
export type DirectKeyId = Exclude<KeyId, 'data'>;

/**
 * What each function may touch, and nothing else: exactly the AWS actions its code calls (read from the adapters
 * it reaches: `functions/adapters/aws/*` through its handler and use cases), on exactly the resources it calls
 * them on. An adapter method that may issue two actions (a grouped read is a GetItem alone and a BatchGetItem
 * with company) gets both. `test/infra/least-privilege.test.ts` holds the resulting action table per function.
 */
export interface FunctionAccess {
  /** Per table: the item actions on the table itself and the indexes it queries. */
  readonly tables: {
    readonly [T in ServiceTableId]?: {
      readonly actions: readonly TableItemAction[];
      readonly indexes?: readonly IndexNameOf<T>[];
    };
  };
  /** Queues it sends to (SendMessage, with the queue key through SQS only). */
  readonly sendsTo: readonly QueueId[];
  /** Keys it uses directly, with exactly the uses its adapters make of them (`KEY_USES`). */
  readonly keys: { readonly [K in DirectKeyId]?: readonly KeyUse<(typeof KEYS)[K]['kind']>[] };
  /** Creates one-time retry schedules (passing the scheduler role). */
  readonly schedulesRetries: boolean;
  /**
   * Buckets it writes new objects to, through the bucket's writer policy, and lists and reads through its reader
   * policy (a write-once put that S3 refuses with 412 compares the object already there; the exporter reads a
   * day back to build its manifest).
   */
  readonly writesBuckets: readonly BucketId[];
  /** Buckets it only reads (GetObject): the reader policy alone. */
  readonly readsBuckets?: readonly BucketId[];
  /** Queues whose depth it reads (GetQueueAttributes: `GET /admin/slo` reads the dead-letter queue's). */
  readonly readsQueueDepths?: readonly QueueId[];
  /** Reads the service-level objectives' figures from CloudWatch (`GET /admin/slo`; the API's name for its metrics). */
  readonly readsObjectives?: boolean;
  /** Runs the deep health probes (`GET /admin/health`, see HEALTH_PROBES). */
  readonly probesHealth?: boolean;
  /** Registers each caller key's usage identifier as an API key of the usage plan (C26, per-key throttle). */
  readonly registersCallerKeys?: boolean;
  /** Reads FX provider credentials by reference (rate sources' `auth.secret_ref`) from Secrets Manager. */
  readonly readsFxCredentials?: boolean;
  /** Publishes the receipt key set (current and retired keys' public halves): `GET /keys`, the stored JWKS. */
  readonly publishesReceiptKeys?: boolean;
  /**
   * Assumes partners' roles (`sts:AssumeRole` with one of the service's external ids, never in its own account) to
   * deliver to their SQS queues and EventBridge buses (C34); what it may do there is the partner's role's policy.
   */
  readonly assumesPartnerRoles?: boolean;
}

/**
 * What the deep health probes call (`healthProbes` in functions/composition/aws.ts): DescribeTable on the events
 * table, GetQueueAttributes on the delivery queue, HeadBucket (s3:ListBucket) on the receipts bucket.
 */
export const HEALTH_PROBES = { table: 'events', queue: 'delivery', bucket: 'receipts' } as const satisfies {
  table: ServiceTableId;
  queue: QueueId;
  bucket: BucketId;
};

const NOTHING: FunctionAccess = {
  tables: {},
  sendsTo: [],
  keys: {},
  schedulesRetries: false,
  writesBuckets: [],
};

/** A catalog reader (`CatalogReader`): the grouped pointer read, part headers, chunks and publications. */
const CATALOG_READ: readonly TableItemAction[] = ['GetItem', 'BatchGetItem', 'Query'];
/** A catalog publisher (`DynamoCatalogRepository.publish`): part chunks, part headers, the pointer transaction. */
const CATALOG_PUBLISH: readonly TableItemAction[] = [...CATALOG_READ, 'PutItem', 'BatchWriteItem'];
/** The idempotency ledger (`DynamoIdempotencyLedger`): begin, read, take over, complete, release. */
const IDEMPOTENCY: readonly TableItemAction[] = ['GetItem', 'PutItem', 'UpdateItem', 'DeleteItem'];
/** Change requests (`DynamoChangeRequestStore`): gzip chunks and the head, read back with their chunks. */
const CHANGE_REQUESTS = {
  actions: ['GetItem', 'Query', 'PutItem', 'BatchWriteItem'],
  indexes: ['by-created'],
} as const;
/** The audit journal (`DynamoJournalStore`): entries, heads and the frontier in transactions; reads. */
/** Numbering a delivery of an ordered endpoint: its key's counter read (or its last open item) and one transaction. */
const SEQUENCE: readonly TableItemAction[] = ['GetItem', 'Query', 'PutItem', 'UpdateItem'];
const JOURNAL: readonly TableItemAction[] = ['GetItem', 'Query', 'PutItem', 'UpdateItem'];

export const FUNCTION_ACCESS: Readonly<Record<FunctionId, FunctionAccess>> = {
  authorizer: {
    ...NOTHING,
    // The item of a presented key's hash (`grantOf`); nothing else.
    tables: { apiKeys: { actions: ['GetItem'] } },
  },
  api: {
    ...NOTHING,
    // GET /keys publishes the receipt key's public half; GET /admin/health runs the probes. Nothing else: the
    // system routes read and write no table, send no message and sign nothing.
    keys: { receiptSigning: ['publicKey'] },
    // GET /webhooks/jwks.json lists the webhook signing keys' public halves (their private halves are encrypted
    // with the secrets key, which this function cannot use).
    tables: { senderKeys: { actions: ['Query'] } },
    probesHealth: true,
    publishesReceiptKeys: true,
  },
  catalog: {
    ...NOTHING,
    // Prices through the two-tier cache: entries and tag epochs are read (grouped with the pointer) and entries
    // written (grouped when concurrent); invalidation (UpdateItem) is the admin function's.
    tables: {
      catalog: { actions: CATALOG_READ },
      priceCache: { actions: ['GetItem', 'BatchGetItem', 'PutItem', 'BatchWriteItem'] },
    },
    // A cold start loads a large part version from its S3 copy (one GET that scales with readers).
    readsBuckets: ['catalogFiles'],
  },
  checkout: {
    ...NOTHING,
    // Quotes are saved, read and marked committed in the commit transaction (beside the receipt's put); refunds
    // update the receipt. The quote MAC is recomputed and compared, never VerifyMac'd.
    tables: {
      catalog: { actions: CATALOG_READ },
      quotes: { actions: ['GetItem', 'PutItem', 'UpdateItem'] },
      receipts: { actions: ['GetItem', 'PutItem', 'UpdateItem'] },
      idempotency: { actions: IDEMPOTENCY },
    },
    keys: { receiptSigning: ['sign'], quoteMac: ['generateMac'] },
    readsBuckets: ['catalogFiles'],
  },
  admin: {
    ...NOTHING,
    // A publication writes its catalog events to the outbox in the same transaction as the pointer; change
    // requests, their releases (signed with the receipt key) and the journal entries go with it. Cache warming
    // writes entries, invalidation bumps tag epochs.
    tables: {
      catalog: { actions: CATALOG_PUBLISH },
      idempotency: { actions: IDEMPOTENCY },
      priceCache: { actions: ['GetItem', 'BatchGetItem', 'PutItem', 'BatchWriteItem', 'UpdateItem'] },
      events: { actions: ['PutItem'] },
      changeRequests: CHANGE_REQUESTS,
      journal: { actions: JOURNAL },
      // GET /admin/slo reads the FX breakers.
      rateState: { actions: ['GetItem'] },
      // Caller keys (C26): issued, listed, rotated (the old hash item kept or deleted) and revoked.
      apiKeys: { actions: ['GetItem', 'PutItem', 'DeleteItem'], indexes: ['by-created'] },
    },
    // Answers that carry a caller key's secret are sealed with the secrets key.
    keys: { receiptSigning: ['sign'], secrets: ['encrypt', 'decrypt'] },
    // The journal's mirror; catalog exports and uploads (links signed with this role: PutObject, GetObject).
    writesBuckets: ['journal', 'catalogFiles'],
    // GET /admin/slo reads the delivery dead-letter queue's depth.
    readsQueueDepths: ['deliveryDlq'],
    readsObjectives: true,
    registersCallerKeys: true,
  },
  webhooks: {
    ...NOTHING,
    tables: {
      // Endpoints listed (Scan), read, created, changed, deleted; partners found by their key or the key
      // before the last rotation.
      endpoints: {
        actions: ['GetItem', 'Scan', 'PutItem', 'UpdateItem', 'DeleteItem'],
        indexes: ['by-partner-key', 'by-previous-partner-key'],
      },
      // Producers' events published; event history by day; a body expunged (the item updated in place).
      events: { actions: ['GetItem', 'BatchGetItem', 'PutItem', 'UpdateItem'], indexes: ['by-day-keys'] },
      // An event's deliveries, deliveries by endpoint or status; replays and confirmations update them.
      // Listings walk the keys-only indexes and read the deliveries back by key.
      deliveries: {
        actions: ['GetItem', 'BatchGetItem', 'Query', 'UpdateItem'],
        indexes: ['by-endpoint-keys', 'by-status-keys'],
      },
      replays: { actions: ['GetItem', 'Query', 'UpdateItem', 'BatchWriteItem'] },
      // An endpoint's stats: its slots of the window.
      endpointStats: { actions: ['Query'] },
      // A replay or recovery of an ordered endpoint's deliveries numbers them at the end of their keys, and a
      // forced one leaves the place it held.
      deliveryOrder: { actions: [...SEQUENCE, 'DeleteItem'] },
      // The ledger, and the DPoP `jti`s remembered in the same table.
      idempotency: { actions: IDEMPOTENCY },
      // The versions in force for published events; partners' catalog snapshots.
      catalog: { actions: CATALOG_READ },
      // An endpoint asking for Ed25519 makes sure a signing key exists; a rotation adds the next one.
      senderKeys: { actions: ['Query', 'PutItem'] },
    },
    // Replays restart deliveries.
    sendsTo: ['delivery'],
    // Endpoint secrets and client-certificate keys encrypted (and decrypted on rotation), sealed answers.
    keys: { secrets: ['encrypt', 'decrypt'] },
  },
  fanout: {
    ...NOTHING,
    // The enabled endpoints (Scan), one delivery record per match (read back when it exists), the fan-out
    // recorded on the event; an ordered endpoint's delivery numbered in its key (one transaction: the key's
    // counter, its open item, the delivery's place); the event read once its records exist, for the first
    // attempts' messages to carry.
    tables: {
      endpoints: { actions: ['Scan'] },
      deliveries: { actions: ['GetItem', 'PutItem', 'UpdateItem'] },
      events: { actions: ['GetItem', 'UpdateItem'] },
      deliveryOrder: { actions: SEQUENCE },
    },
    sendsTo: ['delivery'],
  },
  deliver: {
    ...NOTHING,
    // The attempt is claimed and recorded on the delivery; a 410 Gone disables the endpoint, timeouts and
    // Retry-After pauses are noted on it; the endpoint's limiter admits attempts and frees their slots.
    tables: {
      // Operational events (a dead delivery, an endpoint disabled) are published into the outbox.
      events: { actions: ['GetItem', 'PutItem'] },
      endpoints: { actions: ['GetItem', 'UpdateItem'] },
      deliveries: { actions: ['GetItem', 'UpdateItem'] },
      endpointLimits: { actions: ['UpdateItem'] },
      // A replayed delivery that ended is counted on its replay (a transaction of two updates), whose tally is
      // read to announce the replay completed.
      replays: { actions: ['GetItem', 'UpdateItem'] },
      // Each batch's attempts added to their endpoints' 5-minute stats slots.
      endpointStats: { actions: ['UpdateItem'] },
      // An ordered delivery looks for an open one before it in its key, and on ending closes its own and reads
      // the next (whose message it sends).
      deliveryOrder: { actions: ['Query', 'DeleteItem'] },
      // Ed25519 endpoints' deliveries are signed with the active webhook signing key (decrypted once per instance).
      senderKeys: { actions: ['Query'] },
    },
    sendsTo: ['delivery', 'deliveryDlq'],
    // Decrypts endpoint signing secrets and client-certificate keys.
    keys: { secrets: ['decrypt'] },
    schedulesRetries: true,
    // SQS and EventBridge destinations in partners' accounts.
    assumesPartnerRoles: true,
  },
  sweeper: {
    ...NOTHING,
    // Events whose fan-out is not recorded (a sparse index), fanned out as the fanout function does. The ordered
    // keys' watchdog reads every key's head (Scan), notes its sightings and wake-ups on the place, reads its
    // delivery, and closes the place of one that ended without handing its turn on (Delete, then the next).
    tables: {
      events: { actions: ['GetItem', 'BatchGetItem', 'UpdateItem'], indexes: ['fanout-pending-keys'] },
      // The watchdog reads a stuck head's endpoint (paused by a Retry-After: waiting, not lost).
      endpoints: { actions: ['Scan', 'GetItem'] },
      deliveries: { actions: ['GetItem', 'PutItem', 'UpdateItem'] },
      deliveryOrder: { actions: [...SEQUENCE, 'Scan', 'DeleteItem'] },
    },
    sendsTo: ['delivery'],
  },
  replay: {
    ...NOTHING,
    // Selects deliveries through the events (by id or by day), or one endpoint's through its index (a window
    // with `endpoint_id`), read back by key. The replay's record (its summary an update that keeps the ended
    // deliveries' sets), its tally read to announce it completed (an operational event in the outbox).
    tables: {
      events: { actions: ['GetItem', 'BatchGetItem', 'PutItem'], indexes: ['by-day-keys'] },
      deliveries: {
        actions: ['GetItem', 'BatchGetItem', 'Query', 'UpdateItem'],
        indexes: ['by-endpoint-keys'],
      },
      replays: { actions: ['GetItem', 'UpdateItem', 'BatchWriteItem'] },
      // A delivery of an ordered endpoint (its ordering read from the endpoint) joins the end of its key, and a
      // forced one leaves the place it held.
      endpoints: { actions: ['GetItem'] },
      deliveryOrder: { actions: [...SEQUENCE, 'DeleteItem'] },
    },
    sendsTo: ['delivery'],
  },
  rates: {
    ...NOTHING,
    // Publishes rate ticks (catalog + outbox), opens change requests for held ticks, finishes approved
    // changes, journals every decision and closes journal slices with signed heads.
    tables: {
      catalog: { actions: CATALOG_PUBLISH },
      events: { actions: ['PutItem'] },
      rateState: { actions: ['GetItem', 'PutItem'] },
      changeRequests: CHANGE_REQUESTS,
      journal: { actions: JOURNAL },
    },
    keys: { receiptSigning: ['sign'] },
    writesBuckets: ['journal'],
    // Rate sources name their provider credentials (`auth.secret_ref`), read here, never held in the policy.
    readsFxCredentials: true,
  },
  exporter: {
    ...NOTHING,
    // Reads the receipts stream (its event source mapping); writes each signed document, the daily manifests
    // and summaries (PutObject only: Object Lock keeps them) and reads a day back to hash it; journals each
    // manifest, closing slices with heads signed by the receipt key and copying them to the mirror. A backfill
    // scans the receipts table for documents the stream could not export.
    tables: { journal: { actions: JOURNAL }, receipts: { actions: ['Scan'] } },
    // Signs heads; reads the public halves of the key set it writes beside the receipts (`keys/jwks-….json`).
    keys: { receiptSigning: ['sign', 'publicKey'] },
    publishesReceiptKeys: true,
    writesBuckets: ['receipts', 'journal'],
  },
};

/**
 * Settings every function may be tuned with, each with a default so the template sets none (guardrails, journal
 * slices, idempotency leases, webhook delivery, the receipt export, the FX secrets prefix), and the AWS SDK's own
 * endpoint settings (`AWS_ENDPOINT_URL_<SERVICE>`, set only where emulators stand in for AWS). The local stack on
 * bundles passes the first kind on from its environment.
 */
export const TUNABLE_SETTINGS =
  /^(CR_MAX_|JOURNAL_SLICE_|IDEMPOTENCY_LEASE_|WEBHOOK_|RECEIPT_EXPORT_|FX_SECRETS_PREFIX$|AWS_ENDPOINT_URL_)/;

/** Variables of the operator functions (C27): the IAM roles whose sessions are operators. */
export const OPERATOR_ROLES_ENV_VAR = 'OPERATOR_ROLES';
/** The caller usage plan's name (its id would make a dependency cycle in the template), for key registration. */
export const CALLER_USAGE_PLAN_NAME_ENV_VAR = 'CALLER_USAGE_PLAN_NAME';
/** KMS key ARNs of retired receipt keys (C10), comma-separated: `GET /keys` and the stored key sets list them. */
export const RETIRED_RECEIPT_KEY_IDS_ENV_VAR = 'RETIRED_RECEIPT_KEY_IDS';
/** Private ranges the deliver function may POST to besides public unicast addresses (C17). */
export const WEBHOOK_ALLOWED_CIDRS_ENV_VAR = 'WEBHOOK_ALLOWED_CIDRS';
/** Shorter body retention by tenant (JSON days by tenant): set on the functions that write events. */
export const WEBHOOK_TENANT_RETENTION_ENV_VAR = 'WEBHOOK_TENANT_RETENTION_DAYS';
/** Queues of an emulator as SQS destinations (the local stack's bundles only, never in AWS). */
export const WEBHOOK_EMULATOR_QUEUES_ENV_VAR = 'WEBHOOK_EMULATOR_QUEUES';
/** Whom partners' roles trust for cloud destinations (C34): `arn:<partition>:iam::<account>:root`. */
export const PARTNER_TRUST_PRINCIPAL_ENV_VAR = 'PARTNER_TRUST_PRINCIPAL';

/**
 * The retired indexes the functions read instead of their replacements during a staged index replacement
 * (context `retiredIndexes=add-s`, `index-migration.ts`), as `<table id>/<index>`, comma-separated. Only on
 * functions that query a replacement.
 */
export const READ_RETIRED_INDEXES_ENV_VAR = 'READ_RETIRED_INDEXES';

/** How a retired index is named in `READ_RETIRED_INDEXES`: with its table, since index names repeat across tables. */
export const retiredIndexRef = (table: ServiceTableId, index: string): string => `${table}/${index}`;

/** The retired indexes of one table named in a `READ_RETIRED_INDEXES` value. */
export const retiredIndexesOfTable = (value: string | undefined, table: ServiceTableId): Set<string> =>
  new Set(
    (value ?? '')
      .split(',')
      .filter((ref) => ref.startsWith(`${table}/`))
      .map((ref) => ref.slice(table.length + 1)),
  );

/** The retired indexes whose replacement a function queries, among `retired(table)`. */
const retiredQueriedBy = (
  functionId: FunctionId,
  retired: (definition: TableDefinition) => readonly RetiredGlobalSecondaryIndexDefinition[],
): { readonly table: ServiceTableId; readonly index: string }[] =>
  Object.entries(FUNCTION_ACCESS[functionId].tables).flatMap(([table, grant]) => {
    const queried: readonly string[] = grant?.indexes ?? [];
    return retired(TABLES[table as ServiceTableId])
      .filter((index) => queried.includes(index.replacedBy))
      .map((index) => ({ table: table as ServiceTableId, index: index.name }));
  });

/**
 * The retired indexes whose replacement a function queries (all of them; with a stage, those it reads at that
 * stage instead of their replacement).
 */
export const retiredIndexesReadBy = (functionId: FunctionId, stage?: IndexMigrationStage) =>
  retiredQueriedBy(functionId, (definition) =>
    stage === undefined
      ? (definition.retiredGlobalSecondaryIndexes ?? [])
      : retiredIndexesReadAt(definition, stage),
  );

/**
 * The retired indexes a function is granted at a stage: every one that still exists then and whose replacement it
 * queries. Not only those it reads: the previous stage's functions keep running, and reading, until this stage's
 * replace them, and their role is updated before they are.
 */
export const retiredIndexesGrantedTo = (functionId: FunctionId, stage: IndexMigrationStage) =>
  retiredQueriedBy(functionId, (definition) => {
    const present = new Set(tableIndexesAt(definition, stage).map((index) => index.name));
    return (definition.retiredGlobalSecondaryIndexes ?? []).filter((index) => present.has(index.name));
  });

/** The functions behind at least one `admin` route: they map IAM principals to operators (`OPERATOR_ROLES`). */
export const operatorFunctions = (): FunctionId[] => [
  ...new Set(ROUTES.filter((route) => route.auth === 'admin').map((route) => route.function as FunctionId)),
];

/** One variable of a function's environment: its name, and whether the function cannot run without it. */
export interface EnvironmentVariable {
  readonly name: string;
  /** Optional ones are set only when the deployment configures them (retired keys, allowed ranges, the API). */
  readonly required: boolean;
}

/** The queues a function reaches by URL: those it sends to, reads the depth of, or probes. */
export const queuesOf = (access: FunctionAccess): QueueId[] => [
  ...new Set([
    ...access.sendsTo,
    ...(access.readsQueueDepths ?? []),
    ...(access.probesHealth ? [HEALTH_PROBES.queue] : []),
  ]),
];

/** The tables a function reaches: those it is granted, and the one the health probe describes. */
export const tablesOf = (access: FunctionAccess): ServiceTableId[] => [
  ...new Set([
    ...(Object.keys(access.tables) as ServiceTableId[]),
    ...(access.probesHealth ? [HEALTH_PROBES.table] : []),
  ]),
];

/** The buckets a function reaches: those it writes, and the one the health probe heads. */
export const bucketsOf = (access: FunctionAccess): BucketId[] => [
  ...new Set([
    ...access.writesBuckets,
    ...(access.readsBuckets ?? []),
    ...(access.probesHealth ? [HEALTH_PROBES.bucket] : []),
  ]),
];

/**
 * Every variable a function's composition reads, derived from its access: the names of what it may touch
 * (tables, queues, buckets, keys, the retry scheduler), the metrics namespace, and the settings of its role.
 * The CDK sets exactly these on the function; the infra test checks the template against this list.
 */
export const environmentOf = (functionId: FunctionId): EnvironmentVariable[] => {
  const access = FUNCTION_ACCESS[functionId];
  const required = (name: string): EnvironmentVariable => ({ name, required: true });
  const optional = (name: string): EnvironmentVariable => ({ name, required: false });
  return [
    ...tablesOf(access).map((id) => required(TABLES[id].envVar)),
    ...queuesOf(access).map((id) => required(QUEUES[id].envVar)),
    ...bucketsOf(access).map((id) => required(BUCKETS[id].envVar)),
    ...(Object.keys(access.keys) as KeyId[]).map((id) => required(KEYS[id].envVar)),
    ...(access.schedulesRetries ? [required(SCHEDULER.groupEnvVar), required(SCHEDULER.roleEnvVar)] : []),
    required(METRICS_NAMESPACE_ENV_VAR),
    ...(operatorFunctions().includes(functionId) ? [required(OPERATOR_ROLES_ENV_VAR)] : []),
    ...(access.registersCallerKeys ? [required(CALLER_USAGE_PLAN_NAME_ENV_VAR)] : []),
    ...(access.publishesReceiptKeys ? [optional(RETIRED_RECEIPT_KEY_IDS_ENV_VAR)] : []),
    ...(access.readsObjectives ? [optional(API_NAME_ENV_VAR)] : []),
    ...(functionId === 'deliver' ? [optional(WEBHOOK_ALLOWED_CIDRS_ENV_VAR)] : []),
    // The local stack's bundles only: partners' queues in fauxqs.
    ...(functionId === 'deliver' || access.tables.endpoints?.actions.includes('PutItem')
      ? [optional(WEBHOOK_EMULATOR_QUEUES_ENV_VAR)]
      : []),
    ...(access.tables.events?.actions.includes('PutItem')
      ? [optional(WEBHOOK_TENANT_RETENTION_ENV_VAR)]
      : []),
    // Who registers endpoints tells partners whom their role must trust.
    ...(access.tables.endpoints?.actions.includes('PutItem')
      ? [required(PARTNER_TRUST_PRINCIPAL_ENV_VAR)]
      : []),
    ...(retiredIndexesReadBy(functionId).length > 0 ? [optional(READ_RETIRED_INDEXES_ENV_VAR)] : []),
  ];
};
