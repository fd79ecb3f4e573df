/**
 * The machine-readable changelog of the webhook envelope and its event types (C24), served at `GET /changelog`
 * and published as `docs/changelog.json` (a test keeps the two equal).
 */
import { EVENT_TYPES } from './event-types';

export const CHANGELOG = {
  description:
    'Machine-readable changelog of the webhook envelope and its event types (C24). New fields are optional; removing or retyping a field needs a new envelope version, announced with Deprecation and Sunset (at least 180 days).',
  envelope_versions: [
    {
      version: '2026-11-01',
      released: '2026-11-01',
      status: 'current',
      changes: [
        'First version: event_id, type, version, ts, attempt, producer, tenant, data, and on every event trace_id, pricelist_version, fx_version, tax_rule_version (C11).',
        'Signed with HMAC-SHA-256 over the canonical string of C13; X-Signature carries v1= signatures, several during a secret rotation.',
        '2026-11-26 (additive): optional test: true on a test event (POST /webhooks/endpoints/{id}/test): the example of its type, sent to one endpoint; verify it and apply nothing.',
        '2026-11-26 (additive): the data of an expunged event (POST /webhooks/events/{id}/expunge) is gone: a resync (GET /partner/events) shows its envelope without data.',
        '2026-11-26 (delivery): a 429 or 503 with Retry-After pauses every delivery to the endpoint until then (at most an hour); an endpoint may have a rate_limit (per_second, max_in_flight); an endpoint that keeps timing out gets at most 2 attempts at once.',
        '2026-11-26 (delivery): an endpoint failing continuously for disable_after_days (default 5) is disabled after warnings at 50/75/90 %; events for a disabled endpoint are recorded skipped and re-delivered by recover, with their original event_id.',
        '2026-11-26 (delivery): an endpoint may have an ordering (key endpoint, tenant or data.<field>): deliveries with the same key start one after another, each after the one before was answered 2xx or given up (dead, stopped); replays join the end of their key.',
        '2026-11-26 (signing): an endpoint may ask for signature_scheme standard-webhooks: instead of X-Timestamp and X-Signature it gets webhook-id (the event_id), webhook-timestamp (Unix seconds) and webhook-signature (v1, HMAC-SHA-256 over id.timestamp.body, one per secret during a rotation), verifiable with the standardwebhooks libraries. The envelope is the same.',
        '2026-11-26 (signing): an endpoint may ask for signing_algorithm ed25519: the signature is v1a (X-Signature: v1a=<base64> over the canonical string, or webhook-signature: v1a,<base64> in Standard Webhooks mode) by the service key named in X-Signature-Key-Id, whose public half is in GET /webhooks/jwks.json.',
        '2026-11-26 (delivery): an endpoint may have auth: static headers it asked for, or Authorization: Bearer <token> of its OAuth 2.0 client credentials (a 401 makes the service fetch a new token and send again once, within the same attempt).',
        '2026-11-26 (delivery): an endpoint may have a destination: an Amazon SQS queue (the envelope as the message body, the signature headers as message attributes, the signed path /<topic>; a FIFO queue groups by the ordering key) or an EventBridge bus (the envelope as the detail, the event type as detail-type), reached through the partner role with the external id the service made for the endpoint.',
        "2026-11-27 (resync): GET /partner/events leaves out the events an endpoint's filter kept from it, as the endpoint never received them.",
      ],
    },
  ],
  // From the event-type catalog (`event-types.ts`): each type, since when, what it means, its data's fields.
  event_types: EVENT_TYPES.map((definition) => ({
    type: definition.type,
    since: definition.since,
    description: definition.description,
    data: Object.keys(definition.data.shape),
  })),
} as const;
