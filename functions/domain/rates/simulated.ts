import { fnv1a } from '../fnv1a';
import { parsePair } from '../pricing/fx';
import { parseRate } from './aggregate';
import { BPS_PER_UNIT } from './protection';

/**
 * A simulated volatile feed for the local stack, tests and demos: per pair, a random walk in whole basis
 * points around a starting rate, one step every `step_seconds` from `epoch`. The walk is a pure function of
 * (seed, pair, step): the same seed gives the same rates at the same times in every process. Steps are at
 * most `volatility_bps` either way and the walk is reflected at ±`max_drift_bps`, so it never strays far or
 * reaches zero. The feed can be told to fail (an outage, for every pair or some) or to quote a pair N bps off
 * (a spike) until told otherwise.
 */

export interface SimulatedFeedConfig {
  readonly seed: number | string;
  /** Starting rate per pair (`EUR→USD`: `1.0845`). */
  readonly start_rates: Readonly<Record<string, string>>;
  /** Largest step either way, in basis points (default 5). */
  readonly volatility_bps?: number;
  /** Seconds per step (default 60). */
  readonly step_seconds?: number;
  /** Bound of the walk either way, in basis points (default 1500). */
  readonly max_drift_bps?: number;
  /** Time of step 0 (default 2026-01-01T00:00:00.000Z); earlier times quote the starting rate. */
  readonly epoch?: string;
}

export class SimulatedFeedError extends Error {
  constructor(
    readonly reason: 'outage' | 'unknown_pair',
    message: string,
  ) {
    super(message);
    this.name = 'SimulatedFeedError';
  }
}

const DEFAULT_EPOCH = '2026-01-01T00:00:00.000Z';

/** MurmurHash3's finaliser: a well-mixed 32-bit value from (key, step). */
const mix = (key: number, step: number): number => {
  let value = (key ^ Math.imul(step, 0x9e3779b1)) >>> 0;
  value ^= value >>> 16;
  value = Math.imul(value, 0x85ebca6b);
  value ^= value >>> 13;
  value = Math.imul(value, 0xc2b2ae35);
  value ^= value >>> 16;
  return value >>> 0;
};

const positiveInteger = (name: string, value: number): number => {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`${name} must be a positive integer`);
  return value;
};

const canonical = (pair: string): string => {
  const [from, to] = parsePair(pair);
  return `${from}→${to}`;
};

export class SimulatedFeed {
  private readonly starts = new Map<string, string>();
  private readonly volatility: number;
  private readonly stepMs: number;
  private readonly maxDrift: number;
  private readonly epoch: number;
  private readonly seed: string;
  /** Last computed (step, offset) per pair: walking forward continues from it. */
  private readonly walked = new Map<string, { step: number; offset: number }>();
  private outage: 'all' | ReadonlySet<string> | undefined;
  private readonly spikes = new Map<string, number>();

  constructor(config: SimulatedFeedConfig) {
    this.seed = String(config.seed);
    this.volatility = positiveInteger('volatility_bps', config.volatility_bps ?? 5);
    this.stepMs = positiveInteger('step_seconds', config.step_seconds ?? 60) * 1000;
    this.maxDrift = positiveInteger('max_drift_bps', config.max_drift_bps ?? 1500);
    if (this.maxDrift >= BPS_PER_UNIT || this.maxDrift < this.volatility)
      throw new RangeError('max_drift_bps must be at least volatility_bps and below 10000');
    this.epoch = Date.parse(config.epoch ?? DEFAULT_EPOCH);
    if (Number.isNaN(this.epoch)) throw new RangeError(`epoch is not a time: ${config.epoch}`);
    for (const [pair, rate] of Object.entries(config.start_rates)) {
      parseRate(rate);
      this.starts.set(canonical(pair), rate);
    }
  }

  /** The pairs the feed quotes. */
  pairs(): string[] {
    return [...this.starts.keys()];
  }

  /** Every pair (`'all'`), some pairs, or none (`undefined`) fail from now on. */
  setOutage(pairs: 'all' | readonly string[] | undefined): void {
    this.outage = pairs === 'all' || pairs === undefined ? pairs : new Set(pairs.map(canonical));
  }

  /** Quotes the pair `bps` basis points off its walk (−9999 … 100000) until cleared with `undefined`. */
  setSpike(pair: string, bps: number | undefined): void {
    const key = canonical(pair);
    if (bps === undefined) {
      this.spikes.delete(key);
      return;
    }
    if (!Number.isInteger(bps) || bps <= -BPS_PER_UNIT || bps > 100_000)
      throw new RangeError(`a spike is a whole number of bps above -10000 and at most 100000: ${bps}`);
    this.spikes.set(key, bps);
  }

  /** The walk's offset from the starting rate at a step, in basis points. */
  offsetAt(pair: string, step: number): number {
    const key = canonical(pair);
    const hashKey = fnv1a(`${this.seed}|${key}`);
    const known = this.walked.get(key);
    let current = known && known.step <= step ? known : { step: 0, offset: 0 };
    const span = 2 * this.volatility + 1;
    while (current.step < step) {
      const next = current.step + 1;
      let offset = current.offset + (mix(hashKey, next) % span) - this.volatility;
      if (offset > this.maxDrift) offset = 2 * this.maxDrift - offset;
      if (offset < -this.maxDrift) offset = -2 * this.maxDrift - offset;
      current = { step: next, offset };
    }
    this.walked.set(key, current);
    return current.offset;
  }

  /** The rate quoted for a pair at a time (exact decimal), or a `SimulatedFeedError`. */
  quote(pair: string, at: Date): string {
    const key = canonical(pair);
    const start = this.starts.get(key);
    if (start === undefined) throw new SimulatedFeedError('unknown_pair', `the feed does not quote ${key}`);
    if (this.outage === 'all' || this.outage?.has(key))
      throw new SimulatedFeedError('outage', `simulated outage for ${key}`);
    const step = Math.max(0, Math.floor((at.getTime() - this.epoch) / this.stepMs));
    const bps = BPS_PER_UNIT + this.offsetAt(key, step) + (this.spikes.get(key) ?? 0);
    return parseRate(start).times(bps).dividedBy(BPS_PER_UNIT).toString();
  }
}
