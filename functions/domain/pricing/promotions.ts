import { allocate } from '../money/allocation';
import { Decimal, dec, fromScaledBigint, sum, toScaledBigint, ZERO } from '../money/decimal';
import { INTERMEDIATE_DECIMALS, step } from '../money/rounding';
import type { BasketPolicy, Promotion, PromotionCondition } from './types';

export interface PromotionLine {
  readonly sku_id: string;
  readonly category?: string;
  readonly promo_refs?: readonly string[];
  /** Line amount before discounts (9 decimals). */
  readonly amount: Decimal;
  /** The lowest the line may go: max(0, min_price × quantity). */
  readonly floor: Decimal;
}

export interface PromotionScope {
  readonly region: string;
  readonly currency: string;
  readonly channel?: string;
}

export interface LineDiscounts {
  /** Discount per line (9 decimals). */
  readonly perLine: readonly Decimal[];
  /** Promotions applied per line, with their amounts. */
  readonly applied: readonly (readonly { readonly promo_id: string; readonly amount: Decimal }[])[];
}

/** The basket-level part of a condition: region, currency set and channel (rule 7). */
export const conditionHolds = (condition: PromotionCondition, scope: PromotionScope): boolean =>
  (!condition.regions || condition.regions.includes(scope.region)) &&
  (!condition.currencies || condition.currencies.includes(scope.currency)) &&
  (!condition.channels || (scope.channel !== undefined && condition.channels.includes(scope.channel)));

/** Whether a promotion reaches a line: by SKU or category in its condition, or named by the line's item. */
const reachesLine = (promotion: Promotion, line: PromotionLine): boolean => {
  if (line.promo_refs?.includes(promotion.promo_id)) return true;
  const { skus, categories } = promotion.condition;
  if (!skus && !categories) return true;
  return Boolean(skus?.includes(line.sku_id) || (line.category && categories?.includes(line.category)));
};

/**
 * One promotion on the lines as they stand: percent of each reached line, never taking a line below its floor,
 * and at most `cap` in total (a capped discount is split over the lines in proportion to their uncapped
 * discounts, by largest remainder at 9 decimals).
 */
const discountsOf = (
  promotion: Promotion,
  lines: readonly PromotionLine[],
  remaining: readonly Decimal[],
  cap: Decimal | undefined,
): Decimal[] => {
  const rate = dec(promotion.percent).dividedBy(100);
  const uncapped = lines.map((line, index) => {
    if (!reachesLine(promotion, line)) return ZERO;
    const current = remaining[index] as Decimal;
    const room = Decimal.max(ZERO, current.minus(line.floor));
    return Decimal.min(room, step(current.times(rate)));
  });
  const total = sum(uncapped);
  if (!cap || total.lessThanOrEqualTo(cap) || total.isZero()) return uncapped;
  const parts = allocate(
    toScaledBigint(step(cap), INTERMEDIATE_DECIMALS),
    uncapped.map((value) => toScaledBigint(value, INTERMEDIATE_DECIMALS)),
  );
  return parts.map((part) => fromScaledBigint(part, INTERMEDIATE_DECIMALS));
};

const byPriority = (a: Promotion, b: Promotion): number =>
  a.priority !== b.priority
    ? b.priority - a.priority
    : a.promo_id < b.promo_id
      ? -1
      : a.promo_id > b.promo_id
        ? 1
        : 0;

/**
 * Step 2, discounts. `best_single`: the one promotion with the largest total discount (ties: higher priority,
 * then smaller id). `stack_all`: every stackable promotion in priority order, each on what the previous ones
 * left; a non-stackable promotion wins alone when it alone gives more than the stack. No line ever goes below
 * its `min_price` floor or below zero.
 */
export const applyPromotions = (
  promotions: readonly Promotion[],
  lines: readonly PromotionLine[],
  policy: BasketPolicy,
  scope: PromotionScope,
  capOf: (promotion: Promotion) => Decimal | undefined,
): LineDiscounts => {
  const eligible = promotions
    .filter((promotion) => conditionHolds(promotion.condition, scope))
    .sort(byPriority);
  const original = lines.map((line) => line.amount);
  const none: LineDiscounts = { perLine: lines.map(() => ZERO), applied: lines.map(() => []) };

  const run = (sequence: readonly Promotion[]): LineDiscounts & { total: Decimal } => {
    const remaining = [...original];
    const applied: { promo_id: string; amount: Decimal }[][] = lines.map(() => []);
    for (const promotion of sequence) {
      const discounts = discountsOf(promotion, lines, remaining, capOf(promotion));
      discounts.forEach((discount, index) => {
        if (discount.isZero()) return;
        remaining[index] = (remaining[index] as Decimal).minus(discount);
        (applied[index] as { promo_id: string; amount: Decimal }[]).push({
          promo_id: promotion.promo_id,
          amount: discount,
        });
      });
    }
    const perLine = original.map((amount, index) => amount.minus(remaining[index] as Decimal));
    return { perLine, applied, total: sum(perLine) };
  };

  const singleRuns = (candidates: readonly Promotion[]) =>
    candidates.map((promotion) => ({ promotion, result: run([promotion]) }));
  const best = (candidates: ReturnType<typeof singleRuns>) =>
    candidates.reduce<ReturnType<typeof singleRuns>[number] | undefined>(
      (chosen, candidate) =>
        !chosen || candidate.result.total.greaterThan(chosen.result.total) ? candidate : chosen,
      undefined,
    );

  if (policy.promo_stack_mode === 'best_single') {
    return best(singleRuns(eligible))?.result ?? none;
  }
  const stack = run(eligible.filter((promotion) => promotion.stackable));
  const alone = best(singleRuns(eligible.filter((promotion) => !promotion.stackable)));
  return alone?.result.total.greaterThan(stack.total) ? alone.result : stack;
};
