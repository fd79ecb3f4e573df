import { secretBytes } from '../domain/webhooks/secret';
import { ed25519Verify } from '../domain/webhooks/sender-keys';
import {
  canonicalString,
  SIGNATURE_SCHEME,
  SignatureInputError,
  verifySignatureHeader,
} from '../domain/webhooks/signature';
import { standardSignedContent, verifyStandardSignature } from '../domain/webhooks/standard-webhooks';
import type { PublicJwk } from './jwks';

/** The signature time window (spec "Limits"): |now − X-Timestamp| may be at most this, in either direction. */
export const TIMESTAMP_TOLERANCE_SECONDS = 300;

/** Longest `event_id` (and `X-Event-Id`) accepted, in characters; the service's own are 30 (`evt_` + ULID). */
export const MAX_EVENT_ID_LENGTH = 256;

/**
 * Why a request was refused, one code per check:
 * - `missing_header`: `X-Signature`, `X-Timestamp` or `X-Event-Id` is absent (or empty);
 * - `malformed_header`: one of them is present but unusable: a timestamp not in ISO 8601 UTC with milliseconds,
 *   several different timestamps or event ids, or a signature header without any well-formed `v1=` signature;
 * - `timestamp_out_of_window`: `X-Timestamp` is more than the tolerance away from `now`, either way;
 * - `signature_mismatch`: no `v1` signature matches any configured secret;
 * - `malformed_body`: the (authentic) body is not a JSON envelope with `event_id`, `type`, `version`, `ts`
 *   and `attempt`, or an optional field has the wrong type;
 * - `event_id_mismatch`: the envelope's `event_id` differs from `X-Event-Id`;
 * - `endpoint_mismatch`: a delivery signed with the service's Ed25519 key names another endpoint (or none) than
 *   the configured `endpointId`: it was meant for another receiver.
 */
export type VerificationFailure =
  | 'missing_header'
  | 'malformed_header'
  | 'timestamp_out_of_window'
  | 'signature_mismatch'
  | 'malformed_body'
  | 'event_id_mismatch'
  | 'endpoint_mismatch';

/**
 * A request that did not pass verification. The `code` says which check failed; it is meant for the
 * receiver's own logs only. The HTTP answer must not reveal it (C6): always 401 `unauthorized` with a generic
 * description, whatever the code. The message never echoes header values, secrets or the body.
 */
export class WebhookVerificationError extends Error {
  constructor(
    readonly code: VerificationFailure,
    options?: ErrorOptions,
  ) {
    super(`webhook verification failed: ${code}`, options);
    this.name = 'WebhookVerificationError';
  }
}

/** What {@link verifyWebhook} needs from the incoming request and from the receiver's configuration. */
export interface VerifyWebhookInput {
  /** The raw request body exactly as received. A string is taken as its UTF-8 bytes. */
  readonly body: Uint8Array | string;
  /** The HTTP method as received (`POST`); not case-folded. */
  readonly method: string;
  /** The request path with its query string, as received (`/webhooks/v1/catalog?x=1`); not normalised. */
  readonly path: string;
  /**
   * The request headers, names in any case (Node's `req.headers`, a Lambda event's `headers`, a plain object).
   * Repeated `X-Signature` values are read as one space-separated list.
   */
  readonly headers: Readonly<Record<string, string | readonly string[] | undefined>>;
  /**
   * The endpoint's signing secrets (`whsec_…`). During a rotation configure both the new and the old secret (the
   * sender signs with both for 24 h); remove the old one once the rotation is over. May be empty for an endpoint
   * signed with Ed25519 (`publicKeys`); at least one secret or one public key is required.
   */
  readonly secrets: readonly string[];
  /**
   * The sender's public keys (`GET /webhooks/jwks.json`, C33), for endpoints with `signing_algorithm: "ed25519"`:
   * a `v1a` signature is checked with the key whose `kid` is the request's `X-Signature-Key-Id`. A
   * {@link JwksCache} gives the current ones (`await cache.keysFor(kidOf(headers))`).
   */
  readonly publicKeys?: readonly PublicJwk[];
  /**
   * This endpoint's id (`ep_…`), required with `publicKeys`: a delivery signed with the service's key must name it
   * in its envelope (`endpoint_id`), or it is refused (`endpoint_mismatch`).
   */
  readonly endpointId?: string;
  /** The receiver's current time (inject a clock; tests pass a fixed date). */
  readonly now: Date;
  /** The window, in seconds, between 1 and {@link TIMESTAMP_TOLERANCE_SECONDS} (the default and maximum). */
  readonly toleranceSeconds?: number;
}

/**
 * The event envelope (spec "Webhook event envelope", C11) as a receiver gets it. The five required fields are
 * checked by {@link verifyWebhook}; the rest are optional here, so a receiver keeps working when the service
 * adds fields (C24: new fields are optional). Fields this type does not name are kept on the object.
 */
export interface ReceivedEnvelope {
  /** Unique id of the event (`evt_` + ULID); the basis of deduplication. Never changes across retries and replays. */
  event_id: string;
  /** `<topic>.<Name>`, e.g. `catalog.PriceListUpdated`, `payout.processed`. */
  type: string;
  /** Envelope version, a date string (`2026-11-01`). */
  version: string;
  /** When the event was produced: ISO 8601 UTC with milliseconds. */
  ts: string;
  /** Delivery attempt, from 1; keeps counting across retries and replays. */
  attempt: number;
  /** Producing subsystem. */
  producer?: string;
  /** Tenant identifier. */
  tenant?: string;
  /** The payload; catalog events carry `version` and `effective_from`, payouts `payout_id`, `status`, … */
  data?: Record<string, unknown>;
  /** Trace identifier of the change that produced the event. */
  trace_id?: string;
  /** Versions in force when the event was produced (C11). */
  pricelist_version?: number | null;
  fx_version?: string | null;
  tax_rule_version?: number | null;
  /** The endpoint the delivery is for, on deliveries signed with the service's Ed25519 key. */
  endpoint_id?: string;
}

/** ISO 8601 UTC with milliseconds (C4), the only spelling of `X-Timestamp` and `ts`. */
const ISO_MS = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** Epoch milliseconds of a C4 timestamp, or undefined when it is not one (also rejects `2026-02-30…`). */
export const parseTimestamp = (value: string): number | undefined => {
  if (!ISO_MS.test(value)) return undefined;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms) || new Date(ms).toISOString() !== value) return undefined;
  return ms;
};

/**
 * An HMAC-SHA-256 signature in canonical padded base64: 43 characters and `=`, the last character carrying
 * no stray bits. A non-canonical spelling decodes to the same bytes (the two unused bits are ignored by
 * decoders), so accepting it would let a modified header verify; it is ignored like any unparseable entry.
 */
const CANONICAL_SIGNATURE = /^[A-Za-z0-9+/]{42}[AEIMQUYcgkosw048]=$/;
const SCHEME_PREFIX = `${SIGNATURE_SCHEME}=`;
/** Standard Webhooks' HMAC entries: `v1,<base64>`. */
const STANDARD_PREFIX = 'v1,';

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isEventId = (value: unknown): value is string =>
  typeof value === 'string' && value.length > 0 && value.length <= MAX_EVENT_ID_LENGTH;

const optional = (value: unknown, check: (value: unknown) => boolean): boolean =>
  value === undefined || check(value);

const isString = (value: unknown): boolean => typeof value === 'string';
const isNullableInteger = (value: unknown): boolean => value === null || Number.isSafeInteger(value);
const isNullableString = (value: unknown): boolean => value === null || typeof value === 'string';

/**
 * The envelope in `value` (already JSON-parsed), or undefined when it is not one: `event_id` (1–256
 * characters), `type`, `version` (non-empty strings), `ts` (ISO 8601 UTC with ms) and `attempt` (integer ≥ 1)
 * are required; `producer`, `tenant`, `trace_id` (strings), `data` (an object), `pricelist_version`,
 * `tax_rule_version` (integer or null) and `fx_version` (string or null) are checked when present. Other fields
 * pass through untouched. Used by {@link verifyWebhook} and by resync for the envelopes it fetches.
 */
export const parseReceivedEnvelope = (value: unknown): ReceivedEnvelope | undefined => {
  if (!isPlainObject(value)) return undefined;
  const ok =
    isEventId(value.event_id) &&
    typeof value.type === 'string' &&
    value.type.length > 0 &&
    typeof value.version === 'string' &&
    value.version.length > 0 &&
    typeof value.ts === 'string' &&
    parseTimestamp(value.ts) !== undefined &&
    Number.isSafeInteger(value.attempt) &&
    (value.attempt as number) >= 1 &&
    optional(value.producer, isString) &&
    optional(value.tenant, isString) &&
    optional(value.trace_id, isString) &&
    optional(value.data, isPlainObject) &&
    optional(value.pricelist_version, isNullableInteger) &&
    optional(value.tax_rule_version, isNullableInteger) &&
    optional(value.fx_version, isNullableString) &&
    optional(value.endpoint_id, isString);
  return ok ? (value as unknown as ReceivedEnvelope) : undefined;
};

type HeaderValue = string | readonly string[] | undefined;

const valuesOf = (value: HeaderValue): readonly string[] =>
  value === undefined ? [] : typeof value === 'string' ? [value] : value;

/** Header names of each scheme (lower case): this service's (C13) and Standard Webhooks' (C33). */
const SCHEME_HEADERS = {
  native: { signature: 'x-signature', timestamp: 'x-timestamp', eventId: 'x-event-id' },
  standard: { signature: 'webhook-signature', timestamp: 'webhook-timestamp', eventId: 'webhook-id' },
} as const;

/** The three headers of a scheme, each as the list of its values (names matched in any case). */
const readHeaders = (headers: VerifyWebhookInput['headers'], scheme: keyof typeof SCHEME_HEADERS) => {
  const names = SCHEME_HEADERS[scheme];
  const signature: string[] = [];
  const timestamp: string[] = [];
  const eventId: string[] = [];
  for (const name of Object.keys(headers)) {
    const lower = name.toLowerCase();
    if (lower === names.signature) signature.push(...valuesOf(headers[name]));
    else if (lower === names.timestamp) timestamp.push(...valuesOf(headers[name]));
    else if (lower === names.eventId) eventId.push(...valuesOf(headers[name]));
  }
  return { signature, timestamp, eventId };
};

/**
 * The scheme a request is signed with: Standard Webhooks' when it carries a `webhook-signature` and no
 * `X-Signature`, this service's otherwise (so a request with neither fails as this service's, `missing_header`).
 */
const schemeOf = (headers: VerifyWebhookInput['headers']): keyof typeof SCHEME_HEADERS => {
  const present = new Set(
    Object.keys(headers)
      .filter((name) => valuesOf(headers[name]).some((value) => value.length > 0))
      .map((name) => name.toLowerCase()),
  );
  return present.has('webhook-signature') && !present.has('x-signature') ? 'standard' : 'native';
};

/** The single value of a header: undefined when absent or empty, `null` when it holds different values. */
const single = (values: readonly string[]): string | undefined | null => {
  const present = values.filter((value) => value.length > 0);
  const first = present[0];
  if (first === undefined) return undefined;
  return present.every((value) => value === first) ? first : null;
};

/** A signature header reduced to its canonical entries of `prefix` (`v1=`, or `v1,` in Standard Webhooks), if any. */
const canonicalSignatures = (values: readonly string[], prefix = SCHEME_PREFIX): string => {
  const kept: string[] = [];
  for (const value of values) {
    for (const entry of value.split(/[ \t]+/)) {
      if (entry.startsWith(prefix) && CANONICAL_SIGNATURE.test(entry.slice(prefix.length))) {
        kept.push(entry);
      }
    }
  }
  return kept.join(' ');
};

/** A canonical Ed25519 signature in base64: 64 bytes are 86 characters and `==`. */
const CANONICAL_ED25519 = /^[A-Za-z0-9+/]{85}[AQgw]==$/;

/** The canonical `v1a` entries of a signature header (`v1a=` native, `v1a,` Standard Webhooks), without the prefix. */
const asymmetricEntries = (values: readonly string[], prefix: 'v1a=' | 'v1a,'): string[] =>
  values
    .flatMap((value) => value.split(/[ \t]+/))
    .filter((entry) => entry.startsWith(prefix) && CANONICAL_ED25519.test(entry.slice(prefix.length)))
    .map((entry) => entry.slice(prefix.length));

/** The key id a request names (`X-Signature-Key-Id`), to look its key up in the JWKS. */
export const kidOf = (headers: VerifyWebhookInput['headers']): string | undefined => {
  for (const name of Object.keys(headers))
    if (name.toLowerCase() === 'x-signature-key-id') return single(valuesOf(headers[name])) ?? undefined;
  return undefined;
};

/** Whether a `v1a` signature of the content verifies with the public key the request names. */
const verifiedByPublicKey = (
  input: VerifyWebhookInput,
  signatures: readonly string[],
  /** The signed bytes; undefined when they cannot be formed (the signature then cannot match). */
  content: () => Uint8Array | undefined,
): boolean => {
  if (signatures.length === 0 || !input.publicKeys || input.publicKeys.length === 0) return false;
  const kid = kidOf(input.headers);
  const jwk = input.publicKeys.find((key) => key.kid === kid);
  if (jwk?.kty !== 'OKP' || jwk.crv !== 'Ed25519') return false;
  const bytes = content();
  if (!bytes) return false;
  return signatures.some((signature) =>
    ed25519Verify({ kty: 'OKP', crv: 'Ed25519', x: jwk.x }, bytes, signature),
  );
};

/** Standard Webhooks' `webhook-timestamp`: Unix seconds, digits only. */
const UNIX_SECONDS = /^[0-9]{1,12}$/;

/**
 * Decoded secret keys, by secret text. Secrets are few and immutable strings, so decoding each once saves the
 * base64 round trip on every request; the bytes never leave this module (the HMAC copies them per call).
 */
const decodedSecrets = new Map<string, Uint8Array>();
const MAX_CACHED_SECRETS = 64;

const keyOf = (secret: string): Uint8Array => {
  let key = decodedSecrets.get(secret);
  if (key === undefined) {
    key = secretBytes(secret); // throws InvalidSecretError: a configuration error, not a verification failure
    if (decodedSecrets.size >= MAX_CACHED_SECRETS) decodedSecrets.clear();
    decodedSecrets.set(secret, key);
  }
  return key;
};

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

function fail(code: VerificationFailure, cause?: unknown): never {
  throw new WebhookVerificationError(code, cause === undefined ? undefined : { cause });
}

/**
 * Verifies a webhook request and returns its envelope. Checks, in order:
 * 1. `X-Signature`, `X-Timestamp` and `X-Event-Id` are present (`missing_header`) and well-formed
 *    (`malformed_header`): the timestamp in ISO 8601 UTC with ms, at least one canonical `v1=` signature;
 * 2. |now − X-Timestamp| ≤ tolerance, both ways (`timestamp_out_of_window`; spec: answer 401);
 * 3. every `v1` signature in `X-Signature` against every secret, in constant time, over the canonical string
 *    built from the raw body bytes, method and path (`signature_mismatch`);
 * 4. the body is UTF-8 JSON of an envelope with `event_id`, `type`, `version`, `ts`, `attempt`
 *    (`malformed_body`) whose `event_id` equals `X-Event-Id` (`event_id_mismatch`).
 *
 * Throws {@link WebhookVerificationError} for a refused request. Configuration errors are thrown as
 * themselves: `InvalidSecretError` for a secret that is not `whsec_` + base64 of 32 bytes, `RangeError` for no
 * secret or a tolerance outside 1–300 s; answer those with 500, not 401.
 *
 * It does not check whether the event was processed before: that is the idempotency store's job
 * (process-once.ts), after verification.
 */
export const verifyWebhook = (input: VerifyWebhookInput): ReceivedEnvelope => {
  const toleranceSeconds = input.toleranceSeconds ?? TIMESTAMP_TOLERANCE_SECONDS;
  if (!(toleranceSeconds >= 1 && toleranceSeconds <= TIMESTAMP_TOLERANCE_SECONDS)) {
    throw new RangeError(`toleranceSeconds must be within 1..${TIMESTAMP_TOLERANCE_SECONDS}`);
  }
  if (input.secrets.length === 0 && (input.publicKeys ?? []).length === 0)
    throw new RangeError('at least one secret or public key is required');
  // One Ed25519 key signs for every endpoint: a receiver using it must say which endpoint it is.
  if ((input.publicKeys ?? []).length > 0 && !input.endpointId)
    throw new RangeError('publicKeys need endpointId (the ep_… id of this endpoint)');
  const keys = input.secrets.map(keyOf);
  const body = typeof input.body === 'string' ? utf8.encode(input.body) : input.body;
  if (schemeOf(input.headers) === 'standard') {
    const by = verifyStandardHeaders(input, keys, body, toleranceSeconds);
    return ownEnvelope(
      input,
      by,
      envelopeOf(input.body, body, single(readHeaders(input.headers, 'standard').eventId) as string),
    );
  }

  // 1. Headers.
  const headers = readHeaders(input.headers, 'native');
  const timestamp = single(headers.timestamp);
  const eventId = single(headers.eventId);
  const signatureValues = headers.signature.filter((value) => value.length > 0);
  if (timestamp === undefined || eventId === undefined || signatureValues.length === 0)
    fail('missing_header');
  if (timestamp === null || eventId === null || !isEventId(eventId)) fail('malformed_header');
  const signedAt = parseTimestamp(timestamp);
  if (signedAt === undefined) fail('malformed_header');
  const signatures = canonicalSignatures(signatureValues);
  const asymmetric = asymmetricEntries(signatureValues, 'v1a=');
  if (signatures.length === 0 && asymmetric.length === 0) fail('malformed_header');

  // 2. Time window, both directions.
  if (Math.abs(input.now.getTime() - signedAt) > toleranceSeconds * 1000) {
    fail('timestamp_out_of_window');
  }

  // 3. Signature over the raw bytes, constant time, every signature against every secret; an Ed25519 one against
  // the public key the request names.
  const bySecret =
    signatures.length > 0 &&
    keys.length > 0 &&
    verifySignatureHeader({
      header: signatures,
      secrets: keys,
      timestamp,
      method: input.method,
      path: input.path,
      body,
    });
  const byKey =
    !bySecret &&
    verifiedByPublicKey(input, asymmetric, () => {
      // The same canonical string (and the same refusal of a line break in its parts) as the HMAC's (C13).
      try {
        return Buffer.from(
          canonicalString({ timestamp, method: input.method, path: input.path, body }),
          'utf8',
        );
      } catch (error) {
        if (error instanceof SignatureInputError) return undefined;
        throw error;
      }
    });
  if (!bySecret && !byKey) fail('signature_mismatch');

  // 4. The envelope, and that it is the event the headers name (and, signed by the shared key, this endpoint's).
  return ownEnvelope(input, byKey ? 'key' : 'secret', envelopeOf(input.body, body, eventId));
};

/**
 * A delivery authenticated by the service's Ed25519 key (shared by every endpoint) must name this endpoint in its
 * signed envelope: otherwise another receiver of the service could replay what it got to this one.
 */
const ownEnvelope = (
  input: VerifyWebhookInput,
  by: 'secret' | 'key',
  envelope: ReceivedEnvelope,
): ReceivedEnvelope => {
  if (by === 'key' && envelope.endpoint_id !== input.endpointId) fail('endpoint_mismatch');
  return envelope;
};

/** Step 4 of either scheme: the body is an envelope of the event the signed headers name. */
const envelopeOf = (given: Uint8Array | string, body: Uint8Array, eventId: string): ReceivedEnvelope => {
  // A string body must be what was signed: its UTF-8 encoding is lossy only for lone surrogates.
  if (typeof given === 'string' && !given.isWellFormed()) fail('malformed_body');
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof given === 'string' ? given : strictUtf8.decode(body));
  } catch (error) {
    fail('malformed_body', error);
  }
  const envelope = parseReceivedEnvelope(parsed);
  if (envelope === undefined) fail('malformed_body');
  if (envelope.event_id !== eventId) fail('event_id_mismatch');
  return envelope;
};

/**
 * Steps 1–3 for a Standard Webhooks request (C33): `webhook-id`, `webhook-timestamp` (Unix seconds) and
 * `webhook-signature` present and well-formed, the timestamp within the window, and a canonical `v1,` signature
 * over `<id>.<timestamp>.<raw body>` by one of the secrets. The failure codes are the same as this service's
 * scheme's, so a receiver's handling does not depend on which one an endpoint uses.
 */
const verifyStandardHeaders = (
  input: VerifyWebhookInput,
  keys: readonly Uint8Array[],
  body: Uint8Array,
  toleranceSeconds: number,
): 'secret' | 'key' => {
  const headers = readHeaders(input.headers, 'standard');
  const timestamp = single(headers.timestamp);
  const eventId = single(headers.eventId);
  const signatureValues = headers.signature.filter((value) => value.length > 0);
  if (timestamp === undefined || eventId === undefined || signatureValues.length === 0)
    fail('missing_header');
  if (timestamp === null || eventId === null || !isEventId(eventId) || !UNIX_SECONDS.test(timestamp))
    fail('malformed_header');
  const signatures = canonicalSignatures(signatureValues, STANDARD_PREFIX);
  const asymmetric = asymmetricEntries(signatureValues, 'v1a,');
  if (signatures.length === 0 && asymmetric.length === 0) fail('malformed_header');
  if (Math.abs(input.now.getTime() - Number(timestamp) * 1000) > toleranceSeconds * 1000)
    fail('timestamp_out_of_window');
  if (
    signatures.length > 0 &&
    keys.length > 0 &&
    verifyStandardSignature({ header: signatures, secrets: keys, id: eventId, timestamp, body })
  )
    return 'secret';
  if (verifiedByPublicKey(input, asymmetric, () => standardSignedContent({ id: eventId, timestamp, body })))
    return 'key';
  fail('signature_mismatch');
};
