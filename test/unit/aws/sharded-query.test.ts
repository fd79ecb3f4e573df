import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mergedPage, type ShardItem, type ShardPage } from '../../../functions/adapters/aws/sharded-query';

/**
 * Shards as DynamoDB serves them: each sorted by `sort` only (ties in any order), pages of at most the asked
 * limit, sometimes an empty page that still has a next key.
 */
const listingOf = (shards: readonly (readonly ShardItem[])[], emptyPages = false) => {
  let queries = 0;
  const keys = shards.map((_, index) => `k${index}`);
  return {
    queries: () => queries,
    listing: {
      keys,
      query: async (
        key: string,
        lower: string,
        limit: number,
        start?: Record<string, unknown>,
      ): Promise<ShardPage> => {
        queries += 1;
        const shard = (shards[keys.indexOf(key)] ?? []).filter((item) => String(item.sort) >= lower);
        const from = Number(start?.at ?? 0);
        if (emptyPages && start?.empty === undefined && from < shard.length)
          return { items: [], next: { at: from, empty: true } };
        const items = shard.slice(from, from + limit);
        return { items, ...(from + limit < shard.length ? { next: { at: from + limit } } : {}) };
      },
      sortOf: (item: ShardItem) => String(item.sort),
      tieOf: (item: ShardItem) => String(item.tie),
    },
  };
};

const page = async (listing: ReturnType<typeof listingOf>['listing'], limit: number): Promise<string[]> => {
  const seen: string[] = [];
  let after: { sort: string; tie: string } | undefined;
  for (let round = 0; round < 1_000; round += 1) {
    const result = await mergedPage(listing, { lower: '', limit, ...(after ? { after } : {}) });
    seen.push(...result.items.map((item) => `${item.sort}/${item.tie}`));
    if (!result.next) return seen;
    after = result.next;
  }
  throw new Error('no end');
};

describe('mergedPage', () => {
  it('lists every item once, in (sort, tie) order, page by page, whatever the shards, ties and page sizes (property)', async () => {
    const item = fc.record({ sort: fc.integer({ min: 0, max: 30 }), tie: fc.integer({ min: 0, max: 99 }) });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(item, { maxLength: 25 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 9 }),
        fc.boolean(),
        async (raw, limit, emptyPages) => {
          // Unique (sort, tie) across shards, as (ts_id, endpoint) is; each shard sorted by sort only, ties reversed.
          const taken = new Set<string>();
          const shards = raw.map((shard) =>
            shard
              .map((entry) => ({
                sort: String(entry.sort).padStart(3, '0'),
                tie: String(entry.tie).padStart(3, '0'),
              }))
              .filter((entry) => {
                const name = `${entry.sort}/${entry.tie}`;
                if (taken.has(name)) return false;
                taken.add(name);
                return true;
              })
              .sort((left, right) =>
                left.sort === right.sort ? (left.tie < right.tie ? 1 : -1) : left.sort < right.sort ? -1 : 1,
              ),
          );
          const { listing } = listingOf(shards, emptyPages);
          expect(await page(listing, limit)).toEqual([...taken].sort());
        },
      ),
      { numRuns: 200 },
    );
  });

  it('reads each shard only as far as the page needs, and hands back no cursor once every shard is read', async () => {
    const shards = Array.from({ length: 8 }, (_, shard) =>
      Array.from({ length: 50 }, (_, index) => ({
        sort: String(index * 8 + shard).padStart(4, '0'),
        tie: 'e',
      })),
    );
    const { listing, queries } = listingOf(shards);
    const first = await mergedPage(listing, { lower: '', limit: 10 });
    expect(first.items.map((item) => item.sort)).toEqual(
      Array.from({ length: 10 }, (_, index) => String(index).padStart(4, '0')),
    );
    expect(first.next).toEqual({ sort: '0009', tie: 'e' });
    expect(queries()).toBeLessThanOrEqual(16);
    const small = listingOf([[{ sort: '1', tie: 'a' }], [{ sort: '2', tie: 'a' }]]);
    expect(await mergedPage(small.listing, { lower: '', limit: 2 })).toEqual({
      items: [
        { sort: '1', tie: 'a' },
        { sort: '2', tie: 'a' },
      ],
    });
  });
});
