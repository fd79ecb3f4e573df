/**
 * The per-key queues of ordered endpoints (C31 `ordering`) on DynamoDB Local, with several sequencer instances
 * standing in for concurrent fan-out and replay functions: numbers are handed out without gaps or repeats however
 * many race, a repeated round keeps its number, only the lowest open number has its turn, closing hands the turn
 * to the next open one (its message), a stale close never closes another delivery's place, and a key whose counter
 * expired continues after its last open item.
 */
import { DeleteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { DynamoDeliverySequencer } from '../../functions/adapters/aws/delivery-sequencer';
import { DynamoDeliveryRepository } from '../../functions/adapters/aws/webhook-store';
import type { DeliveryRecord } from '../../functions/ports/webhooks';
import type { DeliveryMessage } from '../../functions/schemas/envelope';
import { engineClients, provisionIsolated } from '../support/engines';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

let orderTable: string;
let deliveriesTable: string;
let deliveries: DynamoDeliveryRepository;
const sequencer = () => new DynamoDeliverySequencer(clients.documents, orderTable, deliveriesTable);

beforeAll(async () => {
  const resources = await provisionIsolated(clients);
  orderTable = resources.tableNames.deliveryOrder;
  deliveriesTable = resources.tableNames.deliveries;
  deliveries = new DynamoDeliveryRepository(clients.documents, deliveriesTable);
});

const eventId = (n: number) => `evt_${String(n).padStart(26, '0')}`;
const endpointId = (n: number) => `ep_${String(n).padStart(26, '0')}`;
const EXPIRES = Math.floor(Date.parse('2027-01-01T00:00:00.000Z') / 1000);

const record = (event: string, endpoint: string): DeliveryRecord => ({
  event_id: event,
  endpoint_id: endpoint,
  event_type: 'payout.processed',
  ts_id: `2026-11-26T12:00:00.000Z#${event}`,
  status: 'pending',
  created_at: '2026-11-26T12:00:00.000Z',
  updated_at: '2026-11-26T12:00:00.000Z',
  last_attempt: 0,
  completed_attempt: 0,
  attempts: [],
  expires_at: EXPIRES,
});

const first = (event: string, endpoint: string): DeliveryMessage => ({
  event_id: event,
  endpoint_id: endpoint,
  attempt: 1,
  round_start: 1,
});

const enqueue = (
  instance: DynamoDeliverySequencer,
  endpoint: string,
  key: string,
  event: string,
  round = 'fanout',
) =>
  instance.enqueue({
    endpointId: endpoint,
    key,
    eventId: event,
    round,
    message: first(event, endpoint),
    expiresAt: EXPIRES,
  });

describe('DynamoDeliverySequencer', () => {
  it('numbers 60 deliveries racing from 4 instances 1..60, each once, each record holding its place', async () => {
    const endpoint = endpointId(1);
    const events = Array.from({ length: 60 }, (_, index) => eventId(1_000 + index));
    for (const event of events) await deliveries.createIfAbsent(record(event, endpoint));
    const instances = Array.from({ length: 4 }, () => sequencer());
    const numbers = await Promise.all(
      events.map((event, index) =>
        enqueue(instances[index % 4] as DynamoDeliverySequencer, endpoint, 'k', event),
      ),
    );
    expect([...numbers].sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, index) => index + 1));
    for (const [index, event] of events.entries()) {
      const stored = await deliveries.get(event, endpoint);
      expect(stored).toMatchObject({ order_key: 'k', order_seq: numbers[index], ordered_by: 'fanout' });
    }
  });

  it('keeps the number of a delivery numbered in the same round; a replay round numbers it again, at the end', async () => {
    const endpoint = endpointId(2);
    const [a, b] = [eventId(2_001), eventId(2_002)];
    for (const event of [a, b]) await deliveries.createIfAbsent(record(event, endpoint));
    const instance = sequencer();
    expect(await enqueue(instance, endpoint, 'k', a)).toBe(1);
    expect(await enqueue(sequencer(), endpoint, 'k', a)).toBe(1);
    expect(await enqueue(instance, endpoint, 'k', b)).toBe(2);
    expect(await enqueue(instance, endpoint, 'k', a, 'rpl_1')).toBe(3);
    expect(await enqueue(sequencer(), endpoint, 'k', a, 'rpl_1')).toBe(3);
  });

  it("a message of the place a replay moved the delivery from cannot claim it; the new place's can", async () => {
    const endpoint = endpointId(7);
    const event = eventId(7_001);
    await deliveries.createIfAbsent(record(event, endpoint));
    const fanout = await enqueue(sequencer(), endpoint, 'k', event);
    const replayed = await enqueue(sequencer(), endpoint, 'k', event, 'rpl_7');
    const claim = (seq: number) =>
      deliveries.claim(event, endpoint, 1, '2026-11-26T12:00:00.000Z', '2026-11-26T12:01:00.000Z', seq);
    expect(await claim(fanout)).toBe('done');
    expect(await claim(replayed)).toBe('claimed');
  });

  it('refuses to number a delivery that has no record', async () => {
    await expect(enqueue(sequencer(), endpointId(3), 'k', eventId(3_001))).rejects.toThrow(/no delivery/);
  });

  it('gives the turn to the lowest open number only, and closing hands it to the next one with its message', async () => {
    const endpoint = endpointId(4);
    const events = [eventId(4_001), eventId(4_002), eventId(4_003)];
    for (const event of events) await deliveries.createIfAbsent(record(event, endpoint));
    const instance = sequencer();
    for (const event of events) await enqueue(instance, endpoint, 'k', event);
    expect(await instance.isTurn(endpoint, { key: 'k', seq: 1 })).toBe(true);
    expect(await instance.isTurn(endpoint, { key: 'k', seq: 2 })).toBe(false);
    expect(await instance.isTurn(endpoint, { key: 'k', seq: 3 })).toBe(false);
    // Closing a middle one (a forced replay left its place) opens nothing ahead of the head.
    expect(await instance.close(endpoint, { key: 'k', seq: 2 }, events[1] as string)).toEqual({
      ...first(events[2] as string, endpoint),
      order: { key: 'k', seq: 3 },
    });
    expect(await instance.isTurn(endpoint, { key: 'k', seq: 3 })).toBe(false);
    expect(await instance.close(endpoint, { key: 'k', seq: 1 }, events[0] as string)).toMatchObject({
      event_id: events[2],
      order: { key: 'k', seq: 3 },
    });
    expect(await instance.isTurn(endpoint, { key: 'k', seq: 3 })).toBe(true);
    // A repeated close is harmless; the last one closes and hands on nothing.
    expect(await instance.close(endpoint, { key: 'k', seq: 1 }, events[0] as string)).toMatchObject({
      event_id: events[2],
    });
    expect(await instance.close(endpoint, { key: 'k', seq: 3 }, events[2] as string)).toBeUndefined();
  });

  it("never closes another delivery's place (a stale message of a key numbered afresh)", async () => {
    const endpoint = endpointId(5);
    const [a, b] = [eventId(5_001), eventId(5_002)];
    for (const event of [a, b]) await deliveries.createIfAbsent(record(event, endpoint));
    const instance = sequencer();
    await enqueue(instance, endpoint, 'k', a);
    await enqueue(instance, endpoint, 'k', b);
    expect(await instance.close(endpoint, { key: 'k', seq: 2 }, a)).toBeUndefined();
    const place = await clients.documents.send(
      new GetCommand({ TableName: orderTable, Key: { order_key: `${endpoint}#k`, seq: 2 } }),
    );
    expect(place.Item?.event_id).toBe(b);
  });

  it('continues after the last open item when the key’s counter is gone (expired)', async () => {
    const endpoint = endpointId(6);
    const events = [eventId(6_001), eventId(6_002), eventId(6_003)];
    for (const event of events) await deliveries.createIfAbsent(record(event, endpoint));
    expect(await enqueue(sequencer(), endpoint, 'k', events[0] as string)).toBe(1);
    expect(await enqueue(sequencer(), endpoint, 'k', events[1] as string)).toBe(2);
    await clients.documents.send(
      new DeleteCommand({ TableName: orderTable, Key: { order_key: `${endpoint}#k`, seq: 0 } }),
    );
    expect(await enqueue(sequencer(), endpoint, 'k', events[2] as string)).toBe(3);
  });

  it('lists each key’s head (its lowest open place) for the watchdog, with its sightings and wake-ups noted on it', async () => {
    const endpoint = endpointId(77);
    const events = [eventId(7_001), eventId(7_002), eventId(7_003), eventId(7_004)];
    for (const event of events) await deliveries.createIfAbsent(record(event, endpoint));
    const instance = sequencer();
    await enqueue(instance, endpoint, 'k#1', events[0] as string);
    await enqueue(instance, endpoint, 'k#1', events[1] as string);
    await enqueue(instance, endpoint, 'other', events[2] as string);
    await enqueue(instance, endpoint, 'other', events[3] as string);
    await instance.close(endpoint, { key: 'other', seq: 1 }, events[2] as string);
    const headsOf = async () =>
      (await instance.heads(10_000)).heads
        .filter((head) => head.endpointId === endpoint)
        .sort((a, b) => a.place.key.localeCompare(b.place.key));
    // A key may hold `#`: the endpoint id is what comes before the first one.
    expect(await headsOf()).toEqual([
      { endpointId: endpoint, place: { key: 'k#1', seq: 1 }, eventId: events[0] },
      { endpointId: endpoint, place: { key: 'other', seq: 2 }, eventId: events[3] },
    ]);
    // The turn's message is read for a head only when it is woken.
    expect(await instance.messageOf(endpoint, { key: 'other', seq: 2 })).toEqual({
      ...first(events[3] as string, endpoint),
      order: { key: 'other', seq: 2 },
    });
    expect(await instance.messageOf(endpoint, { key: 'other', seq: 1 })).toBeUndefined();
    await instance.markHeadSeen(
      endpoint,
      { key: 'k#1', seq: 1 },
      events[0] as string,
      '2026-11-26T12:00:00.000Z',
    );
    // The first sighting stays; another delivery's message never marks this place.
    await instance.markHeadSeen(
      endpoint,
      { key: 'k#1', seq: 1 },
      events[0] as string,
      '2026-11-26T12:05:00.000Z',
    );
    await instance.markHeadSeen(
      endpoint,
      { key: 'other', seq: 2 },
      events[0] as string,
      '2026-11-26T12:00:00.000Z',
    );
    await instance.markHeadWoken(endpoint, { key: 'k#1', seq: 1 }, events[0] as string, {
      at: '2026-11-26T12:06:00.000Z',
      attempt: 2,
    });
    const [noted, other] = await headsOf();
    expect(noted).toMatchObject({
      headSeenAt: '2026-11-26T12:00:00.000Z',
      woken: { at: '2026-11-26T12:06:00.000Z', attempt: 2 },
    });
    expect(other?.headSeenAt).toBeUndefined();
    // A closed place is never re-created by a late note.
    await instance.close(endpoint, { key: 'k#1', seq: 1 }, events[0] as string);
    await instance.markHeadSeen(
      endpoint,
      { key: 'k#1', seq: 1 },
      events[0] as string,
      '2026-11-26T12:07:00.000Z',
    );
    expect((await headsOf()).map((head) => head.place)).toEqual([
      { key: 'k#1', seq: 2 },
      { key: 'other', seq: 2 },
    ]);
  });

  it('reads at most the number of places asked for, and says the listing is partial', async () => {
    const partial = await sequencer().heads(3);
    expect(partial.complete).toBe(false);
    expect((await sequencer().heads(10_000)).complete).toBe(true);
  });
});
