/**
 * SQS and EventBridge destinations (C34) on the local stack: an SQS destination receives every event of a faulted
 * run exactly as an HTTP endpoint does. Both subscribe to the same events and meet the same faults, decided by the
 * event's `seq` and the attempt's number: failures (a 500 from the receiver; an `InternalError` from SQS, injected
 * by a loopback proxy in front of fauxqs), hangs past the attempt timeout, and events that fail until the faults
 * are lifted (dead). The two endpoints must end with the same outcome per attempt, the same counts of delivered,
 * retried and dead, and, once the dead ones are replayed, the same replay counts and every event delivered; the
 * queue holds each event's envelope, signed as the HTTP delivery is (path `/<topic>`). The partner's role lives in
 * the stack's partner-account twin, created with the trust policy the endpoint's answer asks for.
 *
 * `WEBHOOK_DESTINATION_EVENTS=<n>` sets the number of events (40 locally, 120 with `CI=true`).
 */
import {
  createServer,
  request as httpRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  type Message,
  ReceiveMessageCommand,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCAL_PARTNER_ACCOUNT } from '../../functions/adapters/local/partner-aws';
import type { RetryPolicy } from '../../functions/domain/webhooks/retry-policy';
import { verifyWebhook } from '../../functions/receiver/verify';
import {
  endpointWithSecretResponseSchema,
  eventHistoryResponseSchema,
  eventsPageResponseSchema,
  replayAcceptedResponseSchema,
  replayProgressResponseSchema,
} from '../../functions/schemas/webhooks';
import { deliveryWorld, sleep } from '../support/delivery-world';
import { createPartnerRole, trustPolicy } from '../support/partner-account';
import { volume } from '../support/volume';
import type { Reaction } from '../support/webhook-receiver';

const EVENTS = volume('WEBHOOK_DESTINATION_EVENTS', { local: 40, ci: 120 });
const POLICY: RetryPolicy = {
  backoffSeconds: [1, 1],
  dailyRetryDays: 0,
  jitter: { min: 0.8, max: 1.2 },
  attemptTimeoutMs: 1_000,
};
const TOPIC = 'orders';

type Fault = 'ok' | 'error' | 'hang';
const faults = { lifted: false };
/** The fault an attempt meets, the same for both endpoints. */
const faultOf = (seq: number, attempt: number): Fault => {
  if (faults.lifted) return 'ok';
  if (seq % 13 === 5) return 'error'; // every attempt: dead
  if (seq % 5 === 1 && attempt === 1) return 'error';
  if (seq % 5 === 2 && attempt <= 2) return 'error';
  if (seq % 7 === 3 && attempt === 1) return 'hang';
  return 'ok';
};

/** What the HTTP receiver answered 2xx to, per event. */
const httpAccepted = new Map<string, number>();

const world = deliveryWorld({
  apiKey: 'key_destinations_0123456789',
  adminToken: 'adm_destinations_0123456789',
  policy: POLICY,
  react: (request): Reaction => {
    const seq = Number((request.envelope.data as { seq?: number } | undefined)?.seq);
    const fault = faultOf(seq, Number(request.headers['x-attempt']));
    if (fault === 'ok')
      httpAccepted.set(request.envelope.event_id, (httpAccepted.get(request.envelope.event_id) ?? 0) + 1);
    return fault === 'hang' ? { kind: 'hang' } : { kind: 'respond', status: fault === 'error' ? 500 : 204 };
  },
});

/** A loopback proxy in front of fauxqs that fails SendMessage calls as `faultOf` says, and counts what it let through. */
interface FaultyQueueProxy {
  readonly url: string;
  readonly accepted: Map<string, number>;
  close(): Promise<void>;
}
const startProxy = async (fauxqs: string): Promise<FaultyQueueProxy> => {
  const accepted = new Map<string, number>();
  const hanging = new Set<ServerResponse>();
  const target = new URL(fauxqs);
  const server: Server = createServer((incoming: IncomingMessage, response: ServerResponse) => {
    const chunks: Buffer[] = [];
    incoming.on('data', (chunk: Buffer) => chunks.push(chunk));
    incoming.on('end', () => {
      const body = Buffer.concat(chunks);
      if (incoming.headers['x-amz-target'] === 'AmazonSQS.SendMessage') {
        const call = JSON.parse(body.toString('utf8')) as {
          MessageBody: string;
          MessageAttributes: Record<string, { StringValue: string }>;
        };
        const envelope = JSON.parse(call.MessageBody) as { event_id: string; data: { seq: number } };
        const fault = faultOf(envelope.data.seq, Number(call.MessageAttributes['X-Attempt']?.StringValue));
        if (fault === 'hang') {
          hanging.add(response);
          return;
        }
        if (fault === 'error') {
          response
            .writeHead(500, { 'content-type': 'application/x-amz-json-1.0' })
            .end(JSON.stringify({ __type: 'com.amazonaws.sqs#InternalError', message: 'injected' }));
          return;
        }
        accepted.set(envelope.event_id, (accepted.get(envelope.event_id) ?? 0) + 1);
      }
      const forward = httpRequest(
        {
          host: target.hostname,
          port: target.port,
          method: incoming.method,
          path: incoming.url,
          headers: { ...incoming.headers, host: target.host },
        },
        (answer) => {
          response.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(response);
        },
      );
      forward.on('error', () => response.destroy());
      forward.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    accepted,
    close: async () => {
      for (const response of hanging) response.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
};

let proxy: FaultyQueueProxy;
beforeAll(async () => {
  proxy = await startProxy(world.stack().sqsEndpoint);
});
afterAll(async () => {
  await proxy?.close();
});

/** A fauxqs queue of the partner's, and its URL as the partner registers it (under `via`). */
const partnerQueue = async (name: string, via: string) => {
  const created = await world.stack().clients.sqs.send(new CreateQueueCommand({ QueueName: name }));
  return { direct: created.QueueUrl ?? '', registered: `${via}${new URL(created.QueueUrl ?? '').pathname}` };
};

const drain = async (queueUrl: string): Promise<Message[]> => {
  const messages: Message[] = [];
  for (;;) {
    const answer = await world.stack().clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: queueUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        MessageAttributeNames: ['All'],
      }),
    );
    const batch = answer.Messages ?? [];
    if (batch.length === 0) return messages;
    for (const message of batch) {
      messages.push(message);
      await world
        .stack()
        .clients.sqs.send(
          new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }),
        );
    }
  }
};

/** Every event's delivery to the endpoint, once none is pending any more. */
const settledDeliveries = async (endpointId: string, expected: number, timeoutMs = 90_000) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const page = await world.admin('GET', `/webhooks/events?endpoint_id=${endpointId}&limit=200`);
    const items = eventsPageResponseSchema.parse(page.body).items;
    const statuses = items.flatMap((item) =>
      item.deliveries
        .filter((delivery) => delivery.endpoint_id === endpointId)
        .map((delivery) => delivery.status),
    );
    if (
      statuses.length === expected &&
      statuses.every((status) => status === 'delivered' || status === 'dead')
    )
      return items.map((item) => item.event_id);
    if (Date.now() > deadline) throw new Error(`${endpointId}: ${JSON.stringify(statuses)} not settled`);
    await sleep(300);
  }
};

/** Per event: the outcomes of its attempts to the endpoint, in order, and the delivery's status. */
const historyOf = async (eventIds: readonly string[], endpointId: string) => {
  const outcomes = new Map<string, string[]>();
  const statuses = new Map<string, string>();
  for (const eventId of eventIds) {
    const answer = await world.admin('GET', `/webhooks/events/${eventId}`);
    const history = eventHistoryResponseSchema.parse(answer.body);
    const delivery = history.deliveries.find((entry) => entry.endpoint_id === endpointId);
    outcomes.set(
      eventId,
      (delivery?.attempts ?? []).map((attempt) => attempt.outcome),
    );
    statuses.set(eventId, delivery?.status ?? 'none');
  }
  const all = [...outcomes.values()].flat();
  return {
    outcomes,
    counts: {
      delivered: [...statuses.values()].filter((status) => status === 'delivered').length,
      dead: [...statuses.values()].filter((status) => status === 'dead').length,
      retried: all.filter((outcome) => outcome === 'retry').length,
      attempts: all.length,
    },
  };
};

const replayDead = async (endpointId: string, from: string, to: string) => {
  const accepted = await world.admin('POST', '/webhooks/replay', {
    from,
    to,
    endpoint_id: endpointId,
    status: 'dead',
  });
  expect(accepted.status, JSON.stringify(accepted.body)).toBe(202);
  const { replay_id } = replayAcceptedResponseSchema.parse(accepted.body);
  for (const deadline = Date.now() + 60_000; ; ) {
    const progress = replayProgressResponseSchema.parse(
      (await world.admin('GET', `/webhooks/replays/${replay_id}`)).body,
    );
    if (progress.done)
      return { matched: progress.matched, enqueued: progress.enqueued, progress: progress.progress };
    if (Date.now() > deadline)
      throw new Error(`replay ${replay_id} not done: ${JSON.stringify(progress.progress)}`);
    await sleep(300);
  }
};

describe('an SQS destination receives every event of a faulted run exactly as an HTTP endpoint does', () => {
  it(`${EVENTS} events, the same faults: the same attempts, counts, dead letters, replays and deliveries`, async () => {
    const queue = await partnerQueue('partner-orders', proxy.url);
    const roleName = 'pricing-orders-writer';
    const http = await world.register('orders-http', TOPIC);
    const created = await world.admin('POST', '/webhooks/endpoints', {
      destination: {
        type: 'sqs',
        queue_url: queue.registered,
        role_arn: `arn:aws:iam::${LOCAL_PARTNER_ACCOUNT}:role/${roleName}`,
      },
      topics: [TOPIC],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const sqs = endpointWithSecretResponseSchema.parse(created.body);
    expect(sqs.url).toBeUndefined();
    const destination = sqs.destination;
    if (destination?.type !== 'sqs') throw new Error('no sqs destination in the answer');
    // The partner's side: the role trusts the principal the answer names, with the endpoint's external id.
    await createPartnerRole(
      world.stack().partnerAwsEndpoint,
      roleName,
      trustPolicy(destination.principal, destination.external_id),
    );

    const from = new Date(Date.now() - 60_000).toISOString();
    const published: string[] = [];
    for (let seq = 0; seq < EVENTS; seq += 1) published.push((await world.publish(TOPIC, seq)).eventId);
    const [httpIds, sqsIds] = await Promise.all([
      settledDeliveries(http.endpoint_id, EVENTS),
      settledDeliveries(sqs.endpoint_id, EVENTS),
    ]);
    expect(new Set(httpIds)).toEqual(new Set(published));
    expect(new Set(sqsIds)).toEqual(new Set(published));

    const [httpRun, sqsRun] = await Promise.all([
      historyOf(published, http.endpoint_id),
      historyOf(published, sqs.endpoint_id),
    ]);
    // Attempt for attempt, the same outcomes.
    expect(sqsRun.outcomes).toEqual(httpRun.outcomes);
    expect(sqsRun.counts).toEqual(httpRun.counts);
    const expectedDead = [...Array(EVENTS).keys()].filter((seq) => seq % 13 === 5).length;
    expect(sqsRun.counts.dead).toBe(expectedDead);
    expect(sqsRun.counts.retried).toBeGreaterThan(expectedDead * 2);
    console.info(`faulted run, each endpoint: ${JSON.stringify(sqsRun.counts)}`);

    // The faults are lifted; the dead ones are replayed on both.
    faults.lifted = true;
    const to = new Date(Date.now() + 60_000).toISOString();
    const [httpReplay, sqsReplay] = await Promise.all([
      replayDead(http.endpoint_id, from, to),
      replayDead(sqs.endpoint_id, from, to),
    ]);
    expect(sqsReplay).toEqual(httpReplay);
    expect(sqsReplay.matched).toBe(expectedDead);
    expect(sqsReplay.progress.delivered).toBe(expectedDead);
    console.info(`replays, each endpoint: ${JSON.stringify(sqsReplay)}`);

    const [httpFinal, sqsFinal] = await Promise.all([
      historyOf(published, http.endpoint_id),
      historyOf(published, sqs.endpoint_id),
    ]);
    expect(sqsFinal.counts).toEqual(httpFinal.counts);
    expect(sqsFinal.counts.delivered).toBe(EVENTS);

    // The queue holds every event, each as often as SQS accepted it (once here), signed as the HTTP delivery is.
    const messages = await drain(queue.direct);
    const received = messages.map((message) => {
      const headers = Object.fromEntries(
        Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [name, value.StringValue]),
      );
      return verifyWebhook({
        body: message.Body ?? '',
        method: 'POST',
        path: `/${TOPIC}`,
        headers,
        secrets: [sqs.secret],
        now: new Date(),
      }).event_id;
    });
    expect(new Set(received)).toEqual(new Set(published));
    expect(received.length).toBe([...proxy.accepted.values()].reduce((sum, count) => sum + count, 0));
    // Per event, the queue accepted as many deliveries as the HTTP receiver answered 2xx to.
    expect(new Map([...proxy.accepted].filter(([id]) => published.includes(id)))).toEqual(
      new Map([...httpAccepted].filter(([id]) => published.includes(id))),
    );
  }, 240_000);
});

describe('EventBridge destinations and a role not yet trusted', () => {
  it('retries while the role refuses (the attempt says why), then puts the envelope on the partner bus', async () => {
    const bus = await partnerQueue('partner-bus', world.stack().sqsEndpoint);
    const roleName = 'pricing-bus-writer';
    const created = await world.admin('POST', '/webhooks/endpoints', {
      destination: {
        type: 'eventbridge',
        event_bus_arn: `arn:aws:events:us-east-1:${LOCAL_PARTNER_ACCOUNT}:event-bus/partner-bus`,
        role_arn: `arn:aws:iam::${LOCAL_PARTNER_ACCOUNT}:role/${roleName}`,
      },
      topics: ['busdemo'],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const endpoint = endpointWithSecretResponseSchema.parse(created.body);
    const destination = endpoint.destination;
    if (destination?.type !== 'eventbridge') throw new Error('no eventbridge destination in the answer');

    const { eventId } = await world.publish('busdemo', 1);
    // No role yet: the first attempt is refused by STS, and the history says so.
    for (const deadline = Date.now() + 20_000; ; ) {
      const history = eventHistoryResponseSchema.parse(
        (await world.admin('GET', `/webhooks/events/${eventId}`)).body,
      );
      const first = history.deliveries.find((entry) => entry.endpoint_id === endpoint.endpoint_id)
        ?.attempts[0];
      if (first) {
        expect(first).toMatchObject({
          outcome: 'retry',
          error: 'other',
          error_detail: 'sts:AssumeRole: AccessDenied (HTTP 403)',
        });
        break;
      }
      if (Date.now() > deadline) throw new Error('no first attempt');
      await sleep(200);
    }
    await createPartnerRole(
      world.stack().partnerAwsEndpoint,
      roleName,
      trustPolicy(destination.principal, destination.external_id),
    );
    await settledDeliveries(endpoint.endpoint_id, 1);
    const [message] = await drain(bus.direct);
    const event = JSON.parse(message?.Body ?? '{}') as {
      detail: { event_id: string };
      'detail-type': string;
      account: string;
    };
    expect(event['detail-type']).toBe('busdemo.changed');
    expect(event.account).toBe(LOCAL_PARTNER_ACCOUNT);
    expect(event.detail).toMatchObject({ event_id: eventId, type: 'busdemo.changed', data: { seq: 1 } });
  }, 60_000);
});

describe('an ordered endpoint on a FIFO queue', () => {
  it('keeps each key in order and groups its messages by the key', async () => {
    const queue = await partnerQueue('partner-ledger.fifo', world.stack().sqsEndpoint);
    const roleName = 'pricing-ledger-writer';
    const created = await world.admin('POST', '/webhooks/endpoints', {
      destination: {
        type: 'sqs',
        queue_url: queue.registered,
        role_arn: `arn:aws:iam::${LOCAL_PARTNER_ACCOUNT}:role/${roleName}`,
      },
      topics: ['ledger'],
      ordering: { key: 'data.account' },
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const endpoint = endpointWithSecretResponseSchema.parse(created.body);
    if (endpoint.destination?.type !== 'sqs') throw new Error('no sqs destination in the answer');
    await createPartnerRole(
      world.stack().partnerAwsEndpoint,
      roleName,
      trustPolicy(endpoint.destination.principal, endpoint.destination.external_id),
    );
    const accounts = ['a', 'b', 'c'];
    for (let seq = 0; seq < 12; seq += 1) {
      const answer = await world.admin('POST', '/webhooks/events', {
        type: 'ledger.changed',
        data: { seq, account: accounts[seq % 3] },
      });
      expect(answer.status).toBe(202);
    }
    await settledDeliveries(endpoint.endpoint_id, 12);
    // A FIFO group shows its next message once the one before is deleted: read until every message is in.
    const byGroup = new Map<string, number[]>();
    for (let read = 0; read < 12; ) {
      const answer = await world.stack().clients.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: queue.direct,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          MessageSystemAttributeNames: ['MessageGroupId'],
        }),
      );
      for (const message of answer.Messages ?? []) {
        const group = message.Attributes?.MessageGroupId ?? '';
        const seq = (JSON.parse(message.Body ?? '{}') as { data: { seq: number } }).data.seq;
        byGroup.set(group, [...(byGroup.get(group) ?? []), seq]);
        read += 1;
        await world
          .stack()
          .clients.sqs.send(
            new DeleteMessageCommand({ QueueUrl: queue.direct, ReceiptHandle: message.ReceiptHandle }),
          );
      }
    }
    expect(Object.fromEntries(byGroup)).toEqual({
      'data.account="a"': [0, 3, 6, 9],
      'data.account="b"': [1, 4, 7, 10],
      'data.account="c"': [2, 5, 8, 11],
    });
  }, 60_000);
});

describe('moving an endpoint between HTTP and SQS (the stored endpoint, DynamoDB Local)', () => {
  it('delivers where it points now, and keeps its external id across the round trip', async () => {
    const queue = await partnerQueue('partner-moves', world.stack().sqsEndpoint);
    const roleName = 'pricing-moves-writer';
    const role = `arn:aws:iam::${LOCAL_PARTNER_ACCOUNT}:role/${roleName}`;
    const created = await world.admin('POST', '/webhooks/endpoints', {
      destination: { type: 'sqs', queue_url: queue.registered, role_arn: role },
      topics: ['moves'],
    });
    const endpoint = endpointWithSecretResponseSchema.parse(created.body);
    if (endpoint.destination?.type !== 'sqs') throw new Error('no sqs destination in the answer');
    const externalId = endpoint.destination.external_id;
    await createPartnerRole(
      world.stack().partnerAwsEndpoint,
      roleName,
      trustPolicy(endpoint.destination.principal, externalId),
    );
    const path = `/webhooks/endpoints/${endpoint.endpoint_id}`;

    // A url alone would leave the queue in place: refused, naming the field.
    const urlOnly = await world.admin('PATCH', path, { url: `${world.receiver().baseUrl}/moves-http` });
    expect(urlOnly.status).toBe(400);
    expect(JSON.stringify(urlOnly.body)).toContain('$.url');

    const toHttp = await world.admin('PATCH', path, {
      destination: { type: 'http' },
      url: `${world.receiver().baseUrl}/moves-http`,
    });
    expect(toHttp.status, JSON.stringify(toHttp.body)).toBe(200);
    const stored = (await world.admin('GET', path)).body as Record<string, unknown>;
    expect(stored.url).toBe(`${world.receiver().baseUrl}/moves-http`);
    expect(stored.destination).toBeUndefined();
    const first = await world.publish('moves', 1);
    await settledDeliveries(endpoint.endpoint_id, 1);
    expect(world.requestsTo('moves-http').map((request) => request.envelope.event_id)).toEqual([
      first.eventId,
    ]);
    expect(await drain(queue.direct)).toEqual([]);

    const back = await world.admin('PATCH', path, {
      destination: { type: 'sqs', queue_url: queue.registered, role_arn: role },
    });
    expect(back.status, JSON.stringify(back.body)).toBe(200);
    const again = (await world.admin('GET', path)).body as {
      url?: string;
      destination?: { external_id: string };
    };
    expect(again.url).toBeUndefined();
    expect(again.destination?.external_id).toBe(externalId);
    const second = await world.publish('moves', 2);
    await settledDeliveries(endpoint.endpoint_id, 2);
    const messages = await drain(queue.direct);
    expect(
      messages.map((message) => (JSON.parse(message.Body ?? '{}') as { event_id: string }).event_id),
    ).toEqual([second.eventId]);
    expect(world.requestsTo('moves-http')).toHaveLength(1);
  }, 60_000);
});
