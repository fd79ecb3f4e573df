/**
 * The receiver kit: what a partner needs to receive the service's webhooks correctly.
 *
 * 1. {@link verifyWebhook} — authenticate a request (HMAC over the raw bytes, ±300 s window, rotation) and get
 *    its envelope. Answer any {@link WebhookVerificationError} with 401 `unauthorized`, never saying which
 *    check failed.
 * 2. {@link IdempotencyStore} — apply each event's effect once, in the same DynamoDB transaction as its seen
 *    mark (or under a lock for effects outside DynamoDB); answer duplicates with 200; serve
 *    `GET /webhooks/status/<event_id>` and `POST /webhooks/ack`.
 * 3. {@link isNewer} — keep newer state when events arrive out of order.
 * 4. {@link resync} — catch up after an outage: a snapshot plus the window's events, applied idempotently.
 *
 * The table the store needs has the shape {@link RECEIVER_TABLE}. See README.md in this folder.
 */
export { InvalidSecretError } from '../domain/webhooks/secret';
export { JwksCache, type JwksCacheOptions, type PublicJwk } from './jwks';
export { isNewer, type OrderingField, type StoredOrdering } from './ordering';
export {
  CLOCK_SKEW_ALLOWANCE_SECONDS,
  DEFAULT_DEDUP_SECONDS,
  DEFAULT_LOCK_SECONDS,
  EventInProgressError,
  EventTooOldError,
  IdempotencyStore,
  type IdempotencyStoreOptions,
  MAX_HANDLER_ITEMS,
  MIN_DEDUP_SECONDS,
  type ProcessOutcome,
  type ReceiverStatus,
  type TransactItem,
} from './process-once';
export {
  type CatalogSnapshot,
  DEFAULT_RESYNC_PAGE_SIZE,
  DEFAULT_RESYNC_TIMEOUT_MS,
  MAX_RESYNC_PAGE_SIZE,
  ResyncError,
  type ResyncOptions,
  type ResyncResult,
  resync,
} from './resync';
export { RECEIVER_TABLE } from './table';
export {
  kidOf,
  MAX_EVENT_ID_LENGTH,
  parseReceivedEnvelope,
  parseTimestamp,
  type ReceivedEnvelope,
  TIMESTAMP_TOLERANCE_SECONDS,
  type VerificationFailure,
  type VerifyWebhookInput,
  verifyWebhook,
  WebhookVerificationError,
} from './verify';
