/**
 * A replay's tally on DynamoDB Local: each of its deliveries is counted once by outcome however often it is noted
 * (a redelivered message notes it again, racing consumers note it together), a delivery that is not the replay's
 * is not counted, and an unknown replay has no tally.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { DynamoReplayRepository } from '../../functions/adapters/aws/webhook-store';
import { engineClients, provisionIsolated } from '../support/engines';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

let replays: DynamoReplayRepository;

beforeAll(async () => {
  const resources = await provisionIsolated(clients);
  replays = new DynamoReplayRepository(clients.documents, resources.tableNames.replays);
  await replays.put({
    replay_id: 'rpl_tally',
    requested_at: '2026-11-26T12:00:00.000Z',
    request: { event_ids: ['evt_a', 'evt_b', 'evt_c'] },
    matched: 3,
    enqueued: 3,
    skipped: 0,
    deliveries: ['evt_a', 'evt_b', 'evt_c'].map((eventId) => ({ event_id: eventId, endpoint_id: 'ep_1' })),
    expires_at: 1_900_000_000,
  });
});

const AT = '2026-11-26T12:00:05.000Z';

describe('DynamoReplayRepository tally', () => {
  it('counts a delivery once, even when ten consumers note it at once', async () => {
    const tallies = await Promise.all(
      Array.from({ length: 10 }, () => replays.noteFinished('rpl_tally', 'evt_a', 'ep_1', 'delivered', AT)),
    );
    for (const tally of tallies) expect(tally).toMatchObject({ enqueued: 3, delivered: 1 });
    expect(await replays.noteFinished('rpl_tally', 'evt_a', 'ep_1', 'dead', AT)).toEqual({
      enqueued: 3,
      delivered: 1,
      dead: 0,
      stopped: 0,
    });
  });

  it('counts each outcome, ignores a delivery not in the replay, and reaches the number enqueued', async () => {
    await replays.noteFinished('rpl_tally', 'evt_b', 'ep_1', 'dead', AT);
    expect(await replays.noteFinished('rpl_tally', 'evt_x', 'ep_1', 'delivered', AT)).toEqual({
      enqueued: 3,
      delivered: 1,
      dead: 1,
      stopped: 0,
    });
    expect(await replays.noteFinished('rpl_tally', 'evt_c', 'ep_1', 'stopped', AT)).toEqual({
      enqueued: 3,
      delivered: 1,
      dead: 1,
      stopped: 1,
    });
    // The replay as shown is unchanged: its deliveries, still three.
    expect((await replays.get('rpl_tally'))?.deliveries).toHaveLength(3);
  });

  it('has no tally for an unknown replay', async () => {
    expect(await replays.noteFinished('rpl_none', 'evt_a', 'ep_1', 'delivered', AT)).toBeUndefined();
    expect(await replays.tally('rpl_none')).toBeUndefined();
  });
});
