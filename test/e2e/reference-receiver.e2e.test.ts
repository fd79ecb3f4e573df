/**
 * End to end on the local stack: the delivery pipeline delivers to the reference receiver (the partner kit's
 * HTTP receiver, served locally as `npm run receiver` serves it), whose status endpoint then reports the event
 * seen, with `processed_at` and `handler_version`; a replay of the same event is answered as a duplicate.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../functions/adapters/local/stack';
import { startLocalStack } from '../../functions/adapters/local/stack';
import { IdempotencyStore } from '../../functions/receiver';
import { type LocalServer, serveProxyHandler } from '../../functions/receiver/reference/local-server';
import { createReferenceReceiver } from '../../functions/receiver/reference/receiver';
import { ensureReceiverTable } from '../../functions/receiver/reference/table';
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
    const history = await admin('GET', `/webhooks/events/${eventId}`);
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
});
