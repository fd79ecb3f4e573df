/**
 * A catalog release: the import document split into the three independently versioned parts a receipt pins
 * (spec "Versioning"), and the engine's snapshot built from them.
 *
 * - `pricelist_version` pins the commercial catalog: settings, products, price lists, overrides, promotions,
 *   display rules, basket policies, fee schedules, availability and limits;
 * - `fx_version` pins the exchange rates (with markup rules), the settlement rates and the rate policy;
 * - `tax_rule_version` pins the tax rules.
 */
import { priceBasket } from '../../domain/pricing/basket';
import type {
  BasketPolicy,
  BasketPricing,
  BasketRequest,
  PricingCatalog,
  Promotion,
  ThresholdPromotion,
} from '../../domain/pricing/types';
import type { JsonObject } from '../../domain/receipts/receipt';
import type { CatalogPartKind } from '../../ports/catalog';
import type { CatalogDocument } from '../../schemas/catalog-document';

export type CommercialPart = Pick<
  CatalogDocument,
  | 'settings'
  | 'products'
  | 'pricelists'
  | 'overrides'
  | 'promotions'
  | 'display_rules'
  | 'basket_policies'
  | 'fees'
  | 'availability'
  | 'limits'
>;
export type FxPart = Pick<CatalogDocument, 'fx_rates' | 'settlement_rates' | 'rate_policy'>;
export type TaxPart = Pick<CatalogDocument, 'tax_rules'>;

export interface CatalogVersions {
  readonly pricelist_version: number;
  readonly fx_version: string;
  readonly tax_rule_version: number;
}

export interface VersionedPart<Part> {
  readonly version: number;
  readonly effective_from: string;
  readonly content: Part;
}

export interface CatalogRelease {
  readonly commercial: VersionedPart<CommercialPart>;
  readonly fx: VersionedPart<FxPart>;
  readonly tax: VersionedPart<TaxPart>;
}

/** `fx_version` names one published snapshot of every rate (C5): `fx-<n>`. */
export const fxVersionName = (version: number): string => `fx-${version}`;

export const fxVersionNumber = (name: string): number | undefined => {
  const match = name.match(/^fx-([1-9]\d*)$/);
  return match ? Number(match[1]) : undefined;
};

/** The public names of a set of part versions (what receipts, events and snapshots carry). */
export const partVersionNames = (versions: Readonly<Record<CatalogPartKind, number>>): CatalogVersions => ({
  pricelist_version: versions.commercial,
  fx_version: fxVersionName(versions.fx),
  tax_rule_version: versions.tax,
});

export const versionsOf = (release: CatalogRelease): CatalogVersions =>
  partVersionNames({
    commercial: release.commercial.version,
    fx: release.fx.version,
    tax: release.tax.version,
  });

export const splitDocument = (
  document: CatalogDocument,
): { commercial: CommercialPart; fx: FxPart; tax: TaxPart } => {
  const {
    effective_from: _ignored,
    fx_rates,
    settlement_rates,
    rate_policy,
    tax_rules,
    ...commercial
  } = document;
  return {
    commercial,
    fx: {
      fx_rates,
      ...(settlement_rates ? { settlement_rates } : {}),
      ...(rate_policy ? { rate_policy } : {}),
    },
    tax: { tax_rules },
  };
};

/** The document as it was imported (export returns exactly this shape). */
export const joinRelease = (release: CatalogRelease): CatalogDocument => ({
  ...release.commercial.content,
  ...release.fx.content,
  ...release.tax.content,
});

const isPercentage = (
  promotion: NonNullable<CatalogDocument['promotions']>[number],
): promotion is Extract<NonNullable<CatalogDocument['promotions']>[number], { kind: 'percentage' }> =>
  promotion.kind === 'percentage';

/** The stored basket policy that applies to a tenant: its own, else the one without a tenant, else the first. */
const storedBasketPolicyFor = (part: CommercialPart, tenant?: string) => {
  const policy =
    part.basket_policies.find((candidate) => tenant !== undefined && candidate.tenant === tenant) ??
    part.basket_policies.find((candidate) => candidate.tenant === undefined) ??
    part.basket_policies[0];
  if (!policy) throw new Error('a catalog needs at least one basket policy');
  return policy;
};

/** The basket policy of a tenant, else the policy without a tenant, else the first. */
export const basketPolicyFor = (part: CommercialPart, tenant?: string): BasketPolicy => {
  const { policy_id: _id, tenant: _tenant, ...rest } = storedBasketPolicyFor(part, tenant);
  return rest;
};

/** The fee schedule in force at `at`: the latest `effective_from` not after it. */
export const feeScheduleAt = (part: CommercialPart, at: Date) => {
  const instant = at.toISOString();
  return [...(part.fees ?? [])]
    .filter((schedule) => schedule.effective_from <= instant)
    .sort((a, b) =>
      a.effective_from < b.effective_from ? 1 : a.effective_from > b.effective_from ? -1 : 0,
    )[0];
};

/**
 * Snapshots already built, per release object and per (basket policy that applies, fee schedule in force):
 * snapshots are immutable, and the engine indexes them by identity, so building each once keeps every request
 * off O(catalog) work. Keyed by the policy, not the tenant named in the request: any number of unknown tenants
 * share the default snapshot, so the memo stays bounded by the catalog's own size.
 */
const snapshots = new WeakMap<CatalogRelease, Map<string, PricingCatalog>>();

const tenantsNamed = new WeakMap<CatalogRelease, ReadonlySet<string>>();

/**
 * The tenants a release prices differently (an override targets them, or a basket policy is theirs). Every other
 * tenant sees the plain storefront prices, so a read for it can share the plain cache entries.
 */
export const tenantsPricedApart = (release: CatalogRelease): ReadonlySet<string> => {
  let named = tenantsNamed.get(release);
  if (!named) {
    const commercial = release.commercial.content;
    named = new Set([
      ...(commercial.overrides ?? []).flatMap((override) =>
        'tenant' in override.target ? [override.target.tenant] : [],
      ),
      ...commercial.basket_policies.flatMap((policy) => (policy.tenant ? [policy.tenant] : [])),
    ]);
    tenantsNamed.set(release, named);
  }
  return named;
};

const groupsNamed = new WeakMap<CatalogRelease, ReadonlySet<string>>();

/**
 * The customer groups a release prices differently (C29): a price list, an override or a promotion targets them.
 * Any other group changes nothing, so a read naming only such groups shares the plain cache entries.
 */
export const customerGroupsPricedApart = (release: CatalogRelease): ReadonlySet<string> => {
  let named = groupsNamed.get(release);
  if (!named) {
    const commercial = release.commercial.content;
    named = new Set([
      ...commercial.pricelists.flatMap((list) => (list.customer_group ? [list.customer_group] : [])),
      ...(commercial.overrides ?? []).flatMap((override) =>
        'customer_group' in override.target ? [override.target.customer_group] : [],
      ),
      ...(commercial.promotions ?? []).flatMap((promotion) =>
        promotion.target ? [promotion.target.customer_group] : [],
      ),
    ]);
    groupsNamed.set(release, named);
  }
  return named;
};

/**
 * The groups of `asked` that the release prices apart, sorted and once each: what a price depends on, so what
 * a cache key carries (undefined when none).
 */
export const effectiveCustomerGroups = (
  release: CatalogRelease,
  asked: readonly string[] | undefined,
): string[] | undefined => {
  if (!asked?.length) return undefined;
  const known = customerGroupsPricedApart(release);
  const groups = [...new Set(asked.filter((group) => known.has(group)))].sort();
  return groups.length > 0 ? groups : undefined;
};

/**
 * The query a caller key's price read is computed and cached under: the key's tenant when the release prices it
 * apart, else none — a tenant the release does not name reads the plain storefront entries (and prices).
 */
export const priceQueryFor = <Q extends { readonly tenant?: string | undefined }>(
  release: CatalogRelease,
  asked: Q,
  tenant: string,
): Omit<Q, 'tenant'> & { tenant?: string } => {
  const { tenant: _asked, ...rest } = asked;
  return tenantsPricedApart(release).has(tenant) ? { ...rest, tenant } : rest;
};

/** The engine's snapshot for one release, as seen by `tenant` at `at` (fee schedules have effective dates). */
export const toPricingCatalog = (
  release: CatalogRelease,
  options: { tenant?: string; at: Date },
): PricingCatalog => {
  let built = snapshots.get(release);
  if (!built) {
    built = new Map();
    snapshots.set(release, built);
  }
  const commercial = release.commercial.content;
  const policy = storedBasketPolicyFor(commercial, options.tenant);
  const key = `${policy.policy_id}|${feeScheduleAt(commercial, options.at)?.effective_from ?? ''}`;
  let catalog = built.get(key);
  if (!catalog) {
    catalog = buildPricingCatalog(release, options);
    built.set(key, catalog);
  }
  return catalog;
};

const buildPricingCatalog = (
  release: CatalogRelease,
  options: { tenant?: string; at: Date },
): PricingCatalog => {
  const commercial = release.commercial.content;
  const [primary, ...others] = commercial.pricelists;
  if (!primary) throw new Error('a catalog needs at least one price list');
  const listOf = (list: typeof primary) => ({
    pricelist_id: list.pricelist_id,
    base_currency: list.base_currency,
    effective_from: list.effective_from ?? release.commercial.effective_from,
    ...(list.effective_to ? { effective_to: list.effective_to } : {}),
    ...(list.customer_group ? { customer_group: list.customer_group } : {}),
    ...(list.derived_from ? { derived_from: list.derived_from } : {}),
    version: release.commercial.version,
    items: list.items,
  });
  const fxVersion = fxVersionName(release.fx.version);
  const groupLists = others.filter((list) => list.customer_group !== undefined);
  const promotions = commercial.promotions ?? [];
  const schedule = feeScheduleAt(commercial, options.at);
  const { effective_from: _from, refund: _refund, ...fees } = schedule ?? { effective_from: '' };
  return {
    base_currency: primary.base_currency,
    pricelist: listOf(primary),
    currency_pricelists: others.filter((list) => list.customer_group === undefined).map(listOf),
    ...(groupLists.length > 0 ? { group_pricelists: groupLists.map(listOf) } : {}),
    strategy: {
      kind: commercial.settings.pricing_strategy,
      ...(commercial.settings.mixed_top_currencies
        ? { top_currencies: commercial.settings.mixed_top_currencies }
        : {}),
    },
    products: commercial.products,
    fx: {
      fx_version: fxVersion,
      base_currency: release.fx.content.fx_rates.base_currency,
      rates: release.fx.content.fx_rates.rates.map((rate) => ({
        ...rate,
        effective_from: rate.effective_from ?? release.fx.effective_from,
        version: fxVersion,
      })),
      // The engine decides per pricing instant which are in force; an override's timestamp is its publication's.
      ...(release.fx.content.fx_rates.overrides?.length
        ? {
            overrides: release.fx.content.fx_rates.overrides.map((override) => ({
              ...override,
              effective_from: release.fx.effective_from,
            })),
          }
        : {}),
    },
    fx_markup_rules: release.fx.content.fx_rates.markup_rules ?? [],
    tax_rules: { tax_rule_version: release.tax.version, rules: release.tax.content.tax_rules },
    display_rules: commercial.display_rules,
    overrides: commercial.overrides ?? [],
    basket_policy: basketPolicyFor(commercial, options.tenant),
    promotions: promotions.filter(isPercentage).map(({ kind: _kind, ...promotion }): Promotion => promotion),
    threshold_promotions: promotions
      .filter((promotion) => !isPercentage(promotion))
      .map((promotion) => promotion as ThresholdPromotion),
    fees,
    availability: commercial.availability ?? {},
    ...(commercial.settings.crypto_minor_units
      ? { crypto_minor_units: commercial.settings.crypto_minor_units }
      : {}),
  };
};

/** Prices a receipt's basket again on the release its versions pin, as of its quote (refunds, receipt checks). */
export const repriceReceipt = (receipt: JsonObject, release: CatalogRelease): BasketPricing => {
  const basket = receipt.basket as unknown as BasketRequest;
  const quotedAt = new Date(String(receipt.quoted_at));
  return priceBasket(
    toPricingCatalog(release, { ...(basket.tenant ? { tenant: basket.tenant } : {}), at: quotedAt }),
    basket,
    { at: quotedAt.toISOString() },
  );
};
