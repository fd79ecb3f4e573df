import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dec } from '../../../functions/domain/money/decimal';
import { rateFreshness } from '../../../functions/domain/rates/freshness';
import { SimulatedFeed, SimulatedFeedError } from '../../../functions/domain/rates/simulated';

const T0 = Date.parse('2026-11-22T12:00:00.000Z');
const t = (seconds: number) => new Date(T0 + seconds * 1000);
const POLICY = { stale_after_seconds: 300, max_age_seconds: 900 };

describe('rateFreshness', () => {
  it('is fresh up to stale_after_seconds, stale after, refused after max_age_seconds', () => {
    expect(rateFreshness(POLICY, t(0).toISOString(), t(300))).toEqual({
      stale: false,
      age_seconds: 300,
      refuse: false,
    });
    expect(rateFreshness(POLICY, t(0).toISOString(), t(301))).toEqual({
      stale: true,
      age_seconds: 301,
      refuse: false,
    });
    expect(rateFreshness(POLICY, t(0), t(900.5))).toEqual({ stale: true, age_seconds: 900, refuse: false });
    expect(rateFreshness(POLICY, t(0), t(901))).toEqual({ stale: true, age_seconds: 901, refuse: true });
  });

  it('counts a rate not yet in force as age 0', () => {
    expect(rateFreshness(POLICY, t(60).toISOString(), t(0))).toEqual({
      stale: false,
      age_seconds: 0,
      refuse: false,
    });
  });

  it('never marks a pair without a policy stale', () => {
    expect(rateFreshness(undefined, t(0).toISOString(), t(10_000_000))).toEqual({
      stale: false,
      age_seconds: 10_000_000,
      refuse: false,
    });
  });

  it('refuses a time that is not one', () => {
    expect(() => rateFreshness(POLICY, 'yesterday', t(0))).toThrow(RangeError);
  });
});

describe('SimulatedFeed', () => {
  const config = {
    seed: 42,
    start_rates: { 'EUR→USD': '1.0845', 'EUR->BTC': '0.0000109' },
    volatility_bps: 8,
  };

  it('is deterministic per seed, and another seed walks elsewhere', () => {
    const times = Array.from({ length: 50 }, (_, index) => t(index * 60));
    const a = new SimulatedFeed(config);
    const b = new SimulatedFeed(config);
    const other = new SimulatedFeed({ ...config, seed: 'other' });
    const walk = (feed: SimulatedFeed) => times.map((time) => feed.quote('EUR→USD', time));
    expect(walk(a)).toEqual(walk(b));
    expect(walk(other)).not.toEqual(walk(a));
    // Going back in time gives the same rates again.
    expect(
      times
        .slice()
        .reverse()
        .map((time) => a.quote('EUR→USD', time)),
    ).toEqual(walk(b).reverse());
  });

  it('moves at most volatility_bps per step and stays within max_drift_bps (property)', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 0, max: 300 }),
        (seed, volatility, extra) => {
          const drift = volatility + extra;
          const feed = new SimulatedFeed({
            seed,
            start_rates: { 'EUR→USD': '1.0845' },
            volatility_bps: volatility,
            max_drift_bps: drift,
            step_seconds: 60,
          });
          let previous = 0;
          for (let step = 1; step <= 200; step += 1) {
            const offset = feed.offsetAt('EUR→USD', step);
            expect(Math.abs(offset - previous)).toBeLessThanOrEqual(volatility);
            expect(Math.abs(offset)).toBeLessThanOrEqual(drift);
            previous = offset;
          }
        },
      ),
    );
  });

  it('quotes exact decimals: start × (10 000 + offset) / 10 000', () => {
    const feed = new SimulatedFeed(config);
    const at = t(3600);
    const step = Math.floor((at.getTime() - Date.parse('2026-01-01T00:00:00.000Z')) / 60_000);
    const offset = feed.offsetAt('EUR→USD', step);
    expect(feed.quote('EUR→USD', at)).toBe(
      dec('1.0845')
        .times(10_000 + offset)
        .dividedBy(10_000)
        .toString(),
    );
    expect(feed.quote('EUR→BTC', at)).toMatch(/^0\.0000\d+$/);
    expect(feed.pairs()).toEqual(['EUR→USD', 'EUR→BTC']);
  });

  it('quotes the starting rate before its epoch', () => {
    const feed = new SimulatedFeed({ ...config, epoch: '2030-01-01T00:00:00.000Z' });
    expect(feed.quote('EUR→USD', t(0))).toBe('1.0845');
  });

  it('can spike a pair by N bps until cleared', () => {
    const feed = new SimulatedFeed(config);
    const normal = feed.quote('EUR→USD', t(0));
    feed.setSpike('EUR->USD', 500);
    const spiked = feed.quote('EUR→USD', t(0));
    expect(dec(spiked).minus(dec(normal)).toString()).toBe(
      dec('1.0845').times(500).dividedBy(10_000).toString(),
    );
    feed.setSpike('EUR→USD', undefined);
    expect(feed.quote('EUR→USD', t(0))).toBe(normal);
    expect(() => feed.setSpike('EUR→USD', -10_000)).toThrow(RangeError);
    expect(() => feed.setSpike('EUR→USD', 0.5)).toThrow(RangeError);
  });

  it('can fail for every pair or some, until told otherwise', () => {
    const feed = new SimulatedFeed(config);
    feed.setOutage('all');
    expect(() => feed.quote('EUR→USD', t(0))).toThrow(SimulatedFeedError);
    feed.setOutage(['EUR->BTC']);
    expect(feed.quote('EUR→USD', t(0))).toMatch(/^[01]\.\d+$/);
    try {
      feed.quote('EUR→BTC', t(0));
    } catch (error) {
      expect((error as SimulatedFeedError).reason).toBe('outage');
    }
    feed.setOutage(undefined);
    expect(feed.quote('EUR→BTC', t(0))).toBeDefined();
  });

  it('refuses an unknown pair and an invalid configuration', () => {
    const feed = new SimulatedFeed(config);
    expect(() => feed.quote('EUR→GBP', t(0))).toThrow('the feed does not quote EUR→GBP');
    expect(() => new SimulatedFeed({ ...config, volatility_bps: 0 })).toThrow(RangeError);
    expect(() => new SimulatedFeed({ ...config, step_seconds: 1.5 })).toThrow(RangeError);
    expect(() => new SimulatedFeed({ ...config, max_drift_bps: 10_000 })).toThrow(RangeError);
    expect(() => new SimulatedFeed({ ...config, max_drift_bps: 7 })).toThrow(RangeError);
    expect(() => new SimulatedFeed({ ...config, epoch: 'never' })).toThrow(RangeError);
    expect(() => new SimulatedFeed({ ...config, start_rates: { 'EUR→USD': '0' } })).toThrow(RangeError);
  });
});
