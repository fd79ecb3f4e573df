/**
 * Price and rate history (C30): the history index written with each publication answers exactly what comparing
 * the stored part versions answers (for any sequence of publications, any page size, and a history that began
 * before the index existed); pages are bounded by `limit`; records of a publication that lost its race are
 * skipped.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { CatalogRepository } from '../../../functions/ports/catalog';
import type { CatalogDocument } from '../../../functions/schemas/catalog-document';
import {
  catalogHistory,
  type HistoryItem,
  type HistoryQuery,
} from '../../../functions/usecases/catalog/history';
import { importCatalog } from '../../../functions/usecases/catalog/import';
import { minimalDocument } from '../../support/catalog-document';
import { InMemoryCatalogRepository, ManualClock } from '../catalog-api/support';

const noChangeRequests = { get: async () => undefined };

/** The repository as if the index had never existed: every version is read from the parts. */
const walkOnly = (repository: InMemoryCatalogRepository): CatalogRepository => ({
  current: () => repository.current(),
  publications: (options) => repository.publications(options),
  part: (kind, version) => repository.part(kind, version),
  latestPartVersion: (kind) => repository.latestPartVersion(kind),
  publish: (request) => repository.publish(request),
  publicationOfChange: (crId) => repository.publicationOfChange(crId),
  publication: (revision) => repository.publication(revision),
  history: async () => ({ records: [], more: false }),
  historyStart: async () => undefined,
});

/** Every page of a history, following cursors. */
const allPages = async (repository: CatalogRepository, query: Omit<HistoryQuery, 'cursor'>) => {
  const items: HistoryItem[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 500; pages += 1) {
    const page = await catalogHistory(
      { repository, changeRequests: noChangeRequests },
      { ...query, ...(cursor ? { cursor } : {}) },
    );
    expect(page.items.length).toBeLessThanOrEqual(query.limit);
    items.push(...page.items);
    if (!page.cursor) return items;
    cursor = page.cursor;
  }
  throw new Error('the history never ended');
};

type Step =
  | { readonly kind: 'price'; readonly sku: 'sku_game' | 'sku_shirt'; readonly price: string }
  | { readonly kind: 'usd'; readonly price: string | null }
  | { readonly kind: 'rate'; readonly pair: 'EUR→USD' | 'EUR→GBP'; readonly rate: string | null }
  | { readonly kind: 'title'; readonly title: string }
  | { readonly kind: 'drop-index' };

const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('price' as const),
    sku: fc.constantFrom('sku_game' as const, 'sku_shirt' as const),
    price: fc.constantFrom('19.00', '49.99', '59.99', '61.00'),
  }),
  fc.record({ kind: fc.constant('usd' as const), price: fc.constantFrom('64.99', '69.99', null) }),
  fc.record({
    kind: fc.constant('rate' as const),
    pair: fc.constantFrom('EUR→USD' as const, 'EUR→GBP' as const),
    rate: fc.constantFrom('1.0842', '1.0900', '0.85', null),
  }),
  fc.record({ kind: fc.constant('title' as const), title: fc.constantFrom('A', 'B') }),
  fc.constant({ kind: 'drop-index' as const }),
);

/** Applies one step to a document (a new import each: every step may or may not change a part). */
const stepped = (document: CatalogDocument, step: Step): CatalogDocument => {
  const next = structuredClone(document);
  const primary = next.pricelists[0];
  if (!primary) throw new Error('no primary list');
  if (step.kind === 'price') {
    const entry = primary.items.find((candidate) => candidate.sku_id === step.sku);
    if (entry) entry.base_price = step.price;
  } else if (step.kind === 'usd') {
    next.pricelists = [primary];
    if (step.price !== null) {
      next.pricelists.push({
        pricelist_id: 'pl_usd',
        base_currency: 'USD',
        items: [
          {
            sku_id: 'sku_game',
            base_price: step.price,
            base_currency: 'USD',
            tax_class: 'standard',
            pricing_model: 'flat',
          },
        ],
      });
    }
  } else if (step.kind === 'rate') {
    const others = next.fx_rates.rates.filter((rate) => rate.pair !== step.pair);
    next.fx_rates.rates =
      step.rate === null
        ? others
        : [...others, { pair: step.pair, rate: step.rate, source: 'ecb', method: 'provider', precision: 4 }];
    // The display rules name USD: EUR→USD stays (removing it puts it back at its first rate).
    if (!next.fx_rates.rates.some((rate) => rate.pair === 'EUR→USD')) {
      next.fx_rates.rates.push({
        pair: 'EUR→USD',
        rate: '1.0842',
        source: 'ecb',
        method: 'provider',
        precision: 4,
      });
    }
  } else if (step.kind === 'title') {
    next.products = next.products.map((product) => ({ ...product, title: step.title }));
  }
  return next;
};

const QUERIES: readonly Omit<HistoryQuery, 'limit'>[] = [
  { sku: 'sku_game' },
  { sku: 'sku_shirt' },
  { sku: 'sku_game', pricelist: 'pl_usd' },
  { sku: 'sku_game', currency: 'EUR' },
  { sku: 'sku_none' },
  { pair: 'EUR-USD' },
  { pair: 'EUR→GBP' },
];

describe('catalog history: the index answers what the stored versions answer', () => {
  it('for any publications, page size and start of the index (property)', async () => {
    const seen = { histories: 0, mixed: 0 };
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: 1, maxLength: 12 }),
        fc.integer({ min: 1, max: 5 }),
        async (steps, limit) => {
          const clock = new ManualClock();
          const repository = new InMemoryCatalogRepository();
          let document = minimalDocument();
          await importCatalog({ repository, clock }, document);
          for (const step of steps) {
            clock.advance(60_000);
            if (step.kind === 'drop-index') {
              repository.dropHistoryIndex();
              continue;
            }
            document = stepped(document, step);
            await importCatalog({ repository, clock }, document);
          }
          for (const query of QUERIES) {
            const indexed = await allPages(repository, { ...query, limit });
            const walked = await allPages(walkOnly(repository), { ...query, limit: 100 });
            expect(indexed).toEqual(walked);
            if (indexed.length > 1) seen.histories += 1;
            if (
              indexed.length > 1 &&
              repository.historyStarts.size > 0 &&
              (repository.historyStarts.get('commercial') ?? 1) > 1
            )
              seen.mixed += 1;
          }
        },
      ),
      { numRuns: 60 },
    );
    // The runs compared real histories, some of them begun before the index.
    expect(seen.histories).toBeGreaterThan(10);
    expect(seen.mixed).toBeGreaterThan(0);
  });

  it('lists each version that changed the item, newest first, with its value and publication', async () => {
    const clock = new ManualClock();
    const repository = new InMemoryCatalogRepository();
    await importCatalog({ repository, clock }, minimalDocument());
    clock.advance(60_000);
    await importCatalog(
      { repository, clock },
      stepped(minimalDocument(), { kind: 'price', sku: 'sku_game', price: '49.99' }),
    );
    clock.advance(60_000);
    await importCatalog(
      { repository, clock },
      stepped(stepped(minimalDocument(), { kind: 'price', sku: 'sku_game', price: '49.99' }), {
        kind: 'price',
        sku: 'sku_shirt',
        price: '21.00',
      }),
    );
    const page = await catalogHistory(
      { repository, changeRequests: noChangeRequests },
      { sku: 'sku_game', limit: 10 },
    );
    expect(page.cursor).toBeUndefined();
    expect(page.items).toEqual([
      {
        sku_id: 'sku_game',
        pricelist_id: 'pl_eur',
        currency: 'EUR',
        change: 'changed',
        value: expect.objectContaining({ sku_id: 'sku_game', base_price: '49.99' }),
        pricelist_version: 2,
        revision: 2,
        effective_from: '2026-11-22T12:01:00.000Z',
        published_at: '2026-11-22T12:01:00.000Z',
      },
      expect.objectContaining({
        change: 'added',
        value: expect.objectContaining({ base_price: '59.99' }),
        pricelist_version: 1,
        revision: 1,
      }),
    ]);
  });
});

describe('catalog history: bounded work', () => {
  /** 30 publications; sku_game changes in the first and the last only. */
  const publishMany = async (repository: InMemoryCatalogRepository) => {
    const clock = new ManualClock();
    await importCatalog({ repository, clock }, minimalDocument());
    for (let index = 1; index <= 30; index += 1) {
      clock.advance(60_000);
      const price = index === 30 ? '49.99' : '59.99';
      const document = stepped(minimalDocument(), { kind: 'price', sku: 'sku_game', price });
      await importCatalog({ repository, clock }, stepped(document, { kind: 'title', title: `t${index}` }));
    }
  };

  it('with the index, reads no part at all', async () => {
    const repository = new InMemoryCatalogRepository();
    await publishMany(repository);
    repository.partReads = 0;
    const items = await allPages(repository, { sku: 'sku_game', limit: 1 });
    expect(items.map((item) => item.pricelist_version)).toEqual([31, 1]);
    expect(repository.partReads).toBe(0);
  });

  it('without it, examines at most `limit` versions a page (limit + 1 parts read), pages carrying a cursor', async () => {
    const repository = new InMemoryCatalogRepository();
    await publishMany(repository);
    repository.dropHistoryIndex();
    repository.partReads = 0;
    const deps = { repository, changeRequests: noChangeRequests };
    const first = await catalogHistory(deps, { sku: 'sku_game', limit: 5 });
    expect(first.items.map((item) => item.pricelist_version)).toEqual([31]);
    expect(first.cursor).toBeDefined();
    expect(repository.partReads).toBeLessThanOrEqual(6);
    const items = await allPages(repository, { sku: 'sku_game', limit: 5 });
    expect(items.map((item) => item.pricelist_version)).toEqual([31, 1]);
  });

  it('skips records of a publication that lost its race (the version it names is not the one published)', async () => {
    const repository = new InMemoryCatalogRepository();
    await publishMany(repository);
    repository.historyRecords.get('sku:sku_game')?.push({
      subject: 'sku:sku_game',
      scope: 'pl_eur',
      currency: 'EUR',
      change: 'changed',
      value: { sku_id: 'sku_game', base_price: '1.00' },
      kind: 'commercial',
      version: 40,
      revision: 31,
    });
    const items = await allPages(repository, { sku: 'sku_game', limit: 10 });
    expect(items.map((item) => item.pricelist_version)).toEqual([31, 1]);
  });

  it('refuses a cursor it did not make', async () => {
    const repository = new InMemoryCatalogRepository();
    await publishMany(repository);
    for (const cursor of [
      'x',
      Buffer.from('{"v":0,"s":""}').toString('base64url'),
      Buffer.from('[]').toString('base64url'),
    ]) {
      await expect(
        catalogHistory(
          { repository, changeRequests: noChangeRequests },
          { sku: 'sku_game', limit: 5, cursor },
        ),
      ).rejects.toMatchObject({ name: 'InvalidCursorError' });
    }
  });
});
