/**
 * The storefront price cache (C18, spec rule 16). Only `GET /catalog/prices` reads through it; quotes and
 * commits always price from the catalog.
 *
 * Key: `pricelist:region:currency:sku:version` (e.g. `pl_eur:US:USD:sku_game:1`), `version` being the
 * `pricelist_version`. Each component is URI-encoded, so a `:` inside an identifier cannot make two keys
 * collide; the identifiers of the demo catalog contain none, so their keys read exactly as above.
 *
 * A request that names a `tenant`, a `channel`, `buyer_type=business` or customer groups the release prices apart
 * gets a suffix (`|tenant:<t>`, `|channel:<c>`, `|buyer:business`, `|groups:<g1>,<g2>`), because each of them
 * changes the price: the tenant picks the basket policy and tenant overrides, the channel picks the FX markup
 * rule and channel promotions, a business buyer may get reverse-charge (net) prices, a customer group its own
 * price lists, overrides and promotions (C29; sorted, once each, only groups the release targets: any other
 * group changes nothing, so it shares the plain entry). An explained read (`explain=true`, C28) never reads or
 * writes the cache. The plain storefront read (no tenant, no channel, consumer, no group) uses the key exactly
 * as specified. `fx_version` and `tax_rule_version` are not in the key: they are
 * stored in the entry, and an entry whose versions differ from the release in force is a miss (and is
 * overwritten), so a new rate or tax publication never serves an old price either.
 *
 * Two tiers: a bounded in-process LRU per function instance, and the shared projection table (a
 * `PriceCacheStore`). Each entry carries `expires_at` (epoch seconds: the table's TTL attribute; the read path
 * checks it too, since DynamoDB deletes expired items lazily).
 *
 * Tags `sku`, `category` and `pricelist_version` each have an epoch item in the same table (`tag#sku#sku_game`).
 * An entry records the epochs of its tags when it was computed; an entry whose tag epoch has grown since is
 * stale. Instances re-read the epochs they need at most once a second, so one invalidation reaches every
 * instance within a second. Epoch items carry no `expires_at`: an epoch must never go back to zero.
 *
 * A storefront read may start ahead (`prefetch`): from the release the instance's previous read saw, it asks
 * for the shared entry and the epochs due for a re-read in the same turn as the catalog pointer read, so that
 * the store sends them in one round trip. The entry is used only if the pointer gives that same release.
 */
import { isCrypto } from '../../domain/money/currency';
import { explainBasket, priceBasket } from '../../domain/pricing/basket';
import { PricingError } from '../../domain/pricing/errors';
import { findProduct } from '../../domain/pricing/resolve';
import type { BasketPricing, QuantityRules } from '../../domain/pricing/types';
import type { Clock } from '../../ports/clock';
import type { PriceQuery } from '../../schemas/catalog-api';
import { LruMap } from '../../shared/lru';
import { CatalogNotFoundError } from './reader';
import {
  type CatalogRelease,
  type CatalogVersions,
  effectiveCustomerGroups,
  toPricingCatalog,
  versionsOf,
} from './release';

/** Storefront cache lifetimes (C22): 300 s for stable currencies, 30 s for volatile ones (crypto). */
export const STABLE_CACHE_SECONDS = 300;
export const VOLATILE_CACHE_SECONDS = 30;
/** Entries kept in the in-process tier of one function instance. */
export const LOCAL_CACHE_ENTRIES = 5_000;
/** How long an instance trusts the tag epochs it read (C18: "at most once a second"). */
export const TAG_EPOCH_TTL_MS = 1_000;

export const CACHE_TAGS = ['sku', 'category', 'pricelist_version'] as const;
export type CacheTag = (typeof CACHE_TAGS)[number];
/** The tag values of one entry (`category` is absent for a product without one). */
export type CacheTags = Readonly<Partial<Record<CacheTag, string>>>;
/** The epoch of each of an entry's tags when it was computed (0: never invalidated). */
export type TagEpochs = Readonly<Partial<Record<CacheTag, number>>>;

/** The response body of `GET /catalog/prices`, as JSON. */
export type PriceBody = Readonly<Record<string, unknown>>;

export interface CachedPrice {
  readonly key: string;
  readonly body: PriceBody;
  readonly pricelist_version: number;
  readonly fx_version: string;
  readonly tax_rule_version: number;
  readonly tags: CacheTags;
  readonly epochs: TagEpochs;
  readonly ttl_seconds: number;
  readonly cached_at: string;
  /** Epoch seconds (the table's TTL attribute); the entry is served only while now < expires_at. */
  readonly expires_at: number;
}

/** The shared tier: the price projection table with its tag epoch items. */
export interface PriceCacheStore {
  get(key: string): Promise<CachedPrice | undefined>;
  /** Writes entries (one or many; a warm-up writes in batches). */
  put(entries: readonly CachedPrice[]): Promise<void>;
  /** Current epochs of tag items by tag key (`tag#sku#sku_game`); a tag never invalidated is 0. */
  epochs(tagKeys: readonly string[]): Promise<ReadonlyMap<string, number>>;
  /** Atomically increments a tag's epoch and returns the new value. */
  bump(tagKey: string): Promise<number>;
}

export type CacheSource = 'hit-local' | 'hit-shared' | 'miss';

export const tagKey = (tag: CacheTag, value: string): string => `tag#${tag}#${value}`;

const component = (value: string | number): string => encodeURIComponent(String(value));

export interface PriceKeyInput {
  readonly pricelist: string;
  readonly region: string;
  readonly currency: string;
  readonly sku: string;
  readonly pricelist_version: number;
  readonly tenant?: string | undefined;
  readonly channel?: string | undefined;
  readonly buyer_type?: 'consumer' | 'business' | undefined;
  /** The customer groups the release prices apart, sorted, once each (see `effectiveCustomerGroups`). */
  readonly customer_groups?: readonly string[] | undefined;
}

/** `pricelist:region:currency:sku:version`, plus a variant suffix only where the price depends on it. */
export const priceCacheKey = (input: PriceKeyInput): string => {
  const base = [input.pricelist, input.region, input.currency, input.sku, input.pricelist_version]
    .map(component)
    .join(':');
  const variant = [
    input.tenant ? `|tenant:${component(input.tenant)}` : '',
    input.channel ? `|channel:${component(input.channel)}` : '',
    input.buyer_type === 'business' ? '|buyer:business' : '',
    input.customer_groups?.length ? `|groups:${input.customer_groups.map(component).join(',')}` : '',
  ].join('');
  return `${base}${variant}`;
};

/** Cache lifetime of a currency: 30 s for crypto (volatile), 300 s otherwise; overridable per currency (C22). */
export const cacheTtlSeconds = (
  currency: string,
  cryptoUnits: Readonly<Record<string, number>> | undefined,
  overrides: Readonly<Record<string, number>> = {},
): number => {
  if (Object.hasOwn(overrides, currency)) return overrides[currency] as number;
  return isCrypto(currency, cryptoUnits) ? VOLATILE_CACHE_SECONDS : STABLE_CACHE_SECONDS;
};

export type Freshness = 'fresh' | 'expired' | 'version_mismatch' | 'invalidated';

/**
 * Whether an entry may be served now: not expired, computed from the release in force (the key pins the
 * pricelist version; fx and tax versions are compared), and none of its tags invalidated since.
 */
export const freshnessOf = (
  entry: CachedPrice,
  versions: CatalogVersions,
  epochs: TagEpochs,
  nowMs: number,
): Freshness => {
  if (nowMs >= entry.expires_at * 1000) return 'expired';
  if (
    entry.pricelist_version !== versions.pricelist_version ||
    entry.fx_version !== versions.fx_version ||
    entry.tax_rule_version !== versions.tax_rule_version
  )
    return 'version_mismatch';
  for (const tag of CACHE_TAGS) {
    if (entry.tags[tag] === undefined) continue;
    if ((epochs[tag] ?? 0) > (entry.epochs[tag] ?? 0)) return 'invalidated';
  }
  return 'fresh';
};

/** What a read needs to find, judge and (on a miss) store an entry. */
export interface PriceCacheRequest {
  readonly key: string;
  readonly versions: CatalogVersions;
  readonly tags: CacheTags;
}

/** A freshly computed price: its body, its lifetime, and an earlier end if the release changes before. */
export interface ComputedPrice {
  readonly body: PriceBody;
  readonly ttlSeconds: number;
  /**
   * A time (ms) at which the price may change within the same release (a fee schedule taking effect, an FX
   * override the price used expiring).
   */
  readonly validUntilMs?: number;
}

export interface CacheRead {
  readonly body: PriceBody;
  readonly source: CacheSource;
  readonly ttlSeconds: number;
}

export type CacheFailure = 'get' | 'put' | 'epochs';

export interface PriceCacheOptions {
  readonly store: PriceCacheStore;
  readonly clock: Clock;
  /** Bound of the in-process tier (default 5 000 entries). */
  readonly localEntries?: number;
  /** How long fetched tag epochs are trusted (default 1 000 ms). */
  readonly epochTtlMs?: number;
  /**
   * Told about a failure of the shared tier. The cache never fails a read: an unreadable shared tier is a
   * miss, an unwritable one leaves the price uncached, unreadable epochs serve nothing from cache.
   */
  readonly onError?: (error: unknown, failure: CacheFailure) => void;
  /** Cache lifetime per currency where it differs from the 300 s / 30 s defaults (C22: configurable). */
  readonly ttlSecondsByCurrency?: Readonly<Record<string, number>>;
}

const expiresAtOf = (nowMs: number, ttlSeconds: number, validUntilMs?: number): number => {
  const byTtl = Math.floor(nowMs / 1000) + ttlSeconds;
  return validUntilMs === undefined ? byTtl : Math.min(byTtl, Math.floor(validUntilMs / 1000));
};

/** The two-tier cache of one function instance. */
export class PriceCache {
  private readonly local: LruMap<CachedPrice>;
  private readonly epochCache: LruMap<{ readonly epoch: number; readonly readAtMs: number }>;
  private readonly epochTtlMs: number;
  /** Epoch reads under way, by tag key. */
  private readonly epochReads = new Map<string, Promise<number>>();

  constructor(private readonly options: PriceCacheOptions) {
    const capacity = options.localEntries ?? LOCAL_CACHE_ENTRIES;
    this.local = new LruMap(capacity);
    // Three tags per entry at most; distinct SKUs dominate.
    this.epochCache = new LruMap(capacity * 2);
    this.epochTtlMs = options.epochTtlMs ?? TAG_EPOCH_TTL_MS;
  }

  /** Per-currency lifetimes configured for this cache (see `cacheTtlSeconds`). */
  get ttlOverrides(): Readonly<Record<string, number>> {
    return this.options.ttlSecondsByCurrency ?? {};
  }

  private nowMs(): number {
    return this.options.clock.now().getTime();
  }

  private report(error: unknown, failure: CacheFailure): void {
    this.options.onError?.(error, failure);
  }

  /**
   * The current epochs of these tags: from the instance's epoch cache when read less than a second ago, else
   * read from the store (a read of the same tag already under way is shared, not repeated).
   */
  async epochsOf(tags: CacheTags): Promise<TagEpochs> {
    const now = this.nowMs();
    const result: Partial<Record<CacheTag, number>> = {};
    const reading: Promise<void>[] = [];
    const missing: { tag: CacheTag; key: string }[] = [];
    for (const tag of CACHE_TAGS) {
      const value = tags[tag];
      if (value === undefined) continue;
      const key = tagKey(tag, value);
      const cached = this.epochCache.get(key);
      const pending = this.epochReads.get(key);
      if (cached && now - cached.readAtMs < this.epochTtlMs) result[tag] = cached.epoch;
      else if (pending)
        reading.push(
          pending.then((epoch) => {
            result[tag] = epoch;
          }),
        );
      else missing.push({ tag, key });
    }
    if (missing.length > 0) {
      const read = this.options.store.epochs(missing.map((entry) => entry.key));
      for (const { tag, key } of missing) {
        const epoch = read.then((epochs) => {
          const value = epochs.get(key) ?? 0;
          this.epochCache.set(key, { epoch: value, readAtMs: now });
          return value;
        });
        this.epochReads.set(key, epoch);
        const settled = (): void => {
          if (this.epochReads.get(key) === epoch) this.epochReads.delete(key);
        };
        epoch.then(settled, settled);
        reading.push(
          epoch.then((value) => {
            result[tag] = value;
          }),
        );
      }
    }
    await Promise.all(reading);
    return result;
  }

  /**
   * Starts reading a request's shared entry ahead of `read`, so that the read can travel in the same round trip
   * as the catalog pointer read (the store groups reads asked for in the same turn): the request is built from
   * the release the previous read saw, and its result is handed to `read` only if the pointer confirms that
   * release (the key, then, is the one `read` would look up). Nothing is read when the in-process tier holds a
   * live entry of the same versions: `read` will most likely answer from it. Never rejects (a failure is a miss).
   */
  prefetch(request: PriceCacheRequest): Promise<CachedPrice | undefined> | undefined {
    // Epochs due for a re-read are asked for now too: `read` then shares that read (a failure is its to report).
    this.epochsOf(request.tags).catch(() => undefined);
    const local = this.local.get(request.key);
    if (local && freshnessOf(local, request.versions, {}, this.nowMs()) === 'fresh') return undefined;
    return this.options.store.get(request.key).catch((error: unknown) => {
      this.report(error, 'get');
      return undefined;
    });
  }

  /**
   * A storefront read: the in-process tier, then the shared tier, else `compute` (stored in both tiers). The
   * epochs are read before computing, so an invalidation that lands meanwhile makes the new entry stale.
   * `prefetched`: the shared entry of this very key, read by `prefetch` (not read again).
   */
  async read(
    request: PriceCacheRequest,
    compute: () => ComputedPrice,
    prefetched?: Promise<CachedPrice | undefined>,
  ): Promise<CacheRead> {
    let epochs: TagEpochs | undefined;
    try {
      epochs = await this.epochsOf(request.tags);
    } catch (error) {
      this.report(error, 'epochs');
    }
    if (!epochs) {
      // Without the epochs nothing cached can be judged: price afresh and store nothing.
      const computed = compute();
      return { body: computed.body, source: 'miss', ttlSeconds: computed.ttlSeconds };
    }

    const local = this.local.get(request.key);
    if (local) {
      if (freshnessOf(local, request.versions, epochs, this.nowMs()) === 'fresh')
        return { body: local.body, source: 'hit-local', ttlSeconds: local.ttl_seconds };
      this.local.delete(request.key);
    }

    let shared: CachedPrice | undefined;
    try {
      shared = await (prefetched ?? this.options.store.get(request.key));
    } catch (error) {
      this.report(error, 'get');
    }
    if (shared && freshnessOf(shared, request.versions, epochs, this.nowMs()) === 'fresh') {
      this.local.set(request.key, shared);
      return { body: shared.body, source: 'hit-shared', ttlSeconds: shared.ttl_seconds };
    }

    const computed = compute();
    const entry = this.entryOf(request, computed, epochs);
    this.local.set(request.key, entry);
    try {
      await this.options.store.put([entry]);
    } catch (error) {
      this.report(error, 'put');
    }
    return { body: computed.body, source: 'miss', ttlSeconds: computed.ttlSeconds };
  }

  private entryOf(request: PriceCacheRequest, computed: ComputedPrice, epochs: TagEpochs): CachedPrice {
    const now = this.nowMs();
    const own: Partial<Record<CacheTag, number>> = {};
    for (const tag of CACHE_TAGS) if (request.tags[tag] !== undefined) own[tag] = epochs[tag] ?? 0;
    return {
      key: request.key,
      body: computed.body,
      pricelist_version: request.versions.pricelist_version,
      fx_version: request.versions.fx_version,
      tax_rule_version: request.versions.tax_rule_version,
      tags: request.tags,
      epochs: own,
      ttl_seconds: computed.ttlSeconds,
      cached_at: new Date(now).toISOString(),
      expires_at: expiresAtOf(now, computed.ttlSeconds, computed.validUntilMs),
    };
  }

  /**
   * Precomputed entries for the shared tier (a warm-up before a campaign). Epochs are read from the store,
   * not from this instance's epoch cache, so a warm-up right after an invalidation is not born stale.
   */
  async warm(
    entries: readonly { readonly request: PriceCacheRequest; readonly computed: ComputedPrice }[],
  ): Promise<number> {
    const keys = new Set<string>();
    for (const { request } of entries) {
      for (const tag of CACHE_TAGS) {
        const value = request.tags[tag];
        if (value !== undefined) keys.add(tagKey(tag, value));
      }
    }
    const current = keys.size > 0 ? await this.options.store.epochs([...keys]) : new Map<string, number>();
    const built = entries.map(({ request, computed }) => {
      const epochs: Partial<Record<CacheTag, number>> = {};
      for (const tag of CACHE_TAGS) {
        const value = request.tags[tag];
        if (value !== undefined) epochs[tag] = current.get(tagKey(tag, value)) ?? 0;
      }
      return this.entryOf(request, computed, epochs);
    });
    if (built.length > 0) await this.options.store.put(built);
    return built.length;
  }

  /** Moves a tag's epoch: every entry carrying that tag value is stale on every instance within a second. */
  async invalidate(tag: CacheTag, value: string): Promise<number> {
    const key = tagKey(tag, value);
    const epoch = await this.options.store.bump(key);
    this.epochCache.set(key, { epoch, readAtMs: this.nowMs() });
    return epoch;
  }
}

// ------------------------------------------------------------------------------ the price being cached

/** The price list a read names: the query's `pricelist` (which must exist), else the primary one. */
export const pricelistOf = (release: CatalogRelease, requested?: string): string => {
  const lists = release.commercial.content.pricelists;
  if (requested === undefined) {
    const primary = lists[0];
    if (!primary) throw new CatalogNotFoundError('the catalog has no price list');
    return primary.pricelist_id;
  }
  if (!lists.some((list) => list.pricelist_id === requested))
    throw new CatalogNotFoundError(`no price list ${requested}`);
  return requested;
};

/** Key, versions and tags of a storefront read against a release. */
export const priceCacheRequestOf = (release: CatalogRelease, query: PriceQuery): PriceCacheRequest => {
  const versions = versionsOf(release);
  const product = release.commercial.content.products.find((candidate) => candidate.sku_id === query.sku);
  return {
    key: priceCacheKey({
      pricelist: pricelistOf(release, query.pricelist),
      region: query.region,
      currency: query.currency,
      sku: query.sku,
      pricelist_version: versions.pricelist_version,
      tenant: query.tenant,
      channel: query.channel,
      buyer_type: query.buyer_type,
      customer_groups: effectiveCustomerGroups(release, query.customer_groups),
    }),
    versions,
    tags: {
      sku: query.sku,
      ...(product?.category ? { category: product.category } : {}),
      pricelist_version: String(versions.pricelist_version),
    },
  };
};

/** The next instant after `at` at which a fee schedule of the release takes effect (the price may change). */
const nextFeeChangeMs = (release: CatalogRelease, at: Date): number | undefined => {
  const instant = at.toISOString();
  const upcoming = (release.commercial.content.fees ?? [])
    .map((schedule) => schedule.effective_from)
    .filter((from) => from > instant)
    .sort()[0];
  return upcoming === undefined ? undefined : new Date(upcoming).getTime();
};

/**
 * The earliest `expires_at` (ms) of the FX overrides the price was converted at: once one expires the published
 * rate is back and the price changes within the same release, so the entry must not outlive it. Only the overrides
 * this price used count (any other override of the release does not change it): `fx_conversions` names each
 * conversion's override, the earliest-expiring one of a cross or chain rate's legs.
 */
const overrideExpiryMs = (priced: BasketPricing): number | undefined => {
  const expiries = (priced.fx_conversions ?? []).flatMap((conversion) =>
    conversion.override ? [new Date(conversion.override.expires_at).getTime()] : [],
  );
  return expiries.length > 0 ? Math.min(...expiries) : undefined;
};

/**
 * A display price, or the storefront's refusal of it (a blocked currency, not sellable in the region, no price): the
 * error `GET /catalog/prices` would answer, returned rather than thrown. Any other error is thrown.
 */
export const displayPriceOrRefusal = (
  release: CatalogRelease,
  query: PriceQuery,
  at: Date,
  ttlOverrides: Readonly<Record<string, number>> = {},
): ComputedPrice | PricingError | CatalogNotFoundError => {
  try {
    return computeDisplayPrice(release, query, at, ttlOverrides);
  } catch (error) {
    if (error instanceof PricingError || error instanceof CatalogNotFoundError) return error;
    throw error;
  }
};

/** The earlier of two optional instants (ms). */
const earliest = (a: number | undefined, b: number | undefined): number | undefined =>
  a === undefined ? b : b === undefined ? a : Math.min(a, b);

/**
 * One unit of a SKU priced through the whole engine (promotions, taxes, fees that apply to it alone), with the
 * versions that produced it: the body of `GET /catalog/prices`. With `explain` (C28) the body also carries the
 * explanation; such a body is never cached.
 */
export const computeDisplayPrice = (
  release: CatalogRelease,
  query: PriceQuery,
  at: Date,
  ttlOverrides: Readonly<Record<string, number>> = {},
): ComputedPrice => {
  pricelistOf(release, query.pricelist);
  const catalog = toPricingCatalog(release, { ...(query.tenant ? { tenant: query.tenant } : {}), at });
  const groups = effectiveCustomerGroups(release, query.customer_groups);
  const basket = {
    items: [{ sku_id: query.sku, quantity: 1 }],
    region: query.region,
    currency: query.currency,
    buyer_type: query.buyer_type ?? 'consumer',
    ...(query.channel ? { channel: query.channel } : {}),
    ...(query.tenant ? { tenant: query.tenant } : {}),
    ...(groups ? { customer_groups: groups } : {}),
  } as const;
  const options = { at: at.toISOString() };
  let priced: BasketPricing;
  let explain: ReturnType<typeof explainBasket>['explain'] | undefined;
  if (query.explain) {
    ({ pricing: priced, explain } = explainBasket(catalog, basket, options));
  } else {
    priced = priceBasket(catalog, basket, options);
  }
  const line = priced.items_priced[0];
  if (!line) throw new CatalogNotFoundError(`no price for ${query.sku}`);
  const displayRule = catalog.display_rules.find((rule) => rule.region === query.region);
  const validUntilMs = earliest(nextFeeChangeMs(release, at), overrideExpiryMs(priced));
  return {
    ttlSeconds: cacheTtlSeconds(query.currency, catalog.crypto_minor_units, ttlOverrides),
    ...(validUntilMs === undefined ? {} : { validUntilMs }),
    body: {
      sku: query.sku,
      // Both rounded in the display rule's mode from the exact values, exactly as a quote line shows them (C19).
      unit_price: line.unit_price,
      currency: priced.currency,
      // What the shopper sees for one unit: after promotions; tax-inclusive where the region's tax is included.
      display_price: line.display_price,
      price_includes_tax: line.taxes.some((tax) => tax.included),
      rounding_mode: displayRule?.rounding_mode ?? 'HALF_UP',
      fx_version: priced.versions.fx_version,
      pricelist_version: priced.versions.pricelist_version,
      tax_rule_version: priced.versions.tax_rule_version,
      tax_breakdown: line.taxes,
      fees: priced.fees,
      applied_promotions: line.applied_promotions,
      ...(priced.fx_rate ? { fx_rate: priced.fx_rate } : {}),
      ...(priced.fx_conversions ? { fx_conversions: priced.fx_conversions } : {}),
      ...(groups ? { customer_groups: groups } : {}),
      ...(line.customer_group ? { customer_group: line.customer_group } : {}),
      // What a quote will accept for this SKU, so a storefront can offer only those quantities.
      ...(rulesOf(catalog, query.sku) ?? {}),
      ...(explain ? { explain } : {}),
    },
  };
};

/** The product's `product_type` (when not standard) and `quantity_rules`, for the price body. */
const rulesOf = (
  catalog: ReturnType<typeof toPricingCatalog>,
  sku: string,
): { product_type?: 'stored_value'; quantity_rules?: QuantityRules } | undefined => {
  const product = findProduct(catalog.products, sku);
  if (!product?.quantity_rules && product?.product_type !== 'stored_value') return undefined;
  return {
    ...(product.product_type === 'stored_value' ? { product_type: 'stored_value' as const } : {}),
    ...(product.quantity_rules ? { quantity_rules: product.quantity_rules } : {}),
  };
};

export interface WarmRequest {
  readonly categories: readonly string[];
  readonly currencies: readonly string[];
  readonly regions: readonly string[];
}

export interface WarmResult {
  readonly warmed: number;
  /** (SKU, region, currency) combinations not written: not whitelisted in the region, or not priceable. */
  readonly skipped: number;
}

/**
 * Precomputes the shared entries of the plain storefront read (primary price list, no tenant or channel,
 * consumer) for every SKU of the categories, in every region × currency pair the region's display rule
 * whitelists.
 */
export const warmPriceCache = async (
  deps: { readonly cache: PriceCache; readonly release: CatalogRelease; readonly at: Date },
  request: WarmRequest,
  ttlOverrides: Readonly<Record<string, number>> = {},
): Promise<WarmResult> => {
  const categories = new Set(request.categories);
  const commercial = deps.release.commercial.content;
  const products = commercial.products.filter(
    (product) => product.category !== undefined && categories.has(product.category),
  );
  const regions = [...new Set(request.regions)];
  const currencies = [...new Set(request.currencies)];
  const entries: { request: PriceCacheRequest; computed: ComputedPrice }[] = [];
  let skipped = 0;
  for (const product of products) {
    for (const region of regions) {
      const rule = commercial.display_rules.find((candidate) => candidate.region === region);
      for (const currency of currencies) {
        if (!rule?.currency_whitelist.includes(currency)) {
          skipped += 1;
          continue;
        }
        const query: PriceQuery = { sku: product.sku_id, region, currency };
        const computed = displayPriceOrRefusal(deps.release, query, deps.at, ttlOverrides);
        // Blocked currency, not sellable in the region, no price: nothing a storefront could read either.
        if (computed instanceof Error) skipped += 1;
        else entries.push({ request: priceCacheRequestOf(deps.release, query), computed });
      }
    }
  }
  const warmed = await deps.cache.warm(entries);
  return { warmed, skipped };
};
