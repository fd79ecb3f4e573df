import { Decimal, dec } from '../money/decimal';
import { step } from '../money/rounding';
import type { BasketRequest, FeeSchedule, MoneyInput, PaymentFee } from './types';

export interface Fee {
  readonly kind: string;
  /** Exact amount in the basket currency (9 decimals). */
  readonly amount: Decimal;
}

export interface FeeContext {
  readonly request: BasketRequest;
  /** Amount the fees are charged on: the goods after discounts and taxes (step 4 comes after step 3). */
  readonly goodsTotal: Decimal;
  readonly isCrypto: boolean;
  readonly freeShipping: boolean;
  readonly convert: (money: MoneyInput) => Decimal;
}

/** The payment fee for the request's method and provider: both matching, then provider, then method, then any. */
export const choosePaymentFee = (
  fees: readonly PaymentFee[],
  payment: BasketRequest['payment'],
): PaymentFee | undefined => {
  let best: { fee: PaymentFee; score: number } | undefined;
  for (const fee of fees) {
    if (fee.method !== undefined && fee.method !== payment?.method) continue;
    if (fee.provider !== undefined && fee.provider !== payment?.provider) continue;
    const score = (fee.provider !== undefined ? 2 : 0) + (fee.method !== undefined ? 1 : 0);
    if (!best || score > best.score) best = { fee, score };
  }
  return best?.fee;
};

/**
 * Step 4, fees: payment (percent of the goods total + a fixed part), cross-border (percent, when the buyer's
 * region is not domestic), crypto network fee (fixed, in the crypto currency), shipping (waived by a
 * free-shipping threshold promotion), and any fees supplied at checkout. Fees are not taxed.
 */
export const computeFees = (schedule: FeeSchedule | undefined, context: FeeContext): Fee[] => {
  const { request, goodsTotal } = context;
  const fees: Fee[] = [];
  const payment = choosePaymentFee(schedule?.payment ?? [], request.payment);
  if (payment) {
    const percentPart = goodsTotal.times(dec(payment.percent)).dividedBy(100);
    const fixedPart = payment.fixed ? context.convert(payment.fixed) : new Decimal(0);
    fees.push({ kind: 'payment', amount: step(percentPart.plus(fixedPart)) });
  }
  const crossBorder = schedule?.cross_border;
  if (crossBorder && !crossBorder.domestic_regions.includes(request.region)) {
    fees.push({
      kind: 'cross_border',
      amount: step(goodsTotal.times(dec(crossBorder.percent)).dividedBy(100)),
    });
  }
  const network = context.isCrypto ? schedule?.network?.[request.currency] : undefined;
  if (network) fees.push({ kind: 'network', amount: step(dec(network)) });
  const shipping = schedule?.shipping?.[request.region] ?? schedule?.shipping?.['*'];
  if (shipping && !context.freeShipping)
    fees.push({ kind: 'shipping', amount: step(context.convert(shipping)) });
  for (const fee of request.checkout_fees ?? []) fees.push({ kind: fee.kind, amount: step(dec(fee.amount)) });
  return fees.filter((fee) => !fee.amount.isZero());
};
