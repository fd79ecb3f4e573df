import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  GetQueueUrlCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, describe, expect, it } from 'vitest';
import { isAlive } from '../../functions/adapters/local/dynamodb-local';
import { freePort, LOCAL_CREDENTIALS, LOCAL_REGION } from '../../functions/adapters/local/local-aws';
import { exitOf, processesMentioning, runInGroup, waitUntil } from '../support/stack-process';

/** A started `npm start`, with what its banner printed. */
interface Started {
  readonly child: ChildProcess;
  readonly url: string;
  readonly banner: Record<string, string>;
  output(): string;
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'pricing-e2e-'));
const children: ChildProcess[] = [];

const groupAlive = (pgid: number): boolean => {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Runs a command the way a user does in a terminal (its own process group); stopped after the tests. */
const run = (command: string, args: string[], env: Record<string, string>) => {
  const started = runInGroup(command, args, env);
  children.push(started.child);
  return started;
};

const bannerOf = (text: string): Record<string, string> => {
  const field = (label: string) => text.match(new RegExp(`^\\s+${label}\\s+(\\S+)`, 'm'))?.[1] ?? '';
  return {
    url: field('Base URL'),
    apiKey: field('API key'),
    adminToken: field('Admin token'),
    dynamodb: field('DynamoDB'),
    sqs: text.match(/SQS\/S3\s+(\S+)/)?.[1] ?? '',
  };
};

const startStack = async (port: number): Promise<Started> => {
  const { child, output } = run('npm', ['start'], {
    PORT: String(port),
    DATA_DIR: dataDir,
    LOG_LEVEL: 'WARN',
  });
  const deadline = Date.now() + 60_000;
  const url = `http://127.0.0.1:${port}`;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`npm start exited early:\n${output()}`);
    try {
      const response = await fetch(`${url}/health`);
      if (response.status === 200 && output().includes('Admin token')) {
        return { child, url, banner: bannerOf(output()), output };
      }
    } catch {
      // not listening yet
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`no healthy /health within 60 s:\n${output()}`);
};

/**
 * What Ctrl-C does in a terminal: SIGINT to the whole foreground process group (npm, the shell, the stack).
 * Resolves once every process of that group is gone, with whether the stack reported a clean stop.
 */
const pressCtrlC = async (started: Started): Promise<string> => {
  const pgid = started.child.pid as number;
  process.kill(-pgid, 'SIGINT');
  await exitOf(started.child);
  const gone = await waitUntil(() => !groupAlive(pgid), 20_000);
  const clean = started.output().includes('stopped; nothing left running');
  return gone && clean ? 'clean stop' : `gone=${gone} clean=${clean}\n${started.output().slice(-3000)}`;
};

const clientsFor = (banner: Record<string, string>) => {
  const dynamoDb = new DynamoDBClient({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoint: banner.dynamodb,
  });
  return {
    documents: DynamoDBDocumentClient.from(dynamoDb),
    sqs: new SQSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: banner.sqs }),
    destroy: () => dynamoDb.destroy(),
  };
};

afterAll(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.pid) {
      try {
        process.kill(-child.pid, 'SIGINT');
        await Promise.race([exitOf(child), new Promise((resolve) => setTimeout(resolve, 10_000))]);
        if (child.exitCode === null) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
  rmSync(dataDir, { recursive: true, force: true });
});

describe('npm start', () => {
  let first: Started;
  let javaPid = 0;

  it('reaches a healthy GET /health within 60 s and prints the base URL and credentials', async () => {
    first = await startStack(await freePort());
    const health = await fetch(`${first.url}/health`);
    expect(await health.json()).toEqual({ status: 'ok' });
    const deep = await fetch(`${first.url}/admin/health`, {
      headers: { Authorization: `Bearer ${first.banner.adminToken}` },
    });
    expect(await deep.json()).toMatchObject({ status: 'ok', components: { dynamodb: 'ok', sqs: 'ok' } });
    // The printed API key is the demo tenant's: it prices, it does not record chargebacks.
    const price = await fetch(`${first.url}/catalog/prices?sku=GAME-STARFALL-PS5&currency=USD&region=US`, {
      headers: { 'x-api-key': first.banner.apiKey ?? '' },
    });
    expect(price.status).toBe(200);
    expect(first.banner.url).toBe(first.url);
    expect(first.banner.apiKey).toMatch(/^key_local_/);
    expect(first.banner.adminToken).toMatch(/^adm_local_/);
    javaPid = Number(readFileSync(path.join(dataDir, 'dynamodb-local.pid'), 'utf8'));
    expect(isAlive(javaPid)).toBe(true);
    expect(processesMentioning(`${dataDir}/dynamodb`).length).toBeGreaterThan(0);
  });

  it('answers unknown routes in the C6 error shape with a trace id', async () => {
    const response = await fetch(`${first.url}/no/such/route`);
    expect(response.status).toBe(404);
    const body = (await response.json()) as Record<string, string>;
    expect(body).toMatchObject({ error: 'not_found' });
    expect(body.trace_id).toBe(response.headers.get('x-trace-id'));
  });

  it('keeps data across Ctrl-C and a restart with the same DATA_DIR, leaving no process behind', async () => {
    const before = clientsFor(first.banner);
    const tables = 'events';
    await before.documents.send(
      new PutCommand({
        TableName: tables,
        Item: { event_id: 'evt_e2e_persisted', expires_at: 4_102_444_800 },
      }),
    );
    const dlq = (await before.sqs.send(new GetQueueUrlCommand({ QueueName: 'delivery-dlq' }))).QueueUrl;
    await before.sqs.send(new SendMessageCommand({ QueueUrl: dlq, MessageBody: 'persisted-message' }));
    before.destroy();

    expect(await pressCtrlC(first)).toBe('clean stop');
    expect(isAlive(javaPid)).toBe(false);
    expect(processesMentioning(`${dataDir}/dynamodb`)).toEqual([]);
    expect(existsSync(path.join(dataDir, 'dynamodb-local.pid'))).toBe(false);

    const second = await startStack(await freePort());
    try {
      expect(second.banner.apiKey).toBe(first.banner.apiKey);
      expect(second.banner.adminToken).toBe(first.banner.adminToken);
      const after = clientsFor(second.banner);
      const item = await after.documents.send(
        new GetCommand({ TableName: tables, Key: { event_id: 'evt_e2e_persisted' } }),
      );
      expect(item.Item?.event_id).toBe('evt_e2e_persisted');
      const queueUrl = (await after.sqs.send(new GetQueueUrlCommand({ QueueName: 'delivery-dlq' }))).QueueUrl;
      const received = await after.sqs.send(
        new ReceiveMessageCommand({ QueueUrl: queueUrl, WaitTimeSeconds: 2 }),
      );
      expect(received.Messages?.map((message) => message.Body)).toContain('persisted-message');
      after.destroy();
    } finally {
      expect(await pressCtrlC(second)).toBe('clean stop');
    }
  });

  it('stops DynamoDB Local even when the stack process is killed with SIGKILL', async () => {
    const killedDir = mkdtempSync(path.join(tmpdir(), 'pricing-e2e-kill-'));
    const port = await freePort();
    const { child, output } = run(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
      PORT: String(port),
      DATA_DIR: killedDir,
      LOG_LEVEL: 'WARN',
    });
    try {
      expect(await waitUntil(() => output().includes('Admin token'), 60_000)).toBe(true);
      expect(processesMentioning(killedDir).length).toBeGreaterThan(0);
      process.kill(-(child.pid as number), 'SIGKILL');
      await exitOf(child);
      expect(await waitUntil(() => processesMentioning(killedDir).length === 0, 10_000)).toBe(true);
    } finally {
      rmSync(killedDir, { recursive: true, force: true });
    }
  });

  it('fails at once with a clear message when the port is already in use', async () => {
    const port = await freePort();
    const blocker: Server = createServer();
    await new Promise<void>((resolve) => blocker.listen(port, '127.0.0.1', () => resolve()));
    try {
      const { child, output } = run('npm', ['start'], { PORT: String(port), IN_MEMORY: 'true' });
      expect(await exitOf(child)).toBe(1);
      expect(output()).toContain(`port ${port} is already in use`);
    } finally {
      blocker.close();
    }
  });

  it('fails at once naming the Debian package when Java is missing', async () => {
    const { child, output } = run(process.execPath, ['--import', 'tsx', 'bin/local.ts'], {
      PATH: '/nonexistent',
      PORT: String(await freePort()),
      IN_MEMORY: 'true',
    });
    expect(await exitOf(child)).toBe(1);
    expect(output()).toContain('apt-get install -y openjdk-17-jre-headless');
  });
});
