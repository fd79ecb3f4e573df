/**
 * `GET /catalog/prices` with `explain=true` (C28: fresh, never cached, `no-store`) and `customer_groups` (C29: in
 * the cache key when the catalog prices the group apart, bounded by the caller key's groups), the query schema,
 * and the catalog document's customer group targets.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { HttpResult } from '../../../functions/handlers/middleware/http';
import { getPriceOperation } from '../../../functions/handlers/operations/catalog';
import { priceQuerySchema } from '../../../functions/schemas/catalog-api';
import type { CatalogDocument } from '../../../functions/schemas/catalog-document';
import { quoteRequestSchema } from '../../../functions/schemas/checkout';
import { priceResponseSchema } from '../../../functions/schemas/responses';
import { importCatalog } from '../../../functions/usecases/catalog/import';
import { PriceCache, priceCacheRequestOf } from '../../../functions/usecases/catalog/price-cache';
import { CatalogReader } from '../../../functions/usecases/catalog/reader';
import { type CatalogRelease, customerGroupsPricedApart } from '../../../functions/usecases/catalog/release';
import {
  CatalogValidationError,
  validateCatalogDocument,
} from '../../../functions/usecases/catalog/validate';
import { minimalDocument } from '../../support/catalog-document';
import {
  call,
  InMemoryCatalogRepository,
  InMemoryPriceCacheStore,
  ManualClock,
  operationRequest,
} from './support';

/** The minimal document with a gold price list in USD, a silver override and a gold promotion. */
const groupsDocument = (): CatalogDocument => {
  const base = minimalDocument();
  return {
    ...base,
    pricelists: [
      ...base.pricelists,
      {
        pricelist_id: 'pl_gold_usd',
        base_currency: 'USD',
        customer_group: 'gold',
        items: [
          {
            sku_id: 'sku_game',
            base_price: '49.00',
            base_currency: 'USD',
            tax_class: 'standard',
            pricing_model: 'flat',
          },
        ],
      },
    ],
    overrides: [
      {
        override_id: 'o_silver',
        target: { customer_group: 'silver' },
        currency: 'USD',
        price_or_markup: { markup_percent: '-5' },
        priority: 1,
      },
    ],
    promotions: [
      {
        kind: 'percentage',
        promo_id: 'gold_merch',
        condition: { categories: ['merch'] },
        percent: '10',
        stackable: true,
        priority: 1,
        target: { customer_group: 'gold' },
      },
    ],
  };
};

let clock: ManualClock;
let repository: InMemoryCatalogRepository;
let store: InMemoryPriceCacheStore;
let release: CatalogRelease;

/** A caller key that may name every group these tests name (C29: the key bounds them). */
const prices = (query: Record<string, string>) =>
  operationRequest({ resource: '/catalog/prices', query, customerGroups: ['gold', 'silver', 'nobody'] });

beforeEach(async () => {
  clock = new ManualClock();
  repository = new InMemoryCatalogRepository();
  store = new InMemoryPriceCacheStore();
  await importCatalog({ repository, clock }, validateCatalogDocument(groupsDocument()));
  release = (await new CatalogReader(repository, clock).current()).release;
});

describe('GET /catalog/prices?explain=true (C28)', () => {
  it('computes fresh with the explanation, bypasses the cache both ways, and is not cacheable', async () => {
    const operation = getPriceOperation(
      new CatalogReader(repository, clock),
      clock,
      new PriceCache({ store, clock }),
    );
    const query = { sku: 'sku_game', currency: 'USD', region: 'US' };
    const plain = (await operation(prices(query))) as HttpResult;
    expect(store.entries.size).toBe(1);
    const calls = { ...store.calls };
    const explained = (await operation(prices({ ...query, explain: 'true' }))) as HttpResult;
    expect(explained.headers).toEqual({
      'Cache-Control': 'no-store',
      'X-Cache': 'bypass',
      Vary: 'x-api-key',
    });
    // Neither read from nor written to either tier.
    expect(store.calls).toEqual(calls);
    expect(store.entries.size).toBe(1);
    const { explain, ...figures } = explained.body as Record<string, unknown>;
    expect(figures).toEqual(plain.body);
    expect(priceResponseSchema.safeParse(explained.body).success).toBe(true);
    const steps = (explain as { steps: { step: string; rule: string; output: Record<string, unknown> }[] })
      .steps;
    expect(steps.map((step) => step.step)).toContain('rounding');
    expect(steps.find((step) => step.rule === 'fx_conversion')?.output).toMatchObject({
      pair: 'EUR→USD',
      fx_version: 'fx-1',
    });
    expect(steps.find((step) => step.rule === 'rounding')?.output).toMatchObject({
      unit_price: (plain.body as Record<string, unknown>).unit_price,
      display_price: (plain.body as Record<string, unknown>).display_price,
    });
    // The plain read is still served from the cache afterwards.
    expect((await operation(prices(query))).headers?.['X-Cache']).toBe('hit-local');
    expect(
      ((await operation(prices({ ...query, explain: 'false' }))) as HttpResult).headers?.['X-Cache'],
    ).toBe('hit-local');
  });

  it('explains without a cache too, and refuses an unpriceable request with every reason', async () => {
    const operation = getPriceOperation(new CatalogReader(repository, clock), clock);
    const explained = (await operation(
      prices({ sku: 'sku_game', currency: 'EUR', region: 'DE', explain: 'true' }),
    )) as HttpResult;
    expect(explained.headers?.['Cache-Control']).toBe('no-store');
    const refused = await call(
      operation,
      prices({ sku: 'sku_none', currency: 'JPY', region: 'DE', explain: 'true' }),
    );
    expect(refused).toMatchObject({
      statusCode: 422,
      code: 'price_not_available',
      details: {
        reasons: [
          { code: 'currency_not_offered', detail: 'JPY is not offered in DE' },
          { code: 'unknown_sku', detail: 'unknown SKU sku_none', sku_id: 'sku_none' },
        ],
      },
    });
  });
});

describe('customer_groups on GET /catalog/prices (C29)', () => {
  it('prices the group apart, under its own cache key, and says which group won', async () => {
    const operation = getPriceOperation(
      new CatalogReader(repository, clock),
      clock,
      new PriceCache({ store, clock }),
    );
    const query = { sku: 'sku_game', currency: 'USD', region: 'US' };
    const everyone = (await operation(prices(query))) as HttpResult;
    const gold = (await operation(prices({ ...query, customer_groups: 'silver,gold' }))) as HttpResult;
    expect(gold.headers?.['X-Cache']).toBe('miss');
    expect(gold.body).toMatchObject({
      unit_price: '49.00',
      customer_groups: ['gold', 'silver'],
      customer_group: 'gold',
    });
    expect((everyone.body as Record<string, unknown>).unit_price).not.toBe('49.00');
    expect(priceResponseSchema.safeParse(gold.body).success).toBe(true);
    expect([...store.entries.keys()].sort()).toEqual([
      'pl_eur:US:USD:sku_game:1',
      'pl_eur:US:USD:sku_game:1|groups:gold,silver',
    ]);
    // The same groups in another order, or with a group the catalog does not target, read the same entry.
    expect(
      (await operation(prices({ ...query, customer_groups: 'gold,silver,nobody' }))).headers?.['X-Cache'],
    ).toBe('hit-local');
    // Only groups the catalog does not target: the plain entry, the plain price.
    const unknown = (await operation(prices({ ...query, customer_groups: 'nobody' }))) as HttpResult;
    expect(unknown.headers?.['X-Cache']).toBe('hit-local');
    expect(unknown.body).toEqual(everyone.body);
  });

  it('refuses (403) a group the caller key does not hold, before reading or writing anything', async () => {
    const operation = getPriceOperation(
      new CatalogReader(repository, clock),
      clock,
      new PriceCache({ store, clock }),
    );
    const query = { sku: 'sku_game', currency: 'USD', region: 'US' };
    const asKey = (customerGroups: string[], groups?: string) =>
      operationRequest({
        resource: '/catalog/prices',
        query: { ...query, ...(groups ? { customer_groups: groups } : {}) },
        customerGroups,
      });
    const extra = await call(operation, asKey(['gold'], 'gold,silver'));
    expect(extra).toMatchObject({
      statusCode: 403,
      code: 'forbidden',
      description: 'this key may not name the customer groups silver; it may name gold',
    });
    const none = await call(operation, asKey([], 'gold'));
    expect(none).toMatchObject({ statusCode: 403, code: 'forbidden' });
    expect(store.entries.size).toBe(0);
    // Naming no group is always allowed; a subset of the key's groups is.
    expect(await call(operation, asKey([]))).toMatchObject({ statusCode: 200 });
    expect(await call(operation, asKey(['gold', 'silver'], 'gold'))).toMatchObject({
      statusCode: 200,
      body: { customer_group: 'gold' },
    });
  });

  it('keys the cache by the groups the release prices apart, sorted, once each', () => {
    const key = (groups?: string[]) =>
      priceCacheRequestOf(release, {
        sku: 'sku_game',
        currency: 'USD',
        region: 'US',
        ...(groups ? { customer_groups: groups } : {}),
      }).key;
    expect([...customerGroupsPricedApart(release)].sort()).toEqual(['gold', 'silver']);
    expect(key()).toBe('pl_eur:US:USD:sku_game:1');
    expect(key(['x', 'y'])).toBe(key());
    expect(key(['silver', 'gold', 'gold', 'x'])).toBe('pl_eur:US:USD:sku_game:1|groups:gold,silver');
    expect(key(['gold'])).toBe('pl_eur:US:USD:sku_game:1|groups:gold');
  });
});

describe('request schemas', () => {
  it('takes customer_groups as a comma-separated list of at most 10, and explain as true or false', () => {
    const base = { sku: 'sku_game', currency: 'USD', region: 'US' };
    expect(priceQuerySchema.parse({ ...base, customer_groups: 'b2b-gold,vip', explain: 'true' })).toEqual({
      ...base,
      customer_groups: ['b2b-gold', 'vip'],
      explain: true,
    });
    expect(priceQuerySchema.parse({ ...base, explain: 'false' }).explain).toBe(false);
    const eleven = Array.from({ length: 11 }, (_, index) => `g${index}`).join(',');
    expect(priceQuerySchema.safeParse({ ...base, customer_groups: eleven }).success).toBe(false);
    expect(
      priceQuerySchema.safeParse({ ...base, customer_groups: eleven.split(',').slice(0, 10).join(',') })
        .success,
    ).toBe(true);
    for (const bad of ['', 'a,,b', 'a b', 'a,']) {
      expect(priceQuerySchema.safeParse({ ...base, customer_groups: bad }).success, bad).toBe(false);
    }
    expect(priceQuerySchema.safeParse({ ...base, explain: 'yes' }).success).toBe(false);
  });

  it('takes customer_groups (≤ 10) and explain in a quote body', () => {
    const body = {
      items: [{ sku_id: 'sku_game', quantity: 1 }],
      region: 'US',
      currency: 'USD',
      buyer_type: 'consumer',
    };
    expect(
      quoteRequestSchema.safeParse({ ...body, customer_groups: ['b2b-gold'], explain: true }).success,
    ).toBe(true);
    expect(
      quoteRequestSchema.safeParse({
        ...body,
        customer_groups: Array.from({ length: 11 }, (_, i) => `g${i}`),
      }).success,
    ).toBe(false);
    expect(quoteRequestSchema.safeParse({ ...body, explain: 'true' }).success).toBe(false);
  });
});

describe('catalog documents with customer groups (C29)', () => {
  const problemsOf = (document: unknown) => {
    try {
      validateCatalogDocument(document);
      return [];
    } catch (error) {
      if (error instanceof CatalogValidationError) return error.problems;
      throw error;
    }
  };

  it('accepts a list per currency per group, group overrides and group promotions', () => {
    expect(problemsOf(groupsDocument())).toEqual([]);
  });

  it('refuses two lists of one currency for the same group, and a group on the primary list', () => {
    const document = groupsDocument();
    const [primary, gold] = document.pricelists;
    if (!primary || !gold) throw new Error('fixture');
    expect(
      problemsOf({ ...document, pricelists: [primary, gold, { ...gold, pricelist_id: 'pl_gold_2' }] }),
    ).toEqual([
      { path: '$.pricelists[2]', message: 'duplicate price list currency USD for gold (also at [1])' },
    ]);
    expect(problemsOf({ ...document, pricelists: [{ ...primary, customer_group: 'gold' }, gold] })).toEqual([
      {
        path: '$.pricelists[0].customer_group',
        message: "the primary price list prices everyone: a customer group's list comes after it",
      },
    ]);
  });

  it('does not count a group list as a price list for everyone in the white-list check', () => {
    const document = groupsDocument();
    const problems = problemsOf({
      ...document,
      settings: { pricing_strategy: 'convert_at_display' },
      fx_rates: { ...document.fx_rates, rates: [] },
    });
    expect(problems).toContainEqual({
      path: expect.stringMatching(/currency_whitelist/),
      message: 'no price list and no exchange rate from EUR to USD',
    });
  });

  it('refuses a malformed group target', () => {
    const document = groupsDocument();
    expect(
      problemsOf({
        ...document,
        overrides: [{ ...document.overrides?.[0], target: { customer_group: 'not ok' } }],
      }).length,
    ).toBeGreaterThan(0);
  });
});
