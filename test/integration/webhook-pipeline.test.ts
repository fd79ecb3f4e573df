/**
 * The outbox pipeline around delivery: catalog changes produce their events in the publication's transaction
 * and reach partners; a stream batch handed over again creates no duplicate deliveries; the sweeper fans out
 * what the stream missed; the egress guard refuses loopback when it is not allow-listed.
 */
import { DeleteMessageCommand, ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { FUNCTION_FACTORIES } from '../../functions/composition/functions';
import { type LocalStack, startLocalStack } from '../../functions/composition/local/stack';
import { composeService } from '../../functions/composition/service';
import { webhookContext } from '../../functions/composition/webhooks';
import { FANOUT_PENDING, FANOUT_PENDING_MARKERS } from '../../functions/domain/webhooks/envelope';
import { secretBytes } from '../../functions/domain/webhooks/secret';
import { verifySignatureHeader } from '../../functions/domain/webhooks/signature';
import { newId } from '../../functions/shared/ids';
import { NO_VERSIONS, outboxItemOf } from '../../functions/usecases/webhooks/events';
import { fanOutEvent, sweepOutbox } from '../../functions/usecases/webhooks/fanout';
import { approveByReviewers, TEST_REVIEWERS, testAdmins } from '../support/change-requests';
import { demoCatalogWithoutRatePolicy } from '../support/demo-stack';
import { enginePlatform } from '../support/engine-platform';
import { engineClients, eventually, provisionIsolated, silentLogger } from '../support/engines';
import { type ReceivedRequest, startReceiver, type TestReceiver } from '../support/webhook-receiver';

const API_KEY = 'key_pipeline_0123456789abcdef';
const ADMIN = 'adm_pipeline_0123456789abcdef';
const stacks: LocalStack[] = [];
const receivers: TestReceiver[] = [];

afterEach(async () => {
  for (const receiver of receivers.splice(0)) await receiver.close();
  for (const stack of stacks.splice(0)) await stack.stop();
});

/** Every message now on the queue, deleted from it (bodies parsed). */
const drainQueue = async (clients: ReturnType<typeof engineClients>, queueUrl: string) => {
  const bodies: Record<string, unknown>[] = [];
  for (;;) {
    const received = await clients.sqs.send(
      new ReceiveMessageCommand({ QueueUrl: queueUrl, MaxNumberOfMessages: 10, WaitTimeSeconds: 1 }),
    );
    const messages = received.Messages ?? [];
    if (messages.length === 0) return bodies;
    for (const message of messages) {
      bodies.push(JSON.parse(message.Body ?? '{}'));
      await clients.sqs.send(
        new DeleteMessageCommand({ QueueUrl: queueUrl, ReceiptHandle: message.ReceiptHandle }),
      );
    }
  }
};

const start = async (options: Partial<Parameters<typeof startLocalStack>[0]> = {}) => {
  const stack = await startLocalStack({
    port: 0,
    apiKey: API_KEY,
    adminToken: ADMIN,
    admins: testAdmins(ADMIN),
    logLevel: 'SILENT',
    streamPollIntervalMs: 50,
    ...options,
  });
  stacks.push(stack);
  return stack;
};

const adminCall = (stack: LocalStack) => async (method: string, path: string, body?: unknown) => {
  const response = await fetch(`${stack.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    traceId: response.headers.get('x-trace-id'),
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
};

const receiver = async () => {
  const started = await startReceiver();
  receivers.push(started);
  return started;
};

describe('catalog change events', () => {
  it('an import that changes prices, rates, taxes and promotions delivers each catalog event with its versions', async () => {
    const stack = await start({ seedCatalog: demoCatalogWithoutRatePolicy() });
    const admin = adminCall(stack);
    const target = await receiver();
    const created = await admin('POST', '/webhooks/endpoints', { url: target.baseUrl, topics: ['catalog'] });
    const secret = created.body.secret as string;

    const changed = demoCatalogWithoutRatePolicy() as unknown as {
      pricelists: { items: { base_price: string }[] }[];
      fx_rates: { rates: { rate: string }[] };
      tax_rules: { rates: Record<string, { rate: string }[]> }[];
      promotions: { percent?: string }[];
    };
    const firstItem = changed.pricelists[0]?.items[0];
    if (firstItem) firstItem.base_price = '64.99';
    const firstRate = changed.fx_rates.rates[0];
    if (firstRate) firstRate.rate = '1.1601';
    const firstTax = changed.tax_rules[0]?.rates.standard?.[0];
    if (firstTax) firstTax.rate = '0.2';
    const firstPromotion = changed.promotions[0];
    if (firstPromotion) firstPromotion.percent = '12';
    const opened = await admin('POST', '/admin/catalog/import', changed);
    expect(opened.status).toBe(202);
    const approve = (token: string) =>
      fetch(`${stack.url}/admin/change-requests/${String(opened.body.cr_id)}/approve`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ acknowledge: ['price_move', 'rate_move', 'tax_rate_change'] }),
      });
    expect((await approve(TEST_REVIEWERS[0]?.token ?? '')).status).toBe(200);
    // Nothing is published (and no event sent) before the second approval.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.requests).toHaveLength(0);
    const approved = await approve(TEST_REVIEWERS[1]?.token ?? '');
    expect(approved.status).toBe(200);
    const published = (await approved.json()) as {
      publication: { versions: Record<string, unknown>; effective_from: string };
    };
    const imported = { traceId: approved.headers.get('x-trace-id'), body: published.publication };
    const versions = published.publication.versions;

    const requests = await eventually(async () =>
      target.requests.length >= 4 ? target.requests : undefined,
    );
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(target.requests).toHaveLength(4);
    const byType = new Map(requests.map((request) => [request.envelope.type, request]));
    expect([...byType.keys()].sort()).toEqual([
      'catalog.FXRatePublished',
      'catalog.PriceListUpdated',
      'catalog.PromoChanged',
      'catalog.TaxRuleChanged',
    ]);
    for (const request of requests) {
      expect(request.path).toBe('/webhooks/v1/catalog');
      expect(
        verifySignatureHeader({
          header: String(request.headers['x-signature']),
          secrets: [secretBytes(secret)],
          timestamp: String(request.headers['x-timestamp']),
          method: 'POST',
          path: request.path,
          body: request.body,
        }),
      ).toBe(true);
      const envelope = request.envelope as unknown as Record<string, unknown> & {
        data: Record<string, unknown>;
      };
      expect(envelope).toMatchObject({
        producer: 'catalog',
        trace_id: imported.traceId,
        pricelist_version: versions.pricelist_version,
        fx_version: versions.fx_version,
        tax_rule_version: versions.tax_rule_version,
      });
      expect(envelope.data).toMatchObject({
        effective_from: imported.body.effective_from,
        trace_id: imported.traceId,
        pricelist_version: versions.pricelist_version,
        fx_version: versions.fx_version,
        tax_rule_version: versions.tax_rule_version,
      });
    }
    expect((byType.get('catalog.FXRatePublished') as ReceivedRequest).envelope).toMatchObject({
      data: { version: versions.fx_version },
    });
    expect((byType.get('catalog.TaxRuleChanged') as ReceivedRequest).envelope).toMatchObject({
      data: { version: versions.tax_rule_version },
    });
    expect((byType.get('catalog.PriceListUpdated') as ReceivedRequest).envelope).toMatchObject({
      data: { version: versions.pricelist_version },
    });

    // Importing the same catalog again changes nothing and produces no event.
    const again = await admin('POST', '/admin/catalog/import', changed);
    expect(again.body.summary).toMatchObject({ sections_changed: [], prices_changed: 0 });
    const republished = await approveByReviewers(stack.url, again.body);
    expect((republished.body.publication as { versions: unknown }).versions).toEqual(versions);
    await new Promise((resolve) => setTimeout(resolve, 800));
    expect(target.requests).toHaveLength(4);
  });
});

describe('fan-out', () => {
  it('creates no duplicate delivery or message when the same stream batch is handed over again', async () => {
    const stack = await start();
    const admin = adminCall(stack);
    const target = await receiver();
    await admin('POST', '/webhooks/endpoints', { url: target.baseUrl, tenant: 't-dup' });
    const item = outboxItemOf(
      {
        type: 'payout.processed',
        tenant: 't-dup',
        producer: 'payments',
        data: { payout_id: 'po_dup', status: 'paid', amount_minor: 5, currency: 'EUR' },
        trace_id: newId('trc'),
        versions: NO_VERSIONS,
      },
      new Date(),
      30,
    );
    await stack.clients.documents.send(
      new PutCommand({ TableName: stack.resources.tableNames.events, Item: item }),
    );
    await eventually(async () => (target.requests.length === 1 ? true : undefined));
    // The mapping hands the same INSERT over twice more (a retried batch).
    const batch: DynamoDBStreamEvent = {
      Records: [
        {
          eventName: 'INSERT',
          dynamodb: {
            SequenceNumber: '1',
            NewImage: marshall(item, { removeUndefinedValues: true }) as never,
          },
        },
      ],
    };
    const fanout = FUNCTION_FACTORIES.fanout(stack.deps);
    expect(await fanout(batch, {})).toEqual({ batchItemFailures: [] });
    expect(await fanout(batch, {})).toEqual({ batchItemFailures: [] });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(target.requests).toHaveLength(1);
    const deliveries = await stack.clients.documents.send(
      new QueryCommand({
        TableName: stack.resources.tableNames.deliveries,
        KeyConditionExpression: 'event_id = :id',
        ExpressionAttributeValues: { ':id': item.event_id },
      }),
    );
    expect(deliveries.Items).toHaveLength(1);
  });
});

describe('outbox sweeper', () => {
  const clients = engineClients();
  afterAll(() => destroyAwsClients(clients));

  it('fans out an event whose fan-out is not recorded after a minute, once', async () => {
    const resources = await provisionIsolated(clients);
    let now = new Date('2026-11-22T12:00:00.000Z');
    const deps = composeService(enginePlatform(clients, resources, { now: () => now }), 'sweeper');
    const { webhooks } = deps;
    const ctx = webhookContext(deps, silentLogger as never);
    await webhooks.endpoints.create({
      endpoint_id: newId('ep'),
      url: 'http://127.0.0.1:1/webhooks/v1',
      topics: [],
      version: '2026-11-01',
      status: 'enabled',
      secret_ciphertext: 'unused-here',
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
    });
    const item = outboxItemOf(
      {
        type: 'payout.processed',
        data: { payout_id: 'po_s' },
        trace_id: newId('trc'),
        versions: NO_VERSIONS,
      },
      now,
      30,
    );
    expect(await webhooks.events.put(item)).toBe(true);

    // Younger than a minute: left to the stream.
    now = new Date(now.getTime() + 30_000);
    expect(await sweepOutbox(ctx)).toEqual({ swept: 0 });
    // Past a minute: fanned out, and only once.
    now = new Date(now.getTime() + 45_000);
    expect(await sweepOutbox(ctx)).toEqual({ swept: 1 });
    expect(await sweepOutbox(ctx)).toEqual({ swept: 0 });
    const stored = await webhooks.events.get(item.event_id);
    expect(stored?.fanned_out_at).toBeDefined();
    expect(stored?.fanout_pending).toBeUndefined();
    expect(await webhooks.deliveries.forEvent(item.event_id)).toHaveLength(1);
  });
});

describe('the sweeper’s ordered-keys watchdog', () => {
  const clients = engineClients();
  afterAll(() => destroyAwsClients(clients));

  it('wakes a key whose head’s message was lost, once past the grace, on the real table and queue', async () => {
    const resources = await provisionIsolated(clients);
    let now = new Date('2026-11-22T12:00:00.000Z');
    const deps = composeService(enginePlatform(clients, resources, { now: () => now }), 'sweeper');
    const ctx = webhookContext(deps, silentLogger as never);
    const sweep = FUNCTION_FACTORIES.sweeper(deps);
    const endpoint = {
      endpoint_id: newId('ep'),
      url: 'http://127.0.0.1:1/webhooks/v1',
      topics: [],
      version: '2026-11-01' as const,
      status: 'enabled' as const,
      secret_ciphertext: 'unused-here',
      ordering: { key: 'endpoint' as const },
      created_at: now.toISOString(),
      updated_at: now.toISOString(),
    };
    await deps.webhooks.endpoints.create(endpoint);
    const items = ['po_w1', 'po_w2'].map((payout) =>
      outboxItemOf(
        {
          type: 'payout.processed',
          data: { payout_id: payout },
          trace_id: newId('trc'),
          versions: NO_VERSIONS,
        },
        now,
        30,
      ),
    );
    for (const item of items) {
      await deps.webhooks.events.put(item);
      await fanOutEvent(ctx, item, [endpoint]);
    }
    // Both first messages are lost (drained without an attempt): the second would only have waited for the head.
    const drained = await drainQueue(clients, resources.queueUrls.delivery);
    expect(drained.map((message) => message.order)).toEqual([
      { key: 'endpoint', seq: 1 },
      { key: 'endpoint', seq: 2 },
    ]);

    expect((await sweep({}, {})).ordered).toEqual({ heads: 1, woken: 0, handed_on: 0, complete: true });
    now = new Date(now.getTime() + 5 * 60_000);
    expect((await sweep({}, {})).ordered).toEqual({ heads: 1, woken: 1, handed_on: 0, complete: true });
    const woken = await drainQueue(clients, resources.queueUrls.delivery);
    expect(woken).toEqual([
      {
        event_id: items[0]?.event_id,
        endpoint_id: endpoint.endpoint_id,
        attempt: 1,
        round_start: 1,
        order: { key: 'endpoint', seq: 1 },
      },
    ]);
    // Woken once for that attempt: a run a minute later sends nothing more.
    now = new Date(now.getTime() + 60_000);
    expect((await sweep({}, {})).ordered).toMatchObject({ woken: 0 });
    expect(await drainQueue(clients, resources.queueUrls.delivery)).toEqual([]);
  });
});

describe('the fan-out-pending marker, sharded', () => {
  const clients = engineClients();
  afterAll(() => destroyAwsClients(clients));

  it('spreads events over the shards, and the sweeper’s read finds every shard’s and a pre-shard marker, oldest first', async () => {
    const resources = await provisionIsolated(clients);
    const deps = composeService(enginePlatform(clients, resources, { now: () => new Date() }), 'sweeper');
    const events = deps.webhooks.events;
    const start = Date.parse('2026-11-22T12:00:00.000Z');
    const items = Array.from({ length: 48 }, (_, index) =>
      outboxItemOf(
        {
          type: 'payout.processed',
          data: { payout_id: `po_${index}` },
          trace_id: newId('trc'),
          versions: NO_VERSIONS,
        },
        new Date(start + index * 1_000),
        30,
      ),
    );
    // One written before the markers were sharded: the single marker value.
    const legacy = {
      ...outboxItemOf(
        { type: 'payout.processed', data: {}, trace_id: newId('trc'), versions: NO_VERSIONS },
        new Date(start - 1_000),
        30,
      ),
      fanout_pending: FANOUT_PENDING,
    };
    for (const item of [...items, legacy]) expect(await events.put(item)).toBe(true);
    expect(new Set(items.map((item) => item.fanout_pending)).size).toBeGreaterThan(8);
    expect(items.every((item) => FANOUT_PENDING_MARKERS.includes(item.fanout_pending ?? ''))).toBe(true);
    const pending = await events.pendingFanout('2026-11-23', 20);
    expect(pending.map((item) => item.event_id)).toEqual(
      [legacy, ...items].slice(0, 20).map((item) => item.event_id),
    );
    expect(await events.pendingFanout('2026-11-23', 100)).toHaveLength(49);
  });
});

describe('a day of events, sharded', () => {
  const clients = engineClients();
  afterAll(() => destroyAwsClients(clients));

  it('lists a day over its shards and its pre-shard key in time order, page by page, each event once, inside the window', async () => {
    const resources = await provisionIsolated(clients);
    const deps = composeService(enginePlatform(clients, resources, { now: () => new Date() }), 'webhooks');
    const events = deps.webhooks.events;
    const start = Date.parse('2026-11-22T08:00:00.000Z');
    const item = (index: number) =>
      outboxItemOf(
        { type: 'payout.processed', data: { index }, trace_id: newId('trc'), versions: NO_VERSIONS },
        new Date(start + index * 60_000),
        30,
      );
    const sharded = Array.from({ length: 60 }, (_, index) => item(index * 2));
    // Events written before the shards carry the plain day.
    const legacy = Array.from({ length: 5 }, (_, index) => ({ ...item(index * 2 + 1), day: '2026-11-22' }));
    for (const event of [...sharded, ...legacy]) expect(await events.put(event)).toBe(true);
    expect(new Set(sharded.map((event) => event.day)).size).toBeGreaterThan(8);
    const all = [...sharded, ...legacy].sort((left, right) =>
      (left.ts_id ?? '') < (right.ts_id ?? '') ? -1 : 1,
    );

    const listed: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await events.byDay(
        '2026-11-22',
        '2026-11-22T00:00:00.000Z',
        '2026-11-22T23:59:59.999Z',
        7,
        cursor,
      );
      listed.push(...page.items.map((event) => event.event_id));
      cursor = page.cursor;
      pages += 1;
    } while (cursor && pages < 50);
    expect(listed).toEqual(all.map((event) => event.event_id));

    // A window inside the day: only its events.
    const window = await events.byDay(
      '2026-11-22',
      '2026-11-22T08:10:00.000Z',
      '2026-11-22T08:20:00.000Z',
      100,
    );
    expect(window.items.map((event) => event.event_id)).toEqual(
      all
        .filter((event) => event.ts >= '2026-11-22T08:10:00.000Z' && event.ts <= '2026-11-22T08:20:00.000Z')
        .map((event) => event.event_id),
    );
    await expect(
      events.byDay(
        '2026-11-22',
        '2026-11-22T00:00:00.000Z',
        '2026-11-22T23:59:59.999Z',
        7,
        'bm90LWEtY3Vyc29y',
      ),
    ).rejects.toThrow('the cursor is not one this API returned');
  });
});

describe('egress guard in the pipeline', () => {
  it('refuses a loopback receiver when loopback is not allow-listed: stopped, reason recorded, 0 connections', async () => {
    const stack = await start({ webhooks: { egress: { allowHttp: true, allowedCidrs: [] } } });
    const admin = adminCall(stack);
    const target = await receiver();
    const created = await admin('POST', '/webhooks/endpoints', { url: target.baseUrl, tenant: 't-ssrf' });
    const published = await admin('POST', '/webhooks/events', {
      type: 'payout.processed',
      tenant: 't-ssrf',
      data: { payout_id: 'po_ssrf', status: 'paid', amount_minor: 1, currency: 'EUR' },
    });
    const history = await eventually(async () => {
      const answer = await admin('GET', `/webhooks/events/${published.body.event_id as string}`);
      const delivery = (answer.body.deliveries as { status: string }[] | undefined)?.[0];
      return delivery?.status === 'stopped' ? answer.body : undefined;
    });
    expect(history.deliveries).toEqual([
      expect.objectContaining({
        endpoint_id: created.body.endpoint_id,
        status: 'stopped',
        stop_reason: 'address_not_allowed',
        attempts: [expect.objectContaining({ attempt: 1, error: 'address_not_allowed', outcome: 'stopped' })],
      }),
    ]);
    expect(target.connections).toBe(0);
  });
});

describe('partner resync routes', () => {
  it("serve a partner its own endpoint's events and the catalog in force at a time, with its partner key only", async () => {
    const stack = await start({ seedCatalog: demoCatalogWithoutRatePolicy() });
    const admin = adminCall(stack);
    const mine = await receiver();
    const theirs = await receiver();
    const created = await admin('POST', '/webhooks/endpoints', { url: mine.baseUrl, tenant: 't-resync' });
    const other = await admin('POST', '/webhooks/endpoints', { url: theirs.baseUrl, tenant: 't-other' });
    const partnerKey = created.body.partner_key as string;
    expect(partnerKey).toMatch(/^pk_/);
    expect(
      (await admin('GET', `/webhooks/endpoints/${created.body.endpoint_id as string}`)).body,
    ).not.toHaveProperty('partner_key_sha256');
    const from = new Date().toISOString();
    const ids: string[] = [];
    for (const [index, tenant] of ['t-resync', 't-other', 't-resync'].entries()) {
      const published = await admin('POST', '/webhooks/events', {
        type: 'payout.processed',
        tenant,
        data: { payout_id: `po_r${index}`, status: 'paid', amount_minor: 10, currency: 'EUR', seq: index },
      });
      if (tenant === 't-resync') ids.push(published.body.event_id as string);
    }
    await eventually(async () =>
      mine.requests.length === 2 && theirs.requests.length === 1 ? true : undefined,
    );
    const partner = async (path: string, key: string | null = partnerKey) => {
      const response = await fetch(`${stack.url}${path}`, {
        headers: key === null ? {} : { authorization: `Bearer ${key}` },
      });
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    const to = new Date().toISOString();
    const page = await partner(`/partner/events?from=${from}&to=${to}&limit=1`);
    expect(page.status).toBe(200);
    const items = page.body.items as { event_id: string; attempt: number; tenant: string }[];
    expect(items.map((item) => item.event_id)).toEqual([ids[0]]);
    const next = await partner(
      `/partner/events?from=${from}&to=${to}&limit=1&cursor=${encodeURIComponent(page.body.cursor as string)}`,
    );
    expect((next.body.items as { event_id: string }[]).map((item) => item.event_id)).toEqual([ids[1]]);
    expect(items[0]).toMatchObject({ attempt: 1, tenant: 't-resync', type: 'payout.processed' });

    const otherPage = await partner(
      `/partner/events?from=${from}&to=${to}`,
      other.body.partner_key as string,
    );
    expect((otherPage.body.items as unknown[]).length).toBe(1);

    for (const key of [null, 'pk_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', ADMIN]) {
      const refused = await partner('/partner/events', key);
      expect(refused.status, `key ${key}`).toBe(401);
      expect(refused.body).toMatchObject({ error: 'unauthorized' });
    }

    const snapshot = await partner(`/catalog/snapshot?as_of=${new Date().toISOString()}`);
    expect(snapshot.status).toBe(200);
    expect(snapshot.body).toMatchObject({
      revision: 1,
      versions: { pricelist_version: 1, fx_version: 'fx-1', tax_rule_version: 1 },
    });
    expect(snapshot.body.catalog).toHaveProperty('pricelists');
    const before = await partner('/catalog/snapshot?as_of=2000-01-01T00:00:00.000Z');
    expect(before.status).toBe(404);
  });
});
