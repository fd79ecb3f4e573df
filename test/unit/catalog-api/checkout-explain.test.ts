/**
 * Quotes with `"explain": true` (C28) and `customer_groups` (C29) through the checkout use case: the explanation
 * comes with the answer only (not signed, not stored, not in the basket), the groups are recorded in the basket,
 * and the commit and a refund price the stored basket to the same figures; through the quote operation, the
 * caller key bounds the groups a quote may name.
 */
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { beforeEach, describe, expect, it } from 'vitest';
import { LocalMacSigner, LocalReceiptSigner } from '../../../functions/adapters/local/local-signing';
import { quoteOperation } from '../../../functions/handlers/operations/checkout';
import type { CheckoutRepository, StoredQuote, StoredReceipt } from '../../../functions/ports/checkout';
import { quoteResponseSchema } from '../../../functions/schemas/responses';
import { importCatalog } from '../../../functions/usecases/catalog/import';
import { CatalogReader } from '../../../functions/usecases/catalog/reader';
import { validateCatalogDocument } from '../../../functions/usecases/catalog/validate';
import { Checkout } from '../../../functions/usecases/checkout/checkout';
import { demoDocument } from '../../support/demo-pricing';
import { call, InMemoryCatalogRepository, ManualClock, operationRequest } from './support';

class MemoryCheckoutRepository implements CheckoutRepository {
  readonly quotes = new Map<string, StoredQuote>();
  readonly receipts = new Map<string, StoredReceipt>();

  async saveQuote(quote: StoredQuote): Promise<void> {
    this.quotes.set(quote.quote_id, quote);
  }

  async quote(quoteId: string): Promise<StoredQuote | undefined> {
    return this.quotes.get(quoteId);
  }

  async commit(receipt: StoredReceipt): Promise<'committed' | 'exists'> {
    const quote = this.quotes.get(receipt.quote_id);
    if (!quote || quote.receipt_id) return 'exists';
    this.quotes.set(receipt.quote_id, { ...quote, receipt_id: receipt.receipt_id });
    this.receipts.set(receipt.receipt_id, receipt);
    return 'committed';
  }

  async receipt(receiptId: string): Promise<StoredReceipt | undefined> {
    return this.receipts.get(receiptId);
  }

  async updateRefunds(receipt: StoredReceipt, expectedRevision: number): Promise<'updated' | 'conflict'> {
    if (this.receipts.get(receipt.receipt_id)?.revision !== expectedRevision) return 'conflict';
    this.receipts.set(receipt.receipt_id, receipt);
    return 'updated';
  }
}

let repository: MemoryCheckoutRepository;
let checkout: Checkout;

beforeEach(async () => {
  const clock = new ManualClock(new Date('2026-11-22T12:00:00.000Z'));
  const catalogs = new InMemoryCatalogRepository();
  const { rate_policy: _policy, ...document } = demoDocument();
  await importCatalog({ repository: catalogs, clock }, validateCatalogDocument(document));
  repository = new MemoryCheckoutRepository();
  let sequence = 0;
  checkout = new Checkout({
    reader: new CatalogReader(catalogs, clock),
    repository,
    mac: new LocalMacSigner(randomBytes(32)),
    signer: new LocalReceiptSigner(generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey),
    clock,
    newId: (prefix) => `${prefix}_01JQ4S6T1X5V8R2W3Y4Z5A6B${String(sequence++).padStart(2, '0')}`,
  });
});

const BASKET = {
  items: [
    { sku_id: 'GAME-STARFALL-PS5', quantity: 2 },
    { sku_id: 'BNDL-STARFALL-FAN', quantity: 1 },
  ],
  region: 'DE',
  currency: 'EUR',
  buyer_type: 'consumer' as const,
  tenant: 'demo',
};

describe('a quote with explain and customer groups', () => {
  it('answers the explanation beside the signed quote, stores and signs the quote without it', async () => {
    const plain = await checkout.quote(BASKET, 'trc_plain');
    const quoted = await checkout.quote({ ...BASKET, explain: true }, 'trc_explained');
    const { explain, ...rest } = quoted;
    expect(quoteResponseSchema.safeParse(quoted).success).toBe(true);
    const steps = (explain as { steps: { step: string; line?: number; rule: string }[] }).steps;
    expect(new Set(steps.map((step) => step.step))).toEqual(
      new Set(['base', 'discounts', 'taxes', 'fees', 'rounding']),
    );
    expect(steps.filter((step) => step.rule === 'rounding').map((step) => step.line)).toEqual([1, 2]);
    for (const field of ['items_priced', 'subtotal', 'discounts', 'taxes', 'fees', 'total'] as const)
      expect(rest[field]).toEqual(plain[field]);
    const stored = repository.quotes.get(String(quoted.quote_id));
    expect(stored?.payload).not.toHaveProperty('explain');
    expect(stored?.payload.basket).not.toHaveProperty('explain');
    expect(stored?.signature).toBe(quoted.signature);
    const { signature: _signature, ...payload } = rest;
    expect(stored?.payload).toEqual(payload);
    const receipt = await checkout.commit(
      String(quoted.quote_id),
      String(quoted.signature),
      'trc_commit',
      'demo',
    );
    expect((receipt.computed_totals as Record<string, unknown>).total).toBe(quoted.total);
    expect(receipt).not.toHaveProperty('explain');
  });

  it('records the customer groups in the basket; the receipt and a refund price the same', async () => {
    const everyone = await checkout.quote(BASKET, 'trc_1');
    const gold = await checkout.quote({ ...BASKET, customer_groups: ['b2b-gold', 'unknown'] }, 'trc_2');
    expect(gold.basket).toMatchObject({ customer_groups: ['b2b-gold', 'unknown'] });
    expect(gold.total).not.toBe(everyone.total);
    const lines = gold.items_priced as { customer_group?: string }[];
    expect(lines.map((line) => line.customer_group)).toEqual(['b2b-gold', 'b2b-gold']);
    const receipt = await checkout.commit(String(gold.quote_id), String(gold.signature), 'trc_3', 'demo');
    expect((receipt.computed_totals as Record<string, unknown>).total).toBe(gold.total);
    const refund = await checkout.refund(
      {
        receipt_id: String(receipt.receipt_id),
        kind: 'return',
        lines: [{ sku_id: 'GAME-STARFALL-PS5', quantity: 1 }],
      },
      'demo',
    );
    // One of the line's two units: half its total (the odd unit to the refunded part).
    const lineUnits = BigInt(String((gold.items_priced as { total: string }[])[0]?.total).replace('.', ''));
    expect(BigInt(String(refund.amount).replace('.', ''))).toBe((lineUnits + 1n) / 2n);
  });
});

describe('POST /pricing/quote: the caller key bounds the customer groups (C29)', () => {
  const quoteAs = (customerGroups: string[], groups?: string[]) => {
    const { tenant: _tenant, ...body } = BASKET;
    return call(
      quoteOperation(checkout),
      operationRequest({
        method: 'POST',
        resource: '/pricing/quote',
        body: { ...body, ...(groups ? { customer_groups: groups } : {}) },
        customerGroups,
      }),
    );
  };

  it('quotes with groups of the key, or none; refuses any other group (403) and stores nothing', async () => {
    expect(await quoteAs(['b2b-gold'], ['b2b-gold'])).toMatchObject({
      statusCode: 201,
      body: { basket: { customer_groups: ['b2b-gold'] } },
    });
    expect(await quoteAs([])).toMatchObject({ statusCode: 201 });
    const stored = repository.quotes.size;
    expect(await quoteAs(['b2b-gold'], ['b2b-gold', 'vip'])).toMatchObject({
      statusCode: 403,
      code: 'forbidden',
      description: 'this key may not name the customer groups vip; it may name b2b-gold',
    });
    expect(await quoteAs([], ['b2b-gold'])).toMatchObject({
      statusCode: 403,
      code: 'forbidden',
      description: 'this key may not name the customer groups b2b-gold; it may name none',
    });
    expect(repository.quotes.size).toBe(stored);
  });
});

describe('POST /pricing/quote: quantity rules', () => {
  const quoteItems = (items: { sku_id: string; quantity: number }[]) => {
    const { tenant: _tenant, ...body } = BASKET;
    return call(
      quoteOperation(checkout),
      operationRequest({ method: 'POST', resource: '/pricing/quote', body: { ...body, items } }),
    );
  };

  it('refuses with 422 quantity_not_allowed naming every line that breaks its rule, and stores nothing', async () => {
    const refused = await quoteItems([
      { sku_id: 'GAME-STARFALL-PS5', quantity: 1 },
      { sku_id: 'MERCH-STATUE-KAEL', quantity: 3 },
      { sku_id: 'MERCH-STICKERS-STARFALL', quantity: 4 },
    ]);
    expect(refused).toMatchObject({ statusCode: 422, code: 'quantity_not_allowed' });
    expect((refused as { details?: { violations?: unknown } }).details?.violations).toEqual([
      expect.objectContaining({ line: 2, sku_id: 'MERCH-STATUE-KAEL', quantity: 3, rule: 'max', limit: 2 }),
      expect.objectContaining({ line: 3, sku_id: 'MERCH-STICKERS-STARFALL', rule: 'increment', limit: 3 }),
    ]);
    expect(repository.quotes.size).toBe(0);
    expect(
      await quoteItems([
        { sku_id: 'MERCH-STATUE-KAEL', quantity: 2 },
        { sku_id: 'MERCH-STICKERS-STARFALL', quantity: 6 },
        { sku_id: 'GIFT-CARD-25', quantity: 10 },
      ]),
    ).toMatchObject({ statusCode: 201 });
  });
});
