/**
 * The single source of the service's stateful resources: tables, queues, buckets and keys.
 *
 * Both the CDK constructs (`lib/`) and the local stack's bootstrap (`functions/adapters/local/bootstrap.ts`)
 * read these objects, so the deployed and the local shapes cannot drift. Pure data: no SDK, no CDK imports.
 */

export type AttributeType = 'S' | 'N' | 'B';

export interface KeyAttribute {
  readonly name: string;
  readonly type: AttributeType;
}

export interface GlobalSecondaryIndexDefinition {
  readonly name: string;
  readonly partitionKey: KeyAttribute;
  readonly sortKey?: KeyAttribute;
  /**
   * What the index copies of each item: all of it (the default), or only the table's and the index's keys
   * (`KEYS_ONLY`: a write that changes no key attribute writes nothing to the index; readers fetch the items by
   * key). A projection cannot change in place: a new index replaces the old one (`retiredGlobalSecondaryIndexes`).
   */
  readonly projection?: 'ALL' | 'KEYS_ONLY';
}

/** An index kept only during a staged migration, and the index that replaces it. */
export interface RetiredGlobalSecondaryIndexDefinition extends GlobalSecondaryIndexDefinition {
  readonly replacedBy: string;
}

export type StreamViewType = 'NEW_IMAGE' | 'OLD_IMAGE' | 'NEW_AND_OLD_IMAGES' | 'KEYS_ONLY';

/** `service`: deployed to AWS and created locally. `local`: state that only the local stack's twins need. */
export type ResourceScope = 'service' | 'local';

export interface TableDefinition {
  readonly id: string;
  readonly description: string;
  readonly scope: ResourceScope;
  /** Environment variable that carries the physical table name to the functions. */
  readonly envVar: string;
  readonly partitionKey: KeyAttribute;
  readonly sortKey?: KeyAttribute;
  readonly stream?: StreamViewType;
  readonly timeToLiveAttribute?: string;
  readonly globalSecondaryIndexes?: readonly GlobalSecondaryIndexDefinition[];
  /**
   * Indexes an existing deployment still has while it moves to their replacements, in the order they are
   * replaced. CloudFormation adds or removes one index per table per update, so the move takes a deploy per
   * change (context `retiredIndexes`, `lib/pricing-app.ts`): `add-1` … `add-n` (one replacement more each, the
   * retired ones not yet replaced still read), `keep` (all, the replacements read), `drop-1` … `drop-(n-1)` (one
   * retired index fewer each), then none (only the replacements, as on a new deployment).
   */
  readonly retiredGlobalSecondaryIndexes?: readonly RetiredGlobalSecondaryIndexDefinition[];
}

export interface QueueDefinition {
  readonly id: string;
  readonly description: string;
  readonly envVar: string;
  /** Work queues name their dead-letter queue; dead-letter queues and on-failure destinations are terminal. */
  readonly deadLetter?: { readonly queue: string; readonly maxReceiveCount: number };
  readonly terminal?: boolean;
  readonly retentionDays: number;
}

export interface BucketDefinition {
  readonly id: string;
  readonly description: string;
  readonly envVar: string;
  /** Write-once objects: S3 Object Lock in compliance mode with this default retention (AWS only). */
  readonly objectLock?: { readonly mode: 'COMPLIANCE'; readonly retentionDays: number };
  /** Objects under a prefix deleted this many days after they were written (AWS lifecycle rules). */
  readonly expiration?: readonly { readonly prefix: string; readonly days: number }[];
}

export type KeyKind = 'ECC_NIST_P256_SIGN' | 'HMAC_256' | 'SYMMETRIC';

export interface KeyDefinition {
  readonly id: string;
  readonly description: string;
  readonly envVar: string;
  readonly kind: KeyKind;
  /** File under `<DATA_DIR>/keys/` that holds the local twin's key material. */
  readonly localFile: string;
}

/**
 * An index in time order (`ts_id`) on one partition key that copies keys only, and the index of the same keys that
 * copied whole items, which it replaces (kept while an existing deployment moves, `retiredGlobalSecondaryIndexes`).
 */
const keysOnlyTimeIndex = <const Name extends string, const Retired extends string>(
  name: Name,
  partition: string,
  retired: Retired,
) => {
  const keys = {
    partitionKey: { name: partition, type: 'S' },
    sortKey: { name: 'ts_id', type: 'S' },
  } as const;
  return {
    index: { name, ...keys, projection: 'KEYS_ONLY' },
    retired: { name: retired, ...keys, replacedBy: name },
  } as const;
};

// Events of one UTC day in time order: listing and replay by time window.
const EVENTS_BY_DAY = keysOnlyTimeIndex('by-day-keys', 'day', 'by-day');
// Sparse: only events whose fan-out is not recorded yet carry `fanout_pending`.
const EVENTS_FANOUT_PENDING = keysOnlyTimeIndex('fanout-pending-keys', 'fanout_pending', 'fanout-pending');
// `<endpoint_id>#<shard of the event id>` (ENDPOINT_SHARDS), written once at creation.
const DELIVERIES_BY_ENDPOINT = keysOnlyTimeIndex('by-endpoint-keys', 'endpoint_shard', 'by-endpoint-shard');
const DELIVERIES_BY_STATUS = keysOnlyTimeIndex('by-status-keys', 'status', 'by-status');

export const TABLES = {
  events: {
    id: 'events',
    description:
      'Outbox of event envelopes (bodies expire by TTL); its stream feeds the fan-out function, the sweeper finds events whose fan-out is not recorded.',
    scope: 'service',
    envVar: 'EVENTS_TABLE_NAME',
    partitionKey: { name: 'event_id', type: 'S' },
    stream: 'NEW_AND_OLD_IMAGES',
    timeToLiveAttribute: 'expires_at',
    // Keys only: an event is rewritten when its fan-out is recorded (and when it is expunged), and an index that
    // copied the whole event, body included, would be rewritten with it; readers fetch the events by key.
    globalSecondaryIndexes: [EVENTS_BY_DAY.index, EVENTS_FANOUT_PENDING.index],
    // The same keys with the whole event copied: replaced by the keys-only indexes above.
    retiredGlobalSecondaryIndexes: [EVENTS_BY_DAY.retired, EVENTS_FANOUT_PENDING.retired],
  },
  endpoints: {
    id: 'endpoints',
    description:
      'Partner webhook endpoints: URL, topics, pinned envelope version, encrypted signing secrets.',
    scope: 'service',
    envVar: 'ENDPOINTS_TABLE_NAME',
    partitionKey: { name: 'endpoint_id', type: 'S' },
    globalSecondaryIndexes: [
      // A partner's key (as its SHA-256) → its endpoint: the partner routes' authentication.
      { name: 'by-partner-key', partitionKey: { name: 'partner_key_sha256', type: 'S' } },
      // The key before the last rotation, accepted during its overlap (sparse).
      {
        name: 'by-previous-partner-key',
        partitionKey: { name: 'previous_partner_key_sha256', type: 'S' },
      },
    ],
  },
  deliveries: {
    id: 'deliveries',
    description:
      'One record per (event, endpoint): status and every attempt; kept longer than event bodies (TTL).',
    scope: 'service',
    envVar: 'DELIVERIES_TABLE_NAME',
    partitionKey: { name: 'event_id', type: 'S' },
    sortKey: { name: 'endpoint_id', type: 'S' },
    timeToLiveAttribute: 'expires_at',
    // Keys only: a delivery is rewritten by its claim and its outcome, and an index that copied the whole item
    // would be rewritten with it (docs/capacity.md §6); listings read the items back by key (`BatchGetItem`).
    globalSecondaryIndexes: [DELIVERIES_BY_ENDPOINT.index, DELIVERIES_BY_STATUS.index],
    // The same keys with every attribute copied: replaced by the keys-only indexes above (docs/decisions.md,
    // "keys-only delivery indexes").
    retiredGlobalSecondaryIndexes: [DELIVERIES_BY_ENDPOINT.retired, DELIVERIES_BY_STATUS.retired],
  },
  endpointLimits: {
    id: 'endpoint-limits',
    description:
      "Per-endpoint delivery limiter (C31 rate_limit, isolation): the GCRA's arrival time and the held in-flight slots, shared by every deliver instance.",
    scope: 'service',
    envVar: 'ENDPOINT_LIMITS_TABLE_NAME',
    partitionKey: { name: 'endpoint_id', type: 'S' },
    timeToLiveAttribute: 'expires_at',
  },
  deliveryOrder: {
    id: 'delivery-order',
    description:
      "Ordered endpoints' per-key queues (C31 ordering): each key's next number and its open deliveries, each with the message its turn sends.",
    scope: 'service',
    envVar: 'DELIVERY_ORDER_TABLE_NAME',
    partitionKey: { name: 'order_key', type: 'S' },
    sortKey: { name: 'seq', type: 'N' },
    timeToLiveAttribute: 'expires_at',
  },
  senderKeys: {
    id: 'sender-keys',
    description:
      "The service's Ed25519 webhook signing keys (C33): each key's public JWK, its activation, and its private key encrypted with the secrets key.",
    scope: 'service',
    envVar: 'SENDER_KEYS_TABLE_NAME',
    partitionKey: { name: 'key_set', type: 'S' },
    sortKey: { name: 'generation', type: 'N' },
  },
  endpointStats: {
    id: 'endpoint-stats',
    description:
      "Endpoints' attempts by status class and latency bucket in 5-minute slots (C32 stats), kept 8 days (TTL).",
    scope: 'service',
    envVar: 'ENDPOINT_STATS_TABLE_NAME',
    partitionKey: { name: 'endpoint_id', type: 'S' },
    sortKey: { name: 'slot', type: 'S' },
    timeToLiveAttribute: 'expires_at',
  },
  replays: {
    id: 'replays',
    description: 'Replay requests (C15): the request, what it matched, and the deliveries it re-enqueued.',
    scope: 'service',
    envVar: 'REPLAYS_TABLE_NAME',
    partitionKey: { name: 'replay_id', type: 'S' },
    sortKey: { name: 'sk', type: 'S' },
    timeToLiveAttribute: 'expires_at',
  },
  catalog: {
    id: 'catalog',
    description:
      'Versioned reference data: immutable part versions (gzip chunks), the current-release pointer and the publication history.',
    scope: 'service',
    envVar: 'CATALOG_TABLE_NAME',
    partitionKey: { name: 'pk', type: 'S' },
    sortKey: { name: 'sk', type: 'S' },
  },
  quotes: {
    id: 'quotes',
    description:
      'Signed quotes with their rate lock; kept 24 h past the lock so a late commit can be answered.',
    scope: 'service',
    envVar: 'QUOTES_TABLE_NAME',
    partitionKey: { name: 'quote_id', type: 'S' },
    timeToLiveAttribute: 'expires_at',
  },
  receipts: {
    id: 'receipts',
    description:
      'KMS-signed receipts, one per quote, with their refunds; the stream feeds the finance export.',
    scope: 'service',
    envVar: 'RECEIPTS_TABLE_NAME',
    partitionKey: { name: 'receipt_id', type: 'S' },
    stream: 'NEW_AND_OLD_IMAGES',
  },
  idempotency: {
    id: 'idempotency',
    description: 'Idempotency-Key records (Powertools idempotency): stored responses, kept at least 24 h.',
    scope: 'service',
    envVar: 'IDEMPOTENCY_TABLE_NAME',
    partitionKey: { name: 'id', type: 'S' },
    timeToLiveAttribute: 'expiration',
  },
  priceCache: {
    id: 'price-cache',
    description: 'Shared price projection keyed pricelist:region:currency:sku:version, and tag epochs (C18).',
    scope: 'service',
    envVar: 'PRICE_CACHE_TABLE_NAME',
    partitionKey: { name: 'key', type: 'S' },
    timeToLiveAttribute: 'expires_at',
  },
  changeRequests: {
    id: 'change-requests',
    description:
      'Change requests (C23): author, payload (gzip chunks), diff, guardrails, approvals, status and release (DSSE).',
    scope: 'service',
    envVar: 'CHANGE_REQUESTS_TABLE_NAME',
    partitionKey: { name: 'cr_id', type: 'S' },
    sortKey: { name: 'sk', type: 'S' },
    globalSecondaryIndexes: [
      // Every change request's head item, newest first by `created_key` (`<created_at>#<cr_id>`).
      {
        name: 'by-created',
        partitionKey: { name: 'list', type: 'S' },
        sortKey: { name: 'created_key', type: 'S' },
      },
    ],
  },
  journal: {
    id: 'journal',
    description:
      'Write-once audit journal: entries by index, signed tree heads by size, the Merkle frontier (RFC 9162).',
    scope: 'service',
    envVar: 'JOURNAL_TABLE_NAME',
    partitionKey: { name: 'pk', type: 'S' },
    sortKey: { name: 'seq', type: 'N' },
  },
  rateState: {
    id: 'rate-state',
    description:
      'FX ingestion state per pair: recent ticks (TWAP window), circuit breaker, last publication, held ticks.',
    scope: 'service',
    envVar: 'RATE_STATE_TABLE_NAME',
    partitionKey: { name: 'pair', type: 'S' },
    sortKey: { name: 'sk', type: 'S' },
  },
  apiKeys: {
    id: 'api-keys',
    description:
      'Caller keys (C26): one record per key (tenant, scopes, channels, customer groups, status) and one item per live secret hash (SHA-256), which the authorizer reads; overlapping old secrets expire by TTL.',
    scope: 'service',
    envVar: 'API_KEYS_TABLE_NAME',
    partitionKey: { name: 'pk', type: 'S' },
    timeToLiveAttribute: 'expires_at',
    globalSecondaryIndexes: [
      // Every key record, newest first by `created_key` (`<created_at>#<key_id>`); hash items are not listed.
      {
        name: 'by-created',
        partitionKey: { name: 'list', type: 'S' },
        sortKey: { name: 'created_key', type: 'S' },
      },
    ],
  },
  localSchedules: {
    id: 'local-schedules',
    description: 'Local twin of EventBridge Scheduler: one-time schedules waiting for their time.',
    scope: 'local',
    envVar: 'LOCAL_SCHEDULES_TABLE_NAME',
    partitionKey: { name: 'name', type: 'S' },
    globalSecondaryIndexes: [
      {
        name: 'by-due-time',
        partitionKey: { name: 'due_partition', type: 'S' },
        sortKey: { name: 'due_at', type: 'S' },
      },
    ],
  },
  localStreamCheckpoints: {
    id: 'local-stream-checkpoints',
    description: 'Local twin of the stream event source mapping: last processed sequence number per shard.',
    scope: 'local',
    envVar: 'LOCAL_STREAM_CHECKPOINTS_TABLE_NAME',
    partitionKey: { name: 'mapping_id', type: 'S' },
    sortKey: { name: 'shard_id', type: 'S' },
  },
} as const satisfies Record<string, TableDefinition>;

export const QUEUES = {
  delivery: {
    id: 'delivery',
    description: 'One message per (event, endpoint) delivery attempt; delayed messages carry backoff.',
    envVar: 'DELIVERY_QUEUE_URL',
    deadLetter: { queue: 'delivery-dlq', maxReceiveCount: 5 },
    retentionDays: 4,
  },
  deliveryDlq: {
    id: 'delivery-dlq',
    description: 'Dead deliveries: retries exhausted or the consumer kept failing.',
    envVar: 'DELIVERY_DLQ_URL',
    terminal: true,
    retentionDays: 14,
  },
  eventsStreamFailures: {
    id: 'events-stream-failures',
    description: 'On-failure destination of the events stream mapping (batch metadata after retries).',
    envVar: 'EVENTS_STREAM_FAILURES_QUEUE_URL',
    terminal: true,
    retentionDays: 14,
  },
  receiptsStreamFailures: {
    id: 'receipts-stream-failures',
    description:
      'On-failure destination of the receipts stream mapping (finance export): batch metadata after retries.',
    envVar: 'RECEIPTS_STREAM_FAILURES_QUEUE_URL',
    terminal: true,
    retentionDays: 14,
  },
} as const satisfies Record<string, QueueDefinition>;

export const BUCKETS = {
  receipts: {
    id: 'receipts',
    description:
      'Finance export: each signed receipt, return and chargeback as its own JSON object by UTC day, daily ' +
      'signed manifests (Merkle root, totals) and CSV summaries; write-once for 7 years (compliance mode).',
    envVar: 'RECEIPTS_BUCKET_NAME',
    objectLock: { mode: 'COMPLIANCE', retentionDays: 2557 },
  },
  journal: {
    id: 'journal',
    description: 'Mirror of the audit journal: entries and signed tree heads, never overwritten.',
    envVar: 'JOURNAL_BUCKET_NAME',
    objectLock: { mode: 'COMPLIANCE', retentionDays: 3653 },
  },
  catalogFiles: {
    id: 'catalog-files',
    description:
      'Catalog documents too large for one API response or request: exports (gzip JSON, content-addressed, ' +
      'handed out as download links) and uploads to import (through upload links).',
    envVar: 'CATALOG_FILES_BUCKET_NAME',
    // Exports are made again on demand; an upload is imported within minutes of its link.
    expiration: [
      { prefix: 'exports/', days: 7 },
      { prefix: 'uploads/', days: 1 },
    ],
  },
} as const satisfies Record<string, BucketDefinition>;

export const KEYS = {
  receiptSigning: {
    id: 'receipt-signing',
    description: 'Signs receipts (ECDSA P-256 over SHA-256).',
    envVar: 'RECEIPT_SIGNING_KEY_ID',
    kind: 'ECC_NIST_P256_SIGN',
    localFile: 'receipt-signing.pem',
  },
  quoteMac: {
    id: 'quote-mac',
    description: 'Signs and verifies quotes (HMAC-SHA-256).',
    envVar: 'QUOTE_MAC_KEY_ID',
    kind: 'HMAC_256',
    localFile: 'quote-mac.key',
  },
  data: {
    id: 'data',
    description:
      'Encrypts data at rest: tables, queues and buckets, used only through DynamoDB, SQS and S3 (kms:ViaService).',
    envVar: 'DATA_KEY_ID',
    kind: 'SYMMETRIC',
    localFile: 'data.key',
  },
  secrets: {
    id: 'secrets',
    description:
      'Encrypts application secrets: endpoint signing secrets, client-certificate keys and stored answers that carry a secret.',
    envVar: 'SECRETS_KEY_ID',
    kind: 'SYMMETRIC',
    localFile: 'secrets.key',
  },
} as const satisfies Record<string, KeyDefinition>;

/**
 * A key's ARN by its definition id (`KEYS.*.id`), as the local engines name it: the AWS twin finds a key by the
 * `key/<id>` it ends with, and the bundles' environment gives it so.
 */
export const keyArn = (id: string, region: string, account: string): string =>
  `arn:aws:kms:${region}:${account}:key/${id}`;

/** EventBridge Scheduler group for one-time delivery retries (longer than SQS's 15-minute delay). */
export const SCHEDULER = {
  groupName: 'deliveries',
  groupEnvVar: 'SCHEDULE_GROUP_NAME',
  roleEnvVar: 'SCHEDULER_ROLE_ARN',
  /** SQS `DelaySeconds` tops out at 15 minutes; longer waits go through the scheduler. */
  maxQueueDelaySeconds: 900,
} as const;

export type TableId = keyof typeof TABLES;

/** Tables the functions use (deployed to AWS); local-only tables belong to the local twins. */
export type ServiceTableId = {
  [K in TableId]: (typeof TABLES)[K]['scope'] extends 'service' ? K : never;
}[TableId];
export type QueueId = keyof typeof QUEUES;
export type BucketId = keyof typeof BUCKETS;
export type KeyId = keyof typeof KEYS;

export const serviceTables = (): TableDefinition[] =>
  Object.values(TABLES).filter((table: TableDefinition) => table.scope === 'service');

export const queueById = (id: string): QueueDefinition => {
  const queue = Object.values(QUEUES).find((candidate: QueueDefinition) => candidate.id === id);
  if (!queue) throw new Error(`unknown queue definition: ${id}`);
  return queue;
};
