import { ServiceError } from '../../domain/errors';
import { isKnownCurrency, minorUnitsOf } from '../../domain/money/currency';
import { FxTable } from '../../domain/pricing/fx';
import { type CatalogDocument, catalogDocumentSchema } from '../../schemas/catalog-document';

export interface Problem {
  readonly path: string;
  readonly message: string;
}

/** Every problem of an import document, with its JSON path; the document goes in only when there are none. */
export class CatalogValidationError extends ServiceError {
  constructor(readonly problems: readonly Problem[]) {
    super('invalid_request', `the catalog has ${problems.length} problem(s)`, {
      description: problems
        .slice(0, 5)
        .map((problem) => `${problem.path}: ${problem.message}`)
        .join('; '),
      details: { problems },
    });
    this.name = 'CatalogValidationError';
  }
}

const renderPath = (path: readonly PropertyKey[]): string =>
  path.reduce<string>(
    (rendered, segment) =>
      typeof segment === 'number' ? `${rendered}[${segment}]` : `${rendered}.${String(segment)}`,
    '$',
  );

const duplicates = <T>(
  values: readonly T[],
  keyOf: (value: T) => string,
  path: string,
  what: string,
): Problem[] => {
  const seen = new Map<string, number>();
  const problems: Problem[] = [];
  values.forEach((value, index) => {
    const key = keyOf(value);
    const first = seen.get(key);
    if (first !== undefined)
      problems.push({ path: `${path}[${index}]`, message: `duplicate ${what} ${key} (also at [${first}])` });
    else seen.set(key, index);
  });
  return problems;
};

/** What the schema cannot see: references between sections, duplicates, currencies, priceable whitelists. */
export const crossCheck = (document: CatalogDocument): Problem[] => {
  const problems: Problem[] = [];
  const crypto = document.settings.crypto_minor_units ?? {};
  const currency = (code: string, path: string) => {
    try {
      minorUnitsOf(code, {}, { BTC: 8, ETH: 8, USDT: 6, ...crypto });
    } catch {
      problems.push({ path, message: `unknown currency ${code}` });
    }
  };
  const skus = new Set(document.products.map((product) => product.sku_id));
  const promoIds = new Set((document.promotions ?? []).map((promotion) => promotion.promo_id));
  problems.push(...duplicates(document.products, (product) => product.sku_id, '$.products', 'sku_id'));
  problems.push(
    ...duplicates(document.pricelists, (list) => list.pricelist_id, '$.pricelists', 'pricelist_id'),
  );
  // One list per currency for everyone, and one per currency for each customer group (C29).
  problems.push(
    ...duplicates(
      document.pricelists,
      (list) =>
        list.customer_group ? `${list.base_currency} for ${list.customer_group}` : list.base_currency,
      '$.pricelists',
      'price list currency',
    ),
  );
  if (document.pricelists[0]?.customer_group !== undefined) {
    problems.push({
      path: '$.pricelists[0].customer_group',
      message: "the primary price list prices everyone: a customer group's list comes after it",
    });
  }
  problems.push(...duplicates(document.display_rules, (rule) => rule.region, '$.display_rules', 'region'));
  problems.push(...duplicates(document.tax_rules, (rule) => rule.region, '$.tax_rules', 'region'));
  problems.push(
    ...duplicates(document.basket_policies, (policy) => policy.policy_id, '$.basket_policies', 'policy_id'),
  );
  problems.push(
    ...duplicates(document.promotions ?? [], (promotion) => promotion.promo_id, '$.promotions', 'promo_id'),
  );
  problems.push(
    ...duplicates(document.overrides ?? [], (override) => override.override_id, '$.overrides', 'override_id'),
  );

  const primary = document.pricelists[0];
  const primaryItems = new Map((primary?.items ?? []).map((item) => [item.sku_id, item]));
  document.pricelists.forEach((list, listIndex) => {
    const at = `$.pricelists[${listIndex}]`;
    currency(list.base_currency, `${at}.base_currency`);
    problems.push(...duplicates(list.items, (item) => item.sku_id, `${at}.items`, 'sku_id'));
    list.items.forEach((item, itemIndex) => {
      const path = `${at}.items[${itemIndex}]`;
      if (!skus.has(item.sku_id))
        problems.push({ path: `${path}.sku_id`, message: `no product ${item.sku_id}` });
      if (item.base_currency !== list.base_currency) {
        problems.push({
          path: `${path}.base_currency`,
          message: `must equal the list's currency ${list.base_currency}`,
        });
      }
      if (item.pricing_model === 'tiered' && !item.tiers?.length) {
        problems.push({ path: `${path}.tiers`, message: 'a tiered item needs tiers' });
      }
      if (item.pricing_model === 'bundle') {
        if (!item.bundle) problems.push({ path: `${path}.bundle`, message: 'a bundle item needs positions' });
        item.bundle?.positions.forEach((position, positionIndex) => {
          const target = primaryItems.get(position.sku_id);
          if (!target || target.pricing_model === 'bundle') {
            problems.push({
              path: `${path}.bundle.positions[${positionIndex}].sku_id`,
              message: `${position.sku_id} must be a flat or tiered item of the primary price list`,
            });
          }
        });
      }
      item.promo_refs?.forEach((ref, refIndex) => {
        if (!promoIds.has(ref))
          problems.push({ path: `${path}.promo_refs[${refIndex}]`, message: `no promotion ${ref}` });
      });
    });
  });
  if (primary) {
    for (const sku of skus) {
      if (!primaryItems.has(sku))
        problems.push({ path: '$.products', message: `${sku} has no price in the primary list` });
    }
  }

  currency(document.fx_rates.base_currency, '$.fx_rates.base_currency');
  document.fx_rates.rates.forEach((rate, index) => {
    for (const code of rate.pair.split(/→|->/)) currency(code, `$.fx_rates.rates[${index}].pair`);
  });
  problems.push(
    ...duplicates(
      document.fx_rates.rates,
      (rate) => rate.pair.replace('->', '→'),
      '$.fx_rates.rates',
      'pair',
    ),
  );
  if (primary && problems.length === 0) {
    const fx = new FxTable({
      fx_version: 'validation',
      base_currency: document.fx_rates.base_currency,
      rates: document.fx_rates.rates.map((rate) => ({ ...rate, effective_from: '', version: 'validation' })),
    });
    // A customer group's list prices its group only: it does not make a currency priceable for everyone. A list
    // derived from a list in another currency converts its parent's prices, so it needs the rate too.
    const currencyOf = new Map(document.pricelists.map((list) => [list.pricelist_id, list.base_currency]));
    const listed = new Set(
      document.pricelists
        .filter(
          (list) =>
            !list.customer_group &&
            (!list.derived_from || currencyOf.get(list.derived_from.pricelist_id) === list.base_currency),
        )
        .map((list) => list.base_currency),
    );
    document.display_rules.forEach((rule, ruleIndex) => {
      rule.currency_whitelist.forEach((code, codeIndex) => {
        const path = `$.display_rules[${ruleIndex}].currency_whitelist[${codeIndex}]`;
        if (!isKnownCurrency(code) && crypto[code] === undefined && !['BTC', 'ETH', 'USDT'].includes(code)) {
          problems.push({ path, message: `unknown currency ${code}` });
          return;
        }
        if (listed.has(code)) return;
        try {
          fx.rate(primary.base_currency, code);
        } catch {
          problems.push({
            path,
            message: `no price list and no exchange rate from ${primary.base_currency} to ${code}`,
          });
        }
      });
    });
  }
  problems.push(...derivationProblems(document), ...quantityRuleProblems(document));
  for (const [index, override] of (document.overrides ?? []).entries()) {
    currency(override.currency, `$.overrides[${index}].currency`);
    if ('sku_id' in override.target && !skus.has(override.target.sku_id)) {
      problems.push({
        path: `$.overrides[${index}].target.sku_id`,
        message: `no product ${override.target.sku_id}`,
      });
    }
  }
  return problems;
};

/**
 * Derived price lists: the parent exists, is another list, and is not itself derived (one level: a chain's
 * adjustments compound into one percentage, and a cycle could never be priced). The primary list prices from
 * its own items.
 */
const derivationProblems = (document: CatalogDocument): Problem[] => {
  const byId = new Map(document.pricelists.map((list) => [list.pricelist_id, list]));
  return document.pricelists.flatMap((list, index): Problem[] => {
    const derivation = list.derived_from;
    if (!derivation) return [];
    const path = `$.pricelists[${index}].derived_from.pricelist_id`;
    if (index === 0)
      return [{ path: '$.pricelists[0].derived_from', message: 'the primary price list cannot be derived' }];
    const parent = byId.get(derivation.pricelist_id);
    if (!parent) return [{ path, message: `no price list ${derivation.pricelist_id}` }];
    if (parent === list) return [{ path, message: 'a price list cannot be derived from itself' }];
    if (parent.derived_from)
      return [{ path, message: `${parent.pricelist_id} is itself derived: derive from a list with prices` }];
    return [];
  });
};

/** Quantity rules: `min` ≤ `max`, and both on the `increment`'s grid (Shopify B2B's rule), so some quantity fits. */
const quantityRuleProblems = (document: CatalogDocument): Problem[] =>
  document.products.flatMap((product, index): Problem[] => {
    const rules = product.quantity_rules;
    if (!rules) return [];
    const path = `$.products[${index}].quantity_rules`;
    const found: Problem[] = [];
    if (rules.min !== undefined && rules.max !== undefined && rules.min > rules.max)
      found.push({ path: `${path}.max`, message: `must be at least min (${rules.min})` });
    for (const bound of ['min', 'max'] as const) {
      const value = rules[bound];
      if (value !== undefined && rules.increment !== undefined && value % rules.increment !== 0)
        found.push({
          path: `${path}.${bound}`,
          message: `must be a multiple of increment (${rules.increment})`,
        });
    }
    return found;
  });

/** Schema first (every problem, with its path), then the cross-checks; throws with all of them. */
export const validateCatalogDocument = (input: unknown): CatalogDocument => {
  const parsed = catalogDocumentSchema.safeParse(input);
  if (!parsed.success) {
    throw new CatalogValidationError(
      parsed.error.issues.map((issue) => ({ path: renderPath(issue.path), message: issue.message })),
    );
  }
  const problems = crossCheck(parsed.data);
  if (problems.length > 0) throw new CatalogValidationError(problems);
  return parsed.data;
};
