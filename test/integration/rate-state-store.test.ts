import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { DynamoRateStateStore, RateStateCorruptError } from '../../functions/adapters/aws/rate-state-store';
import { MAX_TICKS } from '../../functions/domain/rates/aggregate';
import type { FxRate, JsonValue, PairState } from '../../functions/ports/rates';
import type { RatePolicy } from '../../functions/schemas/rate-policy';
import { ingestRates } from '../../functions/usecases/rates/ingest';
import { engineClients, provisionIsolated } from '../support/engines';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

let store: DynamoRateStateStore;
let tableName: string;

beforeEach(async () => {
  const resources = await provisionIsolated(clients);
  tableName = resources.tableNames.rateState;
  store = new DynamoRateStateStore(clients.documents, tableName);
});

const T0 = Date.parse('2026-11-22T12:00:00.000Z');
const iso = (seconds: number) => new Date(T0 + seconds * 1000).toISOString();

const withWork = (state: PairState, runId: string): PairState => ({
  ...state,
  last_slot: T0 / 1000,
  breaker: { status: 'closed', failures: [iso(-30)] },
  last_published: {
    rate: '1.0845',
    source: 'ecb',
    effective_from: iso(-60),
    observed_at: iso(-90),
    fx_version: 'fx-3',
  },
  held: {
    rate: '1.2000',
    last_rate: '1.0845',
    move_bps: '1064.98',
    source: 'sim',
    observed_at: iso(0),
    slot: T0 / 1000,
  },
  work: {
    run_id: runId,
    lease_until: iso(300),
    slot: T0 / 1000,
    trace_id: 'trc_1',
    publication: {
      pair: 'EUR→USD',
      rate: '1.0851',
      source: 'sim',
      method: 'provider',
      precision: 4,
      effective_from: iso(30),
      observed_at: iso(0),
    },
    previous_rate: '1.0845',
    move_bps: '5.53',
    open_change_request: true,
    journal: [
      {
        entry_id: 'fx-protection:EUR-USD:x:breaker-open',
        type: 'fx_protection',
        data: { nested: [1, 'a', null] },
      },
    ],
  },
});

describe('DynamoRateStateStore (DynamoDB Local)', () => {
  it('answers version 0 and a closed breaker for a pair never stored', async () => {
    expect(await store.get('EUR->USD')).toEqual({
      pair: 'EUR→USD',
      version: 0,
      breaker: { status: 'closed', failures: [] },
      ticks: [],
    });
  });

  it('round-trips the whole state and bumps the version on each write', async () => {
    const first = await store.put(withWork(await store.get('EUR→USD'), 'run-1'));
    expect(first.saved).toBe(true);
    const read = await store.get('EUR→USD');
    expect(read).toEqual({
      ...withWork(
        { pair: 'EUR→USD', version: 1, breaker: { status: 'closed', failures: [] }, ticks: [] },
        'run-1',
      ),
    });
    expect(read.version).toBe(1);
    const { work: _work, ...cleared } = read;
    const second = await store.put(cleared);
    expect(second).toMatchObject({ saved: true, state: { version: 2 } });
    expect((await store.get('EUR→USD')).work).toBeUndefined();
    const raw = await clients.documents.send(
      new GetCommand({ TableName: tableName, Key: { pair: 'EUR→USD', sk: 'state' } }),
    );
    expect(raw.Item).toMatchObject({ pair: 'EUR→USD', sk: 'state', version: 2 });
  });

  it('lets exactly one of many concurrent writers of the same version win', async () => {
    const base = await store.get('EUR→GBP');
    await store.put(base);
    const read = await store.get('EUR→GBP');
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, index) => store.put(withWork(read, `run-${index}`))),
    );
    const winners = results.filter((result) => result.saved);
    expect(winners).toHaveLength(1);
    expect(results.filter((result) => !result.saved)).toHaveLength(7);
    const stored = await store.get('EUR→GBP');
    expect(stored.version).toBe(2);
    expect(winners[0]?.saved && winners[0].state.work?.run_id).toBe(stored.work?.run_id);
  });

  it('lets exactly one of two first writers create the item', async () => {
    const fresh = await store.get('EUR→JPY');
    const [a, b] = await Promise.all([store.put(withWork(fresh, 'a')), store.put(withWork(fresh, 'b'))]);
    expect([a.saved, b.saved].sort()).toEqual([false, true]);
  });

  it('refuses a write based on a stale read', async () => {
    const fresh = await store.get('EUR→CHF');
    await store.put(fresh);
    expect(await store.put(fresh)).toEqual({ saved: false });
    expect(await store.put({ ...fresh, version: 7 })).toEqual({ saved: false });
  });

  it('trims the tick history to the TWAP window (plus the tick in force at its start)', async () => {
    const ticks = Array.from({ length: 20 }, (_, index) => ({
      rate: `1.08${index + 10}`,
      observed_at: iso(index * 60),
      source: 'sim',
    }));
    const state = { ...(await store.get('EUR→BTC')), ticks };
    const result = await store.put(state, { end: new Date(T0 + 19 * 60_000), seconds: 300 });
    expect(result.saved && result.state.ticks.map((tick) => tick.rate)).toEqual([
      '1.0823',
      '1.0824',
      '1.0825',
      '1.0826',
      '1.0827',
      '1.0828',
      '1.0829',
    ]);
    expect((await store.get('EUR→BTC')).ticks).toHaveLength(7);
  });

  it('never keeps more than MAX_TICKS, even without a window', async () => {
    const ticks = Array.from({ length: MAX_TICKS + 5 }, (_, index) => ({
      rate: '1.08',
      observed_at: iso(index),
    }));
    await store.put({ ...(await store.get('EUR→ETH')), ticks });
    const stored = await store.get('EUR→ETH');
    expect(stored.ticks).toHaveLength(MAX_TICKS);
    expect(stored.ticks.at(-1)?.observed_at).toBe(iso(MAX_TICKS + 4));
  });

  it('refuses to read a state it cannot parse', async () => {
    await clients.documents.send(
      new PutCommand({
        TableName: tableName,
        Item: { pair: 'EUR→SEK', sk: 'state', version: 1, body: '{"breaker":{}}' },
      }),
    );
    await expect(store.get('EUR→SEK')).rejects.toBeInstanceOf(RateStateCorruptError);
  });

  it('lets two concurrent ingestion runs publish each pair once', async () => {
    const policy: RatePolicy = {
      sources: [{ source_id: 'sim', kind: 'simulated' }],
      pairs: ['EUR→USD', 'EUR→GBP', 'EUR→USDT'].map((pair) => ({
        pair,
        sources: ['sim'],
        method: 'provider' as const,
        interval_seconds: 60,
        publication_delay_seconds: 0,
        max_tick_move_bps: 100,
        precision: 4,
        stale_after_seconds: 300,
        max_age_seconds: 900,
      })),
      breaker: { failure_threshold: 3, window_seconds: 600, open_seconds: 300 },
    };
    let version = 1;
    let rates: FxRate[] = [];
    const published: FxRate[][] = [];
    const journal = new Map<string, JsonValue>();
    const deps = {
      sources: new Map([
        [
          'sim',
          {
            sourceId: 'sim',
            fetch: async (pairs: readonly string[], at: Date) =>
              pairs.map((pair) => ({ pair, rate: '1.0850', source: 'sim', observed_at: at.toISOString() })),
          },
        ],
      ]),
      state: store,
      publisher: {
        publish: async (input: { rates: readonly FxRate[] }) => {
          version += 1;
          published.push([...input.rates]);
          rates = [
            ...rates.filter((rate) => !input.rates.some((next) => next.pair === rate.pair)),
            ...input.rates,
          ];
          return { fx_version: `fx-${version}` };
        },
      },
      heldTicks: { open: async () => ({ cr_id: 'cr_1' }) },
      journal: {
        append: async (input: { entry_id: string; data: JsonValue }) => {
          const created = !journal.has(input.entry_id);
          journal.set(input.entry_id, input.data);
          return { index: journal.size - 1, created };
        },
      },
      current: {
        current: async () => ({ fx_version: `fx-${version}`, base_currency: 'EUR', rates, policy }),
      },
      clock: { now: () => new Date(T0) },
    };
    const reports = await Promise.all([
      ingestRates(deps, { traceId: 'trc_a' }),
      ingestRates(deps, { traceId: 'trc_b' }),
      ingestRates(deps, { traceId: 'trc_c' }),
    ]);
    const outcomes = reports.flatMap((report) => report.pairs.map((pair) => pair.outcome));
    expect(outcomes.filter((outcome) => outcome === 'published')).toHaveLength(3);
    expect(
      published
        .flat()
        .map((rate) => rate.pair)
        .sort(),
    ).toEqual(['EUR→GBP', 'EUR→USD', 'EUR→USDT']);
    for (const pair of ['EUR→USD', 'EUR→GBP', 'EUR→USDT']) {
      const state = await store.get(pair);
      expect(state.work).toBeUndefined();
      expect(state.last_published?.rate).toBe('1.0850');
    }
    const again = await ingestRates(deps, { traceId: 'trc_d' });
    expect(again.pairs.map((pair) => pair.outcome)).toEqual(['not_due', 'not_due', 'not_due']);
  });
});
