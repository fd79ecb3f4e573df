import { Decimal, dec } from '../money/decimal';
import { step } from '../money/rounding';
import { type ExplainFigures, type ExplainTrace, figure } from './explain';
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
  /** Only when explaining (C28). */
  readonly trace?: ExplainTrace;
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

/** One fee explained (C28): what it was charged on, its terms, its exact amount. */
const feeStep = (
  trace: ExplainTrace,
  goodsTotal: Decimal,
  rule: string,
  input: ExplainFigures,
  amount: Decimal,
  detail: string,
): void =>
  trace.add({
    step: 'fees',
    rule,
    input: { basket_total: figure(goodsTotal), ...input },
    output: { amount: figure(amount) },
    detail,
  });

/**
 * Step 4, fees: payment (percent of the goods total + a fixed part), cross-border (percent, when the buyer's
 * region is not domestic), crypto network fee (fixed, in the crypto currency), shipping (waived by a
 * free-shipping threshold promotion), and any fees supplied at checkout. Fees are not taxed.
 */
export const computeFees = (schedule: FeeSchedule | undefined, context: FeeContext): Fee[] => {
  const { request, goodsTotal, trace } = context;
  const fees: Fee[] = [];
  const payment = choosePaymentFee(schedule?.payment ?? [], request.payment);
  if (payment) {
    const percentPart = goodsTotal.times(dec(payment.percent)).dividedBy(100);
    const fixedPart = payment.fixed ? context.convert(payment.fixed) : new Decimal(0);
    const amount = step(percentPart.plus(fixedPart));
    fees.push({ kind: 'payment', amount });
    if (trace) {
      feeStep(
        trace,
        goodsTotal,
        'payment',
        {
          percent: payment.percent,
          ...(payment.fixed
            ? {
                fixed: figure(fixedPart),
                fixed_as_set: { amount: payment.fixed.amount, currency: payment.fixed.currency },
              }
            : {}),
          ...(payment.method !== undefined ? { method: payment.method } : {}),
          ...(payment.provider !== undefined ? { provider: payment.provider } : {}),
        },
        amount,
        `payment fee ${payment.percent} % of the basket after discounts and taxes` +
          (payment.fixed ? ` + ${payment.fixed.amount} ${payment.fixed.currency}` : '') +
          ` (the most specific fee for method ${request.payment?.method ?? '(none)'}, provider ` +
          `${request.payment?.provider ?? '(none)'})`,
      );
    }
  }
  const crossBorder = schedule?.cross_border;
  if (crossBorder && !crossBorder.domestic_regions.includes(request.region)) {
    const amount = step(goodsTotal.times(dec(crossBorder.percent)).dividedBy(100));
    fees.push({ kind: 'cross_border', amount });
    if (trace) {
      feeStep(
        trace,
        goodsTotal,
        'cross_border',
        {
          percent: crossBorder.percent,
          region: request.region,
          domestic_regions: [...crossBorder.domestic_regions],
        },
        amount,
        `${request.region} is not one of the domestic regions ${crossBorder.domestic_regions.join(', ')}`,
      );
    }
  }
  const network = context.isCrypto ? schedule?.network?.[request.currency] : undefined;
  if (network) {
    const amount = step(dec(network));
    fees.push({ kind: 'network', amount });
    if (trace)
      feeStep(
        trace,
        goodsTotal,
        'network',
        { currency: request.currency },
        amount,
        `network fee of ${request.currency}`,
      );
  }
  const shippingRegion = schedule?.shipping?.[request.region] ? request.region : '*';
  const shipping = schedule?.shipping?.[shippingRegion];
  if (shipping && !context.freeShipping) {
    const amount = step(context.convert(shipping));
    fees.push({ kind: 'shipping', amount });
    if (trace) {
      feeStep(
        trace,
        goodsTotal,
        'shipping',
        { region: shippingRegion, as_set: { amount: shipping.amount, currency: shipping.currency } },
        amount,
        `shipping to ${shippingRegion === '*' ? 'any other region (*)' : shippingRegion}: ${shipping.amount} ${shipping.currency}`,
      );
    }
  } else if (shipping && trace) {
    trace.add({
      step: 'fees',
      rule: 'shipping',
      input: {
        basket_total: figure(goodsTotal),
        region: shippingRegion,
        as_set: { amount: shipping.amount, currency: shipping.currency },
      },
      output: { amount: '0', waived: true },
      detail: 'waived: a free-shipping threshold is reached',
    });
  }
  for (const fee of request.checkout_fees ?? []) {
    const amount = step(dec(fee.amount));
    fees.push({ kind: fee.kind, amount });
    if (trace)
      feeStep(
        trace,
        goodsTotal,
        'checkout_fee',
        { kind: fee.kind },
        amount,
        `fee ${fee.kind} supplied at checkout`,
      );
  }
  if (trace && fees.length === 0 && !(shipping && context.freeShipping)) {
    trace.add({
      step: 'fees',
      rule: 'no_fee',
      input: { basket_total: figure(goodsTotal) },
      output: { amount: '0' },
      detail: 'no fee of the schedule in force applies',
    });
  }
  return fees.filter((fee) => !fee.amount.isZero());
};
