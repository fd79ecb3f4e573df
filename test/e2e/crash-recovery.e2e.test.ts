/**
 * Exactly once across crashes (C25): every POST with an effect is sent with an `Idempotency-Key` to a local stack
 * that ends itself with SIGKILL at a named point of that request (`CRASH_AT=<operation>:<point>`: after the
 * write carrying the effect, after the stored answer, or a point inside a multi-step effect). The stack is
 * started again on the same data directory and the request is retried with the same key and body: it must get
 * the original answer (the same ids), and the effect must exist exactly once.
 *
 * Each restart arms the next crash, so the scenarios run in order on one data directory. The crash ends the
 * service's process only: DynamoDB Local and fauxqs run beside it (`LOCAL_DYNAMODB_ENDPOINT`,
 * `LOCAL_FAUXQS_ENDPOINT`) and outlive it, as DynamoDB and SQS outlive a Lambda function that dies mid-request.
 * (`exactly-once-faults.e2e.test.ts` kills the engines too.)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DynamoDbLocalProcess,
  startDynamoDbLocalOnFreePort,
} from '../../functions/adapters/local/dynamodb-local';
import { type FauxqsServer, startFauxqsServer } from '../../functions/adapters/local/fauxqs';
import { freePort } from '../../functions/adapters/local/local-aws';
import { TEST_REVIEWERS } from '../support/change-requests';
import { awaitStackGone, type StackProcess, startStackProcess } from '../support/stack-process';
import { startReceiver, type TestReceiver } from '../support/webhook-receiver';

const API_KEY = 'key_crash_0123456789abcdef';
const ADMIN = 'adm_crash_0123456789abcdef';
const dataDir = mkdtempSync(path.join(tmpdir(), 'pricing-crash-'));
/** The engines' own directory: not the stack's, whose processes must all be gone after a crash. */
const engineDir = mkdtempSync(path.join(tmpdir(), 'pricing-crash-engines-'));
let engines: { dynamo: DynamoDbLocalProcess; fauxqs: FauxqsServer } | undefined;
/** A crashed request's key is free again after this lease (the default is 10 s; shortened to keep the run short). */
const LEASE_SECONDS = 2;

let port = 0;
let stack: StackProcess | undefined;
let receiver: TestReceiver;

interface Answer {
  readonly status: number;
  readonly replayed: boolean;
  readonly body: Record<string, unknown>;
}

interface Call {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly body?: unknown;
  /** Bearer token (an operator), else the API key. */
  readonly token?: string;
  readonly key?: string;
}

const send = async (call: Call): Promise<Answer> => {
  const response = await fetch(`${stack?.url}${call.path}`, {
    method: call.method,
    headers: {
      'content-type': 'application/json',
      ...(call.token ? { authorization: `Bearer ${call.token}` } : { 'x-api-key': API_KEY }),
      ...(call.key ? { 'idempotency-key': call.key } : {}),
    },
    ...(call.body === undefined ? {} : { body: JSON.stringify(call.body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    replayed: response.headers.get('idempotent-replayed') === 'true',
    body: text ? (JSON.parse(text) as Record<string, unknown>) : {},
  };
};

const admin = (method: Call['method'], route: string, body?: unknown, key?: string) =>
  send({
    method,
    path: route,
    token: ADMIN,
    ...(body === undefined ? {} : { body }),
    ...(key ? { key } : {}),
  });

/** Starts the stack (again) on the data directory, armed to crash at `crashAt` (`<operation>:<point>`). */
const start = async (crashAt?: string) => {
  stack = await startStackProcess({
    port,
    dataDir,
    env: {
      API_KEY,
      ADMIN_TOKEN: ADMIN,
      ADMIN_TOKENS: TEST_REVIEWERS.map((reviewer) => `${reviewer.name}:${reviewer.token}`).join(','),
      IDEMPOTENCY_LEASE_SECONDS: String(LEASE_SECONDS),
      WEBHOOK_BACKOFF_SECONDS: '1,1,1',
      WEBHOOK_ATTEMPT_TIMEOUT_MS: '1000',
      // A delivery message the killed stack had received comes back after 5 s, not AWS's 180 s.
      LOCAL_QUEUE_VISIBILITY_SECONDS: '5',
      CRASH_AT: crashAt ?? '',
      LOCAL_DYNAMODB_ENDPOINT: engines?.dynamo.endpoint ?? '',
      LOCAL_FAUXQS_ENDPOINT: engines?.fauxqs.endpoint ?? '',
    },
  });
};

/**
 * Sends `call`, which must end the stack at its armed point (the client sees the connection drop, no answer),
 * then starts the stack again armed for the next crash.
 */
const crashOn = async (call: Call, next?: string): Promise<void> => {
  const current = stack as StackProcess;
  await expect(send(call)).rejects.toThrow();
  await awaitStackGone(current, dataDir);
  expect(current.child.signalCode).toBe('SIGKILL');
  await start(next);
};

/** The retry of a crashed request: 409 while the crashed holder's lease lasts, then its answer. */
const retry = async (call: Call): Promise<Answer> => {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const answer = await send(call);
    if (answer.status !== 409 || answer.body.error !== 'request_in_progress' || Date.now() > deadline)
      return answer;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
};

const waitFor = async <T>(probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
};

beforeAll(async () => {
  port = await freePort();
  const [dynamo, fauxqs] = await Promise.all([
    startDynamoDbLocalOnFreePort({ workDir: engineDir }),
    startFauxqsServer({}),
  ]);
  engines = { dynamo, fauxqs };
  receiver = await startReceiver();
  await start('createEndpoint:after-effect');
}, 120_000);

afterAll(async () => {
  if (stack) {
    try {
      process.kill(-(stack.child.pid as number), 'SIGKILL');
    } catch {
      // gone
    }
    await awaitStackGone(stack, dataDir);
  }
  await receiver?.close();
  await engines?.fauxqs.stop();
  await engines?.dynamo.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(engineDir, { recursive: true, force: true });
}, 60_000);

/** What the scenarios learn and later ones use. */
const seen: Record<string, string> = {};

const payout = (payoutId: string) => ({
  type: 'payout.processed',
  data: { payout_id: payoutId, amount_minor: 1250, currency: 'EUR', status: 'paid' },
  tenant: 'tenant-crash',
});

const eventsWithPayout = async (payoutId: string): Promise<string[]> => {
  const now = new Date();
  const from = new Date(now.getTime() - 3_600_000).toISOString();
  const page = await admin('GET', `/webhooks/events?from=${from}&to=${now.toISOString()}&limit=200`);
  const ids = ((page.body.items ?? []) as { event_id: string; type: string }[])
    .filter((item) => item.type === 'payout.processed')
    .map((item) => item.event_id);
  const matching: string[] = [];
  for (const eventId of ids) {
    const shown = (await admin('GET', `/webhooks/events/${eventId}`)).body as {
      envelope?: { data?: { payout_id?: string } };
    };
    if (shown.envelope?.data?.payout_id === payoutId) matching.push(eventId);
  }
  return matching;
};

/** A `pricelist` change request's body: the demo price list with its first item at `price`. */
const priceChange = async (price: string, note: string) => {
  const exported = (await admin('GET', '/admin/catalog/export')).body as {
    pricelists: { items: { base_price: string }[] }[];
  };
  const [primary, ...others] = exported.pricelists;
  const [first, ...items] = primary?.items ?? [];
  return {
    kind: 'pricelist',
    note,
    payload: { pricelists: [{ ...primary, items: [{ ...first, base_price: price }, ...items] }, ...others] },
  };
};

describe('an idempotent POST retried after its process was killed', { timeout: 120_000 }, () => {
  it('POST /webhooks/endpoints (crash after the effect): the same endpoint and secret, one endpoint', async () => {
    const call: Call = {
      method: 'POST',
      path: '/webhooks/endpoints',
      token: ADMIN,
      key: 'crash-endpoint-1',
      body: { url: receiver.baseUrl, topics: ['payout'], description: 'crash test' },
    };
    await crashOn(call, 'publishEvent:after-effect');
    const answer = await retry(call);
    seen.endpoint = String(answer.body.endpoint_id);
    expect(answer.status).toBe(201);
    expect(answer.replayed).toBe(true);
    expect(answer.body.secret).toMatch(/^whsec_/);
    const listed = ((await admin('GET', '/webhooks/endpoints?limit=100')).body.items ?? []) as {
      endpoint_id: string;
      url: string;
    }[];
    expect(listed.filter((endpoint) => endpoint.url === receiver.baseUrl).map((e) => e.endpoint_id)).toEqual([
      answer.body.endpoint_id,
    ]);
  });

  it('POST /webhooks/events (crash after the effect): the same event_id, one event, delivered once', async () => {
    const call: Call = {
      method: 'POST',
      path: '/webhooks/events',
      token: ADMIN,
      key: 'crash-event-1',
      body: payout('po_crash_1'),
    };
    await crashOn(call, 'rotateEndpointSecret:after-effect');
    const answer = await retry(call);
    seen.event = String(answer.body.event_id);
    expect(answer.status).toBe(202);
    expect(answer.replayed).toBe(true);
    expect(await eventsWithPayout('po_crash_1')).toEqual([answer.body.event_id]);
    await waitFor(async () =>
      receiver.requests.some((request) => request.envelope.event_id === seen.event) ? true : undefined,
    );
  });

  it('POST /webhooks/endpoints/{id}/rotate-secret (crash after the effect): rotated once, the same secret', async () => {
    const call: Call = {
      method: 'POST',
      path: `/webhooks/endpoints/${seen.endpoint}/rotate-secret`,
      token: ADMIN,
      key: 'crash-rotate-1',
    };
    await crashOn(call, 'createChangeRequest:after-effect');
    const answer = await retry(call);
    expect(answer.status).toBe(200);
    expect(answer.replayed).toBe(true);
    // A second rotation would have changed the endpoint again after the answer was stored.
    const endpoint = (await admin('GET', `/webhooks/endpoints/${seen.endpoint}`)).body;
    expect(endpoint.updated_at).toBe(answer.body.updated_at);
    expect(endpoint.previous_secret_expires_at).toBe(answer.body.previous_secret_expires_at);
  });

  it('POST /admin/change-requests (crash after the effect): the same cr_id, one change request', async () => {
    const call: Call = {
      method: 'POST',
      path: '/admin/change-requests',
      token: ADMIN,
      key: 'crash-cr-1',
      body: await priceChange('19.99', 'crash-test change'),
    };
    await crashOn(call, 'approveChangeRequest:after-effect');
    const answer = await retry(call);
    seen.acknowledge = JSON.stringify(
      [...new Set(((answer.body.guardrails ?? []) as { code: string }[]).map((g) => g.code))].sort(),
    );
    seen.cr = String(answer.body.cr_id);
    expect(answer.status).toBe(201);
    expect(answer.replayed).toBe(true);
    const listed = ((await admin('GET', '/admin/change-requests?limit=100')).body.items ?? []) as {
      cr_id: string;
      note?: string;
    }[];
    expect(listed.filter((cr) => cr.note === 'crash-test change').map((cr) => cr.cr_id)).toEqual([
      answer.body.cr_id,
    ]);
  });

  /** The approval of the scenarios' change request by reviewer `reviewer`, acknowledging its guardrails. */
  const approval = (reviewer: number, key: string): Call => ({
    method: 'POST',
    path: `/admin/change-requests/${seen.cr}/approve`,
    token: TEST_REVIEWERS[reviewer]?.token as string,
    key,
    body: { acknowledge: JSON.parse(seen.acknowledge ?? '[]') },
  });

  it('POST /admin/change-requests/{id}/approve (first approval, crash after the effect): counted once', async () => {
    const call = approval(0, 'crash-approve-1');
    await crashOn(call, 'approveChangeRequest:after-approval');
    const answer = await retry(call);
    expect(answer.status).toBe(200);
    expect(answer.replayed).toBe(true);
    expect(answer.body.status).toBe('pending_approval');
    expect((answer.body.approvals as unknown[]).length).toBe(1);
  });

  it('POST …/approve (second approval, crash before its publication): published once, on the retry', async () => {
    const call = approval(1, 'crash-approve-2');
    await crashOn(call, 'commit:after-effect');
    const answer = await retry(call);
    expect(answer.status).toBe(200);
    expect(answer.body.status).toBe('published');
    expect(answer.body.journal_index).toEqual(expect.any(Number));
    // Its release is signed and journaled, and the catalog was published once: the seed's PriceListUpdated and this one's.
    expect((await admin('GET', `/audit/releases/${seen.cr}`)).status).toBe(200);
    const now = new Date();
    const listed = await admin(
      'GET',
      `/webhooks/events?from=${new Date(now.getTime() - 3_600_000).toISOString()}&to=${now.toISOString()}&limit=200`,
    );
    const priceEvents = ((listed.body.items ?? []) as { type: string }[]).filter(
      (item) => item.type === 'catalog.PriceListUpdated',
    );
    expect(priceEvents).toHaveLength(2);
    const again = await send(call);
    expect(again).toMatchObject({ status: 200, replayed: true });
    expect(again.body).toEqual(answer.body);
  });

  it('POST /pricing/commit (crash after the effect): the same receipt', async () => {
    const quote = await send({
      method: 'POST',
      path: '/pricing/quote',
      body: {
        items: [{ sku_id: 'GAME-STARFALL-PS5', quantity: 2 }],
        region: 'DE',
        currency: 'EUR',
        buyer_type: 'consumer',
      },
    });
    expect(quote.status, JSON.stringify(quote.body)).toBe(201);
    const call: Call = {
      method: 'POST',
      path: '/pricing/commit',
      key: 'crash-commit-1',
      body: { quote_id: quote.body.quote_id, signature: quote.body.signature },
    };
    await crashOn(call, 'refund:after-effect');
    const answer = await retry(call);
    seen.receipt = String(answer.body.receipt_id);
    expect(answer.status).toBe(201);
    expect(answer.replayed).toBe(true);
    expect((await send({ method: 'GET', path: `/receipts/${answer.body.receipt_id}` })).status).toBe(200);
  });

  it('POST /pricing/refund (crash after the effect): the same refund, recorded once', async () => {
    const call: Call = {
      method: 'POST',
      path: '/pricing/refund',
      key: 'crash-refund-1',
      body: {
        receipt_id: seen.receipt,
        kind: 'return',
        lines: [{ sku_id: 'GAME-STARFALL-PS5', quantity: 1 }],
      },
    };
    await crashOn(call, 'replay:after-effect');
    const answer = await retry(call);
    expect(answer.status).toBe(201);
    expect(answer.replayed).toBe(true);
    const receipt = (await send({ method: 'GET', path: `/receipts/${seen.receipt}` })).body;
    expect((receipt.refunds as { refund_id: string }[]).map((refund) => refund.refund_id)).toEqual([
      answer.body.refund_id,
    ]);
    expect(receipt.status).toBe('partially_refunded');
  });

  /**
   * Replays the delivered event with `key`, crashing at the armed point and arming `next`; the retry must answer
   * the replay, and the receiver must get exactly one more attempt of the event (none after it settles).
   */
  const replayOnceThroughCrash = async (
    key: string,
    next: string,
    filter: Record<string, string> = {},
  ): Promise<Answer> => {
    const deliveriesOf = () =>
      receiver.requests.filter((request) => request.envelope.event_id === seen.event).length;
    const before = deliveriesOf();
    const call: Call = {
      method: 'POST',
      path: '/webhooks/replay',
      token: ADMIN,
      key,
      body: { event_ids: [seen.event], ...filter },
    };
    await crashOn(call, next);
    const answer = await retry(call);
    expect(answer.status).toBe(202);
    expect(answer.body).toMatchObject({ matched: 1, enqueued: 1, skipped: 0 });
    const progress = await waitFor(async () => {
      const shown = (await admin('GET', `/webhooks/replays/${answer.body.replay_id}`)).body;
      return shown.done === true ? shown : undefined;
    });
    expect(progress.progress).toMatchObject({ delivered: 1 });
    await waitFor(async () => (deliveriesOf() === before + 1 ? true : undefined));
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(deliveriesOf()).toBe(before + 1);
    return answer;
  };

  it('POST /webhooks/replay (crash after the effect): the same replay_id, one more attempt', async () => {
    const answer = await replayOnceThroughCrash('crash-replay-1', 'replay:after-restart');
    expect(answer.replayed).toBe(true);
  });

  it('POST /webhooks/replay (crash between restarting a delivery and sending it): resumed, one attempt', async () => {
    // The retry took the crashed request's key over and resumed its replay (the same reserved replay_id), although
    // the delivery it restarted is no longer `delivered`, the status the replay asked for.
    const answer = await replayOnceThroughCrash('crash-replay-2', 'rejectChangeRequest:after-effect', {
      status: 'delivered',
    });
    expect(answer.replayed).toBe(false);
  });

  it('POST /admin/change-requests/{id}/reject (crash after the effect): rejected once', async () => {
    const opened = await admin(
      'POST',
      '/admin/change-requests',
      await priceChange('18.99', 'to reject'),
      'crash-cr-2',
    );
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    const call: Call = {
      method: 'POST',
      path: `/admin/change-requests/${opened.body.cr_id}/reject`,
      token: TEST_REVIEWERS[0]?.token as string,
      key: 'crash-reject-1',
      body: { comment: 'not now' },
    };
    await crashOn(call, 'publishEvent:after-record');
    const answer = await retry(call);
    expect(answer.status).toBe(200);
    expect(answer.replayed).toBe(true);
    expect(answer.body.status).toBe('rejected');
  });

  it('POST /webhooks/events (crash after the stored answer, before sending it): the same event', async () => {
    const call: Call = {
      method: 'POST',
      path: '/webhooks/events',
      token: ADMIN,
      key: 'crash-event-2',
      body: payout('po_crash_2'),
    };
    await crashOn(call);
    const answer = await retry(call);
    expect(answer.status).toBe(202);
    expect(answer.replayed).toBe(true);
    expect(await eventsWithPayout('po_crash_2')).toEqual([answer.body.event_id]);
  });

  it('a producer event_id dedupes without a key: the repeat answers 200 with the existing event', async () => {
    const body = { ...payout('po_crash_3'), event_id: 'payout-po_crash_3' };
    const first = await admin('POST', '/webhooks/events', body);
    expect(first.status).toBe(202);
    expect(first.body.event_id).toBe('payout-po_crash_3');
    const repeat = await admin('POST', '/webhooks/events', body);
    expect(repeat.status).toBe(200);
    expect(repeat.body.event_id).toBe('payout-po_crash_3');
    const other = await admin('POST', '/webhooks/events', {
      ...body,
      data: { ...body.data, amount_minor: 1 },
    });
    expect(other.status).toBe(409);
    expect(other.body.error).toBe('conflict');
    expect(await eventsWithPayout('po_crash_3')).toEqual(['payout-po_crash_3']);
    await waitFor(async () =>
      receiver.requests.some((request) => request.envelope.event_id === 'payout-po_crash_3')
        ? true
        : undefined,
    );
  });
});
