/**
 * `@pricing-service/webhook-receiver`: verify the pricing service's webhook deliveries — every scheme it sends
 * (HMAC `v1=` with the endpoint secret; Standard Webhooks; Ed25519 `v1a` with the keys of its JWKS) — keep newer
 * state when events arrive out of order, and catch up after an outage. The DynamoDB idempotency store (apply each
 * effect once) is `@pricing-service/webhook-receiver/dynamodb`, so this entry needs no AWS SDK.
 *
 * Built from the service's own receiver kit (`functions/receiver/`), so sender and receiver cannot disagree.
 */
export { InvalidSecretError } from '../../../functions/domain/webhooks/secret';
export * from '../../../functions/receiver/jwks';
export * from '../../../functions/receiver/ordering';
export * from '../../../functions/receiver/resync';
export * from '../../../functions/receiver/verify';
