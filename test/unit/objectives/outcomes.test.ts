import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../../functions/domain/receipts/receipt';
import type { AttemptRecord } from '../../../functions/ports/webhooks';
import type { DeliveryMessage } from '../../../functions/schemas/envelope';
import { commitOutcomeOf } from '../../../functions/usecases/objectives/commit-outcome';
import { deliveryAttemptOutcome } from '../../../functions/usecases/objectives/delivery-outcome';

const quote: JsonObject = {
  quote_id: 'q_1',
  currency: 'EUR',
  total: '119.00',
  expires_at: '2026-11-22T10:15:00.000Z',
};

const receipt: JsonObject = {
  receipt_id: 'rcpt_1',
  pricelist_version: 3,
  fx_version: 'fx-7',
  tax_rule_version: 2,
  computed_totals: { currency: 'EUR', subtotal: '100.00', total: '119.00' },
  hash: 'sha256:0f',
  signature: 'MEUCIQ==',
};

const at = (iso: string) => new Date(iso);

describe('commitOutcomeOf', () => {
  it('a receipt with the quote’s total, inside the lock, with versions and signature', () => {
    expect(commitOutcomeOf(quote, receipt, at('2026-11-22T10:14:59.999Z'))).toEqual({
      totalsEqual: true,
      insideLockWindow: true,
      signedWithVersions: true,
    });
  });

  it('compares amounts as decimals, in the same currency', () => {
    const totals = (total: string, currency = 'EUR') => ({
      ...receipt,
      computed_totals: { currency, total },
    });
    const now = at('2026-11-22T10:00:00.000Z');
    expect(commitOutcomeOf(quote, totals('119.0'), now).totalsEqual).toBe(true);
    expect(commitOutcomeOf(quote, totals('119.01'), now).totalsEqual).toBe(false);
    expect(commitOutcomeOf(quote, totals('119.00', 'USD'), now).totalsEqual).toBe(false);
    expect(commitOutcomeOf(quote, { ...receipt, computed_totals: null }, now).totalsEqual).toBe(false);
    expect(commitOutcomeOf({ ...quote, total: 'n/a' }, receipt, now).totalsEqual).toBe(false);
  });

  it('equal totals are equal and any other amount is a mismatch (property)', () => {
    const amount = fc
      .tuple(fc.integer({ min: 0, max: 10_000_000 }), fc.integer({ min: 0, max: 99 }))
      .map(([units, cents]) => `${units}.${String(cents).padStart(2, '0')}`);
    fc.assert(
      fc.property(amount, amount, (quoted, committed) => {
        const outcome = commitOutcomeOf(
          { ...quote, total: quoted },
          { ...receipt, computed_totals: { currency: 'EUR', total: committed } },
          at('2026-11-22T10:00:00.000Z'),
        );
        expect(outcome.totalsEqual).toBe(quoted === committed);
      }),
    );
  });

  it('the lock window ends at expires_at', () => {
    expect(commitOutcomeOf(quote, receipt, at('2026-11-22T10:15:00.000Z')).insideLockWindow).toBe(false);
    expect(
      commitOutcomeOf({ ...quote, expires_at: null }, receipt, at('2026-11-22T10:00:00.000Z')),
    ).toMatchObject({
      insideLockWindow: false,
    });
  });

  it.each(['pricelist_version', 'fx_version', 'tax_rule_version', 'hash', 'signature'])(
    'a receipt without %s is not signed with its versions',
    (field) => {
      const { [field]: _removed, ...without } = receipt;
      expect(commitOutcomeOf(quote, without, at('2026-11-22T10:00:00.000Z')).signedWithVersions).toBe(false);
      expect(
        commitOutcomeOf(quote, { ...receipt, [field]: '' }, at('2026-11-22T10:00:00.000Z'))
          .signedWithVersions,
      ).toBe(false);
    },
  );

  it('a hash that is not sha256: does not count as signed', () => {
    expect(
      commitOutcomeOf(quote, { ...receipt, hash: 'md5:00' }, at('2026-11-22T10:00:00.000Z'))
        .signedWithVersions,
    ).toBe(false);
  });
});

const message = (overrides: Partial<DeliveryMessage> = {}): DeliveryMessage => ({
  event_id: 'evt_01JD0000000000000000000000',
  endpoint_id: 'ep_01JD0000000000000000000000',
  attempt: 1,
  round_start: 1,
  ...overrides,
});

const attempt = (overrides: Partial<AttemptRecord> = {}): AttemptRecord => ({
  attempt: 1,
  at: '2026-11-22T10:00:00.000Z',
  duration_ms: 84,
  http_status: 200,
  outcome: 'delivered',
  ...overrides,
});

/** Attempt 1 needs no read: a delivery record lookup here is a defect. */
const noReads = {
  get: async () => {
    throw new Error('attempt 1 needs no delivery record');
  },
};

describe('deliveryAttemptOutcome (first attempts and replays: no I/O)', () => {
  it('attempt 1 answered 2xx: a first-attempt success measured by its own exchange', async () => {
    expect(await deliveryAttemptOutcome(noReads, message(), attempt())).toEqual({
      firstAttempt: true,
      success: true,
      msSinceFirstAttempt: 84,
    });
  });

  it.each([
    ['retry', 503],
    ['stopped', 404],
    ['dead', 500],
  ] as const)('attempt 1 ending %s is a first-attempt failure', async (outcome, status) => {
    expect(
      await deliveryAttemptOutcome(noReads, message(), attempt({ outcome, http_status: status })),
    ).toEqual({ firstAttempt: true, success: false });
  });

  it('a later attempt that fails counts for nothing', async () => {
    expect(
      await deliveryAttemptOutcome(
        noReads,
        message({ attempt: 3 }),
        attempt({ attempt: 3, outcome: 'retry' }),
      ),
    ).toEqual({ firstAttempt: false, success: false });
  });

  it('a replay’s attempts are never first attempts and have no latency', async () => {
    const replay = message({ attempt: 1, round_start: 1, replay_id: 'rpl_1' });
    expect(await deliveryAttemptOutcome(noReads, replay, attempt())).toEqual({
      firstAttempt: false,
      success: true,
    });
  });
});
