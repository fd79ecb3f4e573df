/**
 * The event-type catalog (C33; issue "webhook interoperability", item 1): every type the service sends, with the
 * zod schema of its `data`, a description, an example, the envelope versions it exists in and, once announced, its
 * deprecation and sunset dates. The one source of `GET /webhooks/event-types`, of the changelog's event types, of
 * the test events' examples and of the AsyncAPI document (`asyncapi.ts`); a test checks real events against it.
 *
 * Data schemas are loose objects: a receiver must accept fields it does not know (C24: new fields are optional).
 */
import currencyCodes from 'currency-codes';
import * as z from 'zod';
import { ENVELOPE_VERSIONS, type EnvelopeVersion, topicOf } from '../domain/webhooks/envelope';
import { CHANGE_KINDS, type ChangeKind } from '../ports/change-requests';
import { identifier } from './catalog-document';
import { isoTimestamp } from './envelope';

/** A `payout.processed` payload (spec: identifiers only). */
export const payoutProcessedSchema = z.strictObject({
  payout_id: identifier,
  status: z.string().regex(/^[a-z_]{1,32}$/, 'a status code'),
  amount_minor: z.number().int().safe(),
  currency: z
    .string()
    .regex(/^[A-Z]{3}$/, 'an ISO 4217 code')
    .refine((code) => currencyCodes.code(code) !== undefined, 'an ISO 4217 currency code'),
  seq: z.number().int().nonnegative().optional(),
});

const versionOfCatalog = z.union([z.number().int().positive(), z.string().min(1)]);

/** The `data` of the four catalog events: the publication that made them and the versions then in force. */
const catalogEventData = z.looseObject({
  version: versionOfCatalog.describe(
    'The new version of what changed (its pricelist, FX or tax rule version).',
  ),
  effective_from: isoTimestamp.describe('When the new version takes effect.'),
  revision: z.number().int().nonnegative().describe('The catalog revision of the publication.'),
  trace_id: z.string().min(1).describe('The trace of the change that produced the event.'),
  pricelist_version: z.number().int().positive().nullable(),
  fx_version: z.string().nullable(),
  tax_rule_version: z.number().int().positive().nullable(),
});

const endpointId = z.string().describe('The endpoint concerned (ep_ + ULID).');

export interface EventTypeDefinition {
  readonly type: string;
  readonly description: string;
  /** The day the type was first sent. */
  readonly since: string;
  /** The envelope versions the type exists in. */
  readonly envelope_versions: readonly EnvelopeVersion[];
  /** Announced end of the type (C24: at least 180 days between them); absent while it is current. */
  readonly deprecated_at?: string;
  readonly sunset_at?: string;
  readonly data: z.ZodObject;
  readonly example: { readonly producer: string; readonly data: Readonly<Record<string, unknown>> };
}

const catalogExample = (version: number | string) => ({
  producer: 'catalog',
  data: {
    version,
    effective_from: '2026-11-01T00:00:00.000Z',
    revision: 7,
    trace_id: 'trc_example',
    pricelist_version: 42,
    fx_version: 'fx-318',
    tax_rule_version: 5,
  },
});

const FIRST: Pick<EventTypeDefinition, 'since' | 'envelope_versions'> = {
  since: '2026-11-01',
  envelope_versions: ENVELOPE_VERSIONS,
};
const OPERATIONS: Pick<EventTypeDefinition, 'since' | 'envelope_versions'> = {
  since: '2026-11-26',
  envelope_versions: ENVELOPE_VERSIONS,
};

export const EVENT_TYPES = [
  {
    type: 'catalog.PriceListUpdated',
    ...FIRST,
    description: 'A price list changed (a new pricelist_version is in force from effective_from).',
    data: catalogEventData,
    example: catalogExample(42),
  },
  {
    type: 'catalog.FXRatePublished',
    ...FIRST,
    description: 'Exchange rates were published (a new fx_version).',
    data: catalogEventData,
    example: catalogExample('fx-318'),
  },
  {
    type: 'catalog.TaxRuleChanged',
    ...FIRST,
    description: 'Tax rules changed (a new tax_rule_version).',
    data: catalogEventData,
    example: catalogExample(5),
  },
  {
    type: 'catalog.PromoChanged',
    ...FIRST,
    description: 'Promotions changed (part of a new pricelist_version).',
    data: catalogEventData,
    example: catalogExample(42),
  },
  {
    type: 'payout.processed',
    ...FIRST,
    description: 'A payout was processed by the payments producer.',
    // Loose for receivers (a later field is optional); producers are held to the strict schema at publication.
    data: payoutProcessedSchema.loose(),
    example: {
      producer: 'payments',
      data: { payout_id: 'po_example', status: 'paid', amount_minor: 125_000, currency: 'EUR' },
    },
  },
  {
    type: 'operations.endpoint_failing',
    ...OPERATIONS,
    description:
      'Topic operations (C32): an endpoint has been failing continuously; sent at 50 %, 75 % and 90 % of the time after which it is disabled.',
    data: z.looseObject({
      endpoint_id: endpointId,
      failing_since: isoTimestamp.describe('Every attempt since then failed.'),
      disable_after_days: z.number().positive(),
      share: z.number().int().min(0).max(100).describe('How much of the time has passed, in percent.'),
    }),
    example: {
      producer: 'operations',
      data: {
        endpoint_id: 'ep_01JQ4S6T1X5V8R2W3Y4Z5A6B7C',
        failing_since: '2026-11-20T08:00:00.000Z',
        disable_after_days: 5,
        share: 75,
      },
    },
  },
  {
    type: 'operations.endpoint_disabled',
    ...OPERATIONS,
    description: 'Topic operations: an endpoint was disabled (410 Gone, or failing past its limit).',
    data: z.looseObject({
      endpoint_id: endpointId,
      reason: z.string().describe('Why: gone (410) or failing.'),
      event_id: z.string().describe('The event whose attempt disabled it.'),
    }),
    example: {
      producer: 'operations',
      data: {
        endpoint_id: 'ep_01JQ4S6T1X5V8R2W3Y4Z5A6B7C',
        reason: 'gone',
        event_id: 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7D',
      },
    },
  },
  {
    type: 'operations.delivery_dead',
    ...OPERATIONS,
    description:
      'Topic operations: a delivery exhausted its retries and was dead-lettered (never raised about the delivery of another operations event).',
    data: z.looseObject({
      event_id: z.string(),
      endpoint_id: endpointId,
      event_type: z.string(),
      attempts: z.number().int().positive(),
      reason: z.string(),
    }),
    example: {
      producer: 'operations',
      data: {
        event_id: 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7D',
        endpoint_id: 'ep_01JQ4S6T1X5V8R2W3Y4Z5A6B7C',
        event_type: 'payout.processed',
        attempts: 15,
        reason: 'http_500',
      },
    },
  },
  {
    type: 'operations.replay_completed',
    ...OPERATIONS,
    description: 'Topic operations: every delivery a replay restarted has ended; the counts by outcome.',
    data: z.looseObject({
      replay_id: z.string(),
      enqueued: z.number().int().nonnegative(),
      delivered: z.number().int().nonnegative(),
      dead: z.number().int().nonnegative(),
      stopped: z.number().int().nonnegative(),
    }),
    example: {
      producer: 'operations',
      data: { replay_id: 'rpl_01JQ4S6T1X5V8R2W3Y4Z5A6B7E', enqueued: 3, delivered: 2, dead: 0, stopped: 1 },
    },
  },
  {
    type: 'operations.fx_breaker_opened',
    ...OPERATIONS,
    description:
      "Topic operations: an FX pair's circuit breaker opened (its rate is held until a probe succeeds).",
    data: z.looseObject({
      pair: z.string().describe('BASE/QUOTE, e.g. EUR/USD.'),
      at: z.string().describe('When it opened.'),
      reason: z.string().nullable(),
      journal_entry_id: z.string().describe('The journal entry that records the decision.'),
    }),
    example: {
      producer: 'operations',
      data: {
        pair: 'EUR/USD',
        at: '2026-11-26T09:15:00.000Z',
        reason: 'jump',
        journal_entry_id: 'je_01JQ4S6T1X5V8R2W3Y4Z5A6B7F',
      },
    },
  },
  {
    type: 'operations.change_request_pending',
    ...OPERATIONS,
    description: 'Topic operations: a change request waits for review (four eyes).',
    data: z.looseObject({
      cr_id: z.string(),
      kind: z.enum(CHANGE_KINDS as [ChangeKind, ...ChangeKind[]]),
      guardrail_findings: z.number().int().nonnegative(),
      effective_from: isoTimestamp.optional(),
    }),
    example: {
      producer: 'operations',
      data: {
        cr_id: 'cr_01JQ4S6T1X5V8R2W3Y4Z5A6B7G',
        kind: 'pricelist',
        guardrail_findings: 2,
        effective_from: '2026-12-01T00:00:00.000Z',
      },
    },
  },
] as const satisfies readonly EventTypeDefinition[];

export type EventTypeName = (typeof EVENT_TYPES)[number]['type'];

/** The catalog's entry of a type, if the service sends it. */
export const eventTypeDefinition = (type: string): EventTypeDefinition | undefined =>
  (EVENT_TYPES as readonly EventTypeDefinition[]).find((definition) => definition.type === type);

/** The JSON Schema (draft 2020-12) of a type's `data`, as the catalog and the AsyncAPI document publish it. */
export const dataJsonSchema = (definition: EventTypeDefinition): Record<string, unknown> => {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(definition.data, { io: 'output' }) as Record<
    string,
    unknown
  >;
  return schema;
};

/** One entry of `GET /webhooks/event-types`. */
export const eventTypeEntry = (definition: EventTypeDefinition) => ({
  type: definition.type,
  topic: topicOf(definition.type),
  description: definition.description,
  since: definition.since,
  envelope_versions: [...definition.envelope_versions],
  ...(definition.deprecated_at ? { deprecated_at: definition.deprecated_at } : {}),
  ...(definition.sunset_at ? { sunset_at: definition.sunset_at } : {}),
  schema: dataJsonSchema(definition),
  example: definition.example,
});

/** `GET /webhooks/event-types`. */
export const eventTypesCatalog = () => ({
  event_types: (EVENT_TYPES as readonly EventTypeDefinition[]).map(eventTypeEntry),
});

/** `GET /asyncapi.json`: an AsyncAPI 3.0 document (its shape is the AsyncAPI specification's). */
export const asyncApiDocumentSchema = z
  .looseObject({
    asyncapi: z.literal('3.0.0'),
    info: z.looseObject({ title: z.string(), version: z.string() }),
  })
  .describe('AsyncAPI 3.0 document.');

export const eventTypesResponseSchema = z.object({
  event_types: z.array(
    z.object({
      type: z.string(),
      topic: z.string(),
      description: z.string(),
      since: z.string(),
      envelope_versions: z.array(z.string()),
      deprecated_at: z.string().optional(),
      sunset_at: z.string().optional(),
      schema: z.record(z.string(), z.unknown()).describe("JSON Schema (draft 2020-12) of the event's data."),
      example: z.object({ producer: z.string(), data: z.record(z.string(), z.unknown()) }),
    }),
  ),
});
