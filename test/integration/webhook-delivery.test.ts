/**
 * Webhook delivery through the local stack with real HTTP receivers on loopback: the status policy (C14), the
 * signature (C13), secret rotation, dead-lettering and replay (C15), and the history (C16). The schedule is
 * shortened through configuration only (1 s steps); the production schedule is the default and is unit-tested.
 */
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../functions/composition/local/stack';
import { secretBytes } from '../../functions/domain/webhooks/secret';
import { verifySignatureHeader } from '../../functions/domain/webhooks/signature';
import { eventHistoryResponseSchema } from '../../functions/schemas/webhooks';
import { eventually } from '../support/engines';
import {
  type Reaction,
  type ReceivedRequest,
  startReceiver,
  type TestReceiver,
} from '../support/webhook-receiver';

const API_KEY = 'key_webhooks_0123456789abcdef';
const ADMIN = 'adm_webhooks_0123456789abcdef';
const STEP_SECONDS = 1;
const POLICY = {
  backoffSeconds: [STEP_SECONDS, STEP_SECONDS * 2, STEP_SECONDS],
  dailyRetryDays: 0,
  jitter: { min: 1, max: 1 },
  attemptTimeoutMs: 1_000,
};

let stack: LocalStack;
const receivers: TestReceiver[] = [];

beforeAll(async () => {
  stack = await startLocalStack({
    port: 0,
    apiKey: API_KEY,
    adminToken: ADMIN,
    logLevel: 'SILENT',
    streamPollIntervalMs: 50,
    schedulerIntervalMs: 100,
    webhooks: { policy: POLICY, settings: { previousSecretHours: 3 / 3600 }, sweepIntervalMs: 1_000 },
  });
}, 60_000);

afterAll(async () => {
  for (const receiver of receivers) await receiver.close();
  await stack?.stop();
});

const admin = async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${stack.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
};

const receiver = async (react?: (request: ReceivedRequest, index: number) => Reaction) => {
  const started = await startReceiver(react);
  receivers.push(started);
  return started;
};

let payoutSeq = 0;
/** Publishes a payout event for one tenant (each test uses its own, so endpoints of other tests ignore it). */
const publishPayout = async (tenant: string) => {
  payoutSeq += 1;
  const published = await admin('POST', '/webhooks/events', {
    type: 'payout.processed',
    tenant,
    producer: 'payments',
    data: {
      payout_id: `po_${payoutSeq}`,
      status: 'paid',
      amount_minor: 1250,
      currency: 'EUR',
      seq: payoutSeq,
    },
  });
  expect(published.status).toBe(202);
  return published.body.event_id as string;
};

const tenantEndpoint = async (
  tenant: string,
  react?: (request: ReceivedRequest, index: number) => Reaction,
) => {
  const target = await receiver(react);
  const created = await admin('POST', '/webhooks/endpoints', { url: target.baseUrl, tenant });
  expect(created.status).toBe(201);
  return { target, endpointId: created.body.endpoint_id as string, secret: created.body.secret as string };
};

const history = async (eventId: string) => {
  const answer = await admin('GET', `/webhooks/events/${eventId}`);
  expect(answer.status).toBe(200);
  return eventHistoryResponseSchema.parse(answer.body);
};

/** Waits until the delivery of `eventId` to `endpointId` reaches one of `statuses`. */
const settled = async (
  eventId: string,
  endpointId: string,
  statuses: readonly string[],
  timeoutMs = 20_000,
) =>
  eventually(
    async () => {
      const delivery = (await history(eventId)).deliveries.find((entry) => entry.endpoint_id === endpointId);
      return delivery && statuses.includes(delivery.status) ? delivery : undefined;
    },
    { timeoutMs, intervalMs: 100 },
  );

const verifies = (request: ReceivedRequest, secrets: readonly string[]) =>
  verifySignatureHeader({
    header: String(request.headers['x-signature']),
    secrets: secrets.map(secretBytes),
    timestamp: String(request.headers['x-timestamp']),
    method: request.method,
    path: request.path,
    body: request.body,
  });

describe('webhook delivery (local stack, loopback receivers)', () => {
  it('delivers a 2xx first time, signed, with every header and the envelope fields', async () => {
    const { target, endpointId, secret } = await tenantEndpoint('t-ok');
    const eventId = await publishPayout('t-ok');
    const delivery = await settled(eventId, endpointId, ['delivered']);
    expect(delivery.attempts).toHaveLength(1);
    expect(target.requests).toHaveLength(1);
    const [request] = target.requests as [ReceivedRequest];
    expect(request.method).toBe('POST');
    expect(request.path).toBe('/webhooks/v1/payout');
    expect(request.headers['content-type']).toBe('application/json');
    expect(request.headers['x-event-id']).toBe(eventId);
    expect(request.headers['x-attempt']).toBe('1');
    expect(request.headers['x-webhook-producer']).toBe('payments');
    expect(request.headers['user-agent']).toMatch(/^pricing-webhooks\//);
    expect(String(request.headers['x-timestamp'])).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(verifies(request, [secret])).toBe(true);
    expect(verifies(request, ['whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA='])).toBe(false);
    expect(request.envelope).toMatchObject({
      event_id: eventId,
      type: 'payout.processed',
      version: '2026-11-01',
      attempt: 1,
      producer: 'payments',
      tenant: 't-ok',
      data: { status: 'paid', amount_minor: 1250, currency: 'EUR' },
    });
    for (const field of ['ts', 'trace_id', 'pricelist_version', 'fx_version', 'tax_rule_version'])
      expect(request.envelope).toHaveProperty(field);
  });

  it('retries 5xx twice at the schedule spacing, then delivers on attempt 3', async () => {
    const { target, endpointId } = await tenantEndpoint('t-5xx', (_request, index) =>
      index < 2 ? { kind: 'respond', status: index === 0 ? 500 : 503 } : { kind: 'respond', status: 200 },
    );
    const eventId = await publishPayout('t-5xx');
    const delivery = await settled(eventId, endpointId, ['delivered']);
    expect(
      delivery.attempts.map((attempt) => [attempt.attempt, attempt.http_status, attempt.outcome]),
    ).toEqual([
      [1, 500, 'retry'],
      [2, 503, 'retry'],
      [3, 200, 'delivered'],
    ]);
    expect(target.requests.map((request) => request.envelope.attempt)).toEqual([1, 2, 3]);
    expect(target.requests.map((request) => request.envelope.event_id)).toEqual([eventId, eventId, eventId]);
    const gaps = target.requests
      .slice(1)
      .map((request, index) => request.receivedAt - (target.requests[index] as ReceivedRequest).receivedAt);
    // Steps of 1 s then 2 s (SQS delays have one-second resolution; polling and a busy machine add a little).
    expect(gaps[0]).toBeGreaterThanOrEqual(STEP_SECONDS * 1000 - 50);
    expect(gaps[0]).toBeLessThan(STEP_SECONDS * 1000 + 2_500);
    expect(gaps[1]).toBeGreaterThanOrEqual(STEP_SECONDS * 2000 - 50);
    expect(gaps[1]).toBeLessThan(STEP_SECONDS * 2000 + 2_500);
  });

  it('honours Retry-After on 429, in seconds and as an HTTP date', async () => {
    const { target, endpointId } = await tenantEndpoint('t-429', (_request, index) =>
      index === 0
        ? { kind: 'respond', status: 429, headers: { 'retry-after': '2' } }
        : index === 1
          ? {
              kind: 'respond',
              status: 429,
              headers: { 'retry-after': new Date(Date.now() + 3_000).toUTCString() },
            }
          : { kind: 'respond', status: 204 },
    );
    const eventId = await publishPayout('t-429');
    const delivery = await settled(eventId, endpointId, ['delivered'], 30_000);
    expect(delivery.attempts.map((attempt) => attempt.reason ?? attempt.outcome)).toEqual([
      'http_429_retry_after',
      'http_429_retry_after',
      'delivered',
    ]);
    const [first, second, third] = target.requests as [ReceivedRequest, ReceivedRequest, ReceivedRequest];
    expect(second.receivedAt - first.receivedAt).toBeGreaterThanOrEqual(1_950);
    // An HTTP date has one-second resolution: at least 2 s after the answer.
    expect(third.receivedAt - second.receivedAt).toBeGreaterThanOrEqual(1_950);
  });

  it('never follows a 3xx: the redirect target sees nothing, the delivery is retried', async () => {
    const elsewhere = await receiver();
    const { target, endpointId } = await tenantEndpoint('t-3xx', (_request, index) =>
      index === 0
        ? { kind: 'respond', status: 302, headers: { location: `${elsewhere.baseUrl}/payout` } }
        : { kind: 'respond', status: 200 },
    );
    const eventId = await publishPayout('t-3xx');
    const delivery = await settled(eventId, endpointId, ['delivered']);
    expect(delivery.attempts[0]).toMatchObject({
      http_status: 302,
      outcome: 'retry',
      reason: 'redirect_not_followed_302',
    });
    expect(target.requests).toHaveLength(2);
    expect(elsewhere.connections).toBe(0);
  });

  // Each status has its own tenant and receiver, and each waits a retry step to see no second request: the
  // five run side by side (one wait instead of five).
  it.concurrent.for([400, 401, 403, 404, 422])(
    'stops on %i with the reason recorded',
    async (status, { expect }) => {
      const tenant = `t-stop-${status}`;
      const { target, endpointId } = await tenantEndpoint(tenant, () => ({
        kind: 'respond',
        status,
        body: '{"error":"nope"}',
      }));
      const eventId = await publishPayout(tenant);
      const delivery = await settled(eventId, endpointId, ['stopped']);
      expect(delivery.stop_reason).toBe(`client_error_${status}`);
      expect(delivery.attempts).toEqual([
        expect.objectContaining({
          attempt: 1,
          http_status: status,
          outcome: 'stopped',
          response_excerpt: '{"error":"nope"}',
        }),
      ]);
      await new Promise((resolve) => setTimeout(resolve, STEP_SECONDS * 1000 + 500));
      expect(target.requests).toHaveLength(1);
    },
  );

  it('stops on 410 and disables the endpoint', async () => {
    const { endpointId } = await tenantEndpoint('t-410', () => ({ kind: 'respond', status: 410 }));
    const eventId = await publishPayout('t-410');
    const delivery = await settled(eventId, endpointId, ['stopped']);
    expect(delivery.stop_reason).toBe('gone');
    const endpoint = await admin('GET', `/webhooks/endpoints/${endpointId}`);
    expect(endpoint.body).toMatchObject({ status: 'disabled' });
    expect(String(endpoint.body.disabled_reason)).toContain('gone');
    // A later event is not sent to a disabled endpoint: it is recorded skipped (C32), for `recover`.
    const later = await publishPayout('t-410');
    const skipped = await eventually(async () => (await history(later)).deliveries[0]);
    expect(skipped).toMatchObject({ endpoint_id: endpointId, status: 'skipped', attempts: [] });
    const reenabled = await admin('PATCH', `/webhooks/endpoints/${endpointId}`, { status: 'enabled' });
    expect(reenabled.body).toMatchObject({ status: 'enabled' });
    expect(reenabled.body).not.toHaveProperty('disabled_reason');
  });

  it('records a timeout and a connection reset, and retries both', async () => {
    const { endpointId } = await tenantEndpoint('t-net', (_request, index) =>
      index === 0 ? { kind: 'hang' } : index === 1 ? { kind: 'reset' } : { kind: 'respond', status: 200 },
    );
    const eventId = await publishPayout('t-net');
    const delivery = await settled(eventId, endpointId, ['delivered'], 30_000);
    expect(delivery.attempts.map((attempt) => attempt.error ?? attempt.http_status)).toEqual([
      'timeout',
      'connection_reset',
      200,
    ]);
    expect(delivery.attempts[0]?.duration_ms).toBeGreaterThanOrEqual(POLICY.attemptTimeoutMs - 50);
  });

  it('signs with both secrets during a rotation, then with the new one only', async () => {
    const { target, endpointId, secret: oldSecret } = await tenantEndpoint('t-rotate');
    const rotated = await admin('POST', `/webhooks/endpoints/${endpointId}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const newSecret = rotated.body.secret as string;
    expect(newSecret).not.toBe(oldSecret);
    expect(rotated.body.previous_secret_expires_at).toBeDefined();
    const during = await publishPayout('t-rotate');
    await settled(during, endpointId, ['delivered']);
    const [duringRequest] = target.requests as [ReceivedRequest];
    expect(String(duringRequest.headers['x-signature']).split(' ')).toHaveLength(2);
    expect(verifies(duringRequest, [oldSecret])).toBe(true);
    expect(verifies(duringRequest, [newSecret])).toBe(true);
    // The old secret is sent for `previousSecretHours` (3 s here; 24 h by default).
    await new Promise((resolve) => setTimeout(resolve, 3_200));
    const after = await publishPayout('t-rotate');
    await settled(after, endpointId, ['delivered']);
    const afterRequest = target.requests[1] as ReceivedRequest;
    expect(String(afterRequest.headers['x-signature']).split(' ')).toHaveLength(1);
    expect(verifies(afterRequest, [newSecret])).toBe(true);
    expect(verifies(afterRequest, [oldSecret])).toBe(false);
  });

  it('dead-letters an exhausted delivery, then replays it by id and by window with the same event_id and the next attempt', async () => {
    let healthy = false;
    const { target, endpointId } = await tenantEndpoint('t-dead', () =>
      healthy ? { kind: 'respond', status: 200 } : { kind: 'respond', status: 500 },
    );
    const windowStart = new Date().toISOString();
    const eventId = await publishPayout('t-dead');
    const dead = await settled(eventId, endpointId, ['dead'], 30_000);
    expect(dead.attempts).toHaveLength(1 + POLICY.backoffSeconds.length);
    expect(dead.stop_reason).toBe('retries_exhausted_after_http_500');
    expect(dead.attempts.at(-1)).toMatchObject({ outcome: 'dead' });
    const dlq = await eventually(async () => {
      const received = await stack.clients.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: stack.resources.queueUrls.deliveryDlq,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
        }),
      );
      return received.Messages?.map((message) => JSON.parse(message.Body ?? '{}')).find(
        (body: { event_id?: string }) => body.event_id === eventId,
      );
    });
    expect(dlq).toMatchObject({
      event_id: eventId,
      endpoint_id: endpointId,
      dead_reason: 'retries_exhausted_after_http_500',
    });

    healthy = true;
    const byId = await admin('POST', '/webhooks/replay', { event_ids: [eventId] });
    expect(byId.status).toBe(202);
    expect(byId.body).toMatchObject({ matched: 1, enqueued: 1, skipped: 0 });
    const replayed = await settled(eventId, endpointId, ['delivered']);
    const attempts = replayed.attempts.map((attempt) => attempt.attempt);
    expect(attempts).toEqual([1, 2, 3, 4, 5]);
    expect(replayed.attempts.at(-1)).toMatchObject({ outcome: 'delivered', replay_id: byId.body.replay_id });
    const last = target.requests.at(-1) as ReceivedRequest;
    expect(last.envelope).toMatchObject({ event_id: eventId, attempt: 5 });
    const progress = await admin('GET', `/webhooks/replays/${byId.body.replay_id as string}`);
    expect(progress.body).toMatchObject({ done: true, progress: { delivered: 1 } });

    const byWindow = await admin('POST', '/webhooks/replay', {
      from: windowStart,
      to: new Date().toISOString(),
      endpoint_id: endpointId,
    });
    expect(byWindow.body).toMatchObject({ matched: 1, enqueued: 1 });
    const again = await eventually(async () => {
      const delivery = (await history(eventId)).deliveries[0];
      return delivery && delivery.attempts.length === 6 && delivery.status === 'delivered'
        ? delivery
        : undefined;
    });
    expect(again.attempts.map((attempt) => attempt.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((target.requests.at(-1) as ReceivedRequest).envelope).toMatchObject({
      event_id: eventId,
      attempt: 6,
    });
  });

  it('skips a delivery still retrying unless forced; a forced replay restarts it without a second POST of an attempt', async () => {
    let healthy = false;
    const { target, endpointId } = await tenantEndpoint('t-force', () =>
      healthy ? { kind: 'respond', status: 200 } : { kind: 'respond', status: 500 },
    );
    const eventId = await publishPayout('t-force');
    await settled(eventId, endpointId, ['retrying']);
    // Still failing and far from exhausted (attempt 2 comes a second later): a plain replay leaves it alone.
    const plain = await admin('POST', '/webhooks/replay', { event_ids: [eventId] });
    expect(plain.body).toMatchObject({ matched: 1, enqueued: 0, skipped: 1 });
    healthy = true;
    const forced = await admin('POST', '/webhooks/replay', { event_ids: [eventId], force: true });
    expect(forced.body).toMatchObject({ matched: 1, enqueued: 1, skipped: 0 });
    await settled(eventId, endpointId, ['delivered']);
    // Whichever of the replay's message and the original chain's next one comes second is dropped by the claim.
    await new Promise((resolve) => setTimeout(resolve, STEP_SECONDS * 2000 + 800));
    const attempts = (await history(eventId)).deliveries[0]?.attempts.map((attempt) => attempt.attempt) ?? [];
    const received = target.requests.map((request) => request.envelope.attempt);
    expect(new Set(received).size).toBe(received.length);
    expect(received).toEqual(attempts);
    expect(target.requests.filter((request) => request.envelope.attempt === attempts.at(-1))).toHaveLength(1);
    expect((await history(eventId)).deliveries[0]?.status).toBe('delivered');
  });

  it('refuses a replay of a delivery still retrying (counted as skipped) and of an unknown event', async () => {
    const unknown = await admin('POST', '/webhooks/replay', {
      event_ids: ['evt_01J00000000000000000000000'],
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ error: 'not_found' });
    const bad = await admin('POST', '/webhooks/replay', { event_ids: [], from: '2026-01-01T00:00:00.000Z' });
    expect(bad.status).toBe(400);
  });
});

describe('publishing events', () => {
  it('refuses a card number or an e-mail address with 422 personal_data_not_allowed, naming only the path', async () => {
    const card = await admin('POST', '/webhooks/events', {
      type: 'order.noted',
      data: { note: 'card 4111 1111 1111 1111' },
    });
    expect(card.status).toBe(422);
    expect(card.body).toMatchObject({ error: 'personal_data_not_allowed' });
    expect(JSON.stringify(card.body)).not.toContain('4111');
    const email = await admin('POST', '/webhooks/events', {
      type: 'order.noted',
      data: { who: 'jane@example.com' },
    });
    expect(email.status).toBe(422);
    expect(JSON.stringify(email.body)).not.toContain('jane@');
  });

  it('validates a payout.processed payload and refuses catalog event types from producers', async () => {
    const invalid = await admin('POST', '/webhooks/events', {
      type: 'payout.processed',
      data: { payout_id: 'po_x', status: 'paid', amount_minor: 12.5, currency: 'EURO' },
    });
    expect(invalid.status).toBe(400);
    const catalog = await admin('POST', '/webhooks/events', { type: 'catalog.PriceListUpdated', data: {} });
    expect(catalog.status).toBe(400);
  });
});
