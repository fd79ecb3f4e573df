/**
 * Explain (C28): how a price came about, step by step, in the specification's fixed order — `base`, `discounts`,
 * `taxes`, `fees`, `rounding`. The engine fills a trace only when one is asked for (`explainBasket`); without it,
 * every trace point is a `trace?.add(…)` whose arguments are never evaluated, so the plain path builds nothing.
 *
 * Each step names the rule that acted, what it took (`input`) and what it gave (`output`), with every figure
 * a decimal string (C1; integers such as quantities, priorities and basis points stay JSON integers). Within a
 * line, each step's output is the next one's input: a base step's `output.unit_price` is the next base step's
 * `input.unit_price`, `line_amount` gives the line's exact `amount`, which `discount` takes and reduces, which
 * `tax` takes; `rounding` takes the exact figures and gives exactly the line's rounded ones.
 */
import type { Json } from '../money/canonical';
import type { Decimal } from '../money/decimal';

export type ExplainStepKind = 'base' | 'discounts' | 'taxes' | 'fees' | 'rounding';

/** The specification's order of calculation (rule 1): steps are listed in this order. */
export const EXPLAIN_STEP_ORDER: readonly ExplainStepKind[] = [
  'base',
  'discounts',
  'taxes',
  'fees',
  'rounding',
];

export type ExplainFigures = Readonly<Record<string, Json>>;

export interface ExplainStep {
  readonly step: ExplainStepKind;
  /** What acted: `price_list`, `tier`, `fx_conversion`, `charm`, `override`, `customer_group`, `promotion`, … */
  readonly rule: string;
  /** The basket line (1-based) the step concerns; absent for a basket-level step. */
  readonly line?: number;
  readonly input: ExplainFigures;
  readonly output: ExplainFigures;
  readonly detail: string;
}

export interface Explanation {
  readonly steps: readonly ExplainStep[];
}

/** A figure as C1 writes it: a decimal string, never a JSON number, never exponent notation. */
export const figure = (value: Decimal): string => value.toFixed();

/**
 * The steps of one calculation, kept per kind so that the explanation lists them in the fixed order whatever
 * order the engine meets them in (a bundle's split is known in step 1, its allocation in step 5).
 */
export class ExplainTrace {
  private readonly kinds: Record<ExplainStepKind, ExplainStep[]> = {
    base: [],
    discounts: [],
    taxes: [],
    fees: [],
    rounding: [],
  };

  add(step: ExplainStep): void {
    this.kinds[step.step].push(step);
  }

  explanation(): Explanation {
    return { steps: EXPLAIN_STEP_ORDER.flatMap((kind) => this.kinds[kind]) };
  }
}
