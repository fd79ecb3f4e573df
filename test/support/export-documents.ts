import { generateKeyPairSync } from 'node:crypto';
import { LocalReceiptSigner } from '../../functions/adapters/local/local-signing';
import { canonicalBytes, type JsonObject, receiptHash } from '../../functions/domain/receipts/receipt';
import type { ReceiptSigner } from '../../functions/ports/signing';

/** A fresh P-256 signer, as the local stack's receipt key. */
export const testSigner = (): LocalReceiptSigner =>
  new LocalReceiptSigner(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey);

/** A document signed as checkout signs receipts and refunds (C10). */
export const signDocument = async (signer: ReceiptSigner, payload: JsonObject): Promise<JsonObject> => ({
  ...payload,
  hash: receiptHash(payload),
  signature: Buffer.from(await signer.sign(canonicalBytes(payload))).toString('base64'),
});

/** The payload of a receipt with the fields the export reads (and a few more, as a real one has). */
export const receiptPayload = (
  signer: ReceiptSigner,
  fields: { id: string; issuedAt: string; currency: string; total: string; quoteId?: string },
): JsonObject => ({
  receipt_id: fields.id,
  quote_id: fields.quoteId ?? `q_${fields.id}`,
  status: 'issued',
  issued_at: fields.issuedAt,
  trace_id: `trc_${fields.id}`,
  key_id: signer.keyId,
  pricelist_version: 3,
  fx_version: 'fx-7',
  tax_rule_version: 2,
  computed_totals: {
    currency: fields.currency,
    subtotal: fields.total,
    discounts: '0',
    taxes: [],
    fees: [],
    total: fields.total,
  },
});

/** The payload of a refund (a return or a chargeback). */
export const refundPayload = (
  signer: ReceiptSigner,
  fields: {
    id: string;
    receiptId: string;
    kind: 'return' | 'chargeback';
    createdAt: string;
    currency: string;
    amount: string;
    fee: string;
    net: string;
  },
): JsonObject => ({
  refund_id: fields.id,
  receipt_id: fields.receiptId,
  kind: fields.kind,
  lines: [{ key: '0', line: 0, sku_id: 'SKU-1', quantity: 1, amount: fields.amount }],
  currency: fields.currency,
  amount: fields.amount,
  fee: fields.fee,
  net: fields.net,
  pricelist_version: 3,
  fx_version: 'fx-7',
  tax_rule_version: 2,
  created_at: fields.createdAt,
  key_id: signer.keyId,
});

/** A receipts-table item as the checkout repository stores it (what the stream's images carry). */
export const receiptItem = (receipt: JsonObject, refunds: readonly JsonObject[] = []) => ({
  receipt_id: String(receipt.receipt_id),
  quote_id: String(receipt.quote_id),
  status: refunds.length > 0 ? 'partially_refunded' : 'issued',
  revision: refunds.length,
  receipt_json: JSON.stringify(receipt),
  refunds_json: JSON.stringify(refunds),
});
