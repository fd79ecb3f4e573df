/**
 * The reference receiver's domain effect, and the shape of any effect it can run: DynamoDB writes that the
 * idempotency store commits in the **same transaction** as the event's seen mark (spec "Receiver processing
 * order" 3–4), so an effect is either applied and remembered, or neither.
 */
import type { TransactItem } from '../process-once';
import type { ReceivedEnvelope } from '../verify';

export type { TransactItem };

/** What an effect knows beyond the envelope: the topic it was delivered to (`/webhooks/v1/<topic>`). */
export interface EffectContext {
  readonly topic: string;
}

/**
 * A domain handler: returns the writes that apply the event. It must not write anything itself (those writes
 * would not be atomic with the seen mark); it may read, and may throw {@link EffectRejectedError} to refuse an
 * event it can never apply. At most 99 items: the store adds the seen mark to the same transaction (100 max).
 */
export type EffectHandler = (
  envelope: ReceivedEnvelope,
  context: EffectContext,
) => Promise<readonly TransactItem[]>;

/**
 * An authentic event the domain refuses for good (for example a payout that does not exist): answered 422
 * `invalid_state` (or 400 `invalid_request`), which stops the sender's retries. Nothing is applied and the
 * event is not marked seen. The description is sent to the sender: keep it short and free of personal data.
 */
export class EffectRejectedError extends Error {
  constructor(
    readonly code: 'invalid_state' | 'invalid_request',
    readonly description: string,
    options?: ErrorOptions,
  ) {
    super(description, options);
    this.name = 'EffectRejectedError';
  }
}

/** Key of the per-topic counter item: `effects#<topic>`, attribute `applied`. */
export const effectCounterKey = (topic: string): string => `effects#${topic}`;

/** Key of the per-event marker item: `applied#<event_id>`. */
export const appliedMarkerKey = (eventId: string): string => `applied#${eventId}`;

export interface CountingEffectOptions {
  /** The receiver table (the effect items live beside the seen marks, under other key prefixes). */
  readonly tableName: string;
  /** @default () => new Date() */
  readonly clock?: () => Date;
  /**
   * How long the `applied#` markers are kept (TTL `expires_at`), in seconds; the counter is kept for ever.
   * @default 7 days (the kit's default dedup memory)
   */
  readonly markerRetentionSeconds?: number;
}

/**
 * The reference effect, built to be counted exactly: in the event's transaction it adds 1 to `applied` on the
 * item `effects#<topic>` and puts `applied#<event_id>` on the condition that it does not exist yet. If the
 * event were ever applied twice, the counter would show it, and the second marker put would fail the whole
 * transaction. Replace it with your own {@link EffectHandler}.
 */
export const countingEffect = (options: CountingEffectOptions): EffectHandler => {
  const clock = options.clock ?? (() => new Date());
  const retentionSeconds = options.markerRetentionSeconds ?? 7 * 86_400;
  return async (envelope, context) => {
    const now = clock();
    return [
      {
        Update: {
          TableName: options.tableName,
          Key: { event_id: effectCounterKey(context.topic) },
          UpdateExpression: 'ADD applied :one SET last_event_id = :event_id, updated_at = :now',
          ExpressionAttributeValues: { ':one': 1, ':event_id': envelope.event_id, ':now': now.toISOString() },
        },
      },
      {
        Put: {
          TableName: options.tableName,
          Item: {
            event_id: appliedMarkerKey(envelope.event_id),
            topic: context.topic,
            type: envelope.type,
            applied_at: now.toISOString(),
            expires_at: Math.floor(now.getTime() / 1000) + retentionSeconds,
          },
          ConditionExpression: 'attribute_not_exists(event_id)',
        },
      },
    ];
  };
};
