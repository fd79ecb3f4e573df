import * as z from 'zod';

/**
 * An event's id: the service's own (`evt_` + ULID), or one its producer gave on `POST /webhooks/events` (C25:
 * 1–128 of letters, digits, `_ . : -`, starting with a letter or digit, so never `.` or `..` in a path), which is
 * then the event's id everywhere, envelope included. Producer ids are global: the first event to take one keeps it.
 */
export const EVENT_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/** ISO 8601 UTC with milliseconds, as every timestamp of the service (C4). */
export const isoTimestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'ISO 8601 UTC with ms');

/** `<topic>.<Name>` (C11): `catalog.PriceListUpdated`, `payout.processed`. */
export const eventType = z.string().regex(/^[a-z][a-z0-9_]*\.[A-Za-z][A-Za-z0-9_]*$/, 'dotted event type');

/** The webhook event envelope (spec "Webhook event envelope" plus the C11 audit fields). */
export const eventEnvelopeSchema = z.object({
  event_id: z.string().regex(EVENT_ID_PATTERN, 'an event id'),
  type: eventType,
  version: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'envelope version date'),
  ts: isoTimestamp,
  attempt: z.number().int().min(1),
  producer: z.string().min(1).optional(),
  tenant: z.string().min(1).optional(),
  data: z.record(z.string(), z.unknown()).optional(),
  trace_id: z.string().min(1),
  pricelist_version: z.number().int().positive().nullable(),
  fx_version: z.string().nullable(),
  tax_rule_version: z.number().int().positive().nullable(),
  /** A test event (`POST /webhooks/endpoints/{id}/test`): an example; nothing happened. */
  test: z.literal(true).optional(),
  /** The destination endpoint, on deliveries signed with the service's Ed25519 key (C33). */
  endpoint_id: z.string().optional(),
});

export type EventEnvelope = z.infer<typeof eventEnvelopeSchema>;

/** An outbox item: the envelope as first written plus bookkeeping the pipeline adds. */
export const outboxItemSchema = eventEnvelopeSchema.extend({
  /** TTL of the body (epoch seconds). */
  expires_at: z.number().int().positive(),
  /** UTC day and `<ts>#<event_id>`: the day index (`by-day-keys`). */
  day: z.string().optional(),
  ts_id: z.string().optional(),
  /** Present until the fan-out is recorded (the sparse `fanout-pending-keys` index). */
  fanout_pending: z.string().optional(),
  fanned_out_at: isoTimestamp.optional(),
  /** How many deliveries the fan-out created. */
  fanned_out_to: z.number().int().nonnegative().optional(),
  /**
   * Who published a producer event (`POST /webhooks/events`): the authenticated operator's identity, whatever
   * `producer` the body named. Operators see it; partners never do (not part of the envelope).
   */
  published_by: z.string().optional(),
  /** A test event goes to this endpoint only (not part of the envelope). */
  test_endpoint_id: z.string().optional(),
  /** `POST /webhooks/events/{id}/expunge`: the body (`data`) was removed then, by this operator. */
  expunged_at: isoTimestamp.optional(),
  expunged_by: z.string().optional(),
});

export type OutboxItem = z.infer<typeof outboxItemSchema>;

/** Message on the delivery queue: one attempt of one (event, endpoint) delivery. */
export const deliveryMessageSchema = z.object({
  event_id: eventEnvelopeSchema.shape.event_id,
  endpoint_id: z.string().regex(/^ep_[0-9A-HJKMNP-TV-Z]{26}$/, 'ep_ ULID'),
  /** The attempt this message makes (the envelope's `attempt`). */
  attempt: z.number().int().min(1),
  /** First attempt of this round: 1, or the first attempt of a replay; the backoff counts from it. */
  round_start: z.number().int().min(1),
  replay_id: z.string().optional(),
  /**
   * The start this delivery reserved of its endpoint's rate (`rate_limit.per_second`): a ticket, so the rate is
   * counted once however often the message comes back before then.
   */
  not_before: isoTimestamp.optional(),
  /** How often the delivery waited for an in-flight slot (its wait doubles each time); never an attempt. */
  deferrals: z.number().int().min(0).max(1_000).optional(),
  /** An ordered endpoint's delivery (C31 `ordering`): its key and its number there; it starts in its turn. */
  order: z.strictObject({ key: z.string().min(1).max(1_000), seq: z.number().int().min(1) }).optional(),
  /**
   * The event itself, on a first attempt's message from the fan-out (unordered endpoints, small events): the attempt
   * need not read it again. Never on a next attempt, a replay or a dead letter, which read the stored event.
   */
  event: outboxItemSchema.optional(),
});

export type DeliveryMessage = z.infer<typeof deliveryMessageSchema>;
