/**
 * FX ingestion on the local stack (demo catalog with its rate policy, `FX_TICK_SECONDS=2`): the simulated feed
 * publishes a new `fx_version` every few seconds and each one reaches a registered endpoint as a signed
 * `catalog.FXRatePublished` event and a journal entry; a tick beyond the per-tick cap is held and opens a change
 * request; a source outage opens the breaker, quotes then use the last valid rate flagged stale, then are refused
 * past the maximum age, and the breaker closes after recovery.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../functions/composition/local/stack';
import { verifyJournalExport } from '../../functions/domain/audit/journal-verify';
import type { Clock } from '../../functions/ports/clock';
import { adminRequest } from '../support/change-requests';
import { startDemoStack } from '../support/demo-stack';
import { eventually } from '../support/engines';
import { signedBy, startReceiver, type TestReceiver } from '../support/webhook-receiver';

const API_KEY = 'key_fx_ingestion_0123456789ab';
const ADMIN_TOKEN = 'adm_fx_ingestion_0123456789ab';

let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
let stack: LocalStack;
let receiver: TestReceiver;
let secret = '';

const admin = (method: string, path: string, body?: unknown) =>
  adminRequest(stack.url, ADMIN_TOKEN, method, path, body);

const quote = async (currency: string) => {
  const response = await fetch(`${stack.url}/pricing/quote`, {
    method: 'POST',
    headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
    body: JSON.stringify({
      items: [{ sku_id: 'GAME-STARFALL-PS5', quantity: 1 }],
      region: 'DE',
      currency,
      buyer_type: 'consumer',
    }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

const fxEvents = () =>
  receiver.requests.filter((request) => request.envelope.type === 'catalog.FXRatePublished');

const feed = () => {
  const simulated = stack.deps.rates.simulated.feed;
  if (!simulated) throw new Error('the simulated feed starts with the first ingestion run');
  return simulated;
};

beforeAll(async () => {
  receiver = await startReceiver();
  stack = await startDemoStack({
    apiKey: API_KEY,
    adminToken: ADMIN_TOKEN,
    clock,
    ratePolicy: true,
    environment: { FX_TICK_SECONDS: '2', JOURNAL_SLICE_SIZE: '4' },
    streamPollIntervalMs: 50,
  });
  const created = await admin('POST', '/webhooks/endpoints', { url: receiver.baseUrl, topics: ['catalog'] });
  expect(created.status).toBe(201);
  secret = String(created.body.secret);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

describe('the simulated feed on the local stack', () => {
  it('publishes a new fx_version every few seconds, each delivered as a signed catalog.FXRatePublished event', async () => {
    const events = await eventually(async () => (fxEvents().length >= 3 ? fxEvents() : undefined), {
      timeoutMs: 30_000,
      intervalMs: 200,
    });
    const versions = events.map((event) => String((event.envelope.data as { version: string }).version));
    expect(new Set(versions).size).toBe(versions.length);
    for (const event of events) {
      expect(signedBy(event, secret)).toBe(true);
      expect(event.envelope).toMatchObject({
        producer: 'catalog',
        fx_version: expect.stringMatching(/^fx-\d+$/),
      });
    }
    const exported = await admin('GET', '/admin/catalog/export');
    const rates = (exported.body.fx_rates as { rates: { pair: string; source: string }[] }).rates;
    expect(rates.find((rate) => rate.pair === 'EUR→BTC')?.source).toBe('simulated-crypto');

    // Every automatic publication is a journal entry; sealed slices verify with the service's keys.
    const journal = await eventually(
      async () => {
        const answer = await admin('GET', '/audit/journal/export');
        const ids = (answer.body.entries as { entry_id: string }[]).map((entry) => entry.entry_id);
        return versions.slice(0, 2).every((version) => ids.includes(`fx-publication:${version}`))
          ? answer.body
          : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const keys = await (await fetch(`${stack.url}/keys`)).json();
    expect(verifyJournalExport(journal, keys as { keys: [] }).ok).toBe(true);
  });
});

describe('rate protection', () => {
  it('holds a tick beyond the per-tick cap and opens a change request for people to decide', async () => {
    feed().setSpike('EUR→BTC', 1_000);
    try {
      const held = await eventually(
        async () => {
          const listed = await admin('GET', '/admin/change-requests?status=pending_approval');
          return (listed.body.items as Record<string, unknown>[]).find(
            (request) => request.author === 'system:fx-ingestion',
          );
        },
        { timeoutMs: 30_000, intervalMs: 200 },
      );
      expect(held).toMatchObject({ kind: 'fx_rates', status: 'pending_approval' });
      expect(String(held.note)).toContain('EUR→BTC');
      expect((held.guardrails as { code: string }[]).map((finding) => finding.code)).toContain('rate_move');
      const detail = await admin('GET', `/admin/change-requests/${String(held.cr_id)}`);
      const moved = (detail.body.diff as { fx_rates: { pair: string; move_percent: string }[] }).fx_rates;
      expect(moved.map((change) => change.pair)).toEqual(['EUR→BTC']);
    } finally {
      feed().setSpike('EUR→BTC', undefined);
    }
  });

  it('opens the breaker on an outage; quotes use the last valid rate flagged stale, then are refused; it closes after recovery', async () => {
    const fresh = await eventually(
      async () => {
        const answer = await quote('BTC');
        return answer.status === 201 && answer.body.fx_stale === false ? answer : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    expect(fresh.body.fx_age_seconds).toBeLessThan(180);

    feed().setOutage('all');
    try {
      // Three failed runs within the window open the breaker (demo policy: failure_threshold 3).
      await eventually(
        async () => {
          const answer = await admin('GET', '/audit/journal/export');
          const ids = (answer.body.entries as { entry_id: string }[]).map((entry) => entry.entry_id);
          return ids.some((id) => id.includes('EUR-BTC') && id.endsWith(':breaker-open')) ? true : undefined;
        },
        { timeoutMs: 45_000, intervalMs: 200 },
      ).catch(async () => {
        // The entry may wait for its slice: the rate state records the breaker too.
        const state = await stack.deps.rates.state.get('EUR→BTC');
        expect(state.breaker.status).toBe('open');
      });
      const state = await stack.deps.rates.state.get('EUR→BTC');
      expect(state.breaker.status).not.toBe('closed');

      offsetMs += 200_000; // past stale_after_seconds (180 s)
      const stale = await quote('BTC');
      expect(stale.status).toBe(201);
      expect(stale.body).toMatchObject({ fx_stale: true, fx_version: fresh.body.fx_version });
      expect(Number(stale.body.fx_age_seconds)).toBeGreaterThan(180);

      offsetMs += 800_000; // past max_age_seconds (900 s)
      const refused = await quote('BTC');
      expect(refused.status).toBe(422);
      expect(refused.body).toMatchObject({ error: 'currency_not_available', reason: 'stale_rate' });
      // Other currencies are not affected.
      expect((await quote('EUR')).status).toBe(201);
    } finally {
      feed().setOutage(undefined);
    }
    // After open_seconds the breaker lets a probe through; it succeeds, the breaker closes, the rate is fresh.
    const recovered = await eventually(
      async () => {
        const answer = await quote('BTC');
        return answer.status === 201 && answer.body.fx_stale === false ? answer : undefined;
      },
      { timeoutMs: 45_000, intervalMs: 200 },
    );
    expect(recovered.body.fx_version).not.toBe(fresh.body.fx_version);
    expect((await stack.deps.rates.state.get('EUR→BTC')).breaker.status).toBe('closed');
  });
});
