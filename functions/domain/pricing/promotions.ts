import { allocate } from '../money/allocation';
import { Decimal, dec, fromScaledBigint, sum, toScaledBigint, ZERO } from '../money/decimal';
import { INTERMEDIATE_DECIMALS, step } from '../money/rounding';
import { type ExplainTrace, figure } from './explain';
import type { BasketPolicy, CustomerGroupTarget, Promotion, PromotionCondition } from './types';

export interface PromotionLine {
  readonly sku_id: string;
  readonly category?: string;
  readonly promo_refs?: readonly string[];
  /** Line amount before discounts (9 decimals). */
  readonly amount: Decimal;
  /** The lowest the line may go: max(0, min_price × quantity). */
  readonly floor: Decimal;
  /** A stored-value product (gift card): no promotion reaches it. */
  readonly exempt?: boolean;
}

export interface PromotionScope {
  readonly region: string;
  readonly currency: string;
  readonly channel?: string;
  /** The buyer's customer groups (C29). */
  readonly customerGroups?: ReadonlySet<string>;
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

/** C29: a promotion targeting a customer group reaches only buyers of that group. */
export const reachesBuyer = (target: CustomerGroupTarget | undefined, scope: PromotionScope): boolean =>
  target === undefined || scope.customerGroups?.has(target.customer_group) === true;

/** Why a promotion does not apply to this basket at all (for an explanation), or undefined when it does. */
const notEligibleBecause = (promotion: Promotion, scope: PromotionScope): string | undefined => {
  const { regions, currencies, channels } = promotion.condition;
  if (regions && !regions.includes(scope.region)) return `only in ${regions.join(', ')}`;
  if (currencies && !currencies.includes(scope.currency)) return `only in ${currencies.join(', ')}`;
  if (channels && (scope.channel === undefined || !channels.includes(scope.channel)))
    return `only on the channels ${channels.join(', ')}`;
  if (!reachesBuyer(promotion.target, scope))
    return `only for customer group ${promotion.target?.customer_group}`;
  return undefined;
};

/** Whether a promotion reaches a line: by SKU or category in its condition, or named by the line's item. */
const reachesLine = (promotion: Promotion, line: PromotionLine): boolean => {
  if (line.exempt) return false;
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
  notes?: PromotionNote[],
): Decimal[] => {
  const rate = dec(promotion.percent).dividedBy(100);
  const uncapped = lines.map((line, index) => {
    if (!reachesLine(promotion, line)) return ZERO;
    const current = remaining[index] as Decimal;
    const room = Decimal.max(ZERO, current.minus(line.floor));
    return Decimal.min(room, step(current.times(rate)));
  });
  const total = sum(uncapped);
  const capped = !(!cap || total.lessThanOrEqualTo(cap) || total.isZero());
  const result = capped
    ? allocate(
        toScaledBigint(step(cap), INTERMEDIATE_DECIMALS),
        uncapped.map((value) => toScaledBigint(value, INTERMEDIATE_DECIMALS)),
      ).map((part) => fromScaledBigint(part, INTERMEDIATE_DECIMALS))
    : uncapped;
  notes?.push({
    promotion,
    cap,
    uncapped: total,
    capped,
    lines: lines.map((line, index) => {
      const current = remaining[index] as Decimal;
      const percentOf = step(current.times(rate));
      return {
        reached: reachesLine(promotion, line),
        percentOf,
        floor: line.floor,
        clamped: reachesLine(promotion, line) && (uncapped[index] as Decimal).lessThan(percentOf),
        amount: result[index] as Decimal,
      };
    }),
  });
  return result;
};

/** What one promotion did in the run that won, for an explanation. */
interface PromotionNote {
  readonly promotion: Promotion;
  readonly cap: Decimal | undefined;
  readonly uncapped: Decimal;
  readonly capped: boolean;
  readonly lines: readonly {
    readonly reached: boolean;
    /** percent × what the line stood at before this promotion. */
    readonly percentOf: Decimal;
    readonly floor: Decimal;
    /** The line's floor (`min_price` × quantity, or zero) held the discount below percentOf. */
    readonly clamped: boolean;
    readonly amount: Decimal;
  }[];
}

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
  trace?: ExplainTrace,
): LineDiscounts => {
  const eligible = promotions
    .filter(
      (promotion) => conditionHolds(promotion.condition, scope) && reachesBuyer(promotion.target, scope),
    )
    .sort(byPriority);
  const original = lines.map((line) => line.amount);
  const none: LineDiscounts = { perLine: lines.map(() => ZERO), applied: lines.map(() => []) };

  const run = (
    sequence: readonly Promotion[],
    notes?: PromotionNote[],
  ): LineDiscounts & { total: Decimal } => {
    const remaining = [...original];
    const applied: { promo_id: string; amount: Decimal }[][] = lines.map(() => []);
    for (const promotion of sequence) {
      const discounts = discountsOf(promotion, lines, remaining, capOf(promotion), notes);
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
    const singles = singleRuns(eligible);
    const winner = best(singles);
    const result = winner?.result ?? none;
    if (trace) {
      explainPromotions(trace, {
        promotions,
        lines,
        scope,
        capOf,
        result,
        chosen: winner ? [winner.promotion] : [],
        rerun: run,
        decision: {
          mode: 'best_single',
          candidates: singles.map(({ promotion, result: single }) => ({
            promo_ids: [promotion.promo_id],
            discount: figure(single.total),
          })),
          detail: winner
            ? `best_single: ${winner.promotion.promo_id} gives the largest discount, ${figure(winner.result.total)} ` +
              '(ties: higher priority, then smaller id)'
            : 'best_single: no promotion applies',
        },
      });
    }
    return result;
  }
  const stackable = eligible.filter((promotion) => promotion.stackable);
  const stack = run(stackable);
  const singles = singleRuns(eligible.filter((promotion) => !promotion.stackable));
  const alone = best(singles);
  // A non-stackable promotion wins alone only when it alone gives more than the stack.
  const winner = alone?.result.total.greaterThan(stack.total) === true ? alone : undefined;
  if (trace) {
    explainPromotions(trace, {
      promotions,
      lines,
      scope,
      capOf,
      result: winner ? winner.result : stack,
      chosen: winner ? [winner.promotion] : stackable,
      rerun: run,
      decision: {
        mode: 'stack_all',
        candidates: [
          ...(stackable.length > 0
            ? [{ promo_ids: stackable.map((promotion) => promotion.promo_id), discount: figure(stack.total) }]
            : []),
          ...singles.map(({ promotion, result: single }) => ({
            promo_ids: [promotion.promo_id],
            discount: figure(single.total),
          })),
        ],
        detail: winner
          ? `stack_all: the non-stackable ${winner.promotion.promo_id} alone gives ${figure(winner.result.total)}, more ` +
            `than the stack's ${figure(stack.total)}: it wins alone`
          : stackable.length > 0
            ? `stack_all: ${stackable.map((promotion) => promotion.promo_id).join(', ')} applied in priority order, ` +
              `each on what the previous ones left, ${figure(stack.total)} in all` +
              (alone
                ? `; the non-stackable ${alone.promotion.promo_id} alone gives ${figure(alone.result.total)}, not more`
                : '')
            : alone
              ? `stack_all: the non-stackable ${alone.promotion.promo_id} gives nothing`
              : 'stack_all: no promotion applies',
      },
    });
  }
  return winner ? winner.result : stack;
};

/** Step 2 explained: the stacking decision, each promotion of the winning run, then each line. */
const explainPromotions = (
  trace: ExplainTrace,
  context: {
    readonly promotions: readonly Promotion[];
    readonly lines: readonly PromotionLine[];
    readonly scope: PromotionScope;
    readonly capOf: (promotion: Promotion) => Decimal | undefined;
    readonly result: LineDiscounts;
    readonly chosen: readonly Promotion[];
    readonly rerun: (sequence: readonly Promotion[], notes: PromotionNote[]) => LineDiscounts;
    readonly decision: {
      readonly mode: BasketPolicy['promo_stack_mode'];
      readonly candidates: readonly { readonly promo_ids: readonly string[]; readonly discount: string }[];
      readonly detail: string;
    };
  },
): void => {
  const { lines, scope, result, chosen, decision } = context;
  const notEligible = context.promotions.flatMap((promotion) => {
    const reason = notEligibleBecause(promotion, scope);
    return reason === undefined ? [] : [{ promo_id: promotion.promo_id, reason }];
  });
  trace.add({
    step: 'discounts',
    rule: 'stacking',
    input: {
      promo_stack_mode: decision.mode,
      eligible: context.promotions
        .filter((promotion) => notEligibleBecause(promotion, scope) === undefined)
        .sort(byPriority)
        .map((promotion) => promotion.promo_id),
      not_eligible: notEligible,
      candidates: decision.candidates.map((candidate) => ({
        ...candidate,
        promo_ids: [...candidate.promo_ids],
      })),
    },
    output: {
      applied: chosen.map((promotion) => promotion.promo_id),
      discount: figure(sum([...result.perLine])),
    },
    detail: decision.detail,
  });
  const notes: PromotionNote[] = [];
  context.rerun(chosen, notes);
  for (const note of notes) {
    const { promotion } = note;
    const original = promotion.cap;
    trace.add({
      step: 'discounts',
      rule: 'promotion',
      input: {
        promo_id: promotion.promo_id,
        percent: promotion.percent,
        priority: promotion.priority,
        stackable: promotion.stackable,
        ...(note.cap && original
          ? { cap: figure(note.cap), cap_as_set: { amount: original.amount, currency: original.currency } }
          : {}),
        ...(promotion.target ? { customer_group: promotion.target.customer_group } : {}),
      },
      output: {
        discount: figure(sum(note.lines.map((line) => line.amount))),
        uncapped: figure(note.uncapped),
        capped: note.capped,
        lines_reached: note.lines.flatMap((line, index) => (line.reached ? [index + 1] : [])),
      },
      detail:
        `${promotion.percent} % of each line it reaches` +
        (promotion.target ? ` (customer group ${promotion.target.customer_group})` : '') +
        (note.capped
          ? `; ${figure(note.uncapped)} capped at ${figure(note.cap as Decimal)} (cap ${original?.amount} ` +
            `${original?.currency}), split over the lines in proportion`
          : note.cap
            ? `; under its cap of ${figure(note.cap)}`
            : '; no cap') +
        (note.lines.some((line) => line.clamped) ? '; held back by a min_price floor on some lines' : ''),
    });
  }
  lines.forEach((line, index) => {
    const discount = result.perLine[index] as Decimal;
    const applied = notes.flatMap((note) => {
      const entry = note.lines[index];
      return entry?.reached
        ? [
            {
              promo_id: note.promotion.promo_id,
              percent_of: figure(entry.percentOf),
              amount: figure(entry.amount),
              clamped_by_min_price: entry.clamped,
            },
          ]
        : [];
    });
    const clamped = applied.some((entry) => entry.clamped_by_min_price);
    trace.add({
      step: 'discounts',
      rule: 'discount',
      line: index + 1,
      input: { amount: figure(line.amount), floor: figure(line.floor) },
      output: {
        amount: figure(line.amount.minus(discount)),
        discount: figure(discount),
        promotions: applied,
      },
      detail:
        applied.length === 0
          ? line.exempt
            ? 'a stored-value product (gift card) is sold at face value: no promotion reaches it'
            : 'no promotion reaches this line'
          : `${applied.map((entry) => entry.promo_id).join(', ')}` +
            (clamped
              ? `; the line stops at its floor ${figure(line.floor)} (min_price × quantity, never below zero)`
              : ''),
    });
  });
};
