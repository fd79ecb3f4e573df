import { Decimal, dec, ONE } from '../money/decimal';
import { step } from '../money/rounding';
import { PricingError } from './errors';
import type { FxConversion, FxMarkupRule, FxOverride, FxRateSet } from './types';

const BPS_PER_UNIT = 10_000;

/** `EUR→USD` or `EUR->USD` → [from, to]. */
export const parsePair = (pair: string): [string, string] => {
  const [from, to, ...rest] = pair.split(/→|->/);
  if (!from || !to || rest.length > 0)
    throw new PricingError('invalid_request', 'fx_pair', `not a rate pair: ${pair}`);
  return [from.trim(), to.trim()];
};

/** Source named for a leg that a manual override supplies. */
export const OVERRIDE_SOURCE = 'manual_override';

/** One usable hop between two currencies: a published rate, or the override in force that replaces it. */
interface FxEdge {
  /** The rate in the edge's own direction (the pair as published or overridden). */
  readonly rate: Decimal;
  readonly source: string;
  readonly effective_from: string;
  readonly override?: FxOverride;
}

/** A hop asked in a direction: the edge's rate, or its inverse. */
interface FxHop {
  readonly rate: Decimal;
  readonly edge: FxEdge;
}

/** A rate from → to with the legs that made it (none from a currency to itself). */
export interface FxResolution {
  /** At 9 decimals. */
  readonly rate: Decimal;
  readonly legs: readonly FxEdge[];
}

const tables = new WeakMap<FxRateSet, FxTable>();

/**
 * The table of a snapshot as of the pricing instant `at` (overrides expiring after it in force; absent: every
 * override in force). Built once per snapshot object (snapshots are immutable); a snapshot with overrides keeps
 * one table per set of overrides in force, so a call costs one comparison per override.
 */
export const fxTableOf = (set: FxRateSet, at?: string): FxTable => {
  let table = tables.get(set);
  if (!table) {
    table = new FxTable(set, []);
    tables.set(set, table);
  }
  return set.overrides?.length ? table.asOf(at) : table;
};

const keyOf = (from: string, to: string): string => `${from}>${to}`;

/** Rates of one snapshot, indexed by pair, with the overrides given in force. */
export class FxTable {
  private readonly direct = new Map<string, FxEdge>();
  /** Rates already resolved (the table is immutable): a repeated conversion is one lookup. */
  private readonly resolved = new Map<string, FxResolution>();
  /** Conversion entries already described, by pair and markup (few per table). */
  private readonly conversions = new Map<string, FxConversion>();
  /** Tables of the same snapshot by the overrides in force (their indexes), and the last instant asked. */
  private readonly views = new Map<string, FxTable>();
  private lastAsOf: { readonly at: string | undefined; readonly table: FxTable } | undefined;

  /** `overrides`: those in force (default: every override of the snapshot). */
  constructor(
    readonly set: FxRateSet,
    overrides: readonly FxOverride[] = set.overrides ?? [],
  ) {
    for (const rate of set.rates) {
      const [from, to] = parsePair(rate.pair);
      this.direct.set(keyOf(from, to), {
        rate: dec(rate.rate),
        source: rate.source,
        effective_from: rate.effective_from,
      });
    }
    // An override replaces its pair in both directions: asked the other way, it is inverted.
    for (const override of overrides) {
      const [from, to] = parsePair(override.pair);
      this.direct.delete(keyOf(to, from));
      this.direct.set(keyOf(from, to), {
        rate: dec(override.rate),
        source: OVERRIDE_SOURCE,
        effective_from: override.effective_from,
        override,
      });
    }
  }

  /** This snapshot's table with the overrides in force at `at` (expiring after it; absent `at`: all). */
  asOf(at: string | undefined): FxTable {
    const last = this.lastAsOf;
    if (last && last.at === at) return last.table;
    const overrides = this.set.overrides ?? [];
    const inForce = overrides.filter((override) => at === undefined || override.expires_at > at);
    const key = inForce.map((override) => overrides.indexOf(override)).join(',');
    let table = this.views.get(key);
    if (!table) {
      table = new FxTable(this.set, inForce);
      this.views.set(key, table);
    }
    this.lastAsOf = { at, table };
    return table;
  }

  /** A published rate in this direction, or its inverse; never assumes 1:1 (stablecoins included). */
  private oneHop(from: string, to: string): FxHop | undefined {
    const direct = this.direct.get(keyOf(from, to));
    if (direct) return { rate: direct.rate, edge: direct };
    const inverse = this.direct.get(keyOf(to, from));
    return inverse && !inverse.rate.isZero()
      ? { rate: ONE.dividedBy(inverse.rate), edge: inverse }
      : undefined;
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
   * so the chain is always the same). Never assumes 1:1. Kept at 9 decimals. An override in force counts as
   * its pair's published rate.
   */
  rate(from: string, to: string): Decimal {
    return this.resolve(from, to).rate;
  }

  /** The rate from → to with the legs it was made of (see `rate`). */
  resolve(from: string, to: string): FxResolution {
    const key = keyOf(from, to);
    let resolution = this.resolved.get(key);
    if (!resolution) {
      resolution = this.compose(from, to);
      this.resolved.set(key, resolution);
    }
    return resolution;
  }

  private compose(from: string, to: string): FxResolution {
    if (from === to) return { rate: ONE, legs: [] };
    const hop = this.oneHop(from, to);
    if (hop) return { rate: step(hop.rate), legs: [hop.edge] };
    const base = this.set.base_currency;
    const first = from === base ? undefined : this.oneHop(from, base);
    const second = to === base ? undefined : this.oneHop(base, to);
    if ((first || from === base) && (second || to === base)) {
      const hops = [first, second].filter((leg) => leg !== undefined);
      return {
        rate: step(hops.reduce((rate, leg) => rate.times(leg.rate), ONE)),
        legs: hops.map((leg) => leg.edge),
      };
    }
    const chain = this.chain(from, to);
    if (!chain) {
      throw new PricingError(
        'currency_not_available',
        'fx_rate',
        `no rate from ${from} to ${to} in ${this.set.fx_version}`,
      );
    }
    let rate = ONE;
    const legs: FxEdge[] = [];
    for (let index = 1; index < chain.length; index += 1) {
      const leg = this.oneHop(chain[index - 1] as string, chain[index] as string) as FxHop;
      rate = rate.times(leg.rate);
      legs.push(leg.edge);
    }
    return { rate: step(rate), legs };
  }

  /**
   * What a quote shows about the conversion from → to with `markupBps`: the reference rate, the client rate
   * (`clientRate`, as the engine converts), the rate's timestamp (the oldest leg's), source and override, if any.
   */
  conversion(from: string, to: string, markupBps: number): FxConversion {
    // The same table, pair and markup always give the same entry: built once (quotes repeat them).
    const key = `${keyOf(from, to)}@${markupBps}`;
    let entry = this.conversions.get(key);
    if (!entry) {
      entry = Object.freeze(this.describe(from, to, markupBps));
      this.conversions.set(key, entry);
    }
    return entry;
  }

  private describe(from: string, to: string, markupBps: number): FxConversion {
    const { rate, legs } = this.resolve(from, to);
    const client = clientRate(rate, markupBps);
    let timestamp = legs[0]?.effective_from ?? '';
    let override: FxOverride | undefined;
    for (const leg of legs) {
      if (leg.effective_from < timestamp) timestamp = leg.effective_from;
      if (leg.override && (!override || leg.override.expires_at < override.expires_at))
        override = leg.override;
    }
    return {
      pair: `${from}→${to}`,
      from,
      to,
      reference_rate: rate.toString(),
      fx_markup_bps: markupBps,
      client_rate: client.toString(),
      rate_timestamp: timestamp,
      fx_version: this.set.fx_version,
      source: [...new Set(legs.map((leg) => leg.source))].join('+'),
      ...(override
        ? {
            override: {
              pair: override.pair,
              rate: override.rate,
              expires_at: override.expires_at,
              reason: override.reason,
            },
          }
        : {}),
    };
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
