import { randomUUID } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import {
  DynamoIdempotencyLedger,
  writeWithCompletion,
} from '../../functions/adapters/aws/idempotency-ledger';
import { DynamoEventStore } from '../../functions/adapters/aws/webhook-store';
import type { ProvisionedResources } from '../../functions/adapters/local/bootstrap';
import {
  type RequestScope,
  RequestSupersededError,
  type StoredAnswer,
} from '../../functions/ports/idempotency';
import { outboxItemOf } from '../../functions/usecases/webhooks/events';
import { engineClients, provisionIsolated } from '../support/engines';

/** The idempotency ledger and the atomic completion of an effect, against DynamoDB Local. */

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

let resources: ProvisionedResources;
beforeEach(async () => {
  resources = await provisionIsolated(clients);
});

const ledgerWith = (leaseSeconds = 10) =>
  new DynamoIdempotencyLedger({
    documents: clients.documents,
    tableName: resources.tableNames.idempotency,
    leaseSeconds,
  });

const scope = (): RequestScope => ({ recordId: `req#${randomUUID()}`, validation: 'v1' });
const answer = (body: unknown): StoredAnswer => ({
  status_code: 202,
  headers: { Location: '/x' },
  body_json: JSON.stringify(body),
});
const anEvent = () =>
  outboxItemOf(
    {
      type: 'payout.processed',
      data: { payout_id: randomUUID() },
      trace_id: 'trc_ledger_test',
      versions: { pricelist_version: null, fx_version: null, tax_rule_version: null },
    },
    new Date(),
    30,
  );
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('DynamoIdempotencyLedger with an effect written in the same transaction', () => {
  it('commits the effect and the completed record together; the next request finds the answer', async () => {
    const ledger = ledgerWith();
    const events = new DynamoEventStore(clients.documents, resources.tableNames.events);
    const request = scope();
    const started = await ledger.begin(request);
    if (started.state !== 'started') throw new Error(started.state);
    const item = anEvent();
    let committed = 0;
    const completion = ledger.completion(request, started.token, answer({ event_id: item.event_id }), () => {
      committed += 1;
    });
    expect(await events.put(item, completion)).toBe(true);
    expect(committed).toBe(1);
    expect(await events.get(item.event_id)).toBeDefined();
    expect(await ledger.begin(request)).toEqual({
      state: 'completed',
      answer: answer({ event_id: item.event_id }),
    });
    expect(await ledger.begin({ ...request, validation: 'other' })).toEqual({ state: 'mismatch' });
  });

  it('refuses the commit of a holder whose lease ran out and was taken over: nothing of it is written', async () => {
    const ledger = ledgerWith(1);
    const events = new DynamoEventStore(clients.documents, resources.tableNames.events);
    const request = scope();
    const first = await ledger.begin(request);
    if (first.state !== 'started') throw new Error(first.state);
    expect(await ledger.begin(request)).toEqual({ state: 'in_progress', retryAfterSeconds: 1 });
    await sleep(1_100);
    const retry = await ledger.begin(request);
    if (retry.state !== 'started') throw new Error(retry.state);
    // The takeover keeps what the first holder reserved: its seed and start.
    expect(retry.seed).toBe(first.seed);
    expect(retry.startedAt.toISOString()).toBe(first.startedAt.toISOString());
    expect(retry.token).not.toBe(first.token);

    const late = anEvent();
    const lateCompletion = ledger.completion(
      request,
      first.token,
      answer({ event_id: late.event_id }),
      () => {
        throw new Error('must not be told it committed');
      },
    );
    await expect(events.put(late, lateCompletion)).rejects.toBeInstanceOf(RequestSupersededError);
    expect(await events.get(late.event_id)).toBeUndefined();

    const winner = anEvent();
    expect(
      await events.put(
        winner,
        ledger.completion(request, retry.token, answer({ event_id: winner.event_id }), () => {}),
      ),
    ).toBe(true);
    expect(await ledger.read(request)).toEqual({
      state: 'completed',
      answer: answer({ event_id: winner.event_id }),
    });
    await expect(ledger.complete(request, first.token, answer({}))).rejects.toBeInstanceOf(
      RequestSupersededError,
    );
  });

  it('leaves the record in progress when the effect is refused by its own condition, and gives it back', async () => {
    const ledger = ledgerWith();
    const events = new DynamoEventStore(clients.documents, resources.tableNames.events);
    const item = anEvent();
    expect(await events.put(item)).toBe(true);
    const request = scope();
    const started = await ledger.begin(request);
    if (started.state !== 'started') throw new Error(started.state);
    // The same event id again: the event's condition fails, so the transaction (and the record) does not commit.
    expect(
      await events.put(
        item,
        ledger.completion(request, started.token, answer({}), () => {}),
      ),
    ).toBe(false);
    expect(await ledger.read(request)).toEqual({ state: 'in_progress', retryAfterSeconds: 1 });
    await ledger.release(request, started.token);
    expect(await ledger.read(request)).toBeUndefined();
  });

  it('keeps the reservation of a failed multi-step request: a retry takes over at once with the same ids', async () => {
    const ledger = ledgerWith(60);
    const request = scope();
    const first = await ledger.begin(request);
    if (first.state !== 'started') throw new Error(first.state);
    await ledger.release(request, first.token, true);
    const retry = await ledger.begin(request);
    if (retry.state !== 'started') throw new Error(retry.state);
    expect(retry.seed).toBe(first.seed);
    expect(retry.startedAt.toISOString()).toBe(first.startedAt.toISOString());
    // Given back without a reservation, the key starts afresh.
    await ledger.release(request, retry.token);
    const fresh = await ledger.begin(request);
    if (fresh.state !== 'started') throw new Error(fresh.state);
    expect(fresh.seed).not.toBe(first.seed);
  });

  it('stores a large answer compressed and gives it back exactly', async () => {
    const ledger = ledgerWith();
    const request = scope();
    const started = await ledger.begin(request);
    if (started.state !== 'started') throw new Error(started.state);
    const rows = Array.from({ length: 10_000 }, (_, index) => ({
      sku_id: `SKU-${index}`,
      old: '9.99',
      new: '10.49',
    }));
    const large = answer({ diff: { prices: { changed: rows } } });
    expect(Buffer.byteLength(large.body_json ?? '')).toBeGreaterThan(400_000);
    await writeWithCompletion(
      clients.documents,
      { Put: { TableName: resources.tableNames.events, Item: anEvent() } },
      ledger.completion(request, started.token, large, () => {}),
    );
    const stored = await clients.documents.send(
      new GetCommand({ TableName: resources.tableNames.idempotency, Key: { id: request.recordId } }),
    );
    expect(stored.Item?.answer_gzip).toBeInstanceOf(Uint8Array);
    expect(await ledger.read(request)).toEqual({ state: 'completed', answer: large });
  });
});
