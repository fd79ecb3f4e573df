/**
 * Exactly once end to end, under faults (the specification's "Duplicate effects: 0"): `payout.processed`
 * publications, each with its own `Idempotency-Key`, sent at a steady rate to the local stack, which is killed
 * with `kill -9` (its whole process group, DynamoDB Local included) mid-burst and started again on the same data
 * directory. Publishers retry through the resets, refused connections and 409s with the same key and body. The
 * receiver injects 5xx, 429 with `Retry-After`, connection resets, hangs past the attempt timeout and redirects,
 * and applies each `event_id` once (a redelivery is answered 200 without an effect). The effect is the payout:
 * applied twice under two event ids would be a duplicate effect.
 *
 * Asserted: every key got one event id, whatever it was answered; the service holds one event per publication;
 * published = delivered = applied, 0 duplicate effects, 0 lost. The figures are printed.
 *
 * 2 000 publications with `CI=true` (the acceptance), 300 in a local `npm test`; `EXACTLY_ONCE_PUBLICATIONS`
 * overrides, `EXACTLY_ONCE_SEED` replays a fault mix.
 */
import { randomInt } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../functions/adapters/local/local-aws';
import { mulberry32 } from '../support/prng';
import { killStack, type StackProcess, startStackProcess } from '../support/stack-process';
import { volume } from '../support/volume';
import {
  type Reaction,
  type ReceivedRequest,
  startReceiver,
  type TestReceiver,
} from '../support/webhook-receiver';

const PUBLICATIONS = volume('EXACTLY_ONCE_PUBLICATIONS', { local: 300, ci: 2_000 });
const PER_SECOND = 50;
/** The stack is killed once this share of the publications has been started. */
const KILL_AT = 0.4;
const SEED = process.env.EXACTLY_ONCE_SEED
  ? Number(process.env.EXACTLY_ONCE_SEED) >>> 0
  : randomInt(0, 2 ** 32 - 1);
const ADMIN = 'adm_exactly_0123456789abcdef';
const ATTEMPT_TIMEOUT_MS = 1_000;
/** Cumulative thresholds of one uniform draw per delivery request. */
const FAULTS = { serverError: 0.1, tooMany: 0.13, reset: 0.18, hang: 0.21, redirect: 0.24 } as const;

const dataDir = mkdtempSync(path.join(tmpdir(), 'pricing-exactly-once-'));
let stack: StackProcess | undefined;
let receiver: TestReceiver | undefined;

afterAll(async () => {
  if (stack) await killStack(stack, dataDir);
  await receiver?.close();
  rmSync(dataDir, { recursive: true, force: true });
}, 60_000);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('exactly once through a kill -9 of the local stack', () => {
  it(`publishes ${PUBLICATIONS} payouts with keys through a crash: published = delivered = applied, 0 duplicates`, {
    timeout: 600_000,
  }, async () => {
    console.log(
      `exactly-once faults: seed ${SEED} (EXACTLY_ONCE_SEED=${SEED} to reuse), ${PUBLICATIONS} publications`,
    );
    const random = mulberry32(SEED);
    /** The receiver's store: applied event ids, and per payout the event ids applied for it. */
    const applied = new Set<string>();
    const effects = new Map<string, Set<string>>();
    const faults = { serverError: 0, tooMany: 0, reset: 0, hang: 0, redirect: 0, redelivered: 0 };
    const react = (request: ReceivedRequest): Reaction => {
      const draw = random();
      if (draw < FAULTS.serverError) {
        faults.serverError += 1;
        return { kind: 'respond', status: 503 };
      }
      if (draw < FAULTS.tooMany) {
        faults.tooMany += 1;
        return { kind: 'respond', status: 429, headers: { 'Retry-After': '1' } };
      }
      if (draw < FAULTS.reset) {
        faults.reset += 1;
        return { kind: 'reset' };
      }
      if (draw < FAULTS.hang) {
        faults.hang += 1;
        return { kind: 'hang' };
      }
      if (draw < FAULTS.redirect) {
        faults.redirect += 1;
        return { kind: 'respond', status: 302, headers: { Location: 'http://127.0.0.1:9/elsewhere' } };
      }
      // Processed once per event_id (the receiver kit's contract); a redelivery is 200 without an effect.
      const { event_id: eventId } = request.envelope;
      if (applied.has(eventId)) {
        faults.redelivered += 1;
        return { kind: 'respond', status: 200 };
      }
      applied.add(eventId);
      const payoutId = String((request.envelope.data as { payout_id?: unknown } | undefined)?.payout_id);
      const forPayout = effects.get(payoutId) ?? new Set<string>();
      forPayout.add(eventId);
      effects.set(payoutId, forPayout);
      return { kind: 'respond', status: 200 };
    };
    receiver = await startReceiver(react);

    const port = await freePort();
    const env = {
      ADMIN_TOKEN: ADMIN,
      IDEMPOTENCY_LEASE_SECONDS: '2',
      WEBHOOK_BACKOFF_SECONDS: '1,1,2,2,3,3,5,5,5,5,5',
      WEBHOOK_DAILY_RETRY_DAYS: '0',
      WEBHOOK_ATTEMPT_TIMEOUT_MS: String(ATTEMPT_TIMEOUT_MS),
      // Deliveries the killed stack had received come back after this instead of AWS's 180 s.
      LOCAL_QUEUE_VISIBILITY_SECONDS: '10',
    };
    stack = await startStackProcess({ port, dataDir, env });
    const url = stack.url;
    const admin = (route: string, init: { method: string; key?: string; body?: unknown }) =>
      fetch(`${url}${route}`, {
        method: init.method,
        headers: {
          authorization: `Bearer ${ADMIN}`,
          'content-type': 'application/json',
          ...(init.key ? { 'idempotency-key': init.key } : {}),
        },
        ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
      });
    const endpoint = await admin('/webhooks/endpoints', {
      method: 'POST',
      key: 'exactly-once-endpoint',
      body: { url: receiver.baseUrl, topics: ['payout'] },
    });
    expect(endpoint.status).toBe(201);

    const figures = { answers: 0, replayed: 0, inProgress: 0, networkErrors: 0, otherStatuses: 0 };
    /** Every event id each publication's key was answered with (must be exactly one). */
    const answered = new Map<number, Set<string>>();
    const askedAgain = new Set<number>();
    const publish = async (index: number): Promise<void> => {
      const key = `payout-${SEED}-${index}`;
      const body = {
        type: 'payout.processed',
        producer: 'payments',
        tenant: 'tenant-exactly-once',
        data: { payout_id: `po_${index}`, status: 'paid', amount_minor: 100 + index, currency: 'EUR' },
      };
      const deadline = Date.now() + 240_000;
      // A publisher backs off as real ones do (200 ms doubling to 1 s, jittered): while the stack restarts, a fixed
      // 200 ms made ~900 refused connections a second, which slowed the restart they were waiting for.
      let backoffMs = 200;
      for (;;) {
        try {
          const response = await admin('/webhooks/events', { method: 'POST', key, body });
          const json = (await response.json()) as { event_id?: string; error?: string };
          if (response.status === 202 && json.event_id) {
            figures.answers += 1;
            if (response.headers.get('idempotent-replayed') === 'true') figures.replayed += 1;
            const ids = answered.get(index) ?? new Set<string>();
            ids.add(json.event_id);
            answered.set(index, ids);
            // Every tenth publication asks once more with its key: the answer must not change.
            if (index % 10 === 0 && !askedAgain.has(index)) {
              askedAgain.add(index);
              continue;
            }
            return;
          } else if (response.status === 409 && json.error === 'request_in_progress') {
            figures.inProgress += 1;
          } else {
            figures.otherStatuses += 1;
          }
        } catch {
          figures.networkErrors += 1;
        }
        if (Date.now() > deadline) throw new Error(`publication ${index} got no answer`);
        await sleep(backoffMs * (0.5 + Math.random()));
        backoffMs = Math.min(backoffMs * 2, 1_000);
      }
    };

    const startedAt = Date.now();
    let killedAt = 0;
    let restartedAt = 0;
    const killIndex = Math.floor(PUBLICATIONS * KILL_AT);
    const publications: Promise<void>[] = [];
    let crash: Promise<void> = Promise.resolve();
    for (let index = 0; index < PUBLICATIONS; index += 1) {
      const due = startedAt + (index * 1000) / PER_SECOND;
      if (due > Date.now()) await sleep(due - Date.now());
      if (index === killIndex) {
        const victim = stack;
        // kill -9 of the whole stack mid-burst, then start it again on the same data directory.
        crash = (async () => {
          killedAt = Date.now();
          await killStack(victim, dataDir);
          stack = await startStackProcess({ port, dataDir, env });
          restartedAt = Date.now();
        })();
      }
      publications.push(publish(index));
    }
    await crash;
    await Promise.all(publications);
    const publishedAt = Date.now();

    // Every key has one event id, and the service holds one event per publication.
    const multiple = [...answered.entries()].filter(([, ids]) => ids.size !== 1);
    expect(multiple).toEqual([]);
    expect(answered.size).toBe(PUBLICATIONS);
    const eventIds = new Set([...answered.values()].flatMap((ids) => [...ids]));
    expect(eventIds.size).toBe(PUBLICATIONS);

    // Wait until every event is applied, then a little longer: a duplicate event would be delivered too.
    const settleDeadline = Date.now() + 300_000;
    while (applied.size < PUBLICATIONS && Date.now() < settleDeadline) await sleep(250);
    const appliedAt = Date.now();
    await sleep(5_000);

    const stored: string[] = [];
    let cursor: string | undefined;
    const from = new Date(startedAt - 60_000).toISOString();
    const to = new Date().toISOString();
    do {
      const page = (await (
        await admin(
          `/webhooks/events?from=${from}&to=${to}&limit=200${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          { method: 'GET' },
        )
      ).json()) as { items: { event_id: string; type: string }[]; cursor?: string };
      stored.push(
        ...page.items.filter((item) => item.type === 'payout.processed').map((item) => item.event_id),
      );
      cursor = page.cursor;
    } while (cursor);

    const duplicateEffects = [...effects.values()].filter((ids) => ids.size > 1).length;
    const lost = [...eventIds].filter((eventId) => !applied.has(eventId)).length;
    const unknownApplied = [...applied].filter((eventId) => !eventIds.has(eventId)).length;
    const delivered = new Set(
      receiver.requests
        .filter((request) => applied.has(request.envelope.event_id))
        .map((request) => request.envelope.event_id),
    ).size;
    const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    console.log(
      [
        `exactly-once report (seed ${SEED}): published ${PUBLICATIONS} at ${PER_SECOND}/s, stored ${stored.length}, delivered ${delivered}, applied ${applied.size}`,
        `  duplicate effects ${duplicateEffects}, lost ${lost}, applied but never answered ${unknownApplied}`,
        `  publisher: ${figures.answers} answers (${figures.replayed} replayed), ${figures.inProgress} × 409 in progress, ${figures.networkErrors} network errors, ${figures.otherStatuses} other statuses`,
        `  receiver: ${receiver.requests.length} requests, ${faults.serverError} × 503, ${faults.tooMany} × 429, ${faults.reset} resets, ${faults.hang} hangs, ${faults.redirect} redirects, ${faults.redelivered} redeliveries answered 200 without effect`,
        `  kill -9 at ${seconds(killedAt - startedAt)}, healthy again ${seconds(restartedAt - killedAt)} later; all answered at ${seconds(publishedAt - startedAt)}, all applied at ${seconds(appliedAt - startedAt)}`,
      ].join('\n'),
    );
    expect(stored.length).toBe(PUBLICATIONS);
    expect(new Set(stored)).toEqual(eventIds);
    expect(applied.size).toBe(PUBLICATIONS);
    expect(delivered).toBe(PUBLICATIONS);
    expect(duplicateEffects).toBe(0);
    expect(lost).toBe(0);
    expect(unknownApplied).toBe(0);
    // No redirect was followed: the receiver never saw a request for the redirect's target.
    expect(receiver.requests.every((request) => request.path.startsWith('/webhooks/v1/'))).toBe(true);
  });
});
