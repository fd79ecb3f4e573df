import type { JsonObject } from '../../domain/receipts/receipt';
import {
  commitRequestSchema,
  quoteRequestSchema,
  receiptPathSchema,
  refundRequestSchema,
} from '../../schemas/checkout';
import type { Checkout } from '../../usecases/checkout/checkout';
import { type PublicKeySource, receiptKeySet } from '../../usecases/receipts/key-set';
import { HttpError } from '../middleware/errors';
import type { HttpResult, Operation } from '../middleware/http';
import { exactlyOnce } from '../middleware/idempotency';
import { callerOf, callerTenant } from '../middleware/principal';
import { parseJsonBody, parseWith } from '../middleware/validation';

/** `POST /pricing/quote`: priced on fresh catalog data, rate locked, signed; 201 with the quote. */
export const quoteOperation =
  (checkout: Checkout): Operation =>
  async ({ event, traceId, principal }) => {
    const request = parseJsonBody(quoteRequestSchema, event.body, event.isBase64Encoded);
    const tenant = callerTenant(callerOf(principal), request, 'quotes');
    return { statusCode: 201, body: await checkout.quote({ ...request, tenant }, traceId) };
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
    const { tenant } = callerOf(operation.principal);
    const request = parseJsonBody(commitRequestSchema, event.body, event.isBase64Encoded);
    return created(
      await checkout.commit(
        request.quote_id,
        request.signature,
        traceId,
        tenant,
        exactlyOnce(operation, created),
      ),
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
    const caller = callerOf(operation.principal);
    const request = parseJsonBody(refundRequestSchema, event.body, event.isBase64Encoded);
    // A return is the storefront's; a chargeback only a payment provider's key records.
    const scope = request.kind === 'chargeback' ? 'chargebacks:write' : 'refunds:write';
    if (!caller.scopes.includes(scope))
      throw new HttpError('forbidden', `recording a ${request.kind} needs the scope ${scope}`);
    return created(await checkout.refund(request, caller.tenant, exactlyOnce(operation, created)));
  };

/** `GET /receipts/{receipt_id}`. */
export const getReceiptOperation =
  (checkout: Checkout): Operation =>
  async ({ event, principal }) => {
    const { tenant } = callerOf(principal);
    const { receipt_id } = parseWith(receiptPathSchema, event.pathParameters ?? {}, 'path');
    return { statusCode: 200, body: await checkout.receipt(receipt_id, tenant) };
  };

/** `GET /admin/receipts/{receipt_id}`: an operator reads a receipt of any tenant. */
export const operatorReceiptOperation =
  (checkout: Checkout): Operation =>
  async ({ event }) => {
    const { receipt_id } = parseWith(receiptPathSchema, event.pathParameters ?? {}, 'path');
    return { statusCode: 200, body: await checkout.receiptForOperator(receipt_id) };
  };

/**
 * `GET /keys`: the JWKS that verifies receipts offline (C10): the key in use and every retired one; `kid` is the
 * receipt's `key_id`.
 */
export const keysOperation =
  (signer: PublicKeySource, retired: readonly PublicKeySource[] = []): Operation =>
  async () => ({
    statusCode: 200,
    headers: { 'Cache-Control': 'public, max-age=300' },
    body: await receiptKeySet(signer, retired),
  });
