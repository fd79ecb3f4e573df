import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  CreateQueueCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  type Message,
  ReceiveMessageCommand,
} from '@aws-sdk/client-sqs';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { AwsCloudDestinations } from '../../functions/adapters/aws/cloud-destinations';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../functions/adapters/local/local-aws';
import {
  LOCAL_PARTNER_ACCOUNT,
  type PartnerAws,
  startPartnerAws,
  trustAllows,
} from '../../functions/adapters/local/partner-aws';
import { AWS_EGRESS, LOCAL_EGRESS } from '../../functions/composition/webhooks';
import { type CloudDestination, externalIdFrom } from '../../functions/domain/webhooks/destinations';
import type { CloudDeliveryRequest } from '../../functions/ports/webhook-destinations';
import { engineClients, uniquePrefix } from '../support/engines';
import {
  createPartnerRole,
  deletePartnerRole,
  trustPolicy,
  updatePartnerTrust,
} from '../support/partner-account';

const SERVICE_ACCOUNT = '000000000000';
const PRINCIPAL = `arn:aws:iam::${SERVICE_ACCOUNT}:root`;
const clients = engineClients();
const prefix = uniquePrefix();
let partner: PartnerAws;
let queueUrl: string;
let fifoUrl: string;
let busQueueUrl: string;

const roleArn = (name: string) => `arn:aws:iam::${LOCAL_PARTNER_ACCOUNT}:role/${name}`;
const newExternalId = () => externalIdFrom(randomBytes(24));
/** A partner role that trusts the service with a fresh external id: its ARN and that id. */
const trustedRole = async (name: string) => {
  const external_id = newExternalId();
  await createPartnerRole(partner.endpoint, `${prefix}${name}`, trustPolicy(PRINCIPAL, external_id));
  return { role_arn: roleArn(`${prefix}${name}`), external_id };
};
const sender = (egress = LOCAL_EGRESS, emulatorQueues = true) =>
  new AwsCloudDestinations({
    region: LOCAL_REGION,
    egress,
    emulatorQueues,
    stsEndpoint: partner.endpoint,
    eventBridgeEndpoint: partner.endpoint,
    credentials: LOCAL_CREDENTIALS,
  });

const request = (
  destination: CloudDestination,
  overrides: Partial<CloudDeliveryRequest> = {},
): CloudDeliveryRequest => ({
  destination,
  endpointId: 'ep_01JCLOUD0000000000000000000',
  body: new TextEncoder().encode('{"event_id":"evt_1","type":"catalog.price_changed","data":{}}'),
  headers: {
    'Content-Type': 'application/json',
    'User-Agent': 'pricing-webhooks/1.0',
    'X-Event-Id': 'evt_1',
    'X-Timestamp': '2026-11-26T00:00:00.000Z',
    'X-Signature': 'v1=abc',
    'X-Attempt': '1',
  },
  eventId: 'evt_1',
  eventType: 'catalog.price_changed',
  producer: 'pricing-service',
  attempt: 1,
  at: new Date('2026-11-26T00:00:00Z'),
  timeoutMs: 5_000,
  ...overrides,
});

const receiveAll = async (url: string): Promise<Message[]> => {
  const answer = await clients.sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: url,
      MaxNumberOfMessages: 10,
      WaitTimeSeconds: 1,
      MessageAttributeNames: ['All'],
      MessageSystemAttributeNames: ['MessageGroupId', 'MessageDeduplicationId'],
    }),
  );
  return answer.Messages ?? [];
};

/** The queue URL as a partner gives it locally: fauxqs' queue under its loopback address. */
const loopback = (url: string) => `${inject('sqsEndpoint')}${new URL(url).pathname}`;

beforeAll(async () => {
  partner = await startPartnerAws({ serviceAccount: SERVICE_ACCOUNT, sqs: clients.sqs });
  const create = async (name: string, attributes?: Record<string, string>) =>
    loopback(
      (
        await clients.sqs.send(
          new CreateQueueCommand({ QueueName: name, ...(attributes ? { Attributes: attributes } : {}) }),
        )
      ).QueueUrl ?? '',
    );
  queueUrl = await create(`${prefix}orders`);
  fifoUrl = await create(`${prefix}orders.fifo`, { FifoQueue: 'true' });
  busQueueUrl = await create(`${prefix}bus`);
});
afterAll(async () => {
  await partner.stop();
  destroyAwsClients(clients);
});

describe('the partner account twin: trust policies as IAM evaluates them', () => {
  it('allows the service account with the right external id, nothing else', () => {
    const trust = trustPolicy(PRINCIPAL, 'pricing-ext-a');
    expect(trustAllows(trust, SERVICE_ACCOUNT, 'pricing-ext-a')).toBe(true);
    expect(trustAllows(trust, SERVICE_ACCOUNT, 'pricing-ext-b')).toBe(false);
    expect(trustAllows(trust, SERVICE_ACCOUNT, undefined)).toBe(false);
    expect(trustAllows(trust, '999999999999', 'pricing-ext-a')).toBe(false);
    expect(trustAllows('not json', SERVICE_ACCOUNT, 'pricing-ext-a')).toBe(false);
    const denied = JSON.parse(trust) as { Statement: Record<string, unknown>[] };
    denied.Statement.push({ ...denied.Statement[0], Effect: 'Deny' });
    expect(trustAllows(JSON.stringify(denied), SERVICE_ACCOUNT, 'pricing-ext-a')).toBe(false);
  });
});

describe('SQS destinations through the partner role (fauxqs, the partner twin)', () => {
  it('is refused until the role trusts the service with the external id, then delivers body and attributes', async () => {
    const name = `${prefix}sqs-writer`;
    const externalId = newExternalId();
    const destination: CloudDestination = {
      type: 'sqs',
      queue_url: queueUrl,
      role_arn: roleArn(name),
      external_id: externalId,
    };
    const destinations = sender();

    const before = await destinations.send(request(destination));
    expect(before).toMatchObject({
      kind: 'network_error',
      error: 'other',
      message: 'sts:AssumeRole: AccessDenied (HTTP 403)',
    });

    await createPartnerRole(partner.endpoint, name, trustPolicy(PRINCIPAL, newExternalId()));
    const wrongId = await destinations.send(request(destination));
    expect(wrongId).toMatchObject({
      kind: 'network_error',
      message: 'sts:AssumeRole: AccessDenied (HTTP 403)',
    });

    await updatePartnerTrust(partner.endpoint, name, trustPolicy(PRINCIPAL, externalId));
    const sent = await destinations.send(request(destination));
    expect(sent).toMatchObject({ kind: 'response', status: 200 });
    if (sent.kind !== 'response') throw new Error('not sent');
    expect(sent.excerpt).toMatch(/^MessageId \S+$/);

    const [message] = await receiveAll(queueUrl);
    expect(message?.Body).toBe('{"event_id":"evt_1","type":"catalog.price_changed","data":{}}');
    const attributes = Object.fromEntries(
      Object.entries(message?.MessageAttributes ?? {}).map(([key, value]) => [key, value.StringValue]),
    );
    // Every header but the HTTP-only ones, under its own name.
    expect(attributes).toEqual({
      'X-Event-Id': 'evt_1',
      'X-Timestamp': '2026-11-26T00:00:00.000Z',
      'X-Signature': 'v1=abc',
      'X-Attempt': '1',
    });
  });

  it('keeps the session through refusals that are not about credentials; a credential refusal drops it', async () => {
    const name = `${prefix}sqs-cached`;
    const destinations = sender();
    const role = await trustedRole('sqs-cached');
    const destination: CloudDestination = { type: 'sqs', queue_url: queueUrl, ...role };
    expect(await destinations.send(request(destination))).toMatchObject({ kind: 'response' });
    await deletePartnerRole(partner.endpoint, name);
    // AWS does not end a session when its role's trust changes: the cached credentials still work.
    expect(await destinations.send(request(destination))).toMatchObject({ kind: 'response' });
    // A refusal that is not about credentials (the queue is gone) keeps the session: the next send still goes.
    const gone = await clients.sqs.send(new CreateQueueCommand({ QueueName: `${prefix}gone` }));
    await clients.sqs.send(new DeleteQueueCommand({ QueueUrl: gone.QueueUrl }));
    const missing = await destinations.send(
      request({ ...destination, queue_url: loopback(gone.QueueUrl ?? '') }),
    );
    expect(missing).toMatchObject({ kind: 'network_error', error: 'other' });
    if (missing.kind === 'network_error') expect(missing.message).toMatch(/^sqs:SendMessage: /);
    expect(await destinations.send(request(destination))).toMatchObject({ kind: 'response' });
    // A credential refusal (the bus refuses a session of a deleted role) drops it: the next attempt assumes the role
    // again, which the role's removal stops.
    const bus = `arn:aws:events:${LOCAL_REGION}:${LOCAL_PARTNER_ACCOUNT}:event-bus/${prefix}bus`;
    expect(
      await destinations.send(request({ type: 'eventbridge', event_bus_arn: bus, ...role })),
    ).toMatchObject({
      kind: 'network_error',
      message: 'events:PutEvents: AccessDeniedException (HTTP 400)',
    });
    expect(await destinations.send(request(destination))).toMatchObject({
      kind: 'network_error',
      message: 'sts:AssumeRole: AccessDenied (HTTP 403)',
    });
    await receiveAll(queueUrl);
  });

  it('groups a FIFO queue by the ordering key and deduplicates a resent attempt', async () => {
    const destination: CloudDestination = {
      type: 'sqs',
      queue_url: fifoUrl,
      ...(await trustedRole('fifo-writer')),
    };
    const destinations = sender();
    expect(await destinations.send(request(destination, { orderingKey: 'sku-1' }))).toMatchObject({
      kind: 'response',
    });
    // The same attempt sent again (its answer was lost): one message.
    expect(await destinations.send(request(destination, { orderingKey: 'sku-1' }))).toMatchObject({
      kind: 'response',
    });
    expect(await destinations.send(request(destination, { attempt: 2, orderingKey: 'sku-1' }))).toMatchObject(
      {
        kind: 'response',
      },
    );
    // A group's next message shows once the one before is deleted (FIFO).
    const messages: Message[] = [];
    for (let round = 0; round < 3; round += 1)
      for (const message of await receiveAll(fifoUrl)) {
        messages.push(message);
        await clients.sqs.send(
          new DeleteMessageCommand({ QueueUrl: fifoUrl, ReceiptHandle: message.ReceiptHandle }),
        );
      }
    expect(messages.map((message) => message.Attributes?.MessageGroupId)).toEqual(['sku-1', 'sku-1']);
    expect(new Set(messages.map((message) => message.Attributes?.MessageDeduplicationId)).size).toBe(2);
  });

  it('refuses a queue that is neither in Amazon SQS nor where egress allows, and times out a hanging one', async () => {
    const destination: CloudDestination = {
      type: 'sqs',
      queue_url: queueUrl,
      role_arn: roleArn(`${prefix}unused`),
      external_id: newExternalId(),
    };
    // In AWS: never a queue outside Amazon SQS, whatever the egress policy allows.
    expect(await sender(LOCAL_EGRESS, false).send(request(destination))).toMatchObject({
      kind: 'network_error',
      error: 'address_not_allowed',
    });
    expect(await sender(AWS_EGRESS).send(request(destination))).toMatchObject({
      kind: 'network_error',
      error: 'scheme_not_allowed',
    });
    // An emulator's queue must be inside the allow-list: a public address is not enough.
    expect(await sender({ ...AWS_EGRESS, allowHttp: true }).send(request(destination))).toMatchObject({
      kind: 'network_error',
      error: 'address_not_allowed',
    });
    expect(
      await sender({ ...AWS_EGRESS, allowHttp: true }).send(
        request({ ...destination, queue_url: 'http://8.8.8.8/111122223333/q' }),
      ),
    ).toMatchObject({ kind: 'network_error', error: 'address_not_allowed' });

    // STS that never answers: the attempt ends at its deadline.
    const hanging: Server = createServer(() => undefined);
    await new Promise<void>((resolve) => hanging.listen(0, '127.0.0.1', resolve));
    const port = (hanging.address() as AddressInfo).port;
    try {
      const slow = new AwsCloudDestinations({
        region: LOCAL_REGION,
        egress: LOCAL_EGRESS,
        stsEndpoint: `http://127.0.0.1:${port}`,
        credentials: LOCAL_CREDENTIALS,
        emulatorQueues: true,
      });
      const started = Date.now();
      expect(await slow.send(request(destination, { timeoutMs: 300 }))).toMatchObject({
        kind: 'network_error',
        error: 'timeout',
      });
      expect(Date.now() - started).toBeLessThan(3_000);
    } finally {
      hanging.closeAllConnections();
      await new Promise((resolve) => hanging.close(resolve));
    }
  });
});

describe('EventBridge destinations (the partner twin, a bus delivering into its queue)', () => {
  it('puts the envelope as the detail of an event on the partner bus, only in the role account', async () => {
    const bus = `arn:aws:events:${LOCAL_REGION}:${LOCAL_PARTNER_ACCOUNT}:event-bus/${prefix}bus`;
    const destination: CloudDestination = {
      type: 'eventbridge',
      event_bus_arn: bus,
      ...(await trustedRole('bus-writer')),
    };
    const destinations = sender();
    const sent = await destinations.send(request(destination));
    expect(sent).toMatchObject({ kind: 'response', status: 200 });
    const [message] = await receiveAll(busQueueUrl);
    const event = JSON.parse(message?.Body ?? '{}') as Record<string, unknown>;
    expect(event).toMatchObject({
      version: '0',
      'detail-type': 'catalog.price_changed',
      source: 'pricing-service',
      account: LOCAL_PARTNER_ACCOUNT,
      region: LOCAL_REGION,
      time: '2026-11-26T00:00:00Z',
      detail: { event_id: 'evt_1', type: 'catalog.price_changed', data: {} },
    });
    if (sent.kind === 'response') expect(sent.excerpt).toBe(`EventId ${String(event.id)}`);

    const elsewhere = await destinations.send(
      request({
        ...destination,
        event_bus_arn: `arn:aws:events:${LOCAL_REGION}:444455556666:event-bus/${prefix}bus`,
      }),
    );
    expect(elsewhere).toMatchObject({
      kind: 'network_error',
      message: 'events:PutEvents: AccessDeniedException (HTTP 400)',
    });
    const noBus = await destinations.send(
      request({
        ...destination,
        event_bus_arn: `arn:aws:events:${LOCAL_REGION}:${LOCAL_PARTNER_ACCOUNT}:event-bus/${prefix}none`,
      }),
    );
    expect(noBus).toMatchObject({
      kind: 'network_error',
      message: 'events:PutEvents: ResourceNotFoundException (HTTP 400)',
    });
  });
});
