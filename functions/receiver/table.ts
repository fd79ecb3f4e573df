/**
 * The shape of the receiver's idempotency table, shared by the idempotency store, the reference receiver, the
 * CDK construct that creates it in AWS and the tests that create it in DynamoDB Local, so they cannot drift.
 *
 * One item per event: partition key `event_id` (a string, no sort key), and the epoch-seconds attribute
 * `expires_at` enabled as the table's time-to-live attribute. Use on-demand capacity; the store reads with
 * strongly consistent reads, so a global table would need one writer region for this table.
 *
 * ```ts
 * new dynamodb.TableV2(this, 'ReceiverEvents', {
 *   partitionKey: { name: RECEIVER_TABLE.partitionKey, type: dynamodb.AttributeType.STRING },
 *   timeToLiveAttribute: RECEIVER_TABLE.timeToLiveAttribute,
 * });
 * ```
 */
export const RECEIVER_TABLE = {
  /** Partition key, type string (`S`): the event's `event_id`. */
  partitionKey: 'event_id',
  /** Time-to-live attribute, epoch seconds (`N`): when the record stops counting (see process-once.ts). */
  timeToLiveAttribute: 'expires_at',
} as const;
