/**
 * A replay's tally on DynamoDB Local: each of its deliveries is counted once by outcome however often it is noted
 * (a redelivered message notes it again, racing consumers note it together); a delivery that ends before the
 * replay's record is written is still counted once the record is (no tally until then); an unknown replay has none.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { DynamoReplayRepository } from '../../functions/adapters/aws/webhook-store';
import type { ReplayRecord } from '../../functions/ports/webhooks';
import { engineClients, provisionIsolated } from '../support/engines';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

let replays: DynamoReplayRepository;

beforeAll(async () => {
  const resources = await provisionIsolated(clients);
  replays = new DynamoReplayRepository(clients.documents, resources.tableNames.replays);
});

const record = (replayId: string, eventIds: readonly string[]): ReplayRecord => ({
  replay_id: replayId,
  requested_at: '2026-11-26T12:00:00.000Z',
  request: { event_ids: [...eventIds] },
  matched: eventIds.length,
  enqueued: eventIds.length,
  skipped: 0,
  deliveries: eventIds.map((eventId) => ({ event_id: eventId, endpoint_id: 'ep_1' })),
  expires_at: 1_900_000_000,
});

describe('DynamoReplayRepository tally', () => {
  it('counts a delivery once, even when ten consumers note it at once', async () => {
    await replays.put(record('rpl_race', ['evt_a', 'evt_b']));
    const tallies = await Promise.all(
      Array.from({ length: 10 }, () => replays.noteFinished('rpl_race', 'evt_a', 'ep_1', 'delivered')),
    );
    for (const tally of tallies) expect(tally).toEqual({ enqueued: 2, delivered: 1, dead: 0, stopped: 0 });
  });

  it('counts each outcome, and reaches the number enqueued', async () => {
    await replays.put(record('rpl_outcomes', ['evt_a', 'evt_b', 'evt_c']));
    await replays.noteFinished('rpl_outcomes', 'evt_a', 'ep_1', 'delivered');
    expect(await replays.noteFinished('rpl_outcomes', 'evt_b', 'ep_1', 'dead')).toEqual({
      enqueued: 3,
      delivered: 1,
      dead: 1,
      stopped: 0,
    });
    expect(await replays.noteFinished('rpl_outcomes', 'evt_c', 'ep_1', 'stopped')).toEqual({
      enqueued: 3,
      delivered: 1,
      dead: 1,
      stopped: 1,
    });
    expect(await replays.tally('rpl_outcomes')).toEqual({ enqueued: 3, delivered: 1, dead: 1, stopped: 1 });
    // The replay as shown is unchanged: its deliveries, still three.
    expect((await replays.get('rpl_outcomes'))?.deliveries).toHaveLength(3);
  });

  it('keeps the deliveries that ended before the replay record was written, and has no tally until then', async () => {
    // A fast receiver: both deliveries end while the replay request is still sending.
    expect(await replays.noteFinished('rpl_early', 'evt_a', 'ep_1', 'delivered')).toBeUndefined();
    expect(await replays.noteFinished('rpl_early', 'evt_b', 'ep_1', 'delivered')).toBeUndefined();
    expect(await replays.tally('rpl_early')).toBeUndefined();
    await replays.put(record('rpl_early', ['evt_a', 'evt_b']));
    expect(await replays.tally('rpl_early')).toEqual({ enqueued: 2, delivered: 2, dead: 0, stopped: 0 });
    expect((await replays.get('rpl_early'))?.matched).toBe(2);
  });

  it('has no tally for an unknown replay', async () => {
    expect(await replays.tally('rpl_none')).toBeUndefined();
  });
});
