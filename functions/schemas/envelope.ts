import { z } from 'zod';

/** ISO 8601 UTC with milliseconds, as every timestamp of the service (C4). */
export const isoTimestamp = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/, 'ISO 8601 UTC with ms');

/** `<topic>.<Name>` (C11): `catalog.PriceListUpdated`, `payout.processed`. */
export const eventType = z.string().regex(/^[a-z][a-z0-9_]*\.[A-Za-z][A-Za-z0-9_]*$/, 'dotted event type');

/** The webhook event envelope (spec "Webhook event envelope" plus the C11 audit fields). */
export const eventEnvelopeSchema = z.object({
  event_id: z.string().regex(/^evt_[0-9A-HJKMNP-TV-Z]{26}$/, 'evt_ ULID'),
  type: eventType,
  version: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'envelope version date'),
  ts: isoTimestamp,
  attempt: z.number().int().min(1),
  producer: z.string().min(1).optional(),
  tenant: z.string().min(1).optional(),
  data: z.record(z.string(), z.unknown()).optional(),
  trace_id: z.string().min(1),
  pricelist_version: z.string().nullable(),
  fx_version: z.string().nullable(),
  tax_rule_version: z.string().nullable(),
});

export type EventEnvelope = z.infer<typeof eventEnvelopeSchema>;

/** An outbox item: the envelope as first written plus bookkeeping the pipeline adds. */
export const outboxItemSchema = eventEnvelopeSchema.extend({
  expires_at: z.number().int().positive(),
  fanned_out_at: isoTimestamp.optional(),
});

export type OutboxItem = z.infer<typeof outboxItemSchema>;

/** Message on the delivery queue. */
export const deliveryMessageSchema = z.object({
  event_id: eventEnvelopeSchema.shape.event_id,
  type: eventType,
});

export type DeliveryMessage = z.infer<typeof deliveryMessageSchema>;

export const topicOf = (type: string): string => type.slice(0, type.indexOf('.'));
