/**
 * End to end on the local stack: the delivery pipeline delivers to the reference receiver (the partner kit's
 * HTTP receiver, served locally as `npm run receiver` serves it), whose status endpoint then reports the event
 * seen, with `processed_at` and `handler_version`; a replay of the same event is answered as a duplicate.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../functions/composition/local/stack';
import { startLocalStack } from '../../functions/composition/local/stack';
import { IdempotencyStore, resync } from '../../functions/receiver';
import { countingEffect, effectCounterKey } from '../../functions/receiver/reference/effect';
import { type LocalServer, serveProxyHandler } from '../../functions/receiver/reference/local-server';
import { createReferenceReceiver } from '../../functions/receiver/reference/receiver';
import { ensureReceiverTable } from '../../functions/receiver/reference/table';
import { demoCatalogWithoutRatePolicy } from '../support/demo-stack';
import { eventually } from '../support/engines';

const ADMIN = 'adm_receiver_e2e_0123456789';
const RECEIVER_TABLE_NAME = 'reference-receiver-e2e';
const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };

let stack: LocalStack;
let server: LocalServer;
let secrets: string[] = [];

beforeAll(async () => {
  stack = await startLocalStack({
    port: 0,
    apiKey: 'key_receiver_e2e_0123456789',
    adminToken: ADMIN,
    logLevel: 'SILENT',
    streamPollIntervalMs: 50,
    seedCatalog: demoCatalogWithoutRatePolicy(),
  });
  await ensureReceiverTable(stack.clients.dynamoDb, RECEIVER_TABLE_NAME);
  const store = new IdempotencyStore({
    documents: stack.clients.documents,
    tableName: RECEIVER_TABLE_NAME,
    handlerVersion: 'reference-e2e-1',
  });
  const receiver = createReferenceReceiver({
    store,
    secrets: async () => secrets,
    handlerVersion: 'reference-e2e-1',
    tableName: RECEIVER_TABLE_NAME,
    logger: quiet,
  });
  server = await serveProxyHandler({ handler: receiver, port: 0 });
}, 60_000);

afterAll(async () => {
  await server?.close();
  await stack?.stop();
});

const admin = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${stack.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return (await response.json()) as Record<string, unknown>;
};

const status = async (eventId: string) => {
  const response = await fetch(`${server.url}/webhooks/status/${eventId}`);
  return (await response.json()) as Record<string, unknown>;
};

describe('delivery to the reference receiver (local stack)', () => {
  it('is processed once: the status endpoint reports it seen, and a replay is a duplicate', async () => {
    const endpoint = await admin('POST', '/webhooks/endpoints', { url: `${server.url}/webhooks/v1` });
    secrets = [endpoint.secret as string];
    const published = await admin('POST', '/webhooks/events', {
      type: 'payout.processed',
      producer: 'payments',
      data: { payout_id: 'po_e2e', status: 'paid', amount_minor: 990, currency: 'EUR' },
    });
    const eventId = published.event_id as string;
    expect(await status(eventId)).toMatchObject({ seen: false });

    const seen = await eventually(async () => {
      const answer = await status(eventId);
      return answer.seen === true ? answer : undefined;
    });
    expect(seen).toMatchObject({ event_id: eventId, seen: true, handler_version: 'reference-e2e-1' });
    expect(String(seen.processed_at)).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    // The sender records the attempt once the receiver's answer is back, a moment after the receiver committed.
    const history = await eventually(async () => {
      const answer = await admin('GET', `/webhooks/events/${eventId}`);
      return (answer.deliveries as { status: string }[])[0]?.status === 'delivered' ? answer : undefined;
    });
    expect(history.deliveries).toEqual([
      expect.objectContaining({
        status: 'delivered',
        attempts: [expect.objectContaining({ http_status: 200 })],
      }),
    ]);

    // A replay delivers the same event again: the receiver answers 200 without a second effect.
    await admin('POST', '/webhooks/replay', { event_ids: [eventId] });
    const replayed = await eventually(async () => {
      const answer = await admin('GET', `/webhooks/events/${eventId}`);
      const attempts = (
        answer.deliveries as { attempts: { http_status?: number; response_excerpt?: string }[] }[]
      )[0]?.attempts;
      return attempts && attempts.length === 2 ? attempts : undefined;
    });
    expect(replayed[1]?.http_status).toBe(200);
    expect(replayed[1]?.response_excerpt).toContain('duplicate');
    expect(await status(eventId)).toMatchObject({ seen: true, processed_at: seen.processed_at });
  });

  it('catches up after an outage with resync from the partner routes: every event applied exactly once', async () => {
    // The partner's receiver is down: its endpoint points at a closed port, so deliveries keep failing.
    const endpoint = await admin('POST', '/webhooks/endpoints', {
      url: 'http://127.0.0.1:9/webhooks/v1',
      tenant: 't-outage',
    });
    const from = new Date().toISOString();
    const eventIds: string[] = [];
    for (let index = 0; index < 12; index += 1) {
      const published = await admin('POST', '/webhooks/events', {
        type: 'payout.processed',
        tenant: 't-outage',
        data: {
          payout_id: `po_out_${index}`,
          status: 'paid',
          amount_minor: index,
          currency: 'EUR',
          seq: index,
        },
      });
      eventIds.push(published.event_id as string);
    }
    for (const eventId of eventIds)
      await eventually(async () => {
        const answer = await admin('GET', `/webhooks/events/${eventId}`);
        const deliveries = answer.deliveries as { endpoint_id: string }[];
        return deliveries.some((delivery) => delivery.endpoint_id === endpoint.endpoint_id)
          ? true
          : undefined;
      });
    // This partner's receiver keeps its own table (the first test's receiver gets every event too).
    const tableName = `${RECEIVER_TABLE_NAME}-outage`;
    await ensureReceiverTable(stack.clients.dynamoDb, tableName);
    const store = new IdempotencyStore({
      documents: stack.clients.documents,
      tableName,
      handlerVersion: 'reference-e2e-1',
    });
    const effect = countingEffect({ tableName });
    const apply = (envelope: Parameters<typeof effect>[0]) =>
      store.processTransactional(envelope, (received) => effect(received, { topic: 'outage' }));
    // One event was already applied before the outage was noticed (the receiver's own earlier work).
    const early = await fetch(`${stack.url}/partner/events?from=${from}&limit=1`, {
      headers: { authorization: `Bearer ${endpoint.partner_key as string}` },
    });
    const [first] = ((await early.json()) as { items: Parameters<typeof effect>[0][] }).items;
    if (first) await apply(first);

    const result = await resync({
      baseUrl: stack.url,
      partnerKey: endpoint.partner_key as string,
      from,
      to: new Date().toISOString(),
      pageSize: 5,
      process: apply,
    });
    expect(result).toMatchObject({ events: 12, processed: 11, duplicates: 1 });
    expect(result.snapshot).toHaveProperty('versions');
    // Running it again applies nothing.
    const again = await resync({
      baseUrl: stack.url,
      partnerKey: endpoint.partner_key as string,
      from,
      to: new Date().toISOString(),
      process: apply,
    });
    expect(again).toMatchObject({ events: 12, processed: 0, duplicates: 12 });
    const counter = await stack.clients.documents.send(
      new GetCommand({ TableName: tableName, Key: { event_id: effectCounterKey('outage') } }),
    );
    expect(counter.Item?.applied).toBe(12);
    for (const eventId of eventIds) expect(await store.status(eventId)).toMatchObject({ seen: true });
  });
});
