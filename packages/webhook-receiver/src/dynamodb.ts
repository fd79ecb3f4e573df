/**
 * `@pricing-service/webhook-receiver/dynamodb`: apply each event's effect exactly once, in the same DynamoDB
 * transaction as its seen mark (or under a lock for effects outside DynamoDB). Needs `@aws-sdk/lib-dynamodb`
 * (a peer dependency) and a table of the shape `RECEIVER_TABLE`.
 */
export {
  CLOCK_SKEW_ALLOWANCE_SECONDS,
  DEFAULT_DEDUP_SECONDS,
  DEFAULT_LOCK_SECONDS,
  EventInProgressError,
  EventTooOldError,
  IdempotencyStore,
  type IdempotencyStoreOptions,
  MAX_HANDLER_ITEMS,
  MIN_DEDUP_SECONDS,
  type ProcessOutcome,
  type ReceiverStatus,
  type TransactItem,
} from '../../../functions/receiver/process-once';
export { RECEIVER_TABLE } from '../../../functions/receiver/table';
