import type { EndpointDestination } from '../domain/webhooks/destinations';
import type { DpopProofContents, DpopPublicJwk, DpopRefusal } from '../domain/webhooks/dpop';
import type { AttemptTally } from '../domain/webhooks/endpoint-stats';
import type { DeliveryStatus, EnvelopeVersion } from '../domain/webhooks/envelope';
import type { EventFilter } from '../domain/webhooks/filter';
import type { EndpointOrdering } from '../domain/webhooks/ordering';
import type { OutboundAuthSummary } from '../domain/webhooks/outbound-auth';
import type { SenderKey } from '../domain/webhooks/sender-keys';
import type { SignatureScheme, SigningAlgorithm } from '../domain/webhooks/standard-webhooks';
import type { EffectiveLimits, EndpointRateLimit } from '../domain/webhooks/throttle';
import type { DeliveryMessage, OutboxItem } from '../schemas/envelope';
import type { RequestCompletion } from './idempotency';

/** A page of results and the opaque cursor of the next page (absent on the last one). */
export interface Page<T> {
  readonly items: readonly T[];
  readonly cursor?: string;
}

/** The outbox (events table). */
export interface EventStore {
  /**
   * Writes a new event, with the request's completion in the same transaction when given; refuses (returns
   * false) an id that already exists.
   */
  put(item: OutboxItem, completion?: RequestCompletion): Promise<boolean>;
  get(eventId: string): Promise<OutboxItem | undefined>;
  /**
   * Records the fan-out: stamps `fanned_out_at` and leaves the pending index, bringing the body's expiry forward to
   * `expiresAt` (epoch seconds) when given (an endpoint's shorter retention). Idempotent.
   */
  markFannedOut(eventId: string, at: string, deliveries: number, expiresAt?: number): Promise<void>;
  /** Events whose fan-out is not recorded and whose `ts` is before `before`, oldest first. */
  pendingFanout(before: string, limit: number): Promise<OutboxItem[]>;
  /**
   * Removes the event's body (`data`) and records when and by whom, once: an event expunged already keeps its
   * first record. Returns the item as it is after, or undefined when there is none (unknown, or its TTL ran out).
   */
  expunge(eventId: string, at: string, by: string): Promise<OutboxItem | undefined>;
  /** Events of one UTC day with `from ≤ ts ≤ to`, oldest first. */
  byDay(day: string, from: string, to: string, limit: number, cursor?: string): Promise<Page<OutboxItem>>;
}

/** A rotated-out signing secret and when it stops being sent. */
export interface RetiringSecret {
  readonly secret: string;
  readonly expires_at: string;
}

/**
 * An endpoint's signing secrets: the current one and, during a rotation, the previous one until it expires;
 * `earlier` holds secrets rotated out before `previous` whose overlap has not ended yet (rotations in quick
 * succession), so each rotated-out secret is sent for its whole overlap.
 */
export interface EndpointSecrets {
  readonly current: string;
  readonly previous?: RetiringSecret;
  readonly earlier?: readonly RetiringSecret[];
}

/**
 * The client certificate an endpoint's deliveries present in the TLS handshake (mTLS). The certificate chain is
 * public and kept as PEM; the private key only as `key_ciphertext`: its PKCS #8 DER encrypted with the data key
 * (context: the endpoint and `certificate_sha256`, so a key never decrypts beside another certificate).
 */
export interface EndpointMtls {
  /** The leaf certificate first, then any intermediates, as PEM. */
  readonly certificate_chain: string;
  readonly key_ciphertext: string;
  /** SHA-256 (hex) of the leaf certificate's DER. */
  readonly certificate_sha256: string;
  readonly subject: string;
  readonly issuer: string;
  readonly not_before: string;
  readonly not_after: string;
}

/** An endpoint as stored; `secret_ciphertext` decrypts (data key, context `endpoint_id`) to `EndpointSecrets`. */
export interface EndpointRecord {
  readonly endpoint_id: string;
  /** Where deliveries are POSTed; absent when they go to a cloud `destination`. */
  readonly url?: string;
  /** An SQS queue or EventBridge bus in the partner's account (C34); absent: HTTP to `url`. */
  readonly destination?: EndpointDestination;
  /**
   * The external id the service made for the endpoint's first cloud destination: kept when it moves back to HTTP,
   * so a later cloud destination uses the id the partner's trust policy already names.
   */
  readonly external_id?: string;
  readonly topics: readonly string[];
  /** Set: only events of these types (C31), besides the topics. */
  readonly event_types?: readonly string[];
  /** Set: only events that match it (C31); the others are recorded `filtered`, never sent. */
  readonly filter?: EventFilter;
  readonly description?: string;
  readonly tenant?: string;
  readonly version: EnvelopeVersion;
  readonly status: 'enabled' | 'disabled';
  readonly disabled_reason?: string;
  readonly secret_ciphertext: string;
  /** SHA-256 (hex) of the partner key issued with the endpoint (resync routes); the key itself is not kept. */
  readonly partner_key_sha256?: string;
  /** The partner key before the last rotation (SHA-256), accepted until `previous_partner_key_valid_until`. */
  readonly previous_partner_key_sha256?: string;
  readonly previous_partner_key_valid_until?: string;
  /** When the previous secret stops being sent (shown without the secret itself). */
  readonly previous_secret_expires_at?: string;
  /** The partner's DPoP public key: when set, its callbacks need a DPoP proof made with it (RFC 9449). */
  readonly dpop_jwk?: DpopPublicJwk;
  /** RFC 7638 thumbprint (SHA-256, base64url) of `dpop_jwk`. */
  readonly dpop_jkt?: string;
  /** The client certificate presented to this endpoint (mTLS); absent: none is presented. */
  readonly mtls?: EndpointMtls;
  /** Throughput limits (C31): attempts per second and in flight, held across deliver instances. */
  readonly rate_limit?: EndpointRateLimit;
  /** Set: deliveries with the same key start one after another, each after the one before ended (C31). */
  readonly ordering?: EndpointOrdering;
  /**
   * Written by the deliver function, apart from `updated_at` (an operator's change never conflicts with it):
   * attempts in a row that timed out (isolation), and until when a `Retry-After` paused the endpoint.
   */
  readonly consecutive_timeouts?: number;
  readonly paused_until?: string;
  /** Since when every attempt failed (removed by a success), and the last warning sent (50, 75, 90 %). */
  readonly failing_since?: string;
  readonly failing_warned?: number;
  /** Failing continuously this long disables the endpoint (default: the service's, 5 days). */
  readonly disable_after_days?: number;
  /** Bodies of the events it receives are kept at most this many days (the shortest of their endpoints wins). */
  readonly retention_days?: number;
  /** How deliveries are signed (C33): this service's headers (absent, the default) or Standard Webhooks'. */
  readonly signature_scheme?: SignatureScheme;
  /** Ed25519 with the service's keys (absent: HMAC-SHA-256 with the endpoint's secret, the default). */
  readonly signing_algorithm?: SigningAlgorithm;
  /** Outbound authentication (C34): encrypted with the secrets key, and what the API shows of it. */
  readonly auth_ciphertext?: string;
  readonly auth?: OutboundAuthSummary;
  readonly created_at: string;
  readonly updated_at: string;
}

export type EndpointChanges = Partial<
  Pick<
    EndpointRecord,
    | 'url'
    | 'destination'
    | 'external_id'
    | 'topics'
    | 'event_types'
    | 'filter'
    | 'description'
    | 'version'
    | 'status'
    | 'disabled_reason'
    | 'secret_ciphertext'
    | 'previous_secret_expires_at'
    | 'dpop_jwk'
    | 'dpop_jkt'
    | 'mtls'
    | 'rate_limit'
    | 'ordering'
    | 'disable_after_days'
    | 'retention_days'
    | 'signature_scheme'
    | 'signing_algorithm'
    | 'auth_ciphertext'
    | 'auth'
    | 'consecutive_timeouts'
    | 'paused_until'
    | 'failing_since'
    | 'failing_warned'
    | 'partner_key_sha256'
    | 'previous_partner_key_sha256'
    | 'previous_partner_key_valid_until'
  >
>;

export interface EndpointUpdateOptions {
  /**
   * The record as read: the update happens only if it is still the stored one (optimistic concurrency), and
   * the new record is this one with the changes.
   */
  readonly expected?: EndpointRecord;
  /** The request's completion, written in the same transaction (needs `expected`). */
  readonly completion?: RequestCompletion;
}

export interface EndpointRepository {
  /** Writes a new endpoint (with the request's completion in the same transaction when given). */
  create(record: EndpointRecord, completion?: RequestCompletion): Promise<void>;
  /**
   * The endpoint's record. Consistent by default (changes read back their writes); `consistent: false` for the
   * deliver function's read per delivery, which may lag a change by a moment and costs half as much.
   */
  get(endpointId: string, options?: { readonly consistent?: boolean }): Promise<EndpointRecord | undefined>;
  list(limit: number, cursor?: string): Promise<Page<EndpointRecord>>;
  /** The endpoint a partner key (as its SHA-256) belongs to, as its current or its previous key. */
  byPartnerKey(partnerKeySha256: string): Promise<EndpointRecord | undefined>;
  /** Every endpoint, enabled or disabled (the fan-out's candidates: a disabled one's events are recorded skipped). */
  subscribers(): Promise<EndpointRecord[]>;
  /**
   * Applies changes; `undefined` values remove the attribute. Returns the new record, or undefined if absent
   * (or, with `expected`, changed since it was read).
   */
  update(
    endpointId: string,
    changes: EndpointChanges,
    at: string,
    options?: EndpointUpdateOptions,
  ): Promise<EndpointRecord | undefined>;
  delete(endpointId: string): Promise<boolean>;
  /** An attempt timed out: one more in a row (`consecutive_timeouts`). Nothing happens to a deleted endpoint. */
  noteTimeout(endpointId: string): Promise<void>;
  /** The endpoint answered: its run of timeouts ends. */
  clearTimeouts(endpointId: string): Promise<void>;
  /** A `Retry-After` pauses the endpoint until `until` (a later pause already set is kept). */
  pauseUntil(endpointId: string, until: string): Promise<void>;
  /** An attempt failed: the endpoint is failing since `at`, unless it was already. */
  noteFailing(endpointId: string, at: string): Promise<void>;
  /** An attempt succeeded: the endpoint is not failing any more. */
  clearFailing(endpointId: string): Promise<void>;
  /**
   * Records that the warning at `percent` of the time to disabling was sent for the run of failures that began at
   * `failingSince`; false when it (or a later one) was recorded already (only one instance sends each).
   */
  noteWarned(endpointId: string, failingSince: string, percent: number): Promise<boolean>;
}

/** An endpoint's attempts counted in 5-minute slots (C32 stats); written by the deliver function, summed on read. */
export interface EndpointStatsStore {
  /** Adds a slot's counts (atomic additions: concurrent writers of one slot all count). */
  add(endpointId: string, slot: string, tally: AttemptTally, expiresAt: number): Promise<void>;
  /** The slots from `fromSlot` to `toSlot` (inclusive) that have counts. */
  read(endpointId: string, fromSlot: string, toSlot: string): Promise<AttemptTally[]>;
}

/** One delivery asking the endpoint's limiter to start (see `domain/webhooks/throttle.ts`). */
export interface AdmissionRequest {
  readonly limits: EffectiveLimits;
  readonly nowMs: number;
  /** How long a slot is held if its holder never releases it (a consumer killed mid-attempt). */
  readonly leaseMs: number;
  /** The delivery reserved its start already (its message's `not_before`): the rate is not counted again. */
  readonly ticket: boolean;
  /** How often it waited for a slot before. */
  readonly deferrals: number;
}

/**
 * `admitted`: start now, holding `slot` (released with its `leaseUntilMs`) when a cap applies; `reserved`: the
 * rate is spent, come back at `startMs` with a ticket; `wait`: every slot is held, come back in `waitSeconds`.
 */
export type Admission =
  | { readonly kind: 'admitted'; readonly slot?: number; readonly leaseUntilMs?: number }
  | { readonly kind: 'reserved'; readonly startMs: number }
  | { readonly kind: 'wait'; readonly waitSeconds: number };

/** Per-endpoint limits shared by every deliver instance (C31 `rate_limit`, isolation). */
export interface EndpointLimiter {
  admit(endpointId: string, request: AdmissionRequest): Promise<Admission>;
  /** Frees a slot, only while `leaseUntilMs` is still its lease. */
  release(endpointId: string, slot: number, leaseUntilMs: number): Promise<void>;
}

/** A delivery's place in its endpoint's ordering key (C31 `ordering`): the key and its number there. */
export interface OrderPlace {
  readonly key: string;
  readonly seq: number;
}

/**
 * The per-key queues of ordered endpoints (C31 `ordering`), shared by every fan-out and deliver instance: a
 * delivery takes the next number of its key (once per round: the fan-out, or a replay), may start only while no
 * lower number of its key is still open, and on ending hands the turn to the next one.
 */
export interface DeliverySequencer {
  /**
   * Gives the delivery the next number of its key, in one transaction with the delivery record (`order_key`,
   * `order_seq`, `ordered_by: round`); a delivery numbered in this round already keeps its number. `message` is
   * what the delivery's turn sends when it comes (its `order` added).
   */
  enqueue(input: {
    readonly endpointId: string;
    readonly key: string;
    readonly eventId: string;
    readonly round: string;
    readonly message: DeliveryMessage;
    readonly expiresAt: number;
  }): Promise<number>;
  /** True when no lower number of the key is open (the delivery's turn). */
  isTurn(endpointId: string, place: OrderPlace): Promise<boolean>;
  /**
   * Closes the delivery's number (only its own: `eventId`) and returns the message of the next open one of its
   * key, if any.
   */
  close(endpointId: string, place: OrderPlace, eventId: string): Promise<DeliveryMessage | undefined>;
  /**
   * The head (lowest open number) of every key, read for the watchdog: at most `limit` items are read, so a
   * very large table yields the heads of the part read (`complete: false`).
   */
  heads(limit: number): Promise<{ readonly heads: readonly OrderHead[]; readonly complete: boolean }>;
  /** The message a place's turn sends (read only for a head the watchdog wakes), if the place is still open. */
  messageOf(endpointId: string, place: OrderPlace): Promise<DeliveryMessage | undefined>;
  /** Notes when a watchdog first saw this place at its key's head (a later sighting keeps the first). */
  markHeadSeen(endpointId: string, place: OrderPlace, eventId: string, at: string): Promise<void>;
  /** Notes that a watchdog sent this place's delivery a message for `attempt` at `at`. */
  markHeadWoken(
    endpointId: string,
    place: OrderPlace,
    eventId: string,
    wake: { readonly at: string; readonly attempt: number },
  ): Promise<void>;
}

/** A key's head as the watchdog reads it: the place, its delivery, its turn's message, when first seen there. */
export interface OrderHead {
  readonly endpointId: string;
  readonly place: OrderPlace;
  readonly eventId: string;
  readonly headSeenAt?: string;
  /** The watchdog's last wake-up of this delivery: when, and for which attempt. */
  readonly woken?: { readonly at: string; readonly attempt: number };
}

/** One attempt as the history shows it (C16). */
export interface AttemptRecord {
  readonly attempt: number;
  readonly at: string;
  readonly duration_ms: number;
  readonly http_status?: number;
  readonly error?: string;
  /** The network error's short description (e.g. why an OAuth token could not be had). */
  readonly error_detail?: string;
  readonly response_excerpt?: string;
  /** What the attempt led to, and why. */
  readonly outcome: 'delivered' | 'retry' | 'stopped' | 'dead';
  readonly reason?: string;
  readonly next_attempt_at?: string;
  readonly replay_id?: string;
}

/** What a partner said it did with an event (`POST /partner/confirmations`). */
export type ConfirmationOutcome = 'accepted' | 'rejected' | 'failed';

/** A partner's confirmation of one event, recorded once on the delivery record of its endpoint. */
export interface ConfirmationRecord {
  readonly outcome: ConfirmationOutcome;
  readonly reference: string;
  readonly confirmed_at: string;
  /** SHA-256 (hex) of the Idempotency-Key it came with: the same key finds the same answer again. */
  readonly idempotency_key_sha256: string;
}

/** `confirmed`: this call recorded it; `exists`: another did first (its record); `missing`: no such delivery. */
export type ConfirmResult =
  | { readonly status: 'confirmed'; readonly confirmation: ConfirmationRecord }
  | { readonly status: 'exists'; readonly confirmation: ConfirmationRecord }
  | { readonly status: 'missing' };

export interface DeliveryRecord {
  readonly event_id: string;
  readonly endpoint_id: string;
  readonly event_type: string;
  /** `<event ts>#<event_id>`: the time order of the endpoint and status indexes. */
  readonly ts_id: string;
  readonly status: DeliveryStatus;
  readonly created_at: string;
  readonly updated_at: string;
  /** Highest attempt claimed, and highest attempt whose outcome is recorded. */
  readonly last_attempt: number;
  readonly completed_attempt: number;
  readonly lease_until?: string;
  readonly next_attempt_at?: string;
  readonly stop_reason?: string;
  readonly replay_id?: string;
  /** The status the replay `replay_id` restarted the delivery from (what undoing it gives back). */
  readonly replay_from_status?: DeliveryStatus;
  readonly attempts: readonly AttemptRecord[];
  readonly expires_at: number;
  /** The partner's confirmation of the event, once it confirmed it. */
  readonly confirmation?: ConfirmationRecord;
  /** An ordered endpoint's delivery (C31): its key, its number there, and the round that numbered it. */
  readonly order_key?: string;
  readonly order_seq?: number;
  readonly ordered_by?: string;
  /** When the event's body was expunged (attempts claimed after it stop). */
  readonly event_expunged?: string;
}

/** `expunged`: claimed, but the event's body was expunged since the message was sent (the attempt stops). */
export type ClaimResult = 'claimed' | 'expunged' | 'done' | 'busy' | 'missing';

export interface DeliveryRepository {
  /** Creates the record unless it exists; returns the stored record either way. */
  createIfAbsent(record: DeliveryRecord): Promise<DeliveryRecord>;
  get(eventId: string, endpointId: string): Promise<DeliveryRecord | undefined>;
  /**
   * Records the partner's confirmation on an existing delivery record, once: a conditional write that only
   * succeeds while the record has none, so concurrent confirmations record exactly one.
   */
  confirm(eventId: string, endpointId: string, confirmation: ConfirmationRecord): Promise<ConfirmResult>;
  forEvent(eventId: string): Promise<DeliveryRecord[]>;
  /**
   * Claims attempt `attempt` for `leaseMs`: succeeds when no later attempt was claimed and this one is not
   * recorded, or its earlier claim's lease ran out (the consumer died mid-attempt). `done`: already recorded or
   * overtaken; `busy`: another consumer holds the lease. With `orderSeq` (an ordered delivery's message), only
   * while the delivery still holds that place in its key: a message of a place a replay moved it from is `done`.
   */
  claim(
    eventId: string,
    endpointId: string,
    attempt: number,
    now: string,
    leaseUntil: string,
    orderSeq?: number,
  ): Promise<ClaimResult>;
  /**
   * Notes on a delivery that its event's body was expunged: an attempt claimed from then on is told so (`expunged`),
   * whatever copy of the event its message carries.
   */
  markEventExpunged(eventId: string, endpointId: string, at: string): Promise<void>;
  /** Records an attempt's outcome once (a second record of the same attempt is ignored). */
  recordAttempt(
    eventId: string,
    endpointId: string,
    attempt: AttemptRecord,
    next: {
      readonly status: DeliveryStatus;
      readonly next_attempt_at?: string;
      readonly stop_reason?: string;
    },
    at: string,
  ): Promise<void>;
  /**
   * Restarts a delivery in a replayable state for a replay: status `retrying`, `replay_id` set, and returns the
   * attempt the replay makes (the one after the last), or undefined when its state changed meanwhile.
   */
  startReplay(
    eventId: string,
    endpointId: string,
    replayId: string,
    expectedStatus: DeliveryStatus,
    at: string,
  ): Promise<number | undefined>;
  /** Undoes `startReplay` when its message could not be sent (only while the replay still owns the record). */
  revertReplay(
    eventId: string,
    endpointId: string,
    replayId: string,
    previousStatus: DeliveryStatus,
  ): Promise<void>;
  /** Deliveries of an endpoint, or in a status, with `from ≤ ts ≤ to`, oldest first. */
  query(
    index: { readonly endpointId: string } | { readonly status: DeliveryStatus },
    from: string,
    to: string,
    limit: number,
    cursor?: string,
  ): Promise<Page<DeliveryRecord>>;
}

export interface ReplayRecord {
  readonly replay_id: string;
  readonly requested_at: string;
  readonly request: Readonly<Record<string, unknown>>;
  readonly matched: number;
  readonly enqueued: number;
  readonly skipped: number;
  readonly deliveries: readonly { readonly event_id: string; readonly endpoint_id: string }[];
  readonly expires_at: number;
}

/** How a replayed delivery ended. */
export type ReplayOutcome = 'delivered' | 'dead' | 'stopped';

/** A replay's deliveries that ended, by outcome, against how many it restarted. */
export interface ReplayTally {
  readonly enqueued: number;
  readonly delivered: number;
  readonly dead: number;
  readonly stopped: number;
}

export interface ReplayRepository {
  /** Stores the replay; its summary last, with the request's completion in the same transaction when given. */
  put(record: ReplayRecord, completion?: RequestCompletion): Promise<void>;
  get(replayId: string): Promise<ReplayRecord | undefined>;
  /**
   * Counts one of the replay's deliveries as ended, once however often it is noted (even before the replay's record
   * is written), and returns the tally; undefined while the record is not written (or there is no such replay).
   */
  noteFinished(
    replayId: string,
    eventId: string,
    endpointId: string,
    outcome: ReplayOutcome,
  ): Promise<ReplayTally | undefined>;
  /** The tally as it stands. */
  tally(replayId: string): Promise<ReplayTally | undefined>;
}

/**
 * Verifies the JWS signature of a DPoP proof with the public key in its own `jwk` header, for one of
 * `algorithms`, and returns its protected header and claims (the checks of `checkDpopProof` come after).
 */
export interface DpopProofVerifier {
  verify(
    proof: string,
    algorithms: readonly string[],
  ): Promise<
    | ({ readonly ok: true } & DpopProofContents)
    | {
        readonly ok: false;
        readonly refusal: Extract<DpopRefusal, 'malformed' | 'signature' | 'alg' | 'jwk'>;
      }
  >;
}

/** The `jti`s of accepted DPoP proofs, per key, for as long as each proof could be accepted. */
export interface DpopReplayCache {
  /**
   * Remembers `jti` for the key `keyThumbprint` until `expiresAt` (epoch seconds); false when it is remembered
   * already (a replayed proof). One conditional write: of concurrent calls with one `jti`, one gets true.
   */
  remember(keyThumbprint: string, jti: string, expiresAt: number, now: Date): Promise<boolean>;
}

/** A webhook signing key as stored (C33): its public part and its private key encrypted with the secrets key. */
export interface StoredSenderKey extends SenderKey {
  /** Rising from 1: the order of rotations, and what makes two concurrent rotations one. */
  readonly generation: number;
  readonly private_key_ciphertext: string;
}

/** The service's Ed25519 webhook signing keys (few: one per rotation). */
export interface SenderKeyStore {
  /** Every key, oldest generation first (a consistent read). */
  list(): Promise<StoredSenderKey[]>;
  /**
   * Adds a key at its generation unless that generation exists (false: another writer took it), with the
   * request's completion in the same write when given.
   */
  add(key: StoredSenderKey, completion?: RequestCompletion): Promise<boolean>;
}
