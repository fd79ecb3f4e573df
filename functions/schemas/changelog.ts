/**
 * The machine-readable changelog of the webhook envelope and its event types (C24), served at `GET /changelog`
 * and published as `docs/changelog.json` (a test keeps the two equal).
 */
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
      ],
    },
  ],
  event_types: [
    {
      type: 'catalog.PriceListUpdated',
      since: '2026-11-01',
      description: 'A price list changed (a new pricelist_version is in force from effective_from).',
      data: [
        'version',
        'effective_from',
        'revision',
        'trace_id',
        'pricelist_version',
        'fx_version',
        'tax_rule_version',
      ],
    },
    {
      type: 'catalog.FXRatePublished',
      since: '2026-11-01',
      description: 'Exchange rates were published (a new fx_version).',
      data: [
        'version',
        'effective_from',
        'revision',
        'trace_id',
        'pricelist_version',
        'fx_version',
        'tax_rule_version',
      ],
    },
    {
      type: 'catalog.TaxRuleChanged',
      since: '2026-11-01',
      description: 'Tax rules changed (a new tax_rule_version).',
      data: [
        'version',
        'effective_from',
        'revision',
        'trace_id',
        'pricelist_version',
        'fx_version',
        'tax_rule_version',
      ],
    },
    {
      type: 'catalog.PromoChanged',
      since: '2026-11-01',
      description: 'Promotions changed (part of a new pricelist_version).',
      data: [
        'version',
        'effective_from',
        'revision',
        'trace_id',
        'pricelist_version',
        'fx_version',
        'tax_rule_version',
      ],
    },
    {
      type: 'payout.processed',
      since: '2026-11-01',
      description: 'A payout was processed by the payments producer.',
      data: ['payout_id', 'status', 'amount_minor', 'currency', 'seq'],
    },
    {
      type: 'operations.endpoint_failing',
      since: '2026-11-26',
      description:
        'Topic operations (C32): an endpoint has been failing continuously; sent at 50 %, 75 % and 90 % of the time after which it is disabled.',
      data: ['endpoint_id', 'failing_since', 'disable_after_days', 'share'],
    },
    {
      type: 'operations.endpoint_disabled',
      since: '2026-11-26',
      description: 'Topic operations: an endpoint was disabled (410 Gone, or failing past its limit).',
      data: ['endpoint_id', 'reason', 'event_id'],
    },
    {
      type: 'operations.delivery_dead',
      since: '2026-11-26',
      description:
        'Topic operations: a delivery exhausted its retries and was dead-lettered (never raised about the delivery of another operations event).',
      data: ['event_id', 'endpoint_id', 'event_type', 'attempts', 'reason'],
    },
    {
      type: 'operations.replay_completed',
      since: '2026-11-26',
      description: 'Topic operations: every delivery a replay restarted has ended; the counts by outcome.',
      data: ['replay_id', 'enqueued', 'delivered', 'dead', 'stopped'],
    },
    {
      type: 'operations.fx_breaker_opened',
      since: '2026-11-26',
      description:
        "Topic operations: an FX pair's circuit breaker opened (its rate is held until a probe succeeds).",
      data: ['pair', 'at', 'reason', 'journal_entry_id'],
    },
    {
      type: 'operations.change_request_pending',
      since: '2026-11-26',
      description: 'Topic operations: a change request waits for review (four eyes).',
      data: ['cr_id', 'kind', 'guardrail_findings', 'effective_from'],
    },
  ],
} as const;
