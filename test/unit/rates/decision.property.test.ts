/**
 * Properties of `decidePair`, the per-pair decision of FX ingestion (spec rules 9 and 10, C23), over random
 * pair states, observations, rules and instants: a rate publishes only within the per-tick cap (exactly, in
 * decimal), an open breaker lets nothing through before its time, the decision depends on its inputs only
 * (and leaves them as they were), and a run of ticks agrees step by step with a small reference model of the
 * breaker and of held episodes written here on its own. fast-check prints the seed and the counterexample
 * on failure.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Decimal, dec } from '../../../functions/domain/money/decimal';
import {
  admitTick,
  decidePair,
  type HeldTick,
  type Observation,
  type PairDecision,
  type PairRateState,
  type PairRules,
} from '../../../functions/domain/rates/decision';
import type { BreakerState } from '../../../functions/domain/rates/protection';
import { volume } from '../../support/volume';

const RUNS = { numRuns: volume('DECISION_PROPERTY_RUNS', { local: 500, ci: 2_000 }) } as const;

const T0 = Date.parse('2026-11-22T12:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

/** A rate with four decimals from an integer number of ten-thousandths (exact, no float formatting). */
const rate4 = (units: number): string =>
  `${Math.floor(units / 10_000)}.${String(units % 10_000).padStart(4, '0')}`;

const rateArb = fc.integer({ min: 1_000, max: 30_000 }).map(rate4);

const rulesArb: fc.Arbitrary<PairRules> = fc.record({
  pair: fc.constant('EUR→USD'),
  method: fc.constantFrom('provider' as const, 'median' as const, 'twap' as const),
  precision: fc.constant(4),
  interval_seconds: fc.constantFrom(60, 120, 300, 900),
  publication_delay_seconds: fc.integer({ min: 0, max: 3600 }),
  max_tick_move_bps: fc.integer({ min: 1, max: 2_000 }),
  max_age_seconds: fc.integer({ min: 60, max: 3_600 }),
  breaker: fc.record({
    failure_threshold: fc.integer({ min: 1, max: 4 }),
    window_seconds: fc.integer({ min: 60, max: 1_800 }),
    open_seconds: fc.integer({ min: 60, max: 1_800 }),
  }),
});

/** Seconds before the decision's instant. */
const agoArb = fc.integer({ min: 0, max: 4_000 });
/** Seconds before the decision's instant, often right at `limit` (a boundary of the rules). */
const agoNear = (limit: number) => fc.oneof(agoArb, fc.constantFrom(limit - 1, limit, limit + 1));

const breakerArb = (now: number, rules: PairRules): fc.Arbitrary<BreakerState> =>
  fc.oneof(
    fc.array(agoNear(rules.breaker.window_seconds), { maxLength: 4 }).map((agos) => ({
      status: 'closed' as const,
      failures: agos.map((ago) => iso(now - ago * 1000)).sort(),
    })),
    agoNear(rules.breaker.open_seconds).map((ago) => ({
      status: 'open' as const,
      opened_at: iso(now - ago * 1000),
    })),
    agoArb.map((ago) => ({ status: 'half_open' as const, since: iso(now - ago * 1000) })),
  );

/** A held tick, often against the rate in force and right at the episode's age limit. */
const heldArb = (now: number, rules: PairRules, lastRate: string): fc.Arbitrary<HeldTick> =>
  fc.record(
    {
      rate: rateArb,
      last_rate: fc.oneof(rateArb, fc.constant(lastRate)),
      move_bps: fc.constant('0.00'),
      source: fc.constant('p'),
      observed_at: agoNear(rules.max_age_seconds).map((ago) => iso(now - ago * 1000)),
      slot: fc.constant(0),
      cr_id: fc.constantFrom('cr_1', 'cr_2'),
    },
    { requiredKeys: ['rate', 'last_rate', 'move_bps', 'source', 'observed_at', 'slot'] },
  );

const units = (rate: string): number => Math.round(Number(rate) * 10_000);

/** A rate `bps` away from `last` (rounded to whole ten-thousandths), or a first rate. */
const movedRate = (last: string | undefined, bps: number): string => {
  if (last === undefined) return '1.0845';
  const from = units(last);
  return rate4(Math.max(1, from + Math.round((from * bps) / 10_000)));
};

/** A failure, or a rate: any, or near the cap against the rate in force. */
const observationArb = (now: number, rules: PairRules, lastRate: string): fc.Arbitrary<Observation> =>
  fc.oneof(
    fc.constantFrom('no_source_answered', 'insufficient_sources').map((failure) => ({ failure })),
    fc.record({
      rate: fc.oneof(
        rateArb,
        fc
          .integer({ min: -rules.max_tick_move_bps - 2, max: rules.max_tick_move_bps + 2 })
          .map((bps) => movedRate(lastRate, bps)),
      ),
      source: fc.constant('p'),
      observed_at: fc.integer({ min: 0, max: 120 }).map((ago) => iso(now - ago * 1000)),
    }),
  );

/** One decision's inputs: the instant, the pair's state, this run's observation and the pair's rules. */
const caseArb = fc
  .record({ offset: fc.integer({ min: 0, max: 86_400 * 30 }), rules: rulesArb, lastRate: rateArb })
  .chain(({ offset, rules, lastRate }) => {
    const now = T0 + offset * 1000;
    return fc.record({
      now: fc.constant(new Date(now)),
      state: fc.record(
        {
          last_slot: fc.integer({ min: Math.floor(now / 1000) - 1_000, max: Math.floor(now / 1000) }),
          breaker: breakerArb(now, rules),
          last_rate: fc.constant(lastRate),
          held: heldArb(now, rules, lastRate),
        },
        { requiredKeys: ['breaker'] },
      ),
      observation: observationArb(now, rules, lastRate),
      rules: fc.constant(rules),
    });
  });

type Case = typeof caseArb extends fc.Arbitrary<infer C> ? C : never;

/** A property of every generated decision: `check` sees the inputs and `decidePair`'s answer. */
const everyDecision = (check: (input: Case, decision: PairDecision) => void) => () =>
  fc.assert(
    fc.property(caseArb, (input) =>
      check(input, decidePair(input.state, input.observation, input.rules, input.now)),
    ),
    RUNS,
  );

const slotOf = (now: Date, rules: PairRules) =>
  Math.floor(now.getTime() / 1000 / rules.interval_seconds) * rules.interval_seconds;

const withinCap = (last: string, next: string, capBps: number): boolean =>
  dec(next).minus(dec(last)).abs().times(10_000).lte(dec(last).times(capBps));

const deepFreeze = <T>(value: T): T => {
  if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
};

describe('decidePair: the per-tick cap', () => {
  it(
    'publishes a rate only within the cap against the last valid rate, and holds every rate beyond it',
    everyDecision(({ now, state, observation, rules }, decision) => {
      if (decision.outcome === 'published') {
        expect('rate' in observation).toBe(true);
        if (state.last_rate !== undefined)
          expect(withinCap(state.last_rate, decision.publication.rate, rules.max_tick_move_bps)).toBe(true);
        expect(decision.publication).toEqual({
          pair: rules.pair,
          rate: 'rate' in observation ? observation.rate : undefined,
          source: 'rate' in observation ? observation.source : undefined,
          method: rules.method,
          precision: rules.precision,
          effective_from: iso(now.getTime() + rules.publication_delay_seconds * 1000),
          observed_at: 'rate' in observation ? observation.observed_at : undefined,
        });
        expect(decision.next.held).toBeUndefined();
      }
      if (decision.outcome === 'held') {
        expect(state.last_rate).toBeDefined();
        expect(withinCap(state.last_rate as string, decision.proposal.rate, rules.max_tick_move_bps)).toBe(
          false,
        );
        expect(decision).not.toHaveProperty('publication');
      }
      if ('rate' in observation && (decision.outcome === 'published' || decision.outcome === 'held'))
        expect(decision.outcome).toBe(
          state.last_rate === undefined ||
            withinCap(state.last_rate, observation.rate, rules.max_tick_move_bps)
            ? 'published'
            : 'held',
        );
      if ('failure' in observation)
        expect(['unavailable', 'not_due', 'breaker_open']).toContain(decision.outcome);
    }),
  );
});

describe('decidePair: the breaker', () => {
  it(
    'lets nothing through an open breaker before open_seconds have passed, whatever was observed',
    everyDecision(({ now, state, rules }, decision) => {
      const breaker = state.breaker;
      const due = state.last_slot === undefined || state.last_slot < slotOf(now, rules);
      if (!due) {
        expect(decision).toEqual({ due: false, outcome: 'not_due' });
        return;
      }
      if (breaker.status === 'open') {
        const reopens = Date.parse(breaker.opened_at) + rules.breaker.open_seconds * 1000;
        if (now.getTime() < reopens) {
          expect(decision).toEqual({ due: false, outcome: 'breaker_open', retry_at: iso(reopens) });
          expect(admitTick(state, rules, now)).toEqual(decision);
          return;
        }
        // Its time is up: this tick is the probe, and it decides alone.
        expect('transitions' in decision && decision.transitions[0]).toMatchObject({
          from: 'open',
          to: 'half_open',
        });
      }
      expect(admitTick(state, rules, now)).toEqual({ due: true, slot: slotOf(now, rules) });
      expect(['published', 'held', 'unavailable']).toContain(decision.outcome);
      if ('next' in decision) {
        expect(decision.next.last_slot).toBe(slotOf(now, rules));
        const probe = breaker.status !== 'closed';
        if (probe)
          expect(decision.next.breaker.status).toBe(decision.outcome === 'published' ? 'closed' : 'open');
        if (decision.next.breaker.status === 'open')
          expect(decision.next.breaker).toEqual({ status: 'open', opened_at: now.toISOString() });
      }
    }),
  );
});

describe('decidePair: held episodes', () => {
  it(
    'joins the change request of an episode against the same rate in force and at most max_age_seconds old, else opens one',
    everyDecision(({ now, state, observation, rules }, decision) => {
      const held = state.held;
      if (decision.outcome === 'held' && 'rate' in observation) {
        const last = state.last_rate as string;
        expect(decision.proposal).toEqual({
          rate: observation.rate,
          last_rate: last,
          move_bps: dec(observation.rate)
            .minus(last)
            .times(10_000)
            .dividedBy(last)
            .toFixed(2, Decimal.ROUND_HALF_EVEN),
          source: observation.source,
          observed_at: observation.observed_at,
          slot: slotOf(now, rules),
        });
        const joins =
          held?.cr_id !== undefined &&
          held.last_rate === last &&
          now.getTime() - Date.parse(held.observed_at) <= rules.max_age_seconds * 1000;
        expect(decision.change_request).toEqual(
          joins ? { action: 'join', cr_id: held?.cr_id } : { action: 'open' },
        );
        expect(decision.next.held).toEqual(joins ? held : decision.proposal);
      }
      if (decision.outcome === 'unavailable') expect(decision.next.held).toEqual(held);
      if (decision.outcome === 'published') expect(decision.next).not.toHaveProperty('held');
    }),
  );
});

describe('decidePair: a pure function of its inputs', () => {
  it(
    'answers the same decision for the same inputs and leaves them unchanged',
    everyDecision(({ now, state, observation, rules }, decision) => {
      // Frozen inputs: a write to them would throw. The instant is a fresh Date, checked afterwards.
      const frozen = deepFreeze(structuredClone({ state, observation, rules }));
      const at = new Date(now.getTime());
      expect(decidePair(frozen.state, frozen.observation, frozen.rules, at)).toEqual(decision);
      expect(at.getTime()).toBe(now.getTime());
      const copies = structuredClone({ state, observation, rules });
      expect(decidePair(copies.state, copies.observation, copies.rules, new Date(now.getTime()))).toEqual(
        decision,
      );
    }),
  );
});

/**
 * The reference model: the spec's breaker and held episodes over plain numbers. Closed: failures and
 * anomalies within the window count, the threshold opens it. Open: nothing until open_seconds, then one
 * probe decides (success closes, anything else reopens). A held tick joins the episode's change request while
 * that one is against the same last rate and its first tick is at most max_age_seconds old; otherwise it
 * opens a new one. A published tick ends the episode.
 */
interface Model {
  lastSlot?: number;
  breaker: { status: 'closed'; failures: number[] } | { status: 'open'; at: number } | { status: 'half' };
  lastRate?: string;
  episode?: { cr: string; lastRate: string; observed: number };
  requests: number;
}

type ModelStep =
  | { outcome: 'not_due' | 'breaker_open' }
  | { outcome: 'published' | 'unavailable'; breaker: string }
  | { outcome: 'held'; breaker: string; request: string };

const modelTick = (model: Model, rules: PairRules, now: number, observation: Observation): ModelStep => {
  const slot = Math.floor(now / 1000 / rules.interval_seconds) * rules.interval_seconds;
  if (model.lastSlot !== undefined && model.lastSlot >= slot) return { outcome: 'not_due' };
  if (model.breaker.status === 'open') {
    if (now < model.breaker.at + rules.breaker.open_seconds * 1000) return { outcome: 'breaker_open' };
    model.breaker = { status: 'half' };
  }
  model.lastSlot = slot;
  let outcome: 'published' | 'unavailable' | 'held';
  let request = '';
  if ('failure' in observation) outcome = 'unavailable';
  else {
    const last = model.lastRate;
    const next = observation.rate;
    // |next − last| × 10 000 ≤ cap × last, in whole ten-thousandths (four-decimal rates): exact integers.
    const within =
      last === undefined ||
      Math.abs(units(next) - units(last)) * 10_000 <= units(last) * rules.max_tick_move_bps;
    if (within) {
      outcome = 'published';
      model.lastRate = next;
      model.episode = undefined;
    } else {
      outcome = 'held';
      const episode = model.episode;
      if (episode && episode.lastRate === last && now - episode.observed <= rules.max_age_seconds * 1000)
        request = `join ${episode.cr}`;
      else {
        model.requests += 1;
        model.episode = {
          cr: `cr_${model.requests}`,
          lastRate: last as string,
          observed: Date.parse(observation.observed_at),
        };
        request = 'open';
      }
    }
  }
  const good = outcome === 'published';
  const breaker = model.breaker;
  if (breaker.status === 'half')
    model.breaker = good ? { status: 'closed', failures: [] } : { status: 'open', at: now };
  else if (breaker.status === 'closed') {
    const recent = breaker.failures.filter((time) => time > now - rules.breaker.window_seconds * 1000);
    if (!good) recent.push(now);
    model.breaker =
      !good && recent.length >= rules.breaker.failure_threshold
        ? { status: 'open', at: now }
        : { status: 'closed', failures: recent };
  }
  const status = model.breaker.status === 'half' ? 'half_open' : model.breaker.status;
  return outcome === 'held' ? { outcome, breaker: status, request } : { outcome, breaker: status };
};

/** What the decision says in the model's terms. */
const stepOf = (decision: PairDecision): ModelStep => {
  if (decision.outcome === 'not_due' || decision.outcome === 'breaker_open')
    return { outcome: decision.outcome };
  const breaker = decision.next.breaker.status;
  if (decision.outcome !== 'held') return { outcome: decision.outcome, breaker };
  const request = decision.change_request;
  return { outcome: 'held', breaker, request: request.action === 'open' ? 'open' : `join ${request.cr_id}` };
};

const tickArb = fc.record({
  /** Seconds since the previous tick. */
  after: fc.constantFrom(0, 30, 60, 60, 60, 120, 300, 900, 2_000),
  /**
   * `failure`: no usable rate; `small` and `large`: a rate moved that far from the rate in force; `approved`:
   * between two runs, people approve the held tick's change request, so the rate in force becomes its rate.
   */
  kind: fc.constantFrom('failure' as const, 'small' as const, 'large' as const, 'approved' as const),
  /** The move in basis points: within a cap of a few hundred for `small`, far beyond any cap for `large`. */
  small: fc.integer({ min: -150, max: 150 }),
  large: fc.integer({ min: 2_100, max: 4_000 }),
  down: fc.boolean(),
  /** How long before the run the quote was observed (seconds; near the episode age limits below). */
  age: fc.constantFrom(0, 1, 29, 30, 31, 59, 60),
});

/** The rules of a run of ticks, with episode age limits the ticks' spacing often lands on exactly. */
const runRulesArb = fc
  .tuple(rulesArb, fc.constantFrom(60, 90, 120, 300))
  .map(([rules, maxAge]): PairRules => ({ ...rules, max_age_seconds: maxAge }));

describe('decidePair: a run of ticks', () => {
  it('agrees with the reference model at every tick (outcome, breaker, change request)', () => {
    fc.assert(
      fc.property(runRulesArb, fc.array(tickArb, { minLength: 1, maxLength: 40 }), (rules, ticks) => {
        const model: Model = { breaker: { status: 'closed', failures: [] }, requests: 0 };
        let state: PairRateState = { breaker: { status: 'closed', failures: [] } };
        let now = T0;
        let requests = 0;
        for (const tick of ticks) {
          now += tick.after * 1000;
          if (tick.kind === 'approved') {
            const approved = state.held?.rate;
            if (approved !== undefined) {
              state = { ...state, last_rate: approved };
              model.lastRate = approved;
            }
            continue;
          }
          const observation: Observation =
            tick.kind === 'failure'
              ? { failure: 'no_source_answered' }
              : {
                  rate: movedRate(
                    state.last_rate,
                    tick.kind === 'small' ? tick.small : tick.down ? -tick.large / 2 : tick.large,
                  ),
                  source: 'p',
                  observed_at: iso(now - tick.age * 1000),
                };
          const decision = decidePair(state, observation, rules, new Date(now));
          expect(stepOf(decision)).toEqual(modelTick(model, rules, now, observation));
          if (!('next' in decision)) continue;
          // What the use case does after the decision: the catalog's rate moves on publication, and the held
          // tick gets its change request's id once opened.
          let held = decision.next.held;
          if (decision.outcome === 'held') {
            if (decision.change_request.action === 'open') {
              requests += 1;
              held = { ...decision.proposal, cr_id: `cr_${requests}` };
            } else expect(held).toEqual(state.held);
          }
          state = {
            last_slot: decision.next.last_slot,
            breaker: decision.next.breaker,
            ...(decision.outcome === 'published'
              ? { last_rate: decision.publication.rate }
              : state.last_rate !== undefined
                ? { last_rate: state.last_rate }
                : {}),
            ...(held ? { held } : {}),
          };
        }
        expect(requests).toBe(model.requests);
      }),
      RUNS,
    );
  });
});
