import * as z from 'zod';
import { EVENT_BUS_ARN, queueAddressOf, ROLE_ARN } from '../domain/webhooks/destinations';
import { dpopJwkProblem } from '../domain/webhooks/dpop';
import { STATS_WINDOWS, type StatsWindow } from '../domain/webhooks/endpoint-stats';
import { DELIVERY_STATUSES, ENVELOPE_VERSIONS } from '../domain/webhooks/envelope';
import { type EventFilter, filterProblems } from '../domain/webhooks/filter';
import { isOrderingKeySpec, type OrderingKeySpec } from '../domain/webhooks/ordering';
import { HEADER_VALUE, headerNameProblem } from '../domain/webhooks/outbound-auth';
import { SIGNATURE_SCHEMES, SIGNING_ALGORITHMS } from '../domain/webhooks/standard-webhooks';
import { type EndpointRateLimit, RATE_LIMIT_BOUNDS } from '../domain/webhooks/throttle';
import { availabilitySchema, catalogDocumentSchema, identifier, settingsSchema } from './catalog-document';
import { EVENT_ID_PATTERN, eventType, isoTimestamp } from './envelope';
import { EXAMPLE_EVENT_TYPES } from './event-examples';

/** A topic name: the text before the first dot of an event type (C11). */
export const topicName = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'a topic: lower-case letters, digits, _');

export const endpointIdSchema = z.string().regex(/^ep_[0-9A-HJKMNP-TV-Z]{26}$/, 'an ep_ ULID');
export const eventIdSchema = z
  .string()
  .regex(
    EVENT_ID_PATTERN,
    'an event id: 1 to 128 letters, digits, "_", ".", ":" or "-", starting with a letter or digit (evt_… when the service made it)',
  );
export const replayIdSchema = z.string().regex(/^rpl_[0-9A-HJKMNP-TV-Z]{26}$/, 'an rpl_ ULID');

const endpointUrl = z
  .string()
  .max(2048)
  .refine((value) => {
    try {
      const url = new URL(value);
      return (
        (url.protocol === 'https:' || url.protocol === 'http:') &&
        url.username === '' &&
        url.password === '' &&
        url.hash === '' &&
        url.search === ''
      );
    } catch {
      return false;
    }
  }, 'an absolute http(s) URL without credentials, query or fragment');

/** base64url without padding of 32 bytes (canonical: the unused low bits of the last character are zero). */
const base64Url32Bytes = z
  .string()
  .regex(/^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/, '32 bytes in base64url without padding');

/**
 * A partner's DPoP key (RFC 9449): a public EC P-256 or Ed25519 JWK. Never a private key: `d` (or any other
 * member of a private key) is refused. `alg`, `use` and `kid` may accompany it; only the key is kept.
 */
export const dpopJwkSchema = z
  .strictObject({
    kty: z.enum(['EC', 'OKP']),
    crv: z.enum(['P-256', 'Ed25519']),
    x: base64Url32Bytes,
    y: base64Url32Bytes.optional(),
    alg: z.enum(['ES256', 'EdDSA', 'Ed25519']).optional(),
    use: z.literal('sig').optional(),
    kid: z.string().min(1).max(200).optional(),
    d: z.never({ error: 'a private key is never accepted: register the public key only' }).optional(),
  })
  .superRefine((jwk, ctx) => {
    const problem = dpopJwkProblem(jwk);
    if (problem)
      ctx.addIssue({ code: 'custom', message: problem.message, path: problem.path ? [problem.path] : [] });
  });
export type DpopJwkInput = z.infer<typeof dpopJwkSchema>;

/**
 * A client certificate the deliveries present to the endpoint (mTLS): the certificate chain (leaf first) and
 * its unencrypted private key (RSA 2048–4096, EC P-256/384/521 or Ed25519), both PEM. The key is stored
 * encrypted with the data key and never shown again; answers show a summary of the certificate only.
 */
export const mtlsInputSchema = z
  .strictObject({
    client_certificate: z
      .string()
      .min(1)
      .max(16_384)
      .describe(
        'PEM: the certificate, then any intermediates; valid now and allowed for client authentication.',
      ),
    client_key: z
      .string()
      .min(1)
      .max(8_192)
      .describe(
        'PEM, unencrypted: RSA 2048–4096 bits, EC P-256/P-384/P-521 or Ed25519, matching the certificate.',
      ),
  })
  .describe(
    'A client certificate deliveries present in the TLS handshake (mTLS); the key is never shown again.',
  );

/**
 * An endpoint's payload filter (C31): paths into `type`, `tenant`, `producer` and `data`, the operators of
 * `domain/webhooks/filter.ts`. Each problem is a 400 naming its path (`$.filter.data.amount.$gtt`).
 */
export const endpointFilterSchema = z
  .record(z.string(), z.unknown())
  .superRefine((value, ctx) => {
    for (const problem of filterProblems(value))
      ctx.addIssue({
        code: 'custom',
        message: problem.message,
        path: problem.path === '$' ? [] : [problem.path.slice(2)],
      });
  })
  .transform((value) => value as EventFilter)
  .describe(
    'Only events matching it are delivered; the others are recorded `filtered`. Keys: `$and`, `$or` (lists of ' +
      'filters), `$not` (a filter), or a dotted path into `type`, `tenant`, `producer`, `data` with a value ' +
      '(equality) or operators `$eq $neq $gt $gte $lt $lte $in $nin $exists $startsWith`.',
  );

/** An endpoint's throughput limits (C31 `rate_limit`): at least one of them. */
export const endpointRateLimitSchema = z
  .strictObject({
    per_second: z
      .number()
      .min(RATE_LIMIT_BOUNDS.perSecond.min)
      .max(RATE_LIMIT_BOUNDS.perSecond.max)
      .optional()
      .describe('Most attempts started per second, across every deliver instance.'),
    max_in_flight: z
      .number()
      .int()
      .min(RATE_LIMIT_BOUNDS.maxInFlight.min)
      .max(RATE_LIMIT_BOUNDS.maxInFlight.max)
      .optional()
      .describe('Most attempts waiting for the endpoint at once.'),
  })
  .refine((limit) => limit.per_second !== undefined || limit.max_in_flight !== undefined, {
    message: 'give per_second, max_in_flight or both',
  })
  .transform((limit) => limit as EndpointRateLimit)
  .describe(
    'Deliveries over the limits wait (no attempt is used) and are sent as soon as the endpoint has room.',
  );

/** An endpoint's ordering (C31 `ordering`): FIFO per key. */
export const endpointOrderingSchema = z
  .strictObject({
    key: z
      .string()
      .refine(isOrderingKeySpec, {
        message: '"endpoint", "tenant" or "data.<field>" (dotted: letters, digits, _ and -; at most 8 deep)',
      })
      .transform((key) => key as OrderingKeySpec)
      .describe(
        'What orders deliveries: "endpoint" (all of them), "tenant", or a field of the event\'s data ("data.payout_id").',
      ),
  })
  .describe(
    'Deliveries with the same key start one after another, each only after the one before it ended (delivered, ' +
      'stopped or dead); a failing one holds back only its key. Replays and recoveries join the end of their key.',
  );

/** Days of continuous failure after which the endpoint is disabled (C32); null: the service's default (5). */
const disableAfterDaysSchema = z
  .number()
  .min(1)
  .max(30)
  .describe(
    'Failing continuously this many days disables the endpoint (warnings at 50, 75 and 90 %); default 5.',
  );

/** Days the bodies of an endpoint's events are kept (C32 retention; default 30, the service's). */
const retentionDaysSchema = z
  .number()
  .int()
  .min(1)
  .max(30)
  .describe(
    'Bodies of the events this endpoint receives are kept at most this many days (an event going to several ' +
      'endpoints keeps the shortest); replays and resyncs end with them. Default 30.',
  );

/** How deliveries are signed (C33). */
const signatureSchemeSchema = z
  .enum(SIGNATURE_SCHEMES)
  .describe(
    '"native" (default): X-Timestamp and X-Signature (v1=, C13). "standard-webhooks": webhook-id, ' +
      'webhook-timestamp and webhook-signature (v1,) over id.timestamp.body, verifiable with the standardwebhooks libraries.',
  );

/** What deliveries are signed with (C33). */
const signingAlgorithmSchema = z
  .enum(SIGNING_ALGORITHMS)
  .describe(
    '"hmac-sha256" (default): with the endpoint secret. "ed25519": with the service\'s key, published at ' +
      'GET /webhooks/jwks.json (v1a signatures, key id in X-Signature-Key-Id).',
  );

/** Outbound authentication (C34): static headers, or OAuth 2.0 client credentials. Secrets are write-only. */
const endpointAuthSchema = z
  .union([
    z.strictObject({
      headers: z
        .record(
          z.string(),
          z.string().regex(HEADER_VALUE, 'visible ASCII, no line breaks, at most 1 024 characters'),
        )
        .superRefine((headers, refinement) => {
          const names = Object.keys(headers);
          if (names.length === 0 || names.length > 10)
            refinement.addIssue({ code: 'custom', message: 'give 1 to 10 headers' });
          const lower = names.map((name) => name.toLowerCase());
          if (new Set(lower).size !== lower.length)
            refinement.addIssue({ code: 'custom', message: 'a header is named twice' });
          for (const name of names) {
            const problem = headerNameProblem(name);
            if (problem) refinement.addIssue({ code: 'custom', message: problem, path: [name] });
          }
        }),
    }),
    z.strictObject({
      oauth2: z.strictObject({
        token_url: endpointUrl.describe(
          "The partner's token endpoint (reached through the same egress guard).",
        ),
        client_id: z.string().min(1).max(256),
        client_secret: z.string().min(1).max(512),
        scope: z
          .string()
          .regex(/^[\x21\x23-\x5b\x5d-\x7e]+( [\x21\x23-\x5b\x5d-\x7e]+)*$/, 'space-separated scope tokens')
          .max(1024)
          .optional(),
      }),
    }),
  ])
  // Stored encrypted with the secrets key, whose envelope takes at most 4 KiB: well below it, with room for the form.
  .refine((auth) => Buffer.byteLength(JSON.stringify(auth), 'utf8') <= 3_072, {
    message: 'at most 3 072 bytes of headers or credentials in all',
  })
  .describe(
    'What deliveries present besides the signature: {"headers": {name: value}} (static headers, e.g. an API key ' +
      'for the partner\'s gateway) or {"oauth2": {token_url, client_id, client_secret, scope?}} (a Bearer token of the ' +
      'client-credentials grant, cached until it expires, fetched again once on a 401). Values and the client ' +
      'secret are stored encrypted and never shown again.',
  );

const roleArnSchema = z
  .string()
  .max(2048)
  .regex(ROLE_ARN, 'an IAM role ARN: arn:aws:iam::<account>:role/<name>')
  .describe(
    "The partner's role the service assumes (its trust policy names the service's account and external id).",
  );

/**
 * Where deliveries go (C34): an HTTP endpoint (`url`, the default), an Amazon SQS queue or an EventBridge event bus
 * in the partner's account, reached through `role_arn` with the external id the service gives the endpoint.
 */
export const destinationSchema = z
  .discriminatedUnion('type', [
    z.strictObject({ type: z.literal('http') }),
    z.strictObject({
      type: z.literal('sqs'),
      queue_url: z
        .string()
        .max(2048)
        .refine(
          (value) => queueAddressOf(value) !== undefined,
          "an SQS queue URL: https://sqs.<region>.amazonaws.com/<account>/<name> (a FIFO queue's name ends in .fifo)",
        ),
      role_arn: roleArnSchema,
    }),
    z.strictObject({
      type: z.literal('eventbridge'),
      event_bus_arn: z
        .string()
        .max(1600)
        .regex(EVENT_BUS_ARN, 'an event bus ARN: arn:aws:events:<region>:<account>:event-bus/<name>'),
      role_arn: roleArnSchema,
    }),
  ])
  .describe(
    '{"type": "http"} (the default: POST to url), {"type": "sqs", queue_url, role_arn} or {"type": "eventbridge", ' +
      'event_bus_arn, role_arn}: the envelope as the message body (signature headers as message attributes) or as ' +
      "the event's detail, sent with the partner's role, which the service assumes with the endpoint's external_id.",
  );
export type DestinationInput = z.infer<typeof destinationSchema>;

/** A cloud destination takes no url, outbound auth or client certificate; an HTTP one needs its url. */
const destinationRules = (
  body: {
    readonly url?: string | undefined;
    readonly destination?: DestinationInput | undefined;
    readonly auth?: unknown;
    readonly mtls?: unknown;
  },
  refinement: z.RefinementCtx,
  urlRequired: boolean,
): void => {
  const type = body.destination?.type ?? 'http';
  if (type === 'http') {
    if (urlRequired && body.url === undefined)
      refinement.addIssue({ code: 'custom', message: 'required for an http destination', path: ['url'] });
    return;
  }
  for (const field of ['url', 'auth', 'mtls'] as const)
    if (body[field] !== undefined && body[field] !== null)
      refinement.addIssue({ code: 'custom', message: `not for an ${type} destination`, path: [field] });
};

/** `POST /webhooks/endpoints` (C12, C24). */
export const createEndpointSchema = z
  .strictObject({
    url: endpointUrl.optional().describe('Where deliveries are POSTed (an http destination, the default).'),
    destination: destinationSchema.optional(),
    topics: z.array(topicName).max(50).optional(),
    event_types: z
      .array(eventType)
      .max(50)
      .optional()
      .describe('Only events of these types (besides the topics).'),
    filter: endpointFilterSchema.optional(),
    rate_limit: endpointRateLimitSchema.optional(),
    ordering: endpointOrderingSchema.optional(),
    disable_after_days: disableAfterDaysSchema.optional(),
    retention_days: retentionDaysSchema.optional(),
    signature_scheme: signatureSchemeSchema.optional(),
    signing_algorithm: signingAlgorithmSchema.optional(),
    auth: endpointAuthSchema.optional(),
    description: z.string().max(500).optional(),
    tenant: identifier.optional(),
    version: z.enum(ENVELOPE_VERSIONS).optional(),
    /** When given, the partner's callbacks (`POST /partner/confirmations`) need a DPoP proof made with it. */
    dpop_jwk: dpopJwkSchema.optional(),
    /** When given, deliveries present this client certificate in the TLS handshake. */
    mtls: mtlsInputSchema.optional(),
  })
  .superRefine((body, refinement) => destinationRules(body, refinement, true));
export type CreateEndpointRequest = z.infer<typeof createEndpointSchema>;

/**
 * `PATCH /webhooks/endpoints/{endpoint_id}`: any of the fields; `status` re-enables a disabled endpoint;
 * `dpop_jwk` sets the DPoP key (`null` removes it: callbacks no longer need a proof); `mtls` replaces the client
 * certificate (`null` removes it: deliveries present none).
 */
export const updateEndpointSchema = z
  .strictObject({
    url: endpointUrl.optional(),
    destination: destinationSchema
      .optional()
      .describe(
        'Moves deliveries to another destination: a cloud one drops the url, outbound auth and client certificate; ' +
          '{"type": "http"} needs the url in the same change. The external id stays the endpoint\'s.',
      ),
    topics: z.array(topicName).max(50).optional(),
    event_types: z
      .array(eventType)
      .max(50)
      .nullable()
      .optional()
      .describe('Only events of these types; null or [] removes the restriction.'),
    filter: endpointFilterSchema
      .nullable()
      .optional()
      .describe('Replaces the payload filter; null removes it.'),
    rate_limit: endpointRateLimitSchema
      .nullable()
      .optional()
      .describe('Replaces the throughput limits; null removes them.'),
    ordering: endpointOrderingSchema
      .nullable()
      .optional()
      .describe(
        'Replaces the ordering (events fanned out from then on; deliveries already numbered keep their key); null removes it.',
      ),
    disable_after_days: disableAfterDaysSchema.nullable().optional(),
    retention_days: retentionDaysSchema
      .nullable()
      .optional()
      .describe('Applies to events produced from then on; null: the default, 30 days.'),
    signature_scheme: signatureSchemeSchema.optional(),
    signing_algorithm: signingAlgorithmSchema.optional(),
    auth: endpointAuthSchema
      .nullable()
      .optional()
      .describe('Replaces the outbound authentication; null removes it.'),
    description: z.string().max(500).optional(),
    version: z.enum(ENVELOPE_VERSIONS).optional(),
    status: z.enum(['enabled', 'disabled']).optional(),
    dpop_jwk: dpopJwkSchema.nullable().optional(),
    mtls: mtlsInputSchema
      .nullable()
      .optional()
      .describe('Replaces the client certificate; null removes it (deliveries present none).'),
  })
  .refine((body) => Object.keys(body).length > 0, { message: 'give at least one field to change' })
  .superRefine((body, refinement) => {
    if (body.destination?.type === 'http' && body.url === undefined)
      refinement.addIssue({
        code: 'custom',
        message: 'required to move to an http destination',
        path: ['url'],
      });
    if (body.destination !== undefined) destinationRules(body, refinement, false);
  });
export type UpdateEndpointRequest = z.infer<typeof updateEndpointSchema>;

export { payoutProcessedSchema } from './event-types';

/** `POST /webhooks/events` (other producers). */
export const publishEventSchema = z.strictObject({
  /**
   * The producer's own id for the event (C25): it becomes the event's `event_id`, and a repeat with the same id
   * and content answers 200 with the existing event instead of publishing another.
   */
  event_id: eventIdSchema.optional(),
  type: eventType,
  data: z.record(z.string(), z.unknown()),
  tenant: identifier.optional(),
  producer: identifier.optional(),
});
export type PublishEventRequest = z.infer<typeof publishEventSchema>;

/** What a replay selects: `event_ids`, or a `from`/`to` window, optionally one delivery status. */
const replaySelection = {
  event_ids: z.array(eventIdSchema).min(1).max(1000).optional(),
  from: isoTimestamp.optional(),
  to: isoTimestamp.optional(),
  status: z.enum(DELIVERY_STATUSES).optional(),
};

/** A `from`/`to` window is in order (either end may be absent). */
const windowInOrder = (query: { readonly from?: string; readonly to?: string }): boolean =>
  !query.from || !query.to || query.from <= query.to;
const WINDOW_IN_ORDER = { message: 'from must not be after to', path: ['from'] };

/** Exactly one of `event_ids` or a whole, ordered `from`/`to` window. */
const selectsOnce = <T extends z.ZodType<{ event_ids?: unknown; from?: string; to?: string }>>(schema: T) =>
  schema
    .refine((body) => (body.event_ids === undefined) !== (body.from === undefined && body.to === undefined), {
      message: 'give either event_ids or a from/to window',
    })
    .refine((body) => (body.from === undefined) === (body.to === undefined), {
      message: 'a window needs both from and to',
      path: ['to'],
    })
    .refine(windowInOrder, WINDOW_IN_ORDER);

/** `POST /webhooks/replay` (C15): exactly one of `event_ids` or a `from`/`to` window. */
export const replayRequestSchema = selectsOnce(
  z.strictObject({
    ...replaySelection,
    endpoint_id: endpointIdSchema.optional(),
    force: z.boolean().optional(),
  }),
);
export type ReplayRequest = z.infer<typeof replayRequestSchema>;

/** A page of events in a window, by delivery status. */
const eventsWindowQuery = {
  status: z.enum(DELIVERY_STATUSES).optional(),
  from: isoTimestamp.optional(),
  to: isoTimestamp.optional(),
  limit: z.coerce.number().int().min(1).max(200).optional(),
  cursor: z.string().max(2048).optional(),
};

/** `GET /webhooks/events` query. */
export const listEventsQuerySchema = z
  .strictObject({ ...eventsWindowQuery, endpoint_id: endpointIdSchema.optional() })
  .refine(windowInOrder, WINDOW_IN_ORDER);
export type ListEventsQuery = z.infer<typeof listEventsQuerySchema>;

export const listEndpointsQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(200).optional(),
  cursor: z.string().max(2048).optional(),
});

export const endpointPathSchema = z.strictObject({ endpoint_id: endpointIdSchema });
export const eventPathSchema = z.strictObject({ event_id: eventIdSchema });
export const replayPathSchema = z.strictObject({ replay_id: replayIdSchema });

// Responses (documented in OpenAPI; the e2e tests validate answers against them).

export const endpointResponseSchema = z.object({
  endpoint_id: endpointIdSchema,
  url: z
    .string()
    .optional()
    .describe('Where deliveries are POSTed (absent for an sqs or eventbridge destination).'),
  destination: z
    .union([
      z.object({
        type: z.literal('sqs'),
        queue_url: z.string(),
        role_arn: z.string(),
        external_id: z.string(),
        principal: z.string(),
      }),
      z.object({
        type: z.literal('eventbridge'),
        event_bus_arn: z.string(),
        role_arn: z.string(),
        external_id: z.string(),
        principal: z.string(),
      }),
    ])
    .optional()
    .describe(
      "A cloud destination (absent: http). The role's trust policy allows sts:AssumeRole to `principal` (the " +
        "service's account) on condition that sts:ExternalId equals `external_id`, which the service made for this endpoint.",
    ),
  topics: z.array(z.string()),
  event_types: z.array(z.string()).optional(),
  filter: z.record(z.string(), z.unknown()).optional(),
  rate_limit: z
    .object({ per_second: z.number().optional(), max_in_flight: z.number().int().optional() })
    .optional(),
  ordering: z.object({ key: z.string() }).optional(),
  disable_after_days: z.number().optional(),
  retention_days: z.number().int().optional(),
  signature_scheme: z.enum(SIGNATURE_SCHEMES).optional(),
  signing_algorithm: z.enum(SIGNING_ALGORITHMS).optional(),
  auth: z
    .union([
      z.object({ headers: z.array(z.string()) }),
      z.object({
        oauth2: z.object({ token_url: z.string(), client_id: z.string(), scope: z.string().optional() }),
      }),
    ])
    .optional()
    .describe(
      'The outbound authentication, without its secrets: header names, or the OAuth client and token URL.',
    ),
  failing_since: isoTimestamp
    .optional()
    .describe('Every attempt since then failed; a success ends the run, re-enabling starts afresh.'),
  description: z.string().optional(),
  tenant: z.string().optional(),
  version: z.enum(ENVELOPE_VERSIONS),
  status: z.enum(['enabled', 'disabled']),
  disabled_reason: z.string().optional(),
  previous_secret_expires_at: isoTimestamp.optional(),
  /** The registered DPoP public key (its RFC 7638 members) and its thumbprint. */
  dpop_jwk: z
    .object({
      kty: z.enum(['EC', 'OKP']),
      crv: z.enum(['P-256', 'Ed25519']),
      x: z.string(),
      y: z.string().optional(),
    })
    .optional(),
  dpop_jkt: z.string().optional(),
  /** The client certificate deliveries present (mTLS): a summary, never the key nor the PEM. */
  mtls: z
    .object({
      certificate_sha256: z.string().regex(/^[0-9a-f]{64}$/),
      subject: z.string(),
      issuer: z.string(),
      not_before: isoTimestamp,
      not_after: isoTimestamp,
    })
    .optional()
    .describe('The client certificate deliveries present (mTLS): a summary, never the key nor the PEM.'),
  consecutive_timeouts: z
    .number()
    .int()
    .optional()
    .describe(
      'Attempts in a row that timed out (or stayed unanswered for half the timeout): from the third, at most 2 attempts are in flight at once.',
    ),
  paused_until: isoTimestamp
    .optional()
    .describe("A 429 or 503 with Retry-After paused the endpoint's deliveries until then."),
  created_at: isoTimestamp,
  updated_at: isoTimestamp,
});

export const endpointWithSecretResponseSchema = endpointResponseSchema.extend({
  secret: z.string().regex(/^whsec_[A-Za-z0-9+/]{43}=$/, 'whsec_ + base64 of 32 bytes'),
  /** Only when the endpoint is created: the key of the resync routes (`/partner/events`, `/catalog/snapshot`). */
  partner_key: z
    .string()
    .regex(/^pk_[A-Za-z0-9_-]{43}$/)
    .optional(),
});

/** A rotation's overlap: how long the old secret or key still works; 0 ends it at once (it leaked). */
export const rotationSchema = z.strictObject({
  overlap_hours: z.number().int().min(0).max(168).optional(),
});

/**
 * A partner's rotation (`POST /partner/endpoint/rotate-secret`) always keeps an overlap: ending the old secret at once
 * is an operator's call, so a leaked partner key cannot cut the partner's own receiver off.
 */
export const partnerRotationSchema = z.strictObject({
  overlap_hours: z
    .number()
    .int()
    .min(1, "at least 1 for a partner; an emergency rotation (0) is an operator's")
    .max(168)
    .optional(),
});

export const partnerKeyResponseSchema = endpointResponseSchema.extend({
  partner_key: z.string().regex(/^pk_[A-Za-z0-9_-]{43}$/),
});

/** `GET /partner/events`: the window defaults to the last 24 hours. */
export const partnerEventsQuerySchema = z
  .strictObject({
    from: isoTimestamp.optional(),
    to: isoTimestamp.optional(),
    limit: z.coerce.number().int().min(1).max(200).optional(),
    cursor: z.string().max(2048).optional(),
  })
  .refine(windowInOrder, WINDOW_IN_ORDER);

/** `GET /partner/deliveries` query: the partner's own deliveries (its endpoint is the key's). */
export const partnerDeliveriesQuerySchema = z
  .strictObject(eventsWindowQuery)
  .refine(windowInOrder, WINDOW_IN_ORDER);
export type PartnerDeliveriesQuery = z.infer<typeof partnerDeliveriesQuerySchema>;

/** `POST /partner/replay`: exactly one of `event_ids` or a `from`/`to` window, for the partner's endpoint only. */
export const partnerReplayRequestSchema = selectsOnce(z.strictObject(replaySelection));
export type PartnerReplayRequest = z.infer<typeof partnerReplayRequestSchema>;

/** What a partner did with an event it received (`POST /partner/confirmations`). */
export const CONFIRMATION_OUTCOMES = ['accepted', 'rejected', 'failed'] as const;

/** A partner's own reference: 1–200 characters, well-formed Unicode, no control characters. */
const partnerReference = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^\p{Cc}]*$/u, 'no control characters')
  .refine((value) => value.isWellFormed(), 'well-formed Unicode (no lone surrogates)');

/** `POST /partner/confirmations` (partner key, Idempotency-Key required). */
export const confirmEventSchema = z.strictObject({
  event_id: eventIdSchema,
  outcome: z.enum(CONFIRMATION_OUTCOMES),
  reference: partnerReference,
});
export type ConfirmEventRequest = z.infer<typeof confirmEventSchema>;

/** A confirmation as answered and as the event history shows it. */
export const confirmationSchema = z.object({
  outcome: z.enum(CONFIRMATION_OUTCOMES),
  reference: z.string(),
  confirmed_at: isoTimestamp,
});

export const confirmationResponseSchema = z.object({
  event_id: eventIdSchema,
  endpoint_id: endpointIdSchema,
  outcome: z.enum(CONFIRMATION_OUTCOMES),
  reference: z.string(),
  confirmed_at: isoTimestamp,
});

/** `GET /catalog/snapshot`. */
export const catalogSnapshotQuerySchema = z.strictObject({ as_of: isoTimestamp });

export const partnerEventsResponseSchema = z.object({
  items: z.array(z.record(z.string(), z.unknown())),
  cursor: z.string().optional(),
});

/**
 * What a partner may see of the catalog (an allow-list: keys not named here are dropped): products, price lists,
 * published rates, tax, display, promotion and fee data, limits, and the availability rules that decide what is
 * sellable. Never settlement rates, the rate policy, blocked banks or tokens, or player blocks; overrides and
 * basket policies only when they are not another tenant's (filtered before this schema).
 */
export const partnerCatalogSchema = z.object({
  settings: settingsSchema,
  products: catalogDocumentSchema.shape.products,
  pricelists: catalogDocumentSchema.shape.pricelists,
  fx_rates: catalogDocumentSchema.shape.fx_rates,
  tax_rules: catalogDocumentSchema.shape.tax_rules,
  display_rules: catalogDocumentSchema.shape.display_rules,
  overrides: catalogDocumentSchema.shape.overrides,
  basket_policies: catalogDocumentSchema.shape.basket_policies,
  promotions: catalogDocumentSchema.shape.promotions,
  fees: catalogDocumentSchema.shape.fees,
  limits: catalogDocumentSchema.shape.limits,
  availability: z
    .object({
      blocked_currencies: availabilitySchema.shape.blocked_currencies,
      blocked_providers: availabilitySchema.shape.blocked_providers,
      blocked_conversions: availabilitySchema.shape.blocked_conversions,
    })
    .optional(),
});

export const catalogSnapshotResponseSchema = z.object({
  as_of: isoTimestamp,
  revision: z.number().int().positive(),
  effective_from: isoTimestamp,
  versions: z.object({
    pricelist_version: z.number().int().positive(),
    fx_version: z.string(),
    tax_rule_version: z.number().int().positive(),
  }),
  catalog: partnerCatalogSchema.describe("The partner's view: its tenant's catalog, without internal data."),
});

export const endpointsPageResponseSchema = z.object({
  items: z.array(endpointResponseSchema),
  cursor: z.string().optional(),
});

export const eventAcceptedResponseSchema = z.object({ event_id: eventIdSchema });

export const eventExpungedResponseSchema = z.object({
  event_id: eventIdSchema,
  body: z
    .enum(['expunged', 'expired'])
    .describe('Removed now or before (`expunged`), or its TTL had run out.'),
  expunged_at: isoTimestamp.optional(),
  expunged_by: z.string().optional(),
});

/** `POST /webhooks/endpoints/{endpoint_id}/test`: which event type's example to send. */
export const testEventRequestSchema = z.strictObject({
  type: z
    .enum(EXAMPLE_EVENT_TYPES)
    .describe('An event type with a payload schema; its example is sent, marked `test: true`.'),
});

export const testEventResponseSchema = z.object({
  event_id: eventIdSchema,
  endpoint_id: endpointIdSchema,
  type: z.enum(EXAMPLE_EVENT_TYPES),
  test: z.literal(true),
});

export const attemptResponseSchema = z.object({
  attempt: z.number().int().min(1),
  at: isoTimestamp,
  duration_ms: z.number().int().nonnegative(),
  http_status: z.number().int().optional(),
  error: z.string().optional(),
  error_detail: z
    .string()
    .optional()
    .describe('A network error in a few words (why the TLS handshake or the OAuth token request failed).'),
  response_excerpt: z.string().optional(),
  outcome: z.enum(['delivered', 'retry', 'stopped', 'dead']),
  reason: z.string().optional(),
  next_attempt_at: isoTimestamp.optional(),
  replay_id: z.string().optional(),
});

export const eventHistoryResponseSchema = z.object({
  event_id: eventIdSchema,
  envelope: z.record(z.string(), z.unknown()).nullable(),
  fanned_out_at: isoTimestamp.optional(),
  fanned_out_to: z.number().int().nonnegative().optional(),
  published_by: z.string().optional().describe('The operator who published a producer event.'),
  expunged_at: isoTimestamp.optional().describe('When the body was expunged (the envelope has no `data`).'),
  expunged_by: z.string().optional().describe('The operator who expunged it.'),
  deliveries: z.array(
    z.object({
      endpoint_id: endpointIdSchema,
      status: z.enum(DELIVERY_STATUSES),
      stop_reason: z.string().optional(),
      next_attempt_at: isoTimestamp.optional(),
      replay_id: z.string().optional(),
      attempts: z.array(attemptResponseSchema),
      /** The partner's confirmation (`POST /partner/confirmations`), once given. */
      confirmation: confirmationSchema.optional(),
    }),
  ),
});

export const eventsPageResponseSchema = z.object({
  items: z.array(
    z.object({
      event_id: eventIdSchema,
      type: z.string(),
      ts: isoTimestamp,
      deliveries: z.array(
        z.object({
          endpoint_id: endpointIdSchema,
          status: z.enum(DELIVERY_STATUSES),
          attempts: z.number().int(),
        }),
      ),
    }),
  ),
  cursor: z.string().optional(),
});

export const replayAcceptedResponseSchema = z.object({
  replay_id: replayIdSchema,
  matched: z.number().int().nonnegative(),
  enqueued: z.number().int().nonnegative(),
  skipped: z.number().int().nonnegative(),
});

/** `GET /webhooks/endpoints/{endpoint_id}/stats` query: the window (default the last hour). */
export const endpointStatsQuerySchema = z.strictObject({
  window: z.enum(Object.keys(STATS_WINDOWS) as [StatsWindow, ...StatsWindow[]]).default('1h'),
});

export const endpointStatsResponseSchema = z.object({
  endpoint_id: endpointIdSchema,
  window: z.enum(Object.keys(STATS_WINDOWS) as [StatsWindow, ...StatsWindow[]]),
  from: isoTimestamp,
  to: isoTimestamp,
  attempts: z.number().int().nonnegative(),
  success_rate: z
    .number()
    .min(0)
    .max(1)
    .nullable()
    .describe('2xx attempts over all attempts; null without any.'),
  latency_ms: z
    .object({ p50: z.number().nullable(), p95: z.number().nullable() })
    .describe(
      'Upper bounds of the latency buckets (50 ms … 30 s) that hold the median and the 95th percentile.',
    ),
  by_status_class: z.object({
    '2xx': z.number().int().nonnegative(),
    '3xx': z.number().int().nonnegative(),
    '4xx': z.number().int().nonnegative(),
    '5xx': z.number().int().nonnegative(),
    network: z
      .number()
      .int()
      .nonnegative()
      .describe('No HTTP answer: timeouts, refused or reset connections.'),
  }),
});

/** `POST /webhooks/endpoints/{endpoint_id}/recover`: the window of what the endpoint missed. */
export const recoverRequestSchema = z
  .strictObject({
    since: isoTimestamp.describe('Events produced from then on (inclusive).'),
    until: isoTimestamp.describe('Events produced up to then (inclusive).'),
  })
  .refine((body) => body.since <= body.until, { message: 'since must not be after until', path: ['since'] });

export const recoveryAcceptedResponseSchema = replayAcceptedResponseSchema.extend({
  recovery_id: replayIdSchema.describe('Its progress: GET /webhooks/replays/{recovery_id}.'),
});

export const replayProgressResponseSchema = replayAcceptedResponseSchema.extend({
  requested_at: isoTimestamp,
  request: z.record(z.string(), z.unknown()),
  progress: z.record(z.enum(DELIVERY_STATUSES), z.number().int().nonnegative()),
  done: z.boolean(),
  deliveries: z.array(
    z.object({
      event_id: eventIdSchema,
      endpoint_id: endpointIdSchema,
      status: z.union([z.enum(DELIVERY_STATUSES), z.literal('expired')]),
    }),
  ),
});

export const changelogResponseSchema = z.object({
  envelope_versions: z.array(
    z.object({
      version: z.string(),
      released: z.string(),
      status: z.enum(['current', 'deprecated', 'sunset']),
      changes: z.array(z.string()),
      sunset: z.string().optional(),
    }),
  ),
  event_types: z.array(
    z.object({ type: z.string(), since: z.string(), description: z.string(), data: z.array(z.string()) }),
  ),
});

/** `GET /webhooks/jwks.json` (C33): the Ed25519 webhook signing keys' public halves (RFC 7517, RFC 8037). */
export const webhookJwksResponseSchema = z.object({
  keys: z.array(
    z.object({
      kty: z.literal('OKP'),
      crv: z.literal('Ed25519'),
      x: z.string().describe('The public key, base64url.'),
      kid: z.string().describe('The key id a delivery names in X-Signature-Key-Id.'),
      alg: z.literal('EdDSA'),
      use: z.literal('sig'),
    }),
  ),
});

/** `POST /webhooks/signing-keys/rotate`. */
export const rotateSigningKeySchema = z.strictObject({
  activate_in_seconds: z
    .number()
    .int()
    .min(0)
    .max(30 * 86_400)
    .optional()
    .describe(
      'When the new key starts signing (default 86400: a day after it is published, so receivers have it). ' +
        '0: it signs at once.',
    ),
  retire_previous: z
    .boolean()
    .optional()
    .describe(
      'An emergency (a key thought compromised): the new key signs at once and the keys before it leave the JWKS ' +
        'at once, with no overlap.',
    ),
});

export const rotatedSigningKeyResponseSchema = z.object({
  kid: z.string(),
  activates_at: isoTimestamp,
  previous_kid: z.string().optional(),
  previous_published_until: isoTimestamp
    .optional()
    .describe('Until when the key it supersedes stays in the JWKS.'),
});
