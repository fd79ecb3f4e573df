import type { JsonObject } from '../../domain/receipts/receipt';
import type { PublicJwk, ReceiptSigner } from '../../ports/signing';
import {
  commitRequestSchema,
  quoteRequestSchema,
  receiptPathSchema,
  refundRequestSchema,
} from '../../schemas/checkout';
import type { Checkout } from '../../usecases/checkout/checkout';
import type { HttpResult, Operation } from '../middleware/http';
import { exactlyOnce } from '../middleware/idempotency';
import { parseJsonBody, parseWith } from '../middleware/validation';

/** `POST /pricing/quote`: priced on fresh catalog data, rate locked, signed; 201 with the quote. */
export const quoteOperation =
  (checkout: Checkout): Operation =>
  async ({ event, traceId }) => {
    const request = parseJsonBody(quoteRequestSchema, event.body, event.isBase64Encoded);
    return { statusCode: 201, body: await checkout.quote(request, traceId) };
  };

const created = (body: JsonObject): HttpResult => ({ statusCode: 201, body });

/**
 * `POST /pricing/commit`: the quote's receipt (the same one however often it is called); the receipt, the quote's
 * mark and the request's answer are one transaction.
 */
export const commitOperation =
  (checkout: Checkout): Operation =>
  async (operation) => {
    const { event, traceId } = operation;
    const request = parseJsonBody(commitRequestSchema, event.body, event.isBase64Encoded);
    return created(
      await checkout.commit(request.quote_id, request.signature, traceId, exactlyOnce(operation, created)),
    );
  };

/**
 * `POST /pricing/refund`: a return or chargeback recalculated with the receipt's versions; recorded on the receipt
 * in the same write as the request's answer.
 */
export const refundOperation =
  (checkout: Checkout): Operation =>
  async (operation) => {
    const { event } = operation;
    const request = parseJsonBody(refundRequestSchema, event.body, event.isBase64Encoded);
    return created(await checkout.refund(request, exactlyOnce(operation, created)));
  };

/** `GET /receipts/{receipt_id}`. */
export const getReceiptOperation =
  (checkout: Checkout): Operation =>
  async ({ event }) => {
    const { receipt_id } = parseWith(receiptPathSchema, event.pathParameters ?? {}, 'path');
    return { statusCode: 200, body: await checkout.receipt(receipt_id) };
  };

/** `GET /keys`: the JWKS that verifies receipts offline (C10); `kid` is the receipt's `key_id`. */
export const keysOperation =
  (signer: ReceiptSigner, retired: readonly PublicJwk[] = []): Operation =>
  async () => ({
    statusCode: 200,
    headers: { 'Cache-Control': 'public, max-age=300' },
    body: { keys: [await signer.publicKey(), ...retired] },
  });
