import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CliIo } from '../../../bin/catalog';
import { parseOptions, run } from '../../../bin/verify-receipt';
import { LocalReceiptSigner } from '../../../functions/adapters/local/local-signing';
import { canonicalBytes, type JsonObject, receiptHash } from '../../../functions/domain/receipts/receipt';

const signedReceipt = async (): Promise<{ receipt: JsonObject; jwks: unknown }> => {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const signer = new LocalReceiptSigner(privateKey);
  const payload: JsonObject = {
    receipt_id: 'rcpt_01JQ4S6T1X5V8R2W3Y4Z5A6B7D',
    key_id: signer.keyId,
    pricelist_version: 1,
    fx_version: 'fx-1',
    tax_rule_version: 1,
    computed_totals: {
      currency: 'EUR',
      subtotal: '10.00',
      discounts: '0.00',
      taxes: [],
      fees: [],
      total: '10.00',
    },
  };
  const signature = Buffer.from(await signer.sign(canonicalBytes(payload))).toString('base64');
  return {
    receipt: { ...payload, hash: receiptHash(payload), signature },
    jwks: { keys: [await signer.publicKey()] },
  };
};

const io = (files: Record<string, string>, output: string[]): CliIo => ({
  env: {},
  cwd: '/',
  fetch: async () => new Response('{}', { status: 500 }),
  readFile: async (file) => {
    const content = files[file];
    if (content === undefined) throw new Error(`no file ${file}`);
    return content;
  },
  writeFile: async () => undefined,
  stdout: (text) => output.push(text),
  stderr: (text) => output.push(text),
});

describe('verify-receipt', () => {
  it('parses its options and refuses unknown ones', () => {
    expect(parseOptions(['r.json', '--keys', 'k.json', '--no-recompute'])).toEqual({
      file: 'r.json',
      keys: 'k.json',
      recompute: false,
    });
    expect(() => parseOptions(['--bogus'])).toThrow('unknown option --bogus');
    expect(() => parseOptions([])).toThrow('give a receipt file');
    expect(() => parseOptions(['a.json', 'b.json'])).toThrow('unexpected arguments: b.json');
  });

  it('accepts a receipt whose hash and signature check out against the JWKS file', async () => {
    const { receipt, jwks } = await signedReceipt();
    const output: string[] = [];
    const files = { 'r.json': JSON.stringify(receipt), 'k.json': JSON.stringify(jwks) };
    expect(await run(['r.json', '--keys', 'k.json', '--no-recompute'], io(files, output))).toBe(0);
    expect(output.join('')).toContain('hash and signature valid');
  });

  it('reports a changed byte as invalid and exits 1', async () => {
    const { receipt, jwks } = await signedReceipt();
    const tampered = {
      ...receipt,
      computed_totals: { ...(receipt.computed_totals as JsonObject), total: '1.00' },
    };
    const output: string[] = [];
    const files = { 'r.json': JSON.stringify(tampered), 'k.json': JSON.stringify(jwks) };
    expect(await run(['r.json', '--keys', 'k.json', '--no-recompute'], io(files, output))).toBe(1);
    expect(output.join('')).toContain('INVALID (hash_mismatch)');
  });

  it('reports an unknown key and a missing file', async () => {
    const { receipt } = await signedReceipt();
    const output: string[] = [];
    const files = { 'r.json': JSON.stringify(receipt), 'k.json': JSON.stringify({ keys: [] }) };
    expect(await run(['r.json', '--keys', 'k.json', '--no-recompute'], io(files, output))).toBe(1);
    expect(output.join('')).toContain('unknown_key');
    expect(await run(['missing.json', '--keys', 'k.json'], io(files, output))).toBe(1);
  });
});
