import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { sqsProbe } from '../../functions/adapters/aws/health-probes';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../functions/adapters/local/local-aws';
import { type LocalStack, startLocalStack } from '../../functions/composition/local/stack';
import { healthOperation } from '../../functions/handlers/operations/health';
import type { OutboxItem } from '../../functions/schemas/envelope';
import { newId } from '../../functions/shared/ids';
import { eventually } from '../support/engines';

const credentials = { apiKey: 'key_test_0123456789abcdef', adminToken: 'adm_test_0123456789abcdef' };
const running: LocalStack[] = [];
const dirs: string[] = [];

const start = async (dataDir?: string) => {
  const stack = await startLocalStack({
    port: 0,
    ...credentials,
    logLevel: 'SILENT',
    ...(dataDir ? { dataDir } : {}),
  });
  running.push(stack);
  return stack;
};

const tempDir = () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'pricing-stack-'));
  dirs.push(dir);
  return dir;
};

const outboxItem = (overrides: Partial<OutboxItem> = {}): OutboxItem => {
  const now = new Date();
  return {
    event_id: newId('evt'),
    type: 'payout.processed',
    version: '2026-11-01',
    ts: now.toISOString(),
    attempt: 1,
    producer: 'payments',
    data: { payout_id: 'po_1', status: 'paid', amount_minor: 1200, currency: 'EUR' },
    trace_id: newId('trc'),
    pricelist_version: null,
    fx_version: null,
    tax_rule_version: null,
    expires_at: Math.floor(now.getTime() / 1000) + 86_400,
    ...overrides,
  };
};

afterEach(async () => {
  for (const stack of running.splice(0)) await stack.stop();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('local stack', () => {
  it('answers the public GET /health shallowly and the operators GET /admin/health with every component ok', async () => {
    const stack = await start();
    const response = await fetch(`${stack.url}/health`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok' });
    expect((await fetch(`${stack.url}/admin/health`)).status).toBe(401);
    const deep = await fetch(`${stack.url}/admin/health`, {
      headers: { Authorization: `Bearer ${credentials.adminToken}` },
    });
    expect(deep.status).toBe(200);
    expect(await deep.json()).toEqual({
      status: 'ok',
      components: { dynamodb: 'ok', event_source_mappings: 'ok', s3: 'ok', scheduler: 'ok', sqs: 'ok' },
    });
  });

  it('relays an outbox event through the events stream to the delivery queue consumer', async () => {
    const stack = await start();
    const item = outboxItem();
    await stack.clients.documents.send(
      new PutCommand({ TableName: stack.resources.tableNames.events, Item: item }),
    );
    const stored = await eventually(async () => {
      const result = await stack.clients.documents.send(
        new GetCommand({ TableName: stack.resources.tableNames.events, Key: { event_id: item.event_id } }),
      );
      return result.Item?.fanned_out_at ? result.Item : undefined;
    });
    expect(stored.fanned_out_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
  });

  it('hands a record the function cannot process to the on-failure queue after the retries, then moves on', async () => {
    const stack = await start();
    await stack.clients.documents.send(
      new PutCommand({
        TableName: stack.resources.tableNames.events,
        Item: { event_id: 'not-an-envelope', expires_at: 1 },
      }),
    );
    const good = outboxItem();
    await stack.clients.documents.send(
      new PutCommand({ TableName: stack.resources.tableNames.events, Item: good }),
    );
    const failure = await eventually(
      async () => {
        const received = await stack.clients.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: stack.resources.queueUrls.eventsStreamFailures,
            WaitTimeSeconds: 1,
          }),
        );
        return received.Messages?.[0]?.Body;
      },
      { timeoutMs: 30_000 },
    );
    expect(JSON.parse(failure).DDBStreamBatchInfo.batchSize).toBe(1);
    const relayed = await eventually(async () => {
      const result = await stack.clients.documents.send(
        new GetCommand({ TableName: stack.resources.tableNames.events, Key: { event_id: good.event_id } }),
      );
      return result.Item?.fanned_out_at;
    });
    expect(relayed).toBeDefined();
  });

  it('keeps tables, queued messages and pending schedules across a restart with the same data directory', async () => {
    const dataDir = tempDir();
    const first = await start(dataDir);
    const item = outboxItem();
    await first.clients.documents.send(
      new PutCommand({ TableName: first.resources.tableNames.events, Item: item }),
    );
    await first.clients.sqs.send(
      new SendMessageCommand({ QueueUrl: first.resources.queueUrls.deliveryDlq, MessageBody: 'kept' }),
    );
    const at = new Date(Date.now() + 6_000);
    await first.deps.scheduler.scheduleOnce({
      name: 'survives-restart',
      at,
      queue: 'deliveryDlq',
      body: 'later',
    });
    await first.stop();
    running.splice(running.indexOf(first), 1);

    const second = await start(dataDir);
    const kept = await second.clients.documents.send(
      new GetCommand({ TableName: second.resources.tableNames.events, Key: { event_id: item.event_id } }),
    );
    expect(kept.Item?.event_id).toBe(item.event_id);
    const bodies: { body: string; at: number }[] = [];
    await eventually(
      async () => {
        const received = await second.clients.sqs.send(
          new ReceiveMessageCommand({
            QueueUrl: second.resources.queueUrls.deliveryDlq,
            WaitTimeSeconds: 1,
            MaxNumberOfMessages: 10,
          }),
        );
        for (const message of received.Messages ?? [])
          bodies.push({ body: message.Body ?? '', at: Date.now() });
        return bodies.some((entry) => entry.body === 'later') ? true : undefined;
      },
      { timeoutMs: 20_000 },
    );
    expect(bodies.map((entry) => entry.body)).toContain('kept');
    expect(bodies.find((entry) => entry.body === 'later')?.at).toBeGreaterThanOrEqual(at.getTime());
  });

  it('reports 503 with the unreachable component down', async () => {
    const unreachable = new SQSClient({
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
      endpoint: 'http://127.0.0.1:9',
      maxAttempts: 1,
    });
    const healthy = { component: 'dynamodb', check: async () => undefined };
    const result = await healthOperation(
      [healthy, sqsProbe(unreachable, 'http://127.0.0.1:9/000000000000/x')],
      2_000,
    )(
      // The operation ignores its request.
      {} as Parameters<ReturnType<typeof healthOperation>>[0],
    );
    unreachable.destroy();
    expect(result.statusCode).toBe(503);
    expect(result.body).toEqual({ status: 'degraded', components: { dynamodb: 'ok', sqs: 'down' } });
  });
});
