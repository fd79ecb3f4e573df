/**
 * Spec rule 18 against a moving feed: 1 000 quotes (400 in a local `npm test`) on the local stack while the simulated feed publishes a new
 * `fx_version` every few (virtual) seconds; each buyer commits after a think time (log-normal, median 60 s, a
 * few beyond the 900 s lock). Prints the share committed inside the lock window (target ≥ 99 %) and the share
 * whose committed total equals the quoted total (100 %): a rate that moves after the quote never changes what
 * the buyer pays; a commit after the lock is refused with a fresh quote to confirm.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../functions/composition/local/stack';
import { rateIngestion } from '../../functions/composition/rates';
import type { Clock } from '../../functions/ports/clock';
import { startDemoStack } from '../support/demo-stack';
import { mulberry32 } from '../support/prng';
import { volume } from '../support/volume';

const API_KEY = 'key_fx_lock_0123456789abcdef';
const ADMIN_TOKEN = 'adm_fx_lock_0123456789abcdef';
/** 1 000 with `CI=true` (the acceptance), 400 in a local `npm test`; `FX_LOCK_QUOTES` overrides. */
const QUOTES = volume('FX_LOCK_QUOTES', { local: 400, ci: 1_000 });
const TICK_SECONDS = 5;

let offsetMs = 0;
const clock: Clock = { now: () => new Date(Date.now() + offsetMs) };
let stack: LocalStack;

beforeAll(async () => {
  stack = await startDemoStack({
    apiKey: API_KEY,
    adminToken: ADMIN_TOKEN,
    clock,
    ratePolicy: true,
    environment: { FX_TICK_SECONDS: String(TICK_SECONDS) },
    // The simulation runs ingestion itself at each virtual slot; the timer stays out of the way.
    ratesIntervalMs: 3_600_000,
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const post = async (path: string, body: unknown) => {
  const response = await fetch(`${stack.url}${path}`, {
    method: 'POST',
    headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

/** A buyer's think time in seconds: log-normal with median 60 s and σ = 1 (≈ 0.3 % beyond 900 s). */
const thinkSeconds = (uniform1: number, uniform2: number): number => {
  const normal = Math.sqrt(-2 * Math.log(1 - uniform1)) * Math.cos(2 * Math.PI * uniform2);
  return Math.round(60 * Math.exp(normal));
};

const BASKETS = [
  { region: 'DE', currency: 'BTC' },
  { region: 'US', currency: 'USD' },
  { region: 'US', currency: 'BTC' },
  { region: 'DE', currency: 'EUR' },
] as const;

describe('quotes against a moving feed (rule 18)', () => {
  it('commits inside the lock at the quoted total, whatever the rate does meanwhile', async () => {
    // A seeded uniform generator (fast-check's doubles are biased towards edge values on purpose).
    const uniform = mulberry32(1807);
    const random = Array.from(
      { length: QUOTES },
      () =>
        [
          uniform(),
          uniform(),
          Math.floor(uniform() * BASKETS.length),
          1 + Math.floor(uniform() * 3),
        ] as const,
    );
    const ingest = rateIngestion(stack.deps);
    const versions = new Set<string>();
    let lastSlot = -1;
    const tick = async () => {
      const slot = Math.floor(clock.now().getTime() / (TICK_SECONDS * 1000));
      if (slot === lastSlot) return;
      lastSlot = slot;
      const report = await ingest({ traceId: `trc_simulation_${slot}` });
      if (report?.fx_version) versions.add(report.fx_version);
    };
    const pending: { at: number; quote: Record<string, unknown> }[] = [];
    const outcomes = { inside: 0, expired: 0, equal: 0, committed: 0, refusedInside: 0 };
    const commitDue = async (until: number) => {
      pending.sort((a, b) => a.at - b.at);
      while (pending[0] && pending[0].at <= until) {
        const { at, quote } = pending.shift() as (typeof pending)[number];
        offsetMs += Math.max(0, at - clock.now().getTime());
        await tick();
        const inside = clock.now().getTime() < Date.parse(String(quote.expires_at));
        const committed = await post('/pricing/commit', {
          quote_id: quote.quote_id,
          signature: quote.signature,
        });
        if (committed.status === 201) {
          outcomes.committed += 1;
          if (inside) outcomes.inside += 1;
          const totals = committed.body.computed_totals as { total: string };
          if (totals.total === quote.total) outcomes.equal += 1;
        } else if (committed.status === 409 && committed.body.error === 'quote_expired') {
          outcomes.expired += 1;
          expect(committed.body.requote).toBeDefined();
        } else if (inside) {
          outcomes.refusedInside += 1;
        }
      }
    };

    for (const [u1, u2, basket, gap] of random) {
      const due = clock.now().getTime() + gap * 1000;
      await commitDue(due);
      offsetMs += Math.max(0, due - clock.now().getTime());
      await tick();
      const { region, currency } = BASKETS[basket] as (typeof BASKETS)[number];
      const quoted = await post('/pricing/quote', {
        items: [{ sku_id: 'GAME-STARFALL-PS5', quantity: 1 }],
        region,
        currency,
        buyer_type: 'consumer',
      });
      expect(quoted.status, JSON.stringify(quoted.body)).toBe(201);
      expect(quoted.body.fx_stale).toBe(false);
      pending.push({ at: clock.now().getTime() + thinkSeconds(u1, u2) * 1000, quote: quoted.body });
    }
    await commitDue(Number.POSITIVE_INFINITY);

    const insideShare = outcomes.inside / QUOTES;
    const equalShare = outcomes.equal / outcomes.committed;
    console.info(
      `fx lock simulation: ${QUOTES} quotes, ${versions.size} fx versions published meanwhile; ` +
        `committed inside the lock window ${(insideShare * 100).toFixed(2)} % (target ≥ 99 %), ` +
        `expired ${outcomes.expired}; committed total = quoted total ${(equalShare * 100).toFixed(2)} % ` +
        `(${outcomes.equal}/${outcomes.committed}, target 100 %)`,
    );
    expect(versions.size).toBeGreaterThan(50);
    expect(outcomes.refusedInside).toBe(0);
    expect(outcomes.inside + outcomes.expired).toBe(QUOTES);
    expect(insideShare).toBeGreaterThanOrEqual(0.99);
    expect(outcomes.equal).toBe(outcomes.committed);
  });
});
