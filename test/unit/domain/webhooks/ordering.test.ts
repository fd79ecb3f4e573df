import { describe, expect, it } from 'vitest';
import { isOrderingKeySpec, orderingKeyOf } from '../../../../functions/domain/webhooks/ordering';
import { endpointOrderingSchema } from '../../../../functions/schemas/webhooks';
import { KeyedTurns } from '../../../../functions/shared/concurrency';

const event = (data: Record<string, unknown>, tenant?: string) => ({
  type: 'payout.processed',
  ...(tenant !== undefined ? { tenant } : {}),
  data,
});

describe('ordering keys (C31 ordering)', () => {
  it('orders a whole endpoint by one key, by tenant, or by a data field (JSON: 1 and "1" differ)', () => {
    expect(orderingKeyOf({ key: 'endpoint' }, event({ payout_id: 'po_1' }, 't1'))).toBe('endpoint');
    expect(orderingKeyOf({ key: 'tenant' }, event({}, 't1'))).toBe('tenant="t1"');
    expect(orderingKeyOf({ key: 'data.payout_id' }, event({ payout_id: 'po_1' }))).toBe(
      'data.payout_id="po_1"',
    );
    expect(orderingKeyOf({ key: 'data.payout_id' }, event({ payout_id: 1 }))).toBe('data.payout_id=1');
    expect(orderingKeyOf({ key: 'data.a.b' }, event({ a: { b: true } }))).toBe('data.a.b=true');
  });

  it('puts every event without the value under one key of its own', () => {
    expect(orderingKeyOf({ key: 'tenant' }, event({}))).toBe('tenant');
    expect(orderingKeyOf({ key: 'data.payout_id' }, event({ other: 1 }))).toBe('data.payout_id');
  });

  it('hashes a value too long to be a key', () => {
    const key = orderingKeyOf({ key: 'data.blob' }, event({ blob: 'x'.repeat(500) }));
    expect(key).toMatch(/^data\.blob#sha256=[0-9a-f]{64}$/);
    expect(orderingKeyOf({ key: 'data.blob' }, event({ blob: 'x'.repeat(500) }))).toBe(key);
  });

  it('accepts endpoint, tenant and data.<dotted field> only, and says so', () => {
    for (const key of ['endpoint', 'tenant', 'data.payout_id', 'data.a.b-c_d'])
      expect(isOrderingKeySpec(key)).toBe(true);
    for (const key of [
      'data',
      'data.',
      'payout_id',
      'type',
      'data.a..b',
      'data.a b',
      `data${'.a'.repeat(9)}`,
    ])
      expect(isOrderingKeySpec(key)).toBe(false);
    const refused = endpointOrderingSchema.safeParse({ key: 'payout_id' });
    expect(refused.success).toBe(false);
    expect(refused.error?.issues[0]).toMatchObject({ path: ['key'] });
    expect(endpointOrderingSchema.safeParse({ key: 'tenant', extra: 1 }).success).toBe(false);
  });
});

describe('KeyedTurns', () => {
  it('runs turns of one key in the order they were taken, other keys alongside', async () => {
    const turns = new KeyedTurns();
    const log: string[] = [];
    const run = async (key: string, name: string, ms: number) => {
      const turn = turns.take(key);
      await turn.ready;
      log.push(`${name} start`);
      await new Promise((resolve) => setTimeout(resolve, ms));
      log.push(`${name} end`);
      turn.done();
    };
    await Promise.all([run('a', 'a1', 30), run('a', 'a2', 1), run('b', 'b1', 5), run('a', 'a3', 1)]);
    expect(log.filter((line) => line.startsWith('a'))).toEqual([
      'a1 start',
      'a1 end',
      'a2 start',
      'a2 end',
      'a3 start',
      'a3 end',
    ]);
    expect(log.indexOf('b1 end')).toBeLessThan(log.indexOf('a1 end'));
  });
});
