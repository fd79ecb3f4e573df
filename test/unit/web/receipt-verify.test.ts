import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../../../functions/domain/money/canonical';
import { issuedReceiptOf, verifyReceipt } from '../../../functions/domain/receipts/receipt';
import { verifyReceiptInBrowser } from '../../../web/shared/receipt-verify';

/** A receipt signed as the service signs one at commit (status issued), then read after a refund. */
const refundedRead = () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' }) as { x: string; y: string };
  const payload = {
    receipt_id: 'rcpt_1',
    key_id: 'k1',
    status: 'issued',
    computed_totals: { total: '10.00' },
  };
  const bytes = Buffer.from(canonicalJson(payload));
  const issued = {
    ...payload,
    hash: `sha256:${createHash('sha256').update(bytes).digest('hex')}`,
    signature: sign('sha256', bytes, privateKey).toString('base64'),
  };
  const read = { ...issued, status: 'refunded', refunds: [{ refund_id: 'rf_1', kind: 'return' }] };
  return { read, keys: [{ kty: 'EC', crv: 'P-256', x: jwk.x, y: jwk.y, kid: 'k1' }] };
};

describe('a receipt as read verifies as issued, in the domain and in the browser', () => {
  it('a refunded receipt: the read does not verify as such, its issued form does, in both', async () => {
    const { read, keys } = refundedRead();
    expect(verifyReceipt(read, keys)).toEqual({ valid: false, reason: 'hash_mismatch' });
    expect(verifyReceipt(issuedReceiptOf(read), keys)).toEqual({ valid: true });
    expect(await verifyReceiptInBrowser(read, keys)).toEqual({ valid: true, kid: 'k1' });
  });

  it('a changed total is refused in both', async () => {
    const { read, keys } = refundedRead();
    const changed = { ...read, computed_totals: { total: '0.01' } };
    expect(verifyReceipt(issuedReceiptOf(changed), keys)).toMatchObject({
      valid: false,
      reason: 'hash_mismatch',
    });
    expect(await verifyReceiptInBrowser(changed, keys)).toMatchObject({ valid: false });
  });
});
