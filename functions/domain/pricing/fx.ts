import { Decimal, dec, ONE } from '../money/decimal';
import { step } from '../money/rounding';
import { PricingError } from './errors';
import type { FxMarkupRule, FxRateSet } from './types';

const BPS_PER_UNIT = 10_000;

/** `EUR→USD` or `EUR->USD` → [from, to]. */
export const parsePair = (pair: string): [string, string] => {
  const [from, to, ...rest] = pair.split(/→|->/);
  if (!from || !to || rest.length > 0)
    throw new PricingError('invalid_request', 'fx_pair', `not a rate pair: ${pair}`);
  return [from.trim(), to.trim()];
};

const tables = new WeakMap<FxRateSet, FxTable>();

/** The table of a snapshot, built once per snapshot object (snapshots are immutable). */
export const fxTableOf = (set: FxRateSet): FxTable => {
  let table = tables.get(set);
  if (!table) {
    table = new FxTable(set);
    tables.set(set, table);
  }
  return table;
};

/** Rates of one snapshot, indexed by pair. */
export class FxTable {
  private readonly direct = new Map<string, Decimal>();

  constructor(readonly set: FxRateSet) {
    for (const rate of set.rates) {
      const [from, to] = parsePair(rate.pair);
      this.direct.set(`${from}>${to}`, dec(rate.rate));
    }
  }

  /** A published rate in this direction, or its inverse; never assumes 1:1 (stablecoins included). */
  private oneHop(from: string, to: string): Decimal | undefined {
    const direct = this.direct.get(`${from}>${to}`);
    if (direct) return direct;
    const inverse = this.direct.get(`${to}>${from}`);
    return inverse && !inverse.isZero() ? ONE.dividedBy(inverse) : undefined;
  }

  /** Currencies reachable in one usable hop (a published pair in either direction), in code order. */
  private neighbours(currency: string): string[] {
    const found = new Set<string>();
    for (const key of this.direct.keys()) {
      const [from, to] = key.split('>') as [string, string];
      if (from === currency) found.add(to);
      if (to === currency) found.add(from);
    }
    return [...found].filter((next) => this.oneHop(currency, next) !== undefined).sort();
  }

  /**
   * The published rate from → to: the direct pair, else the inverse of the opposite pair, else the cross rate
   * through the snapshot's base currency (from → base → to, each leg direct or inverse), else the shortest
   * chain of published pairs (e.g. EUR → USD → USDT when only USD→USDT is published; neighbours in code order
   * so the chain is always the same). Never assumes 1:1. Kept at 9 decimals.
   */
  rate(from: string, to: string): Decimal {
    if (from === to) return ONE;
    const hop = this.oneHop(from, to);
    if (hop) return step(hop);
    const base = this.set.base_currency;
    const first = from === base ? ONE : this.oneHop(from, base);
    const second = to === base ? ONE : this.oneHop(base, to);
    if (first && second) return step(first.times(second));
    const chain = this.chain(from, to);
    if (!chain) {
      throw new PricingError(
        'currency_not_available',
        'fx_rate',
        `no rate from ${from} to ${to} in ${this.set.fx_version}`,
      );
    }
    let rate = ONE;
    for (let index = 1; index < chain.length; index += 1) {
      rate = rate.times(this.oneHop(chain[index - 1] as string, chain[index] as string) as Decimal);
    }
    return step(rate);
  }

  /** Breadth-first search over published pairs: the shortest chain of currencies, or undefined. */
  private chain(from: string, to: string): string[] | undefined {
    const previous = new Map<string, string>([[from, from]]);
    const queue = [from];
    while (queue.length > 0) {
      const current = queue.shift() as string;
      for (const next of this.neighbours(current)) {
        if (previous.has(next)) continue;
        previous.set(next, current);
        if (next === to) {
          const path = [to];
          while (path[0] !== from) path.unshift(previous.get(path[0] as string) as string);
          return path;
        }
        queue.push(next);
      }
    }
    return undefined;
  }
}

/** The most specific markup rule: channel and region, then region, then channel, then the default. */
export const markupBpsFor = (rules: readonly FxMarkupRule[], channel?: string, region?: string): number => {
  const score = (rule: FxMarkupRule): number => {
    if (rule.channel !== undefined && rule.channel !== channel) return -1;
    if (rule.region !== undefined && rule.region !== region) return -1;
    return (rule.region !== undefined ? 2 : 0) + (rule.channel !== undefined ? 1 : 0);
  };
  let best: { score: number; bps: number } | undefined;
  for (const rule of rules) {
    const value = score(rule);
    if (value >= 0 && (!best || value > best.score)) best = { score: value, bps: rule.fx_markup_bps };
  }
  return best?.bps ?? 0;
};

/** Client rate = published rate × (1 + bps / 10 000) (C19), at 9 decimals. */
export const clientRate = (published: Decimal, markupBps: number): Decimal =>
  step(published.times(ONE.plus(new Decimal(markupBps).dividedBy(BPS_PER_UNIT))));
