/**
 * Lambda functions, their event source mappings and the HTTP route table: read by the CDK service stack
 * and by the local stack (gateway and pollers), so both wire the same handlers the same way.
 */
import type { QueueId, TableId } from './resources';

export type FunctionId =
  | 'authorizer'
  | 'api'
  | 'catalog'
  | 'checkout'
  | 'admin'
  | 'webhooks'
  | 'fanout'
  | 'deliver'
  | 'sweeper'
  | 'replay'
  | 'rates'
  | 'exporter';

export interface FunctionDefinition {
  readonly id: FunctionId;
  readonly description: string;
  /** Source file, relative to the repository root, whose `handler` export is the Lambda entry point. */
  readonly entry: string;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
}

/**
 * API Gateway's integration timeout (REST API default and quota): an HTTP function running longer would work
 * on after its caller got a 504, so no function behind a route has a longer timeout.
 */
export const API_GATEWAY_TIMEOUT_SECONDS = 29;

export const FUNCTIONS = {
  authorizer: {
    id: 'authorizer',
    description:
      'Caller-key authorizer (API Gateway REQUEST authorizer): x-api-key → tenant, scopes, channels and customer groups (C26, C29).',
    entry: 'functions/handlers/authorizer.ts',
    timeoutSeconds: 5,
    memoryMb: 256,
  },
  api: {
    id: 'api',
    description: 'HTTP API: system routes (health, public keys, OpenAPI).',
    entry: 'functions/handlers/api.ts',
    timeoutSeconds: 10,
    memoryMb: 512,
  },
  catalog: {
    id: 'catalog',
    description: 'Catalog reads for storefronts: display prices and limits.',
    entry: 'functions/handlers/catalog.ts',
    timeoutSeconds: 10,
    memoryMb: 1024,
  },
  checkout: {
    id: 'checkout',
    description: 'Checkout: quotes with a rate lock, commits into signed receipts, refunds.',
    entry: 'functions/handlers/checkout.ts',
    timeoutSeconds: 15,
    memoryMb: 1024,
  },
  admin: {
    id: 'admin',
    description: 'Operator routes: catalog import and export, cache invalidation and warming.',
    entry: 'functions/handlers/admin.ts',
    timeoutSeconds: API_GATEWAY_TIMEOUT_SECONDS,
    memoryMb: 1024,
  },
  webhooks: {
    id: 'webhooks',
    description: "Webhook operator routes: endpoints, producers' events, event history, replay.",
    entry: 'functions/handlers/webhooks.ts',
    timeoutSeconds: API_GATEWAY_TIMEOUT_SECONDS,
    memoryMb: 512,
  },
  fanout: {
    id: 'fanout',
    description:
      'Events stream consumer: one delivery record and queue message per (event, matching endpoint).',
    entry: 'functions/handlers/fanout.ts',
    timeoutSeconds: 30,
    memoryMb: 256,
  },
  deliver: {
    id: 'deliver',
    description:
      'Delivery queue consumer: signs and POSTs one attempt, then schedules the next or dead-letters.',
    entry: 'functions/handlers/deliver.ts',
    timeoutSeconds: 30,
    memoryMb: 256,
  },
  sweeper: {
    id: 'sweeper',
    description:
      'Sweeper (every minute): fans out events whose fan-out is not recorded after a minute; wakes ordered keys whose turn message was lost.',
    entry: 'functions/handlers/sweeper.ts',
    timeoutSeconds: 60,
    memoryMb: 256,
  },
  replay: {
    id: 'replay',
    description: 'Replay for operators, invoked directly: { "event_ids": [...] } or { "from", "to" } (C15).',
    entry: 'functions/handlers/replay.ts',
    timeoutSeconds: 300,
    memoryMb: 256,
  },
  rates: {
    id: 'rates',
    description:
      'Every minute: FX ingestion (sources, protection, publication), closing journal slices, finishing approved changes.',
    entry: 'functions/handlers/rates.ts',
    timeoutSeconds: 60,
    memoryMb: 512,
  },
  exporter: {
    id: 'exporter',
    description:
      'Finance export: receipts stream to signed documents in the receipts bucket; hourly, the manifests of closed days (Merkle root, totals, CSV, journal entry).',
    entry: 'functions/handlers/exporter.ts',
    timeoutSeconds: 900,
    memoryMb: 1024,
  },
} as const satisfies Record<FunctionId, FunctionDefinition>;

/**
 * How often the `rates` function runs (an EventBridge Scheduler rate schedule in AWS, a timer locally): the
 * finest FX interval a pair can have (rule 9: 1 to 15 minutes for volatile pairs).
 */
export const RATES_RATE_MINUTES = 1;

/** How often the outbox sweeper runs (an EventBridge Scheduler rate schedule in AWS, a timer locally). */
export const SWEEPER_RATE_MINUTES = 1;

/**
 * How often the exporter looks for closed days without a manifest (an EventBridge Scheduler rate schedule in
 * AWS, a timer locally): a day's manifest is written within the hour after the day closes.
 */
export const EXPORTER_RATE_MINUTES = 60;

/** SQS visibility must cover a whole batch plus Lambda's own retries: AWS recommends at least 6 × timeout. */
export const VISIBILITY_TIMEOUT_FACTOR = 6;

export interface StreamMappingDefinition {
  readonly kind: 'dynamodb-stream';
  readonly id: string;
  readonly table: TableId;
  readonly function: FunctionId;
  readonly batchSize: number;
  readonly maxBatchingWindowSeconds: number;
  readonly startingPosition: 'TRIM_HORIZON' | 'LATEST';
  readonly bisectBatchOnError: boolean;
  /** Retries after the first attempt before the batch goes to the on-failure destination. */
  readonly maxRetryAttempts: number;
  readonly onFailureQueue: QueueId;
  readonly reportBatchItemFailures: boolean;
  /**
   * Only records of these kinds reach the function (Lambda event filtering on `eventName`): the others are never
   * handed over, cost no invocation, and the mapping's position moves past them. All kinds when absent.
   */
  readonly eventNames?: readonly StreamEventName[];
}

export type StreamEventName = 'INSERT' | 'MODIFY' | 'REMOVE';

export interface QueueMappingDefinition {
  readonly kind: 'sqs';
  readonly id: string;
  readonly queue: QueueId;
  readonly function: FunctionId;
  readonly batchSize: number;
  readonly maxBatchingWindowSeconds: number;
  readonly reportBatchItemFailures: boolean;
  /**
   * Most concurrent invocations the mapping makes (SQS scaling config, 2–1000; AWS only: the local poller runs
   * one batch at a time). Caps what a backlog — e.g. every attempt to a dead partner waiting for its timeout —
   * can take from the account's concurrency, which the HTTP functions share.
   */
  readonly maxConcurrency: number;
  /**
   * Batches the local twin hands to the function at once (its poll loops). Lambda scales its pollers with the
   * backlog up to `maxConcurrency`; the local stack keeps a fixed few. Default 2.
   */
  readonly localConcurrency?: number;
}

export type EventSourceMappingDefinition = StreamMappingDefinition | QueueMappingDefinition;

export const EVENT_SOURCE_MAPPINGS = {
  eventsToFanout: {
    kind: 'dynamodb-stream',
    id: 'events-to-fanout',
    table: 'events',
    function: 'fanout',
    batchSize: 100,
    maxBatchingWindowSeconds: 0,
    startingPosition: 'TRIM_HORIZON',
    bisectBatchOnError: true,
    maxRetryAttempts: 5,
    onFailureQueue: 'eventsStreamFailures',
    reportBatchItemFailures: true,
    // The fan-out acts on new events only; the updates it and others make (fan-out recorded, expunged) would
    // otherwise come back to it as MODIFY records, one invocation's worth of work each for nothing.
    eventNames: ['INSERT'],
  },
  receiptsToExporter: {
    kind: 'dynamodb-stream',
    id: 'receipts-to-exporter',
    table: 'receipts',
    function: 'exporter',
    batchSize: 100,
    maxBatchingWindowSeconds: 0,
    startingPosition: 'TRIM_HORIZON',
    bisectBatchOnError: true,
    maxRetryAttempts: 10,
    onFailureQueue: 'receiptsStreamFailures',
    reportBatchItemFailures: true,
  },
  deliveryToDeliver: {
    kind: 'sqs',
    id: 'delivery-to-deliver',
    queue: 'delivery',
    function: 'deliver',
    batchSize: 10,
    maxBatchingWindowSeconds: 0,
    reportBatchItemFailures: true,
    // 100 batches of 10 at once: 1 000 attempts in flight, 14 × the planned peak's 70 deliveries/s even when
    // each waits its full 10 s timeout, and at most a tenth of the default account concurrency.
    maxConcurrency: 100,
    // Enough loops that the batches held by one hanging endpoint (at most its in-flight cap, 2, while it keeps
    // timing out) leave the others delivering.
    localConcurrency: 10,
  },
} as const satisfies Record<string, EventSourceMappingDefinition>;

/** Which function consumes a queue: the queue's visibility timeout is derived from that function's timeout. */
export const consumerOfQueue = (queue: QueueId): FunctionDefinition | undefined => {
  const mapping = Object.values(EVENT_SOURCE_MAPPINGS).find(
    (candidate: EventSourceMappingDefinition) => candidate.kind === 'sqs' && candidate.queue === queue,
  );
  return mapping ? FUNCTIONS[mapping.function] : undefined;
};

export const visibilityTimeoutSeconds = (queue: QueueId): number => {
  const consumer = consumerOfQueue(queue);
  return consumer ? consumer.timeoutSeconds * VISIBILITY_TIMEOUT_FACTOR : 30;
};
