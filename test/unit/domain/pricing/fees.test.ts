import { describe, expect, it } from 'vitest';
import { dec } from '../../../../functions/domain/money/decimal';
import { choosePaymentFee, computeFees, type FeeContext } from '../../../../functions/domain/pricing/fees';
import type {
  BasketRequest,
  FeeSchedule,
  MoneyInput,
  PaymentFee,
} from '../../../../functions/domain/pricing/types';

const request = (overrides: Partial<BasketRequest> = {}): BasketRequest => ({
  items: [{ sku_id: 'sku_a', quantity: 1 }],
  region: 'DE',
  currency: 'EUR',
  buyer_type: 'consumer',
  ...overrides,
});

/** USD amounts convert at 2; EUR amounts stay. */
const context = (overrides: Partial<FeeContext> = {}): FeeContext => ({
  request: request(),
  goodsTotal: dec('100'),
  isCrypto: false,
  freeShipping: false,
  convert: (money: MoneyInput) => (money.currency === 'EUR' ? dec(money.amount) : dec(money.amount).times(2)),
  ...overrides,
});

const fees = (schedule: FeeSchedule | undefined, overrides: Partial<FeeContext> = {}) =>
  computeFees(schedule, context(overrides)).map((fee) => [fee.kind, fee.amount.toString()]);

describe('choosePaymentFee', () => {
  const all: PaymentFee[] = [
    { percent: '1' },
    { method: 'card', percent: '2' },
    { provider: 'stripe', percent: '3' },
    { method: 'card', provider: 'stripe', percent: '4' },
  ];

  it('prefers method and provider, then provider, then method, then the catch-all', () => {
    expect(choosePaymentFee(all, { method: 'card', provider: 'stripe' })?.percent).toBe('4');
    expect(choosePaymentFee(all, { method: 'sepa', provider: 'stripe' })?.percent).toBe('3');
    expect(
      choosePaymentFee(all.slice(0, 2).concat(all[2] as PaymentFee), { method: 'card', provider: 'stripe' })
        ?.percent,
    ).toBe('3');
    expect(choosePaymentFee(all, { method: 'card', provider: 'adyen' })?.percent).toBe('2');
    expect(choosePaymentFee(all, { method: 'sepa' })?.percent).toBe('1');
    expect(choosePaymentFee(all, undefined)?.percent).toBe('1');
  });

  it('finds nothing when no fee matches', () => {
    expect(choosePaymentFee([{ method: 'card', percent: '2' }], undefined)).toBeUndefined();
    expect(choosePaymentFee([], { method: 'card' })).toBeUndefined();
  });

  it('keeps the first of two equally specific fees', () => {
    expect(
      choosePaymentFee(
        [
          { method: 'card', percent: '2' },
          { method: 'card', percent: '5' },
        ],
        { method: 'card' },
      )?.percent,
    ).toBe('2');
  });
});

describe('computeFees (step 4)', () => {
  it('charges nothing without a schedule', () => {
    expect(fees(undefined)).toEqual([]);
  });

  it('charges the payment percent of the goods total plus the fixed part', () => {
    expect(fees({ payment: [{ percent: '1.5', fixed: { amount: '0.25', currency: 'EUR' } }] })).toEqual([
      ['payment', '1.75'],
    ]);
  });

  it('converts the fixed part into the basket currency', () => {
    expect(fees({ payment: [{ percent: '0', fixed: { amount: '0.25', currency: 'USD' } }] })).toEqual([
      ['payment', '0.5'],
    ]);
  });

  it('charges the cross-border percent outside the domestic regions only', () => {
    const schedule: FeeSchedule = { cross_border: { percent: '2', domestic_regions: ['DE', 'AT'] } };
    expect(fees(schedule)).toEqual([]);
    expect(fees(schedule, { request: request({ region: 'US' }) })).toEqual([['cross_border', '2']]);
  });

  it('charges the network fee in the crypto currency, for crypto baskets only', () => {
    const schedule: FeeSchedule = { network: { BTC: '0.00002' } };
    expect(fees(schedule, { isCrypto: true, request: request({ currency: 'BTC' }) })).toEqual([
      ['network', '0.00002'],
    ]);
    expect(fees(schedule, { isCrypto: false, request: request({ currency: 'BTC' }) })).toEqual([]);
    expect(fees(schedule, { isCrypto: true, request: request({ currency: 'ETH' }) })).toEqual([]);
  });

  it('charges shipping for the buyer region, else the `*` entry, converted', () => {
    const schedule: FeeSchedule = {
      shipping: { DE: { amount: '4.90', currency: 'EUR' }, '*': { amount: '10', currency: 'USD' } },
    };
    expect(fees(schedule)).toEqual([['shipping', '4.9']]);
    expect(fees(schedule, { request: request({ region: 'JP' }) })).toEqual([['shipping', '20']]);
    expect(
      fees({ shipping: { DE: { amount: '4.90', currency: 'EUR' } } }, { request: request({ region: 'JP' }) }),
    ).toEqual([]);
  });

  it('waives shipping under a free-shipping threshold promotion', () => {
    expect(fees({ shipping: { '*': { amount: '5', currency: 'EUR' } } }, { freeShipping: true })).toEqual([]);
  });

  it('adds the fees supplied at checkout', () => {
    expect(
      fees(undefined, {
        request: request({
          checkout_fees: [
            { kind: 'gift_wrap', amount: '2.50' },
            { kind: 'insurance', amount: '1' },
          ],
        }),
      }),
    ).toEqual([
      ['gift_wrap', '2.5'],
      ['insurance', '1'],
    ]);
  });

  it('lists fees in the order payment, cross-border, network, shipping, checkout', () => {
    const schedule: FeeSchedule = {
      payment: [{ percent: '1' }],
      cross_border: { percent: '1', domestic_regions: [] },
      network: { BTC: '0.0001' },
      shipping: { '*': { amount: '1', currency: 'EUR' } },
    };
    const result = fees(schedule, {
      isCrypto: true,
      request: request({ currency: 'BTC', checkout_fees: [{ kind: 'extra', amount: '1' }] }),
    });
    expect(result.map(([kind]) => kind)).toEqual(['payment', 'cross_border', 'network', 'shipping', 'extra']);
  });

  it('drops fees that come to zero', () => {
    const schedule: FeeSchedule = {
      payment: [{ percent: '0' }],
      cross_border: { percent: '0', domestic_regions: [] },
      shipping: { '*': { amount: '0', currency: 'EUR' } },
    };
    expect(
      fees(schedule, { request: request({ checkout_fees: [{ kind: 'none', amount: '0.00' }] }) }),
    ).toEqual([]);
  });

  it('keeps 9 decimals, BANKERS, and drops a fee that is zero at 9 decimals', () => {
    expect(fees({ payment: [{ percent: '1' }] }, { goodsTotal: dec('0.00000005') })).toEqual([]);
    expect(fees({ payment: [{ percent: '1' }] }, { goodsTotal: dec('0.123456789') })).toEqual([
      ['payment', '0.001234568'],
    ]);
  });
});
