/**
 * Signing-secret rotation end to end (C12, C13; spec: "the old key, a wrong key and a timestamp outside the
 * window must each be handled"), on the local stack with a one-hour overlap (setting) and a clock the test
 * moves forward, against reference receivers (the partner kit's, as `npm run receiver` serves it).
 *
 * The endpoint's URL is a tee: every delivery is recorded byte for byte and handed, unchanged, to three
 * reference receivers that differ only in the secret they know — the old one, the new one, a wrong one — each
 * with its own table and counting effect. The tee answers the sender with the new-secret receiver's answer.
 */
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../functions/composition/local/stack';
import { DEFAULT_RETRY_POLICY } from '../../functions/domain/webhooks/retry-policy';
import { generateSecret } from '../../functions/domain/webhooks/secret';
import type { Clock } from '../../functions/ports/clock';
import { IdempotencyStore } from '../../functions/receiver';
import { countingEffect, effectCounterKey } from '../../functions/receiver/reference/effect';
import { type LocalServer, serveProxyHandler } from '../../functions/receiver/reference/local-server';
import { createReferenceReceiver } from '../../functions/receiver/reference/receiver';
import { ensureReceiverTable } from '../../functions/receiver/reference/table';
import { TIMESTAMP_TOLERANCE_SECONDS, verifyWebhook } from '../../functions/receiver/verify';
import { eventHistoryResponseSchema } from '../../functions/schemas/webhooks';
import { demoCatalogWithoutRatePolicy } from '../support/demo-stack';
import { eventually } from '../support/engines';
import { verificationFailureOf } from '../support/verification';

/** How long to wait for the pipeline (a bound, not a timing assertion: it only fails a stuck test). */
const PATIENCE = { timeoutMs: 30_000, intervalMs: 100 };
const ADMIN = 'adm_rotation_e2e_0123456789abcdef';
/** The overlap during which the old secret is still sent (production: 24 h). */
const OVERLAP_HOURS = 1;
const HOUR_MS = 3_600_000;

/** The stack's and the receivers' clock: real time plus an offset the test moves forward. */
let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
/** A receiver-only time (the replay test pins it); undefined: the shared clock. */
let receiverTime: Date | undefined;
const receiverNow = (): Date => receiverTime ?? clock.now();

type ReceiverName = 'old' | 'new' | 'wrong';
const RECEIVERS: readonly ReceiverName[] = ['old', 'new', 'wrong'];

interface PartnerReceiver {
  readonly name: ReceiverName;
  readonly tableName: string;
  readonly server: LocalServer;
  secrets: string[];
  /** Why each refused request was refused (the receiver's own log; the answer never says). */
  readonly refusals: string[];
}

/** A request as the sender sent it, and each receiver's answer to it. */
interface Captured {
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  readonly answers: Partial<Record<ReceiverName, { readonly status: number; readonly body: string }>>;
}

let stack: LocalStack;
let tee: Server;
let teeUrl: string;
const receivers = new Map<ReceiverName, PartnerReceiver>();
const captured: Captured[] = [];

const FORWARDED = ['content-type', 'user-agent', 'x-event-id', 'x-timestamp', 'x-signature', 'x-attempt'];

const readBody = async (request: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

/** Sends a captured request, unchanged, to one receiver. */
const send = async (name: ReceiverName, request: Pick<Captured, 'path' | 'headers' | 'body'>) => {
  const receiver = receivers.get(name) as PartnerReceiver;
  const response = await fetch(`${receiver.server.url}${request.path}`, {
    method: 'POST',
    headers: request.headers,
    body: new Uint8Array(request.body),
  });
  return { status: response.status, body: await response.text() };
};

beforeAll(async () => {
  stack = await startLocalStack({
    port: 0,
    apiKey: 'key_rotation_e2e_0123456789abcdef',
    adminToken: ADMIN,
    logLevel: 'SILENT',
    clock,
    streamPollIntervalMs: 50,
    seedCatalog: demoCatalogWithoutRatePolicy(),
    webhooks: {
      settings: { previousSecretHours: OVERLAP_HOURS },
      policy: { ...DEFAULT_RETRY_POLICY, backoffSeconds: [1, 1, 1], dailyRetryDays: 0 },
    },
  });
  for (const name of RECEIVERS) {
    const tableName = `rotation-e2e-${name}`;
    await ensureReceiverTable(stack.clients.dynamoDb, tableName);
    const refusals: string[] = [];
    const partner = { name, tableName, refusals, secrets: [] as string[] } as Omit<
      PartnerReceiver,
      'server'
    > & {
      secrets: string[];
    };
    const handler = createReferenceReceiver({
      store: new IdempotencyStore({
        documents: stack.clients.documents,
        tableName,
        handlerVersion: `rotation-${name}`,
        clock: receiverNow,
      }),
      secrets: async () => partner.secrets,
      handlerVersion: `rotation-${name}`,
      handler: countingEffect({ tableName, clock: receiverNow }),
      clock: receiverNow,
      logger: {
        info: () => undefined,
        warn: (_message, fields) => {
          if (typeof fields?.reason === 'string') refusals.push(fields.reason);
        },
        error: () => undefined,
      },
    });
    receivers.set(name, Object.assign(partner, { server: await serveProxyHandler({ handler, port: 0 }) }));
  }

  tee = createServer((request, response) => {
    void (async () => {
      const body = await readBody(request);
      const headers = Object.fromEntries(
        FORWARDED.flatMap((name) => {
          const value = request.headers[name];
          return typeof value === 'string' ? [[name, value]] : [];
        }),
      );
      const entry: Captured = { path: request.url ?? '/', headers, body, answers: {} };
      for (const name of RECEIVERS) entry.answers[name] = await send(name, entry);
      captured.push(entry);
      const answer = entry.answers.new as { status: number; body: string };
      response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    })().catch(() => response.writeHead(500).end());
  });
  tee.listen(0, '127.0.0.1');
  await once(tee, 'listening');
  teeUrl = `http://127.0.0.1:${(tee.address() as AddressInfo).port}/webhooks/v1`;
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await new Promise<void>((resolve) => (tee ? tee.close(() => resolve()) : resolve()));
  for (const receiver of receivers.values()) await receiver.server.close();
});

const receiver = (name: ReceiverName): PartnerReceiver => receivers.get(name) as PartnerReceiver;

const admin = async (method: string, route: string, body?: unknown) => {
  const response = await fetch(`${stack.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
};

const publishPayout = async (payoutId: string): Promise<string> => {
  const published = await admin('POST', '/webhooks/events', {
    type: 'payout.processed',
    producer: 'payments',
    data: { payout_id: payoutId, status: 'paid', amount_minor: 4200, currency: 'EUR' },
  });
  expect(published.status).toBe(202);
  return published.json.event_id as string;
};

/** The requests the tee captured for an event, once the sender recorded `attempts` attempts of it. */
const deliveredRequests = async (eventId: string, endpointId: string, attempts = 1): Promise<Captured[]> => {
  await eventually(async () => {
    const answer = await admin('GET', `/webhooks/events/${eventId}`);
    const delivery = eventHistoryResponseSchema
      .parse(answer.json)
      .deliveries.find((entry) => entry.endpoint_id === endpointId);
    return delivery && delivery.attempts.length >= attempts ? delivery : undefined;
  }, PATIENCE);
  return captured.filter((entry) => entry.headers['x-event-id'] === eventId);
};

const applied = async (name: ReceiverName): Promise<number> => {
  const item = await stack.clients.documents.send(
    new GetCommand({ TableName: receiver(name).tableName, Key: { event_id: effectCounterKey('payout') } }),
  );
  return Number(item.Item?.applied ?? 0);
};

const signaturesOf = (request: Captured): string[] => (request.headers['x-signature'] ?? '').split(' ');

describe('signing-secret rotation at the reference receiver (local stack)', () => {
  let endpointId: string;
  let oldSecret: string;
  let newSecret: string;
  let retiredRequest: Captured;

  it('during the overlap a delivery carries both signatures: old-only and new-only receivers both accept it, once', async () => {
    const created = await admin('POST', '/webhooks/endpoints', { url: teeUrl });
    expect(created.status).toBe(201);
    endpointId = created.json.endpoint_id as string;
    oldSecret = created.json.secret as string;
    const rotated = await admin('POST', `/webhooks/endpoints/${endpointId}/rotate-secret`);
    expect(rotated.status).toBe(200);
    newSecret = rotated.json.secret as string;
    expect(newSecret).not.toBe(oldSecret);
    expect(
      Date.parse(rotated.json.previous_secret_expires_at as string) - clock.now().getTime(),
    ).toBeGreaterThan(OVERLAP_HOURS * HOUR_MS - 60_000);
    receiver('old').secrets = [oldSecret];
    receiver('new').secrets = [newSecret];
    receiver('wrong').secrets = [generateSecret((size) => randomBytes(size))];

    const eventId = await publishPayout('po_rotation_overlap');
    const [request] = await deliveredRequests(eventId, endpointId);
    if (!request) throw new Error('no delivery reached the tee');
    expect(signaturesOf(request)).toHaveLength(2);
    expect(request.answers.old).toMatchObject({ status: 200 });
    expect(request.answers.new).toMatchObject({ status: 200 });
    expect(JSON.parse(request.answers.old?.body ?? '{}')).toMatchObject({
      event_id: eventId,
      status: 'processed',
    });
    expect(JSON.parse(request.answers.new?.body ?? '{}')).toMatchObject({
      event_id: eventId,
      status: 'processed',
    });
    expect(await applied('old')).toBe(1);
    expect(await applied('new')).toBe(1);

    // The same event again (a replay: the next attempt, signed again with both secrets): 200, no second effect.
    const replay = await admin('POST', '/webhooks/replay', { event_ids: [eventId] });
    expect(replay.status).toBe(202);
    const requests = await deliveredRequests(eventId, endpointId, 2);
    const again = requests[1] as Captured;
    expect(signaturesOf(again)).toHaveLength(2);
    expect(again.answers.old).toMatchObject({ status: 200 });
    expect(again.answers.new).toMatchObject({ status: 200 });
    expect(JSON.parse(again.answers.new?.body ?? '{}')).toMatchObject({ status: 'duplicate' });
    expect(await applied('old')).toBe(1);
    expect(await applied('new')).toBe(1);
  });

  it('a wrong secret fails: 401, the signature does not match', () => {
    const requests = captured.filter((entry) => entry.answers.wrong !== undefined);
    expect(requests.length).toBeGreaterThan(0);
    for (const request of requests) {
      expect(request.answers.wrong?.status).toBe(401);
      expect(JSON.parse(request.answers.wrong?.body ?? '{}')).toMatchObject({ error: 'unauthorized' });
    }
    expect(new Set(receiver('wrong').refusals)).toEqual(new Set(['signature_mismatch']));
  });

  it('after the overlap (retirement) only the new secret signs: 401 at the old-only receiver, 200 at the new one', async () => {
    offsetMs += OVERLAP_HOURS * HOUR_MS + 60_000;
    const eventId = await publishPayout('po_rotation_retired');
    const [request] = await deliveredRequests(eventId, endpointId);
    if (!request) throw new Error('no delivery reached the tee');
    retiredRequest = request;
    expect(signaturesOf(request)).toHaveLength(1);
    expect(request.answers.old).toMatchObject({ status: 401 });
    expect(JSON.parse(request.answers.old?.body ?? '{}')).toMatchObject({
      error: 'unauthorized',
      error_description: 'the request could not be authenticated',
    });
    expect(receiver('old').refusals).toEqual(['signature_mismatch']);
    expect(request.answers.new).toMatchObject({ status: 200 });
    expect(await applied('old')).toBe(1);
    expect(await applied('new')).toBe(2);
    // The sender recorded the new-secret receiver's answer: delivered.
    const history = eventHistoryResponseSchema.parse(
      (await admin('GET', `/webhooks/events/${eventId}`)).json,
    );
    expect(history.deliveries.find((entry) => entry.endpoint_id === endpointId)).toMatchObject({
      status: 'delivered',
      attempts: [expect.objectContaining({ http_status: 200 })],
    });
  });

  it('a captured request replayed after the 300-second window fails with 401 although its signature is valid', async () => {
    const signedAt = Date.parse(retiredRequest.headers['x-timestamp'] as string);
    const verifyAt = (at: number) =>
      verifyWebhook({
        body: retiredRequest.body,
        method: 'POST',
        path: retiredRequest.path,
        headers: retiredRequest.headers,
        secrets: [newSecret],
        now: new Date(at),
      });
    // The signature itself is valid: inside the window the very same bytes verify.
    expect(verifyAt(signedAt + (TIMESTAMP_TOLERANCE_SECONDS - 1) * 1000).event_id).toBe(
      retiredRequest.headers['x-event-id'],
    );
    const refusal = verificationFailureOf(() =>
      verifyAt(signedAt + (TIMESTAMP_TOLERANCE_SECONDS + 1) * 1000),
    );
    expect(refusal).toBe('timestamp_out_of_window');

    const refusedBefore = receiver('new').refusals.length;
    try {
      // Just inside the window the receiver takes it (a duplicate: nothing applied again)…
      receiverTime = new Date(signedAt + (TIMESTAMP_TOLERANCE_SECONDS - 1) * 1000);
      const inside = await send('new', retiredRequest);
      expect(inside.status).toBe(200);
      expect(JSON.parse(inside.body)).toMatchObject({ status: 'duplicate' });
      // …just past it, the same bytes are refused.
      receiverTime = new Date(signedAt + (TIMESTAMP_TOLERANCE_SECONDS + 1) * 1000);
      const stale = await send('new', retiredRequest);
      expect(stale.status).toBe(401);
      expect(JSON.parse(stale.body)).toMatchObject({ error: 'unauthorized' });
      // A timestamp ahead of the receiver by more than the window is refused the same way.
      receiverTime = new Date(signedAt - (TIMESTAMP_TOLERANCE_SECONDS + 1) * 1000);
      expect((await send('new', retiredRequest)).status).toBe(401);
    } finally {
      receiverTime = undefined;
    }
    expect(receiver('new').refusals.slice(refusedBefore)).toEqual([
      'timestamp_out_of_window',
      'timestamp_out_of_window',
    ]);
    expect(await applied('new')).toBe(2);
  });

  it('two rotations inside one overlap: the first secret is still sent until its own overlap ends', async () => {
    // The endpoint's secret is `newSecret` now; rotate twice, a minute apart.
    const second = (await admin('POST', `/webhooks/endpoints/${endpointId}/rotate-secret`)).json
      .secret as string;
    offsetMs += 60_000;
    const third = (await admin('POST', `/webhooks/endpoints/${endpointId}/rotate-secret`)).json
      .secret as string;
    receiver('old').secrets = [newSecret];
    receiver('new').secrets = [third];

    const during = await publishPayout('po_rotation_twice');
    const [request] = await deliveredRequests(during, endpointId);
    if (!request) throw new Error('no delivery reached the tee');
    // Signed with the current secret and both rotated-out ones.
    expect(signaturesOf(request)).toHaveLength(3);
    expect(request.answers.old).toMatchObject({ status: 200 });
    expect(request.answers.new).toMatchObject({ status: 200 });
    for (const secret of [newSecret, second, third]) {
      expect(() =>
        verifyWebhook({ ...request, method: 'POST', secrets: [secret], now: clock.now() }),
      ).not.toThrow();
    }

    // Past both rotations' overlaps, only the current secret signs.
    offsetMs += OVERLAP_HOURS * HOUR_MS + 60_000;
    const after = await publishPayout('po_rotation_twice_after');
    const [afterRequest] = await deliveredRequests(after, endpointId);
    if (!afterRequest) throw new Error('no delivery reached the tee');
    expect(signaturesOf(afterRequest)).toHaveLength(1);
    expect(afterRequest.answers.old).toMatchObject({ status: 401 });
    expect(afterRequest.answers.new).toMatchObject({ status: 200 });
  });
});
