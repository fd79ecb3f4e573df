/**
 * The endpoint limiter on DynamoDB Local, with racing callers standing in for concurrent deliver instances: the
 * in-flight cap is never exceeded however many race, a slot frees when its holder releases it or its lease runs
 * out (a killed consumer), a release never frees another holder's slot, and the rate hands out start times
 * exactly one interval apart, each reserved once. The stats slots beside it: concurrent additions all count, and a
 * window reads exactly the slots within it.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { DynamoEndpointLimiter } from '../../functions/adapters/aws/endpoint-limiter';
import { DynamoEndpointStatsStore } from '../../functions/adapters/aws/endpoint-stats-store';
import { DynamoEndpointRepository } from '../../functions/adapters/aws/webhook-store';
import { addAttempt, emptyTally, sumTallies } from '../../functions/domain/webhooks/endpoint-stats';
import { LATEST_ENVELOPE_VERSION } from '../../functions/domain/webhooks/envelope';
import type { Admission, AdmissionRequest, EndpointRecord } from '../../functions/ports/webhooks';
import { engineClients, provisionIsolated } from '../support/engines';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

let limiter: DynamoEndpointLimiter;
let endpoints: DynamoEndpointRepository;
let stats: DynamoEndpointStatsStore;
let limitsTable: string;

beforeAll(async () => {
  const resources = await provisionIsolated(clients);
  limiter = new DynamoEndpointLimiter(clients.documents, resources.tableNames.endpointLimits);
  endpoints = new DynamoEndpointRepository(clients.documents, resources.tableNames.endpoints);
  stats = new DynamoEndpointStatsStore(clients.documents, resources.tableNames.endpointStats);
  limitsTable = resources.tableNames.endpointLimits;
});

const T0 = Date.parse('2026-11-26T12:00:00.000Z');
const request = (overrides: Partial<AdmissionRequest> = {}): AdmissionRequest => ({
  limits: {},
  nowMs: T0,
  leaseMs: 30_000,
  ticket: false,
  deferrals: 0,
  ...overrides,
});
const admitted = (results: readonly Admission[]) =>
  results.filter((result): result is Extract<Admission, { kind: 'admitted' }> => result.kind === 'admitted');

describe('DynamoEndpointLimiter: in flight', () => {
  it('admits exactly max_in_flight of 30 racing deliveries, each in its own slot; the rest wait', async () => {
    const results = await Promise.all(
      Array.from({ length: 30 }, () => limiter.admit('ep_race', request({ limits: { maxInFlight: 5 } }))),
    );
    const holders = admitted(results);
    expect(holders).toHaveLength(5);
    expect(new Set(holders.map((holder) => holder.slot))).toEqual(new Set([0, 1, 2, 3, 4]));
    for (const result of results.filter((candidate) => candidate.kind !== 'admitted'))
      expect(result).toEqual({ kind: 'wait', waitSeconds: 1 });
  });

  it('a released slot is taken again; a second wait backs off longer', async () => {
    const limits = { maxInFlight: 1 };
    const first = await limiter.admit('ep_release', request({ limits }));
    expect(first).toMatchObject({ kind: 'admitted', slot: 0 });
    expect(await limiter.admit('ep_release', request({ limits, deferrals: 3 }))).toEqual({
      kind: 'wait',
      waitSeconds: 8,
    });
    if (first.kind !== 'admitted' || first.slot === undefined || first.leaseUntilMs === undefined)
      throw new Error('no slot');
    await limiter.release('ep_release', first.slot, first.leaseUntilMs);
    expect(await limiter.admit('ep_release', request({ limits }))).toMatchObject({
      kind: 'admitted',
      slot: 0,
    });
  });

  it("a holder killed mid-attempt frees its slot when the lease ends; its late release leaves the next holder's", async () => {
    const limits = { maxInFlight: 1 };
    const killed = await limiter.admit('ep_lease', request({ limits, leaseMs: 1_000 }));
    expect(killed.kind).toBe('admitted');
    expect((await limiter.admit('ep_lease', request({ limits, nowMs: T0 + 999 }))).kind).toBe('wait');
    const next = await limiter.admit('ep_lease', request({ limits, nowMs: T0 + 1_000 }));
    expect(next).toMatchObject({ kind: 'admitted', slot: 0 });
    if (killed.kind !== 'admitted' || killed.leaseUntilMs === undefined) throw new Error('no lease');
    await limiter.release('ep_lease', 0, killed.leaseUntilMs);
    expect((await limiter.admit('ep_lease', request({ limits, nowMs: T0 + 1_001 }))).kind).toBe('wait');
  });
});

describe('DynamoEndpointLimiter: rate', () => {
  it('hands 40 racing deliveries at 20/s the start times now, +50 ms … +1 950 ms, each once', async () => {
    const results = await Promise.all(
      Array.from({ length: 40 }, () => limiter.admit('ep_rate', request({ limits: { perSecond: 20 } }))),
    );
    expect(admitted(results)).toHaveLength(1);
    const starts = results
      .flatMap((result) => (result.kind === 'reserved' ? [result.startMs - T0] : []))
      .sort((a, b) => a - b);
    expect(starts).toEqual(Array.from({ length: 39 }, (_, index) => (index + 1) * 50));
  });

  it('a ticket is not counted again, and a rate-limited endpoint left idle starts at once', async () => {
    const limits = { perSecond: 1 };
    expect((await limiter.admit('ep_ticket', request({ limits }))).kind).toBe('admitted');
    expect(await limiter.admit('ep_ticket', request({ limits }))).toEqual({
      kind: 'reserved',
      startMs: T0 + 1_000,
    });
    // The reserved delivery comes back with its ticket: admitted without spending a second interval.
    expect(
      (await limiter.admit('ep_ticket', request({ limits, nowMs: T0 + 1_000, ticket: true }))).kind,
    ).toBe('admitted');
    expect(await limiter.admit('ep_ticket', request({ limits, nowMs: T0 + 1_000 }))).toEqual({
      kind: 'reserved',
      startMs: T0 + 2_000,
    });
    expect((await limiter.admit('ep_ticket', request({ limits, nowMs: T0 + 60_000 }))).kind).toBe('admitted');
  });

  it('rate and cap together: a delivery within the rate but without a slot waits and reserves nothing', async () => {
    const limits = { perSecond: 10, maxInFlight: 1 };
    const first = await limiter.admit('ep_both', request({ limits }));
    if (first.kind !== 'admitted' || first.slot === undefined || first.leaseUntilMs === undefined)
      throw new Error('no slot');
    const later = T0 + 500;
    expect((await limiter.admit('ep_both', request({ limits, nowMs: later }))).kind).toBe('wait');
    // The wait reserved nothing: once the slot is freed, a start at that same moment is admitted at once (had the
    // wait written the arrival time, it would be `reserved` for later).
    await limiter.release('ep_both', first.slot, first.leaseUntilMs);
    expect(await limiter.admit('ep_both', request({ limits, nowMs: later }))).toMatchObject({
      kind: 'admitted',
    });
  });
});

describe('DynamoEndpointLimiter: expiry', () => {
  it('keeps the item until a day after its furthest reservation, not a day after now', async () => {
    const limits = { perSecond: 0.0001 };
    for (let index = 0; index < 10; index += 1) await limiter.admit('ep_ttl', request({ limits }));
    const item = (
      await clients.documents.send(new GetCommand({ TableName: limitsTable, Key: { endpoint_id: 'ep_ttl' } }))
    ).Item as { tat: number; expires_at: number };
    // Ten starts 10 000 s apart: the last more than a day ahead.
    expect(item.tat).toBe(T0 + 10 * 10_000_000);
    expect(item.expires_at).toBeGreaterThanOrEqual(Math.floor((T0 + 9 * 10_000_000) / 1000) + 86_400);
  });
});

describe('endpoint delivery health on DynamoDB Local', () => {
  const record = (endpointId: string): EndpointRecord => ({
    endpoint_id: endpointId,
    url: 'https://partner.example/hooks',
    topics: ['payout'],
    version: LATEST_ENVELOPE_VERSION,
    status: 'enabled',
    secret_ciphertext: 'c',
    created_at: '2026-11-26T12:00:00.000Z',
    updated_at: '2026-11-26T12:00:00.000Z',
  });

  it("counts timeouts in a row and clears them without touching updated_at (an operator's change still applies)", async () => {
    await endpoints.create(record('ep_health'));
    await Promise.all([endpoints.noteTimeout('ep_health'), endpoints.noteTimeout('ep_health')]);
    const read = await endpoints.get('ep_health');
    expect(read?.consecutive_timeouts).toBe(2);
    expect(read?.updated_at).toBe('2026-11-26T12:00:00.000Z');
    const base = await endpoints.get('ep_health');
    await endpoints.clearTimeouts('ep_health');
    if (!base) throw new Error('missing');
    const changed = await endpoints.update('ep_health', { description: 'x' }, '2026-11-26T12:01:00.000Z', {
      expected: base,
    });
    expect(changed).toBeDefined();
    expect((await endpoints.get('ep_health'))?.consecutive_timeouts).toBeUndefined();
  });

  it('keeps the later of two pauses and writes nothing for a deleted endpoint', async () => {
    await endpoints.create(record('ep_pause'));
    await endpoints.pauseUntil('ep_pause', '2026-11-26T12:00:30.000Z');
    await endpoints.pauseUntil('ep_pause', '2026-11-26T12:00:10.000Z');
    expect((await endpoints.get('ep_pause'))?.paused_until).toBe('2026-11-26T12:00:30.000Z');
    await endpoints.noteTimeout('ep_gone');
    await endpoints.pauseUntil('ep_gone', '2026-11-26T12:00:30.000Z');
    expect(await endpoints.get('ep_gone')).toBeUndefined();
  });
});

describe('DynamoEndpointStatsStore', () => {
  it('counts every one of 20 concurrent additions to a slot, and reads only the slots of the window', async () => {
    const ok = addAttempt(emptyTally(), { http_status: 200, duration_ms: 40 });
    const failed = addAttempt(emptyTally(), { http_status: 503, duration_ms: 700 });
    await Promise.all(
      Array.from({ length: 20 }, (_, index) =>
        stats.add('ep_stats', '2026-11-26T12:00', index % 2 === 0 ? ok : failed, 1_900_000_000),
      ),
    );
    await stats.add('ep_stats', '2026-11-26T11:00', ok, 1_900_000_000);
    await stats.add('ep_stats', '2026-11-26T13:00', ok, 1_900_000_000);
    await stats.add('ep_other', '2026-11-26T12:00', ok, 1_900_000_000);
    const window = await stats.read('ep_stats', '2026-11-26T11:30', '2026-11-26T12:30');
    // The slot's counts, spread over the endpoint's shards.
    expect(window.length).toBeGreaterThan(1);
    expect(window.length).toBeLessThanOrEqual(8);
    expect(sumTallies(window)).toEqual(sumTallies([...Array(10).fill(ok), ...Array(10).fill(failed)]));
    expect(sumTallies(await stats.read('ep_stats', '2026-11-26T11:00', '2026-11-26T13:00'))).toEqual(
      sumTallies([...Array(12).fill(ok), ...Array(10).fill(failed)]),
    );
  });
});
