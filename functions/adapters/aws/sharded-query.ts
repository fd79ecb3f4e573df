/**
 * One time-ordered listing over an index whose partition key is written in shards (`pending#0` … `pending#63`):
 * a k-way merge of one paginated query per shard, in the order of a sort value (`ts_id`) and a tie-breaker (the
 * endpoint id), fetching from each shard only as far as the merge needs. The position is the last item returned
 * (its sort value and tie-breaker): the next page queries each shard from that sort value on and skips what is
 * not after it, so no shard's own position has to be carried in a cursor.
 */

export type ShardItem = Record<string, unknown>;

export interface ShardPage {
  readonly items: readonly ShardItem[];
  /** Where the shard's query continues (its `LastEvaluatedKey`), or undefined when it has no more. */
  readonly next?: Record<string, unknown>;
}

export interface ShardedListing {
  /** The index partition key values to read: every shard's (and any pre-shard value). */
  readonly keys: readonly string[];
  /** One query of a shard: its items with sort value in [lower, upper], at most `limit`, from `start`. */
  readonly query: (
    key: string,
    lower: string,
    limit: number,
    start?: Record<string, unknown>,
  ) => Promise<ShardPage>;
  /** The item's sort value (the index's sort key) and its tie-breaker among equal sort values. */
  readonly sortOf: (item: ShardItem) => string;
  readonly tieOf: (item: ShardItem) => string;
}

/** The last item a page returned: the next page starts after it. */
export interface ListingPosition {
  readonly sort: string;
  readonly tie: string;
}

const compare = (left: ListingPosition, right: ListingPosition): number =>
  left.sort < right.sort
    ? -1
    : left.sort > right.sort
      ? 1
      : left.tie < right.tie
        ? -1
        : left.tie > right.tie
          ? 1
          : 0;

/** One shard's query as a stream in (sort, tie) order. */
class ShardStream {
  private buffer: { item: ShardItem; position: ListingPosition }[] = [];
  private start: Record<string, unknown> | undefined;
  private exhausted = false;
  /** The highest sort value fetched: items with it may continue on the next page. */
  private fetchedUpTo: string | undefined;

  constructor(
    private readonly listing: ShardedListing,
    private readonly key: string,
    private readonly lower: string,
    private readonly after: ListingPosition | undefined,
    private readonly pageSize: number,
  ) {}

  /** The next item in order, fetching until one is certain (none of its sort value can still follow), or none. */
  async head(): Promise<{ item: ShardItem; position: ListingPosition } | undefined> {
    for (;;) {
      const first = this.buffer[0];
      if (
        first &&
        (this.exhausted || (this.fetchedUpTo !== undefined && first.position.sort < this.fetchedUpTo))
      )
        return first;
      if (this.exhausted) return undefined;
      await this.fetch();
    }
  }

  take(): void {
    this.buffer.shift();
  }

  /** Whether the stream may still hold items: some buffered, or its query not read to the end. */
  get more(): boolean {
    return !this.exhausted || this.buffer.length > 0;
  }

  private async fetch(): Promise<void> {
    const page = await this.listing.query(this.key, this.lower, this.pageSize, this.start);
    const fresh = page.items
      .map((item) => ({
        item,
        position: { sort: this.listing.sortOf(item), tie: this.listing.tieOf(item) },
      }))
      .filter((entry) => this.after === undefined || compare(entry.position, this.after) > 0);
    this.buffer = [...this.buffer, ...fresh].sort((left, right) => compare(left.position, right.position));
    const last = page.items.at(-1);
    if (last) this.fetchedUpTo = this.listing.sortOf(last);
    this.start = page.next;
    this.exhausted = page.next === undefined;
  }
}

/**
 * Up to `limit` items after `after` (or from `lower`), in order, and the position to continue from when more may
 * follow.
 */
export const mergedPage = async (
  listing: ShardedListing,
  options: { readonly lower: string; readonly limit: number; readonly after?: ListingPosition },
): Promise<{ items: ShardItem[]; next?: ListingPosition }> => {
  const lower = options.after && options.after.sort > options.lower ? options.after.sort : options.lower;
  // Each shard holds about limit / shards of a page; a few more per fetch keep the round trips down.
  const pageSize = Math.min(options.limit, Math.max(5, Math.ceil((2 * options.limit) / listing.keys.length)));
  const streams = listing.keys.map((key) => new ShardStream(listing, key, lower, options.after, pageSize));
  const items: ShardItem[] = [];
  let last: ListingPosition | undefined;
  while (items.length < options.limit) {
    const heads = await Promise.all(streams.map((stream) => stream.head()));
    let best = -1;
    heads.forEach((head, index) => {
      const current = heads[best];
      if (head && (current === undefined || compare(head.position, current.position) < 0)) best = index;
    });
    const chosen = heads[best];
    if (!chosen) return { items };
    streams[best]?.take();
    items.push(chosen.item);
    last = chosen.position;
  }
  // A full page: a cursor when some shard may still hold items.
  return { items, ...(last && streams.some((stream) => stream.more) ? { next: last } : {}) };
};
