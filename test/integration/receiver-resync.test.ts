import { CreateTableCommand, UpdateTimeToLiveCommand } from '@aws-sdk/client-dynamodb';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import {
  type CatalogSnapshot,
  IdempotencyStore,
  RECEIVER_TABLE,
  type ReceivedEnvelope,
  ResyncError,
  resync,
  type TransactItem,
} from '../../functions/receiver';
import { engineClients, uniquePrefix } from '../support/engines';
import { type FakePartnerApi, PARTNER_KEY, startFakePartnerApi } from '../unit/receiver/fake-partner-api';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

const OUTAGE_FROM = '2026-11-20T00:00:00.000Z';
const OUTAGE_TO = '2026-11-20T06:00:00.000Z';
const NOW = new Date('2026-11-20T06:00:00.000Z');

let receiverTable: string;
let effectsTable: string;
let api: FakePartnerApi | undefined;

beforeAll(async () => {
  const prefix = uniquePrefix();
  receiverTable = `${prefix}receiver-events`;
  effectsTable = `${prefix}receiver-effects`;
  await clients.dynamoDb.send(
    new CreateTableCommand({
      TableName: receiverTable,
      AttributeDefinitions: [{ AttributeName: RECEIVER_TABLE.partitionKey, AttributeType: 'S' }],
      KeySchema: [{ AttributeName: RECEIVER_TABLE.partitionKey, KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
  await clients.dynamoDb.send(
    new UpdateTimeToLiveCommand({
      TableName: receiverTable,
      TimeToLiveSpecification: { AttributeName: RECEIVER_TABLE.timeToLiveAttribute, Enabled: true },
    }),
  );
  await clients.dynamoDb.send(
    new CreateTableCommand({
      TableName: effectsTable,
      AttributeDefinitions: [{ AttributeName: 'pk', AttributeType: 'S' }],
      KeySchema: [{ AttributeName: 'pk', KeyType: 'HASH' }],
      BillingMode: 'PAY_PER_REQUEST',
    }),
  );
});

afterEach(async () => {
  await api?.close();
  api = undefined;
});

let run = 0;

/** `count` price-list events spread over the outage window, ids unique to this test run. */
const outageEvents = (count: number): ReceivedEnvelope[] => {
  run += 1;
  const span = Date.parse(OUTAGE_TO) - Date.parse(OUTAGE_FROM);
  return Array.from({ length: count }, (_, index) => ({
    event_id: `evt_${uniquePrefix().slice(1, 9)}${String(run).padStart(4, '0')}${String(index).padStart(6, '0')}`,
    type: 'catalog.PriceListUpdated',
    version: '2026-11-01',
    ts: new Date(Date.parse(OUTAGE_FROM) + Math.floor((index * span) / count)).toISOString(),
    attempt: 1,
    data: { version: index + 1, effective_from: OUTAGE_FROM },
  }));
};

/** The receiver's effect: one counter per event, in the same transaction as the mark. */
const effect = async (envelope: ReceivedEnvelope): Promise<readonly TransactItem[]> => [
  {
    Update: {
      TableName: effectsTable,
      Key: { pk: `applied#${envelope.event_id}` },
      UpdateExpression: 'ADD n :one',
      ExpressionAttributeValues: { ':one': 1 },
    },
  },
];

const appliedCount = async (eventId: string): Promise<number> =>
  ((
    await clients.documents.send(
      new GetCommand({ TableName: effectsTable, Key: { pk: `applied#${eventId}` }, ConsistentRead: true }),
    )
  ).Item?.n as number | undefined) ?? 0;

const storeOf = () =>
  new IdempotencyStore({
    documents: clients.documents,
    tableName: receiverTable,
    handlerVersion: 'resync-test',
    clock: () => NOW,
  });

describe('resync against the fake service, applied through the idempotency store on DynamoDB Local', () => {
  it('a receiver that was down catches up: every event applied exactly once, despite overlap and earlier processing', async () => {
    const events = outageEvents(37);
    const store = storeOf();
    // Before the outage the receiver had processed some of the window's first events (their 200s got through).
    for (const event of events.slice(0, 5)) await store.processTransactional(event, effect);

    api = await startFakePartnerApi(events, { overlap: 3 });
    const snapshots: CatalogSnapshot[] = [];
    const result = await resync({
      baseUrl: api.baseUrl,
      partnerKey: PARTNER_KEY,
      from: OUTAGE_FROM,
      to: OUTAGE_TO,
      pageSize: 8,
      onSnapshot: async (snapshot) => {
        snapshots.push(snapshot);
      },
      process: (envelope) => store.processTransactional(envelope, effect),
    });

    expect(snapshots).toHaveLength(1);
    expect(snapshots[0]?.as_of).toBe(OUTAGE_FROM);
    expect(result.processed).toBe(32);
    expect(result.duplicates).toBe(result.events - 32);
    expect(result.events).toBeGreaterThan(37); // the pages overlapped
    for (const event of events) {
      expect(await appliedCount(event.event_id)).toBe(1);
      expect((await store.status(event.event_id)).seen).toBe(true);
    }

    // Running it again (an operator retrying the catch-up) applies nothing.
    const again = await resync({
      baseUrl: api.baseUrl,
      partnerKey: PARTNER_KEY,
      from: OUTAGE_FROM,
      to: OUTAGE_TO,
      process: (envelope) => store.processTransactional(envelope, effect),
    });
    expect(again).toMatchObject({ events: 37, processed: 0, duplicates: 37 });
    for (const event of events) expect(await appliedCount(event.event_id)).toBe(1);
  });

  it('a resync racing live redeliveries of the same events still applies each once', async () => {
    const events = outageEvents(20);
    api = await startFakePartnerApi(events, { overlap: 1 });
    const resyncing = resync({
      baseUrl: api.baseUrl,
      partnerKey: PARTNER_KEY,
      from: OUTAGE_FROM,
      to: OUTAGE_TO,
      pageSize: 5,
      process: (envelope) => storeOf().processTransactional(envelope, effect),
    });
    // Meanwhile the sender's retries arrive at another instance.
    const live = Promise.all(
      events.map((event) => storeOf().processTransactional({ ...event, attempt: 6 }, effect)),
    );
    const [result, outcomes] = await Promise.all([resyncing, live]);
    const livelyProcessed = outcomes.filter((outcome) => outcome.kind === 'processed').length;
    expect(result.processed + livelyProcessed).toBe(20);
    for (const event of events) expect(await appliedCount(event.event_id)).toBe(1);
  });

  it('surfaces 401 and 5xx as ResyncError before anything is applied', async () => {
    const events = outageEvents(3);
    api = await startFakePartnerApi(events);
    const store = storeOf();
    const options = {
      baseUrl: api.baseUrl,
      from: OUTAGE_FROM,
      to: OUTAGE_TO,
      process: (envelope: ReceivedEnvelope) => store.processTransactional(envelope, effect),
    };
    await expect(resync({ ...options, partnerKey: `pk_${'b'.repeat(43)}` })).rejects.toMatchObject({
      code: 'unauthorized',
      details: { status: 401 },
    });
    api.override = () => ({ status: 502, body: { error: 'bad_gateway' } });
    const failure = await resync({ ...options, partnerKey: PARTNER_KEY }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ResyncError);
    expect(failure).toMatchObject({ code: 'server_error', retryable: true });
    for (const event of events) expect(await appliedCount(event.event_id)).toBe(0);
  });
});
