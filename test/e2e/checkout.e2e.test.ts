import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recomputeDifferences } from '../../bin/verify-receipt';
import type { LocalStack } from '../../functions/composition/local/stack';
import { type JsonObject, type Jwk, verifyReceipt } from '../../functions/domain/receipts/receipt';
import type { Clock } from '../../functions/ports/clock';
import type { CatalogDocument } from '../../functions/schemas/catalog-document';
import {
  jwksResponseSchema,
  priceResponseSchema,
  quoteResponseSchema,
  receiptResponseSchema,
  refundResponseSchema,
} from '../../functions/schemas/responses';
import { CatalogReader } from '../../functions/usecases/catalog/reader';
import { fxVersionNumber } from '../../functions/usecases/catalog/release';
import { publishCatalog } from '../support/change-requests';
import { allowedQuantity, demoCatalogWithoutRatePolicy, startDemoStack } from '../support/demo-stack';
import { volume } from '../support/volume';

/** The documented response schema (docs/openapi.json is generated from it) accepts what the API answered. */
const documented = (
  schema: { safeParse(value: unknown): { success: boolean; error?: unknown } },
  body: unknown,
) => {
  const result = schema.safeParse(body);
  if (!result.success)
    throw new Error(`response does not match its documented schema: ${String(result.error)}`);
};

const demo = demoCatalogWithoutRatePolicy();
/** Random baskets quoted and committed: 1 050 with `CI=true` (the acceptance: ≥ 1 000 committed), 300 locally. */
const BASKET_RUNS = volume('CHECKOUT_BASKETS', { local: 300, ci: 1_050 });
const API_KEY = 'key_e2e_0123456789abcdef';
const ADMIN_TOKEN = 'adm_e2e_0123456789abcdef';

let stack: LocalStack;
let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
let keys: Jwk[];

type Json = JsonObject & Record<string, unknown>;

const call = async (method: string, route: string, body?: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(`${stack.url}${route}`, {
    method,
    headers: {
      'x-api-key': API_KEY,
      'content-type': 'application/json',
      // A refund requires its Idempotency-Key.
      ...(route === '/pricing/refund' ? { 'idempotency-key': randomUUID() } : {}),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Json };
};

const sellable = (sku: string, region: string) =>
  demo.products
    .find((product) => product.sku_id === sku)
    ?.region_policies?.find((policy) => policy.region === region)?.sellable !== false;

const blocked = (region: string, currency: string) =>
  (demo.availability?.blocked_currencies ?? []).some(
    (block) => block.currency === currency && (!block.regions || block.regions.includes(region)),
  );

const cases = demo.display_rules.flatMap((rule) =>
  rule.currency_whitelist
    .filter((currency) => !blocked(rule.region, currency))
    .map((currency) => ({ region: rule.region, currency })),
);

const skus = demo.pricelists[0]?.items.map((item) => item.sku_id) ?? [];

beforeAll(async () => {
  stack = await startDemoStack({ apiKey: API_KEY, adminToken: ADMIN_TOKEN, clock });
  keys = ((await (await fetch(`${stack.url}/keys`)).json()) as { keys: Jwk[] }).keys;
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

/** Commits a quote as a checkout would: with the quote's own id and signature. */
const commit = (quoted: { body: Json }) =>
  call('POST', '/pricing/commit', { quote_id: quoted.body.quote_id, signature: quoted.body.signature });

const quote = (region: string, currency: string, items: { sku_id: string; quantity: number }[]) =>
  call('POST', '/pricing/quote', { items, region, currency, buyer_type: 'consumer' });

describe('checkout over HTTP (local stack, demo catalog)', () => {
  it.each(cases)('quote → commit → verify → refund in $currency ($region)', async ({ region, currency }) => {
    const items = skus
      .filter((sku) => sellable(sku, region))
      .slice(0, 4)
      .map((sku_id) => ({ sku_id, quantity: 2 }));
    const quoted = await quote(region, currency, items);
    expect(quoted.status).toBe(201);
    const committed = await commit(quoted);
    expect(committed.status).toBe(201);
    const receipt = committed.body;
    expect((receipt.computed_totals as Json).total).toBe(quoted.body.total);
    expect([receipt.pricelist_version, receipt.fx_version, receipt.tax_rule_version]).toEqual([
      quoted.body.pricelist_version,
      quoted.body.fx_version,
      quoted.body.tax_rule_version,
    ]);
    expect(verifyReceipt(receipt, keys)).toEqual({ valid: true });
    documented(quoteResponseSchema, quoted.body);
    documented(receiptResponseSchema, receipt);
    documented(receiptResponseSchema, (await call('GET', `/receipts/${receipt.receipt_id}`)).body);
    documented(jwksResponseSchema, { keys });
    const price = await call(
      'GET',
      `/catalog/prices?sku=${items[0]?.sku_id}&currency=${currency}&region=${region}`,
    );
    expect(price.status).toBe(200);
    documented(priceResponseSchema, price.body);
    const refunded = await call('POST', '/pricing/refund', {
      receipt_id: receipt.receipt_id,
      kind: 'return',
      lines: [{ sku_id: items[0]?.sku_id, quantity: 1 }],
    });
    expect(refunded.status).toBe(201);
    documented(refundResponseSchema, refunded.body);
    // A refund is signed like a receipt (C10), and what is signed cannot be changed unnoticed.
    expect(verifyReceipt(refunded.body, keys)).toEqual({ valid: true });
    expect(verifyReceipt({ ...refunded.body, net: '0' }, keys)).toEqual({
      valid: false,
      reason: 'hash_mismatch',
    });
    expect(refunded.body.currency).toBe(currency);
    const decimals = String(quoted.body.total).split('.')[1]?.length ?? 0;
    expect(String(refunded.body.amount).split('.')[1]?.length ?? 0).toBe(decimals);
  });

  it('50 concurrent commits of one quote produce exactly one receipt', async () => {
    const quoted = await quote('DE', 'EUR', [{ sku_id: skus[0] ?? '', quantity: 1 }]);
    const commits = await Promise.all(Array.from({ length: 50 }, () => commit(quoted)));
    expect(commits.every((commit) => commit.status === 201)).toBe(true);
    expect(new Set(commits.map((commit) => commit.body.receipt_id)).size).toBe(1);
  });

  it('refuses a commit after the lock with a fresh quote, and returns the same receipt for a committed one', async () => {
    const open = await quote('DE', 'EUR', [{ sku_id: skus[0] ?? '', quantity: 1 }]);
    const committedEarly = await quote('DE', 'EUR', [{ sku_id: skus[1] ?? '', quantity: 1 }]);
    const receipt = await commit(committedEarly);
    offsetMs = (Number(open.body.lock_ttl) + 1) * 1000;
    try {
      const late = await commit(open);
      expect(late.status).toBe(409);
      expect(late.body.error).toBe('quote_expired');
      expect((late.body.requote as Json).quote_id).not.toBe(open.body.quote_id);
      expect((late.body.requote as Json).signature).toMatch(/^v1=/);
      const again = await commit(committedEarly);
      expect(again.body.receipt_id).toBe(receipt.body.receipt_id);
    } finally {
      offsetMs = 0;
    }
  });

  it('honours Idempotency-Key: same body replays the stored quote, another body is refused', async () => {
    const key = { 'idempotency-key': `e2e-${Date.now()}` };
    const body = {
      items: [{ sku_id: skus[0], quantity: 1 }],
      region: 'DE',
      currency: 'EUR',
      buyer_type: 'consumer',
    };
    const first = await fetch(`${stack.url}/pricing/quote`, {
      method: 'POST',
      headers: { 'x-api-key': API_KEY, 'content-type': 'application/json', ...key },
      body: JSON.stringify(body),
    });
    const replay = await fetch(`${stack.url}/pricing/quote`, {
      method: 'POST',
      headers: { 'x-api-key': API_KEY, 'content-type': 'application/json', ...key },
      body: JSON.stringify(body),
    });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(((await replay.json()) as Json).quote_id).toBe(((await first.json()) as Json).quote_id);
    const other = await call('POST', '/pricing/quote', { ...body, currency: 'BTC' }, key);
    expect([other.status, other.body.error]).toEqual([422, 'idempotency_key_reused']);
  });

  it('serves stale-while-revalidate on storefront reads only; checkout answers are never cached', async () => {
    const price = await fetch(`${stack.url}/catalog/prices?sku=${skus[0]}&currency=EUR&region=DE`, {
      headers: { 'x-api-key': API_KEY },
    });
    expect(price.headers.get('cache-control')).toMatch(/max-age=\d+, stale-while-revalidate=\d+/);
    const quoted = await fetch(`${stack.url}/pricing/quote`, {
      method: 'POST',
      headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({
        items: [{ sku_id: skus[0], quantity: 1 }],
        region: 'DE',
        currency: 'EUR',
        buyer_type: 'consumer',
      }),
    });
    expect(quoted.headers.get('cache-control')).toBe('no-store');
  });

  it('refuses a signature that does not match with 422 invalid_signature', async () => {
    const quoted = await quote('DE', 'EUR', [{ sku_id: skus[0] ?? '', quantity: 1 }]);
    const forged = `v1=${Buffer.alloc(32, 7).toString('base64')}`;
    const result = await call('POST', '/pricing/commit', {
      quote_id: quoted.body.quote_id,
      signature: forged,
    });
    expect([result.status, result.body.error]).toEqual([422, 'invalid_signature']);
  });

  it('refuses a refund without an Idempotency-Key (400) and records nothing', async () => {
    const quoted = await quote('DE', 'EUR', [{ sku_id: skus[0] ?? '', quantity: 2 }]);
    const receipt = (await commit(quoted)).body;
    const response = await fetch(`${stack.url}/pricing/refund`, {
      method: 'POST',
      headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({
        receipt_id: receipt.receipt_id,
        kind: 'return',
        lines: [{ sku_id: skus[0], quantity: 1 }],
      }),
    });
    const body = (await response.json()) as Json;
    expect([response.status, body.error]).toEqual([400, 'invalid_request']);
    expect(String(body.error_description)).toContain('Idempotency-Key');
    const stored = await call('GET', `/receipts/${receipt.receipt_id}`);
    expect([stored.body.status, stored.body.refunds]).toEqual(['issued', []]);
  });

  it('checks the signature before anything else: a committed quote with a forged one gets 422, not its receipt', async () => {
    const quoted = await quote('DE', 'EUR', [{ sku_id: skus[0] ?? '', quantity: 1 }]);
    expect((await commit(quoted)).status).toBe(201);
    const forged = `v1=${Buffer.alloc(32, 9).toString('base64')}`;
    const result = await call('POST', '/pricing/commit', {
      quote_id: quoted.body.quote_id,
      signature: forged,
    });
    expect([result.status, result.body.error]).toEqual([422, 'invalid_signature']);
    expect(JSON.stringify(result.body)).not.toContain('rcpt_');
  });

  it('returns one position of a bundle for exactly its stored share, and never more than was bought', async () => {
    const bundle = demo.pricelists[0]?.items.find((item) => item.pricing_model === 'bundle');
    const position = bundle?.bundle?.positions[0];
    const quoted = await quote('DE', 'EUR', [{ sku_id: bundle?.sku_id ?? '', quantity: 1 }]);
    const receipt = (await commit(quoted)).body;
    const line = ((receipt.breakdown as Json).items_priced as Json[])[0] as Json;
    const share = (line.bundle_allocation as Json[]).find(
      (entry) => entry.sku_id === position?.sku_id,
    ) as Json;
    const refund = await call('POST', '/pricing/refund', {
      receipt_id: receipt.receipt_id,
      kind: 'return',
      lines: [{ sku_id: position?.sku_id, quantity: position?.quantity }],
    });
    expect(refund.body.amount).toBe(share.amount);
    const again = await call('POST', '/pricing/refund', {
      receipt_id: receipt.receipt_id,
      kind: 'return',
      lines: [{ sku_id: position?.sku_id, quantity: 1 }],
    });
    expect([again.status, again.body.error]).toEqual([422, 'invalid_state']);
  });

  it("refunds with the receipt's versions after newer price lists, rates and tax rules are published", async () => {
    const sku = skus[0] ?? '';
    const quoted = await quote('DE', 'EUR', [{ sku_id: sku, quantity: 2 }]);
    const receipt = (await commit(quoted)).body;
    const line = ((receipt.breakdown as Json).items_priced as Json[])[0] as Json;
    const newer: CatalogDocument = {
      ...demo,
      pricelists: demo.pricelists.map((list) => ({
        ...list,
        items: list.items.map((item) => ({
          ...item,
          base_price: item.sku_id === sku ? '1.00' : item.base_price,
        })),
      })),
      tax_rules: demo.tax_rules
        .map((rule) => (rule.region === 'DE' ? { ...rule, rates: { ...rule.rates } } : rule))
        .reverse(),
      fx_rates: {
        ...demo.fx_rates,
        rates: demo.fx_rates.rates.map((rate) => ({ ...rate, source: `${rate.source}-v2` })),
      },
    };
    const published = await publishCatalog(stack.url, ADMIN_TOKEN, newer);
    const imported = { body: published.body.publication as Json };
    expect((imported.body.versions as Json).pricelist_version).toBeGreaterThan(
      Number(receipt.pricelist_version),
    );
    const refund = await call('POST', '/pricing/refund', {
      receipt_id: receipt.receipt_id,
      kind: 'return',
      lines: [{ sku_id: sku, quantity: 2 }],
    });
    expect(refund.body.amount).toBe(line.total);
    expect(refund.body.pricelist_version).toBe(receipt.pricelist_version);
    const price = await call('GET', `/catalog/prices?sku=${sku}&currency=EUR&region=DE`);
    expect(price.body.pricelist_version).toBe((imported.body.versions as Json).pricelist_version);
  });

  it(`commits ≥ ${BASKET_RUNS - 50} random baskets: committed total = quoted total, every receipt verifies and recomputes`, async () => {
    const reader = new CatalogReader(stack.deps.catalogRepository, clock);
    let committed = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...cases),
        fc.uniqueArray(fc.constantFrom(...skus), { minLength: 1, maxLength: 6 }),
        fc.array(fc.integer({ min: 1, max: 5 }), { minLength: 6, maxLength: 6 }),
        async ({ region, currency }, chosen, quantities) => {
          const items = chosen
            .filter((sku) => sellable(sku, region))
            .map((sku_id, index) => ({
              sku_id,
              quantity: allowedQuantity(demo, sku_id, quantities[index] ?? 1),
            }));
          if (items.length === 0) return;
          const quoted = await quote(region, currency, items);
          expect(quoted.status).toBe(201);
          const receipt = await commit(quoted);
          expect((receipt.body.computed_totals as Json).total).toBe(quoted.body.total);
          expect(verifyReceipt(receipt.body, keys)).toEqual({ valid: true });
          // Recomputed from the versions it pins (newer ones were published by an earlier test): identical.
          const release = await reader.release({
            commercial: Number(receipt.body.pricelist_version),
            fx: fxVersionNumber(String(receipt.body.fx_version)) ?? 0,
            tax: Number(receipt.body.tax_rule_version),
          });
          expect(recomputeDifferences(receipt.body, release)).toEqual([]);
          committed += 1;
        },
      ),
      { numRuns: BASKET_RUNS },
    );
    expect(committed).toBeGreaterThanOrEqual(BASKET_RUNS - 50);
  });
});

type Step = { step: string; rule: string; line?: number; input: Json; output: Json; detail: string };

describe('explain (C28), reasons and customer groups (C29) over HTTP', () => {
  const price = async (query: string) => {
    const response = await fetch(`${stack.url}/catalog/prices?${query}`, {
      headers: { 'x-api-key': API_KEY },
    });
    return { status: response.status, headers: response.headers, body: (await response.json()) as Json };
  };

  it('GET /catalog/prices?explain=true: the same price, explained step by step, never cached', async () => {
    const query = 'sku=BNDL-STARFALL-FAN&currency=USD&region=US';
    const plain = await price(query);
    const explained = await price(`${query}&explain=true`);
    expect(explained.status).toBe(200);
    expect(explained.headers.get('cache-control')).toBe('no-store');
    expect(explained.headers.get('x-cache')).toBe('bypass');
    documented(priceResponseSchema, explained.body);
    const { explain, ...figures } = explained.body;
    expect(figures).toEqual(plain.body);
    const steps = (explain as { steps: Step[] }).steps;
    const order = ['base', 'discounts', 'taxes', 'fees', 'rounding'];
    const positions = steps.map((step) => order.indexOf(step.step));
    expect(positions.every((position, index) => index === 0 || position >= (positions[index - 1] ?? 0))).toBe(
      true,
    );
    expect(steps.map((step) => step.rule)).toEqual(
      expect.arrayContaining([
        'price_list',
        'fx_conversion',
        'charm',
        'bundle_split',
        'line_amount',
        'stacking',
      ]),
    );
    expect(steps.find((step) => step.rule === 'fx_conversion')?.output).toMatchObject({
      pair: 'EUR→USD',
      fx_markup_bps: 150,
      fx_version: plain.body.fx_version,
    });
    expect(steps.find((step) => step.rule === 'tax_rule')?.output).toMatchObject({
      tax_mode: { type: 'GST', inclusion: 'excluded' },
      rounding: { mode: 'HALF_UP', level: 'per_line' },
    });
    expect(steps.find((step) => step.rule === 'rounding')?.output).toMatchObject({
      unit_price: plain.body.unit_price,
      display_price: plain.body.display_price,
    });
    // The plain read is still served by the cache: the explained one was neither read nor stored.
    expect((await price(query)).headers.get('x-cache')).toMatch(/^hit-/);
  });

  it('POST /pricing/quote with "explain": true: explained per line, committed like any quote', async () => {
    const body = {
      items: [
        { sku_id: 'GAME-IRONVALE-CE', quantity: 1 },
        { sku_id: 'DIG-STARGEMS-1200', quantity: 5 },
      ],
      region: 'DE',
      currency: 'EUR',
      buyer_type: 'consumer',
    };
    const plain = await call('POST', '/pricing/quote', body);
    const explained = await call('POST', '/pricing/quote', { ...body, explain: true });
    expect(explained.status).toBe(201);
    documented(quoteResponseSchema, explained.body);
    for (const field of ['items_priced', 'subtotal', 'discounts', 'taxes', 'fees', 'total'])
      expect(explained.body[field]).toEqual(plain.body[field]);
    expect(explained.body.basket).toEqual(plain.body.basket);
    const steps = (explained.body.explain as { steps: Step[] }).steps;
    const lines = explained.body.items_priced as Json[];
    for (const line of lines) {
      const rounding = steps.find((step) => step.rule === 'rounding' && step.line === line.line);
      expect(rounding?.output).toMatchObject({ base: line.base, discount: line.discount, total: line.total });
    }
    expect(steps.find((step) => step.rule === 'tier' && step.line === 2)?.output).toMatchObject({
      min_quantity: 5,
    });
    expect(steps.find((step) => step.rule === 'discount' && step.line === 1)?.detail).toContain('floor');
    expect(steps.find((step) => step.rule === 'basket_rounding')?.output).toMatchObject({
      total: explained.body.total,
    });
    const receipt = await commit(explained);
    expect(receipt.status).toBe(201);
    expect((receipt.body.computed_totals as Json).total).toBe(explained.body.total);
    expect(receipt.body).not.toHaveProperty('explain');
    expect(verifyReceipt(receipt.body, keys)).toEqual({ valid: true });
  });

  it('answers 422 price_not_available with every reason', async () => {
    const refused = await price('sku=NO-SUCH-SKU&currency=JPY&region=DE');
    expect(refused.status).toBe(422);
    expect(refused.body).toMatchObject({
      error: 'price_not_available',
      reasons: [
        { code: 'currency_not_offered', detail: 'JPY is not offered in DE' },
        { code: 'unknown_sku', sku_id: 'NO-SUCH-SKU' },
      ],
    });
    const quoted = await call('POST', '/pricing/quote', {
      items: [
        { sku_id: 'DIG-STARFALL-KEY', quantity: 1 },
        { sku_id: 'NO-SUCH-SKU', quantity: 1 },
      ],
      region: 'JP',
      currency: 'JPY',
      buyer_type: 'consumer',
    });
    expect(quoted.status).toBe(422);
    expect((quoted.body.reasons as Json[]).map((reason) => reason.code)).toEqual([
      'not_sellable',
      'unknown_sku',
    ]);
  });

  it('customer_groups: b2b-gold gets its lower price, recorded in the quote; the receipt recomputes', async () => {
    const everyone = await price('sku=GAME-IRONVALE-PS5&currency=EUR&region=DE');
    const gold = await price('sku=GAME-IRONVALE-PS5&currency=EUR&region=DE&customer_groups=b2b-gold');
    expect(gold.status).toBe(200);
    documented(priceResponseSchema, gold.body);
    expect(gold.body).toMatchObject({ customer_groups: ['b2b-gold'], customer_group: 'b2b-gold' });
    expect(Number(gold.body.unit_price)).toBeLessThan(Number(everyone.body.unit_price));
    // The demo key names b2b-gold only (C29: the key bounds the groups; test/e2e/trust-boundaries).
    const unknown = await price('sku=GAME-IRONVALE-PS5&currency=EUR&region=DE&customer_groups=nobody');
    expect(unknown.status).toBe(403);

    const quoted = await call('POST', '/pricing/quote', {
      items: [{ sku_id: 'GAME-IRONVALE-PS5', quantity: 2 }],
      region: 'DE',
      currency: 'EUR',
      buyer_type: 'consumer',
      customer_groups: ['b2b-gold'],
      explain: true,
    });
    expect(quoted.status).toBe(201);
    expect(quoted.body.basket).toMatchObject({ customer_groups: ['b2b-gold'] });
    expect((quoted.body.items_priced as Json[])[0]).toMatchObject({
      unit_price: gold.body.unit_price,
      customer_group: 'b2b-gold',
    });
    const group = (quoted.body.explain as { steps: Step[] }).steps.find(
      (step) => step.rule === 'customer_group',
    );
    expect(group?.output.customer_group).toBe('b2b-gold');
    const receipt = await commit(quoted);
    expect(receipt.status).toBe(201);
    const release = await new CatalogReader(stack.deps.catalogRepository, clock).release({
      commercial: Number(receipt.body.pricelist_version),
      fx: fxVersionNumber(String(receipt.body.fx_version)) ?? 0,
      tax: Number(receipt.body.tax_rule_version),
    });
    expect(recomputeDifferences(receipt.body, release)).toEqual([]);
  });
});
