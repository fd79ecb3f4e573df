/**
 * Per-SKU quantity rules (a product's `quantity_rules`): what a quote accepts for a line. Checked before pricing,
 * every line at once, so the refusal names each line that breaks a rule, not only the first one.
 */

import { ServiceError } from '../errors';
import { findProduct } from './resolve';
import type { BasketLine, Product, QuantityRules } from './types';

export interface QuantityViolation {
  /** 1-based, as `items_priced[].line`. */
  readonly line: number;
  readonly sku_id: string;
  readonly quantity: number;
  readonly rule: 'min' | 'max' | 'increment';
  readonly limit: number;
  /** For a human: the rule and the nearest quantities it allows. */
  readonly detail: string;
}

/** A basket with lines its products' quantity rules refuse (422 `quantity_not_allowed`). */
export class QuantityNotAllowedError extends ServiceError {
  constructor(readonly violations: readonly QuantityViolation[]) {
    super(
      'quantity_not_allowed',
      `quantity not allowed: ${violations.map((violation) => violation.detail).join('; ')}`,
      {
        details: { violations: violations.map((violation) => ({ ...violation })) },
      },
    );
    this.name = 'QuantityNotAllowedError';
  }
}

/** The allowed quantities nearest to `quantity` (at most one below and one above), for the refusal's text. */
const nearestAllowed = (rules: QuantityRules, quantity: number): number[] => {
  const increment = rules.increment ?? 1;
  const low = rules.min ?? increment;
  const high = rules.max ?? Number.MAX_SAFE_INTEGER;
  const below = Math.min(high, Math.floor(quantity / increment) * increment);
  const above = Math.max(low, Math.ceil(quantity / increment) * increment);
  return [...new Set([below, above])].filter((value) => value >= low && value <= high).sort((a, b) => a - b);
};

const violationOf = (
  rules: QuantityRules,
  line: BasketLine,
  index: number,
): QuantityViolation | undefined => {
  const broken = (rule: QuantityViolation['rule'], limit: number, what: string): QuantityViolation => {
    const allowed = nearestAllowed(rules, line.quantity);
    return {
      line: index + 1,
      sku_id: line.sku_id,
      quantity: line.quantity,
      rule,
      limit,
      detail:
        `line ${index + 1} (${line.sku_id}): quantity ${line.quantity} ${what}` +
        (allowed.length > 0 ? `; nearest allowed: ${allowed.join(' or ')}` : ''),
    };
  };
  if (rules.min !== undefined && line.quantity < rules.min)
    return broken('min', rules.min, `is below the minimum of ${rules.min}`);
  if (rules.max !== undefined && line.quantity > rules.max)
    return broken('max', rules.max, `is above the maximum of ${rules.max}`);
  if (rules.increment !== undefined && line.quantity % rules.increment !== 0)
    return broken('increment', rules.increment, `is not a multiple of ${rules.increment}`);
  return undefined;
};

/** Every line whose quantity its product's rules refuse; lines of the same SKU are each checked on their own. */
export const quantityViolations = (
  products: readonly Product[],
  items: readonly BasketLine[],
): QuantityViolation[] =>
  items.flatMap((line, index) => {
    const rules = findProduct(products, line.sku_id)?.quantity_rules;
    const violation = rules ? violationOf(rules, line, index) : undefined;
    return violation ? [violation] : [];
  });

/** Throws `QuantityNotAllowedError` naming every line that breaks its product's quantity rules. */
export const checkQuantityRules = (products: readonly Product[], items: readonly BasketLine[]): void => {
  const violations = quantityViolations(products, items);
  if (violations.length > 0) throw new QuantityNotAllowedError(violations);
};
