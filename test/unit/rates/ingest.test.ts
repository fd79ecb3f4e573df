import { beforeEach, describe, expect, it } from 'vitest';
import { trimTicks } from '../../../functions/domain/rates/aggregate';
import { INITIAL_BREAKER } from '../../../functions/domain/rates/protection';
import type {
  CurrentRates,
  FxRate,
  HeldTickInput,
  HeldTickOpener,
  JournalAppender,
  JsonValue,
  PairState,
  RatePublisher,
  RateQuote,
  RateSource,
  RateStateStore,
  SaveResult,
  TickRetention,
} from '../../../functions/ports/rates';
import type { RatePairPolicy, RatePolicy } from '../../../functions/schemas/rate-policy';
import {
  type IngestDeps,
  type IngestReport,
  ingestRates,
  RateIngestionError,
} from '../../../functions/usecases/rates/ingest';
import type { OperationalSignal } from '../../../functions/usecases/webhooks/operational-events';

const T0 = Date.parse('2026-11-22T12:00:00.000Z');

/** Conditional writes on a version, as the DynamoDB store does them. */
class MemoryStateStore implements RateStateStore {
  readonly items = new Map<string, PairState>();
  puts = 0;
  failPutNumber: number | undefined;

  async get(pair: string): Promise<PairState> {
    await Promise.resolve();
    return structuredClone(this.items.get(pair) ?? { pair, version: 0, breaker: INITIAL_BREAKER, ticks: [] });
  }

  async put(state: PairState, retention?: TickRetention): Promise<SaveResult> {
    await Promise.resolve();
    this.puts += 1;
    if (this.puts === this.failPutNumber) throw new Error('state store unavailable');
    const stored = this.items.get(state.pair)?.version ?? 0;
    if (stored !== state.version) return { saved: false };
    const ticks = retention ? trimTicks(state.ticks, retention) : [...state.ticks];
    const next = structuredClone({ ...state, ticks, version: state.version + 1 });
    this.items.set(state.pair, next);
    return { saved: true, state: structuredClone(next) };
  }
}

/** A source answering from a table the test changes; `'fail'` rejects the whole fetch. */
class FakeSource implements RateSource {
  readonly calls: string[][] = [];
  answers: Record<string, string | undefined> | 'fail' = {};
  observedAt: ((at: Date) => string) | undefined;
  gate: Promise<void> | undefined;

  constructor(readonly sourceId: string) {}

  async fetch(pairs: readonly string[], at: Date): Promise<RateQuote[]> {
    this.calls.push([...pairs]);
    await this.gate;
    if (this.answers === 'fail') throw Object.assign(new Error('down'), { reason: 'timeout' });
    const answers = this.answers;
    return pairs.flatMap((pair) => {
      const rate = answers[pair];
      return rate === undefined
        ? []
        : [{ pair, rate, source: this.sourceId, observed_at: this.observedAt?.(at) ?? at.toISOString() }];
    });
  }
}

/** The catalog's fx part: publish replaces pairs in a new version; identical rates are a no-op. */
class FakeCatalog implements RatePublisher, CurrentRates {
  version = 1;
  rates: FxRate[] = [];
  readonly published: { rates: FxRate[]; traceId: string }[] = [];
  failNext = 0;

  constructor(public policy: RatePolicy | undefined) {}

  async current() {
    return {
      fx_version: `fx-${this.version}`,
      base_currency: 'EUR',
      rates: structuredClone(this.rates),
      ...(this.policy ? { policy: this.policy } : {}),
    };
  }

  async publish(input: { rates: readonly FxRate[]; traceId: string }) {
    if (this.failNext > 0) {
      this.failNext -= 1;
      throw new Error('publication conflict');
    }
    const next = [
      ...this.rates.filter((rate) => !input.rates.some((replacement) => replacement.pair === rate.pair)),
      ...input.rates,
    ];
    if (JSON.stringify(next) !== JSON.stringify(this.rates)) {
      this.version += 1;
      this.rates = structuredClone(next);
      this.published.push({ rates: structuredClone([...input.rates]), traceId: input.traceId });
    }
    return { fx_version: `fx-${this.version}` };
  }

  rate(pair: string): string | undefined {
    return this.rates.find((rate) => rate.pair === pair)?.rate;
  }
}

class FakeOpener implements HeldTickOpener {
  readonly opened: HeldTickInput[] = [];
  failNext = 0;

  async open(input: HeldTickInput) {
    if (this.failNext > 0) {
      this.failNext -= 1;
      throw new Error('change requests unavailable');
    }
    this.opened.push(input);
    return { cr_id: `cr_${this.opened.length}` };
  }
}

class FakeJournal implements JournalAppender {
  readonly entries: { entry_id: string; type: string; data: JsonValue }[] = [];
  failNext = 0;

  async append(input: { entry_id: string; type: string; data: JsonValue }) {
    if (this.failNext > 0) {
      this.failNext -= 1;
      throw new Error('journal unavailable');
    }
    const index = this.entries.findIndex((entry) => entry.entry_id === input.entry_id);
    if (index >= 0) return { index, created: false };
    this.entries.push(input);
    return { index: this.entries.length - 1, created: true };
  }

  ofType(type: string) {
    return this.entries.filter((entry) => entry.type === type);
  }

  data(entryId: string) {
    return this.entries.find((entry) => entry.entry_id === entryId)?.data;
  }
}

const pairPolicy = (
  overrides: Partial<RatePairPolicy> & Pick<RatePairPolicy, 'pair' | 'sources'>,
): RatePairPolicy => ({
  method: 'provider',
  interval_seconds: 60,
  publication_delay_seconds: 30,
  max_tick_move_bps: 100,
  precision: 4,
  stale_after_seconds: 300,
  max_age_seconds: 900,
  ...overrides,
});

const BREAKER = { failure_threshold: 3, window_seconds: 600, open_seconds: 300 };

let now: number;
let store: MemoryStateStore;
let catalog: FakeCatalog;
let opener: FakeOpener;
let journal: FakeJournal;
let sources: Map<string, FakeSource>;

const setup = (pairs: RatePairPolicy[], sourceIds: string[], initialRates: FxRate[] = []) => {
  now = T0;
  store = new MemoryStateStore();
  catalog = new FakeCatalog({
    sources: sourceIds.map((source_id) => ({ source_id, kind: 'simulated' as const })),
    pairs,
    breaker: BREAKER,
  });
  catalog.rates = structuredClone(initialRates);
  opener = new FakeOpener();
  journal = new FakeJournal();
  signals = new Map();
  failNextSignal = false;
  sources = new Map(sourceIds.map((id) => [id, new FakeSource(id)]));
};

/** Operational signals emitted (`operations.fx_breaker_opened`), by key; one failing emission when set. */
let signals: Map<string, OperationalSignal>;
let failNextSignal = false;

const deps = (): IngestDeps => ({
  sources,
  state: store,
  publisher: catalog,
  heldTicks: opener,
  journal,
  current: catalog,
  clock: { now: () => new Date(now) },
  operations: {
    emit: async (signal) => {
      if (failNextSignal) {
        failNextSignal = false;
        throw new Error('outbox unavailable');
      }
      signals.set(signal.key, signal);
    },
  },
});

const source = (id: string) => sources.get(id) as FakeSource;
const run = (options: { runId?: string; traceId?: string; intervalOverrideSeconds?: number } = {}) =>
  ingestRates(deps(), { traceId: options.traceId ?? `trc_${now}`, ...options });
const outcomes = (report: IngestReport) =>
  Object.fromEntries(report.pairs.map((pair) => [pair.pair, pair.outcome]));
const advance = (seconds: number) => {
  now += seconds * 1000;
};
const iso = (ms: number) => new Date(ms).toISOString();
const USD: FxRate = { pair: 'EUR→USD', rate: '1.0845', source: 'ecb', method: 'provider', precision: 4 };

describe('ingestRates: publication', () => {
  beforeEach(() => {
    setup(
      [
        pairPolicy({ pair: 'EUR→USD', sources: ['primary', 'backup'] }),
        pairPolicy({ pair: 'EUR->USDT', sources: ['primary'], precision: 6, publication_delay_seconds: 0 }),
      ],
      ['primary', 'backup'],
      [USD],
    );
  });

  it('publishes every passing pair in one call, with effective_from = fetch time + delay', async () => {
    source('primary').answers = { 'EUR→USD': '1.08512', 'EUR→USDT': '1.0853417' };
    const report = await run({ traceId: 'trc_1' });
    expect(catalog.published).toEqual([
      {
        traceId: 'trc_1',
        rates: [
          {
            pair: 'EUR→USD',
            rate: '1.0851',
            source: 'primary',
            method: 'provider',
            precision: 4,
            effective_from: iso(T0 + 30_000),
          },
          {
            pair: 'EUR→USDT',
            rate: '1.085342',
            source: 'primary',
            method: 'provider',
            precision: 6,
            effective_from: iso(T0),
          },
        ],
      },
    ]);
    expect(report).toMatchObject({ fx_version: 'fx-2', trace_id: 'trc_1' });
    expect(report.pairs[0]).toMatchObject({
      pair: 'EUR→USD',
      outcome: 'published',
      rate: '1.0851',
      move_bps: '5.53',
      fx_version: 'fx-2',
    });
    expect(report.pairs[1]).toMatchObject({ pair: 'EUR→USDT', outcome: 'published', rate: '1.085342' });
    expect(source('primary').calls).toEqual([['EUR→USD', 'EUR→USDT']]);
    expect(journal.entries.map((entry) => entry.entry_id)).toEqual(['fx-publication:fx-2']);
    expect(journal.data('fx-publication:fx-2')).toEqual({
      fx_version: 'fx-2',
      trace_id: 'trc_1',
      pairs: [
        {
          pair: 'EUR→USD',
          rate: '1.0851',
          source: 'primary',
          method: 'provider',
          precision: 4,
          effective_from: iso(T0 + 30_000),
          observed_at: iso(T0),
          previous_rate: '1.0845',
          move_bps: '5.53',
        },
        {
          pair: 'EUR→USDT',
          rate: '1.085342',
          source: 'primary',
          method: 'provider',
          precision: 6,
          effective_from: iso(T0),
          observed_at: iso(T0),
          previous_rate: null,
          move_bps: null,
        },
      ],
    });
    const state = await store.get('EUR→USD');
    expect(state).toMatchObject({
      last_slot: T0 / 1000,
      last_published: { rate: '1.0851', fx_version: 'fx-2', effective_from: iso(T0 + 30_000) },
    });
    expect(state.work).toBeUndefined();
  });

  it('does nothing more in the same slot (a retried run is a no-op), and ticks again in the next one', async () => {
    source('primary').answers = { 'EUR→USD': '1.0851', 'EUR→USDT': '1.0853' };
    await run({ runId: 'run-1' });
    advance(30);
    const again = await run({ runId: 'run-1' });
    expect(outcomes(again)).toEqual({ 'EUR→USD': 'not_due', 'EUR→USDT': 'not_due' });
    expect(catalog.published).toHaveLength(1);
    advance(30);
    source('primary').answers = { 'EUR→USD': '1.0853', 'EUR→USDT': '1.0854' };
    const next = await run();
    expect(outcomes(next)).toEqual({ 'EUR→USD': 'published', 'EUR→USDT': 'published' });
    expect(catalog.rate('EUR→USD')).toBe('1.0853');
    expect(journal.ofType('fx_publication').map((entry) => entry.entry_id)).toEqual([
      'fx-publication:fx-2',
      'fx-publication:fx-3',
    ]);
  });

  it('honours the local stack interval override', async () => {
    source('primary').answers = { 'EUR→USD': '1.0851', 'EUR→USDT': '1.0853' };
    await run({ intervalOverrideSeconds: 5 });
    advance(5);
    const report = await run({ intervalOverrideSeconds: 5 });
    expect(outcomes(report)).toEqual({ 'EUR→USD': 'published', 'EUR→USDT': 'published' });
    await expect(run({ intervalOverrideSeconds: 0 })).rejects.toThrow(RangeError);
  });

  it('can build its sources from the policy in force', async () => {
    source('primary').answers = { 'EUR→USD': '1.0851', 'EUR→USDT': '1.0853' };
    const seen: string[][] = [];
    const report = await ingestRates(
      {
        ...deps(),
        sources: (policy) => {
          seen.push(policy.sources.map((entry) => entry.source_id));
          return sources;
        },
      },
      { traceId: 'trc_s' },
    );
    expect(seen).toEqual([['primary', 'backup']]);
    expect(outcomes(report)).toEqual({ 'EUR→USD': 'published', 'EUR→USDT': 'published' });
  });

  it('answers an empty report when the catalog has no rate policy', async () => {
    catalog.policy = undefined;
    expect(await run({ traceId: 'trc_x' })).toEqual({
      at: iso(T0),
      trace_id: 'trc_x',
      run_id: 'trc_x',
      pairs: [],
    });
  });
});

describe('ingestRates: fallback through the source order', () => {
  beforeEach(() => {
    setup([pairPolicy({ pair: 'EUR→USD', sources: ['a', 'b', 'c'] })], ['a', 'b', 'c'], [USD]);
  });

  it('asks the next source after a failure and journals each fallback', async () => {
    source('a').answers = 'fail';
    source('b').answers = {};
    source('c').answers = { 'EUR→USD': '1.0850' };
    const report = await run({ traceId: 'trc_f' });
    expect(report.pairs[0]).toMatchObject({
      outcome: 'published',
      source: 'c',
      failures: [
        { source_id: 'a', reason: 'timeout', fallback_to: 'b' },
        { source_id: 'b', reason: 'no_quote', fallback_to: 'c' },
      ],
    });
    expect(catalog.rate('EUR→USD')).toBe('1.0850');
    expect(catalog.rates[0]?.source).toBe('c');
    const slot = iso(T0);
    expect(journal.data(`fx-protection:EUR-USD:${slot}:source-failed:a`)).toEqual({
      decision: 'fallback',
      pair: 'EUR→USD',
      source: 'a',
      reason: 'timeout',
      fallback_to: 'b',
      trace_id: 'trc_f',
    });
    expect(journal.data(`fx-protection:EUR-USD:${slot}:source-failed:b`)).toMatchObject({
      decision: 'fallback',
      reason: 'no_quote',
    });
    expect(source('c').calls).toHaveLength(1);
  });

  it('stops at the first source that answers', async () => {
    source('a').answers = { 'EUR→USD': '1.0850' };
    await run();
    expect(source('b').calls).toHaveLength(0);
    expect(journal.ofType('fx_protection')).toEqual([]);
  });

  it('treats a malformed, stale, future or foreign quote as a failure of that source', async () => {
    source('a').answers = { 'EUR→USD': 'NaN' };
    source('b').answers = { 'EUR→USD': '1.0850' };
    source('b').observedAt = (at) => iso(at.getTime() - 301_000);
    source('c').answers = { 'EUR→USD': '1.0850' };
    source('c').observedAt = (at) => iso(at.getTime() + 120_000);
    const report = await run();
    expect(report.pairs[0]).toMatchObject({
      outcome: 'unavailable',
      failures: [
        { source_id: 'a', reason: 'malformed', fallback_to: 'b' },
        { source_id: 'b', reason: 'stale_quote', fallback_to: 'c' },
        { source_id: 'c', reason: 'future_quote' },
      ],
    });
    expect(journal.data(`fx-protection:EUR-USD:${iso(T0)}:source-failed:c`)).toMatchObject({
      decision: 'source_failed',
      fallback_to: null,
    });
    expect(catalog.published).toEqual([]);
  });

  it('treats a source missing from the registry as failed', async () => {
    sources.delete('a');
    source('b').answers = { 'EUR→USD': '1.0850' };
    const report = await run();
    expect(report.pairs[0]?.failures[0]).toEqual({
      source_id: 'a',
      reason: 'unknown_source',
      fallback_to: 'b',
    });
  });
});

describe('ingestRates: median and TWAP', () => {
  it('publishes the median of three sources, ignoring an outlier', async () => {
    setup(
      [pairPolicy({ pair: 'EUR→USDT', sources: ['x', 'y', 'z'], method: 'median', precision: 6 })],
      ['x', 'y', 'z'],
    );
    source('x').answers = { 'EUR→USDT': '1.085301' };
    source('y').answers = { 'EUR→USDT': '1.085412' };
    source('z').answers = { 'EUR→USDT': '1.2' };
    const report = await run();
    expect(report.pairs[0]).toMatchObject({ outcome: 'published', rate: '1.085412', source: 'x+y+z' });
    expect(catalog.rates[0]).toMatchObject({ method: 'median', rate: '1.085412' });
    for (const id of ['x', 'y', 'z']) expect(source(id).calls).toEqual([['EUR→USDT']]);
  });

  it('refuses a median of fewer than three answers', async () => {
    setup([pairPolicy({ pair: 'EUR→USDT', sources: ['x', 'y', 'z'], method: 'median' })], ['x', 'y', 'z']);
    source('x').answers = { 'EUR→USDT': '1.0853' };
    source('y').answers = 'fail';
    source('z').answers = { 'EUR→USDT': '1.0854' };
    const report = await run();
    expect(report.pairs[0]).toMatchObject({
      outcome: 'unavailable',
      failures: [{ source_id: 'y', reason: 'timeout' }],
    });
    expect(journal.data(`fx-protection:EUR-USDT:${iso(T0)}:source-failed:y`)).toMatchObject({
      decision: 'source_failed',
    });
  });

  it('publishes the time-weighted average of the ticks of the window', async () => {
    setup(
      [
        pairPolicy({
          pair: 'EUR→BTC',
          sources: ['t'],
          method: 'twap',
          twap_window_seconds: 180,
          precision: 8,
          max_tick_move_bps: 5000,
        }),
      ],
      ['t'],
    );
    const rates = ['0.00001000', '0.00001100', '0.00001300', '0.00001600'];
    const published: string[] = [];
    for (const rate of rates) {
      source('t').answers = { 'EUR→BTC': rate };
      const report = await run();
      published.push(report.pairs[0]?.rate as string);
      advance(60);
    }
    // Run 1: the only tick. Run 2: 1.0 for 60 s. Run 3: (60 × 1.0 + 60 × 1.1) / 120. Run 4: the window of
    // 180 s holds 1.0, 1.1 and 1.3 for 60 s each.
    expect(published).toEqual(['0.00001000', '0.00001000', '0.00001050', '0.00001133']);
    const state = await store.get('EUR→BTC');
    expect(state.ticks.map((tick) => tick.rate)).toEqual(rates);
    expect(catalog.rates[0]).toMatchObject({ method: 'twap', source: 't' });
    // Older ticks leave the stored history once out of the window.
    advance(600);
    source('t').answers = { 'EUR→BTC': '0.00001700' };
    await run();
    expect((await store.get('EUR→BTC')).ticks.map((tick) => tick.rate)).toEqual(['0.00001600', '0.00001700']);
  });
});

describe('ingestRates: per-tick cap', () => {
  beforeEach(() => {
    setup([pairPolicy({ pair: 'EUR→USD', sources: ['p'], max_tick_move_bps: 100 })], ['p'], [USD]);
  });

  it('holds a tick beyond the cap, opens a change request and journals the decision', async () => {
    source('p').answers = { 'EUR→USD': '1.1000' };
    const report = await run({ traceId: 'trc_h' });
    expect(report.pairs[0]).toMatchObject({
      outcome: 'held',
      rate: '1.1000',
      move_bps: '142.92',
      cr_id: 'cr_1',
    });
    expect(catalog.published).toEqual([]);
    expect(opener.opened).toEqual([
      {
        pair: 'EUR→USD',
        proposed_rate: '1.1000',
        last_rate: '1.0845',
        move_bps: '142.92',
        source: 'p',
        observed_at: iso(T0),
        trace_id: 'trc_h',
      },
    ]);
    expect(journal.data(`fx-protection:EUR-USD:${iso(T0)}:held`)).toEqual({
      decision: 'held',
      pair: 'EUR→USD',
      proposed_rate: '1.1000',
      last_rate: '1.0845',
      move_bps: '142.92',
      max_tick_move_bps: 100,
      source: 'p',
      observed_at: iso(T0),
      cr_id: 'cr_1',
      new_change_request: true,
      trace_id: 'trc_h',
    });
    expect((await store.get('EUR→USD')).held).toMatchObject({ rate: '1.1000', cr_id: 'cr_1' });
  });

  it('publishes a move exactly at the cap', async () => {
    source('p').answers = { 'EUR→USD': '1.0953' };
    // 1.0845 × 1.01 = 1.095345: 1.0953 is 99.59 bps up.
    expect((await run()).pairs[0]).toMatchObject({ outcome: 'published', move_bps: '99.59' });
  });

  it('joins later held ticks of the episode to the open change request, and clears it once a tick passes', async () => {
    source('p').answers = { 'EUR→USD': '1.1000' };
    await run();
    advance(60);
    source('p').answers = { 'EUR→USD': '1.1010' };
    const second = await run();
    expect(second.pairs[0]).toMatchObject({ outcome: 'held', cr_id: 'cr_1', rate: '1.1010' });
    expect(opener.opened).toHaveLength(1);
    expect(journal.data(`fx-protection:EUR-USD:${iso(T0 + 60_000)}:held`)).toMatchObject({
      cr_id: 'cr_1',
      new_change_request: false,
      proposed_rate: '1.1010',
    });
    advance(60);
    source('p').answers = { 'EUR→USD': '1.0850' };
    expect((await run()).pairs[0]?.outcome).toBe('published');
    expect((await store.get('EUR→USD')).held).toBeUndefined();
  });

  it('compares against the rate in the catalog (a change request that published moves the baseline)', async () => {
    source('p').answers = { 'EUR→USD': '1.1000' };
    await run();
    catalog.rates = [{ ...USD, rate: '1.0990' }];
    advance(60);
    expect((await run()).pairs[0]).toMatchObject({ outcome: 'published', rate: '1.1000' });
  });
});

describe('ingestRates: circuit breaker', () => {
  beforeEach(() => {
    setup([pairPolicy({ pair: 'EUR→USD', sources: ['p'] })], ['p'], [USD]);
  });

  it('opens after N failures, publishes nothing while open, probes half-open and closes after recovery', async () => {
    source('p').answers = 'fail';
    for (let index = 0; index < 2; index += 1) {
      expect(outcomes(await run())).toEqual({ 'EUR→USD': 'unavailable' });
      advance(60);
    }
    const third = await run();
    expect(third.pairs[0]).toMatchObject({
      outcome: 'unavailable',
      transitions: [
        { from: 'closed', to: 'open', reason: '3 failures or anomalies within 600 s (last: failure)' },
      ],
    });
    const openedAt = now;
    expect(journal.data(`fx-protection:EUR-USD:${iso(openedAt)}:breaker-open`)).toMatchObject({
      decision: 'breaker',
      transition: 'opened',
      from: 'closed',
      to: 'open',
    });
    // The opening is also a signal for endpoints subscribed to `operations` (C32).
    const entryId = `fx-protection:EUR-USD:${iso(openedAt)}:breaker-open`;
    expect([...signals.values()]).toEqual([
      {
        type: 'operations.fx_breaker_opened',
        key: `fx_breaker_opened:${entryId}`,
        data: {
          pair: 'EUR→USD',
          at: iso(openedAt),
          reason: '3 failures or anomalies within 600 s (last: failure)',
          journal_entry_id: entryId,
        },
        traceId: `trc_${openedAt}`,
      },
    ]);

    // While open: nothing fetched, nothing published, even though the source is back.
    source('p').answers = { 'EUR→USD': '1.0850' };
    const callsBefore = source('p').calls.length;
    for (let index = 0; index < 4; index += 1) {
      advance(60);
      const report = await run();
      expect(report.pairs[0]).toMatchObject({ outcome: 'breaker_open', retry_at: iso(openedAt + 300_000) });
    }
    expect(source('p').calls).toHaveLength(callsBefore);
    expect(catalog.published).toEqual([]);

    // open_seconds later: a probe; the source fails again, so it opens again.
    source('p').answers = 'fail';
    advance(60);
    const probe = await run();
    expect(probe.pairs[0]?.transitions.map((transition) => `${transition.from}>${transition.to}`)).toEqual([
      'open>half_open',
      'half_open>open',
    ]);
    expect(journal.data(`fx-protection:EUR-USD:${iso(now)}:breaker-half_open`)).toMatchObject({
      transition: 'half_open',
    });
    expect(journal.data(`fx-protection:EUR-USD:${iso(now)}:breaker-open`)).toMatchObject({
      transition: 'opened',
      from: 'half_open',
    });

    // Recovery: the next probe succeeds, closes the breaker and publishes.
    source('p').answers = { 'EUR→USD': '1.0850' };
    advance(300);
    const recovered = await run();
    expect(recovered.pairs[0]).toMatchObject({ outcome: 'published', rate: '1.0850' });
    expect(recovered.pairs[0]?.transitions.map((transition) => transition.to)).toEqual([
      'half_open',
      'closed',
    ]);
    expect((await store.get('EUR→USD')).breaker).toEqual({ status: 'closed', failures: [] });
    expect(catalog.published).toHaveLength(1);
  });

  it("a signal that cannot be emitted stays with the pair's work and is emitted by the next run", async () => {
    source('p').answers = 'fail';
    for (let index = 0; index < 2; index += 1) {
      await run();
      advance(60);
    }
    failNextSignal = true;
    // Reported incomplete, like a journal entry that could not be appended: the entry and its signal stay.
    await expect(run({ runId: 'run-open' })).rejects.toThrow(/rate ingestion incomplete for EUR→USD/);
    expect(signals.size).toBe(0);
    // The retried run (the same run id) finishes the pair's work: the entry once more, the signal at last.
    await run({ runId: 'run-open' });
    expect([...signals.values()].map((signal) => signal.type)).toEqual(['operations.fx_breaker_opened']);
  });

  it('counts held ticks as anomalies: a probe beyond the cap opens the breaker again', async () => {
    source('p').answers = { 'EUR→USD': '1.2000' };
    for (let index = 0; index < 3; index += 1) {
      await run();
      advance(60);
    }
    expect((await store.get('EUR→USD')).breaker.status).toBe('open');
    expect(opener.opened).toHaveLength(1);
    advance(300);
    const probe = await run();
    expect(probe.pairs[0]).toMatchObject({ outcome: 'held', cr_id: 'cr_1' });
    expect(probe.pairs[0]?.transitions.map((transition) => transition.to)).toEqual(['half_open', 'open']);
  });
});

describe('ingestRates: concurrency and retries', () => {
  beforeEach(() => {
    setup(
      [pairPolicy({ pair: 'EUR→USD', sources: ['p'] }), pairPolicy({ pair: 'EUR→GBP', sources: ['p'] })],
      ['p'],
      [USD],
    );
    source('p').answers = { 'EUR→USD': '1.0850', 'EUR→GBP': '0.8628' };
  });

  it('lets only one of two concurrent runs handle (and publish) a slot', async () => {
    let release = () => {};
    source('p').gate = new Promise((resolve) => {
      release = resolve;
    });
    const first = run({ runId: 'a', traceId: 'trc_a' });
    const second = run({ runId: 'b', traceId: 'trc_b' });
    await new Promise((resolve) => setTimeout(resolve, 10));
    release();
    const reports = await Promise.all([first, second]);
    const all = reports.flatMap((report) => report.pairs.map((pair) => pair.outcome));
    expect(all.filter((outcome) => outcome === 'published')).toHaveLength(2);
    expect(all.filter((outcome) => outcome === 'concurrent')).toHaveLength(2);
    const publishedRates = catalog.published.flatMap((publication) =>
      publication.rates.map((rate) => rate.pair),
    );
    expect(publishedRates.sort()).toEqual(['EUR→GBP', 'EUR→USD']);
    expect(journal.ofType('fx_publication').length).toBe(catalog.published.length);
  });

  it('keeps the work when the publication fails, and a retry of the same run completes it', async () => {
    catalog.failNext = 1;
    const error = await run({ runId: 'run-1' }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(RateIngestionError);
    expect(outcomes((error as RateIngestionError).report)).toEqual({
      'EUR→USD': 'incomplete',
      'EUR→GBP': 'incomplete',
    });
    expect((error as RateIngestionError).report.pairs[0]?.error).toBe('publication conflict');
    expect((await store.get('EUR→USD')).work?.publication).toMatchObject({ rate: '1.0850' });
    expect(journal.ofType('fx_publication')).toEqual([]);

    // Another run waits for the lease...
    expect(outcomes(await run({ runId: 'other' }))).toEqual({
      'EUR→USD': 'in_progress',
      'EUR→GBP': 'in_progress',
    });
    // ...a retry of the same run resumes at once.
    advance(5);
    const retry = await run({ runId: 'run-1' });
    expect(outcomes(retry)).toEqual({ 'EUR→USD': 'recovered', 'EUR→GBP': 'recovered' });
    expect(catalog.published).toHaveLength(1);
    expect(catalog.published[0]?.rates.map((rate) => rate.effective_from)).toEqual([
      iso(T0 + 30_000),
      iso(T0 + 30_000),
    ]);
    expect(journal.ofType('fx_publication').map((entry) => entry.entry_id)).toEqual(['fx-publication:fx-2']);
    expect((await store.get('EUR→USD')).work).toBeUndefined();
    expect((await store.get('EUR→USD')).last_published?.fx_version).toBe('fx-2');
  });

  it('lets any run take over work whose lease is over', async () => {
    catalog.failNext = 1;
    await run({ runId: 'crashed' }).catch(() => undefined);
    advance(301);
    const report = await run({ runId: 'later' });
    expect(outcomes(report)).toEqual({ 'EUR→USD': 'recovered', 'EUR→GBP': 'recovered' });
    expect(catalog.rate('EUR→USD')).toBe('1.0850');
  });

  it('recognises a publication that happened before the run died, and does not publish it again', async () => {
    // Puts: 2 claims, then the confirm of the first pair fails (the run dies after publishing).
    store.failPutNumber = 3;
    await expect(run({ runId: 'run-1' })).rejects.toThrow('state store unavailable');
    expect(catalog.published).toHaveLength(1);
    const retry = await run({ runId: 'run-1' });
    expect(catalog.published).toHaveLength(1);
    expect(retry.pairs.find((pair) => pair.pair === 'EUR→USD')).toMatchObject({
      outcome: 'recovered',
      fx_version: 'fx-2',
    });
    expect(journal.ofType('fx_publication').map((entry) => entry.entry_id)).toEqual(['fx-publication:fx-2']);
  });

  it('drops unfinished work that a later rate in the catalog replaced', async () => {
    catalog.failNext = 1;
    await run({ runId: 'run-1' }).catch(() => undefined);
    catalog.rates = [{ ...USD, rate: '1.0900', effective_from: iso(T0 + 3_600_000) }];
    const retry = await run({ runId: 'run-1' });
    expect(retry.pairs.find((pair) => pair.pair === 'EUR→USD')?.outcome).toBe('superseded');
    expect(catalog.published.flatMap((publication) => publication.rates.map((rate) => rate.pair))).toEqual([
      'EUR→GBP',
    ]);
    expect((await store.get('EUR→USD')).work).toBeUndefined();
  });

  it('keeps a change request to open and journal entries to append when they fail, and retries them', async () => {
    source('p').answers = { 'EUR→USD': '1.2000', 'EUR→GBP': '0.8628' };
    opener.failNext = 1;
    journal.failNext = 1;
    const error = (await run({ runId: 'run-1' }).catch((caught: unknown) => caught)) as RateIngestionError;
    expect(error).toBeInstanceOf(RateIngestionError);
    expect(outcomes(error.report)).toEqual({ 'EUR→USD': 'incomplete', 'EUR→GBP': 'incomplete' });
    expect(error.message).toBe('rate ingestion incomplete for EUR→USD, EUR→GBP');
    const usd = await store.get('EUR→USD');
    expect(usd.work?.open_change_request).toBe(true);
    expect(usd.held?.cr_id).toBeUndefined();
    const retry = await run({ runId: 'run-1' });
    expect(outcomes(retry)).toEqual({ 'EUR→USD': 'recovered', 'EUR→GBP': 'recovered' });
    expect(opener.opened).toHaveLength(1);
    expect((await store.get('EUR→USD')).held?.cr_id).toBe('cr_1');
    expect(journal.data(`fx-protection:EUR-USD:${iso(T0)}:held`)).toMatchObject({ cr_id: 'cr_1' });
    expect(journal.ofType('fx_publication')).toHaveLength(1);
  });
});
