/**
 * `@pricing-service/webhook-receiver`: verify the pricing service's webhook deliveries — every scheme it sends
 * (HMAC `v1=` with the endpoint secret; Standard Webhooks; Ed25519 `v1a` with the keys of its JWKS) — keep newer
 * state when events arrive out of order, and catch up after an outage. The DynamoDB idempotency store (apply each
 * effect once) is `@pricing-service/webhook-receiver/dynamodb`, so this entry needs no AWS SDK.
 *
 * Built from the service's own receiver kit (`functions/receiver/`), so sender and receiver cannot disagree.
 */
export { InvalidSecretError } from '../../../functions/domain/webhooks/secret';
export { JwksCache, type JwksCacheOptions, type PublicJwk } from '../../../functions/receiver/jwks';
export { isNewer, type OrderingField, type StoredOrdering } from '../../../functions/receiver/ordering';
export {
  type CatalogSnapshot,
  DEFAULT_RESYNC_PAGE_SIZE,
  DEFAULT_RESYNC_TIMEOUT_MS,
  MAX_RESYNC_PAGE_SIZE,
  ResyncError,
  type ResyncOptions,
  type ResyncResult,
  resync,
} from '../../../functions/receiver/resync';
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
} from '../../../functions/receiver/verify';
