/**
 * The totals per currency of a set of exported documents (a day's, in its manifest; several days', in the
 * offline verification's report): decimals in minor units, never floats (C1).
 */
import type { Json } from '../../money/canonical';
import { DECIMAL_STRING, Decimal } from '../../money/decimal';
import { type ExportDocument, isJsonObject, requiredText } from './documents';
import { ExportFormatError } from './errors';

/**
 * One currency's figures over a set of documents. `gross`: Σ receipt totals; `refunds`: Σ `net` of returns (what
 * was paid back, after the refund fee); `chargebacks`: Σ `net` of chargebacks; `net` = gross − refunds −
 * chargebacks. Counts beside them. Amounts are decimal strings with the currency's decimals (the most any of
 * its amounts has).
 */
export interface CurrencyTotals {
  readonly receipts: number;
  readonly gross: string;
  readonly refunds_count: number;
  readonly refunds: string;
  readonly chargebacks_count: number;
  readonly chargebacks: string;
  readonly net: string;
}

const amountOf = (value: Json | undefined, what: string): string => {
  if (typeof value !== 'string' || !DECIMAL_STRING.test(value)) {
    throw new ExportFormatError(`${what} is not a decimal amount: ${JSON.stringify(value ?? null)}`);
  }
  return value;
};

const decimalsOf = (amount: string): number => amount.split('.')[1]?.length ?? 0;

/** What a document adds to its currency's totals. */
const contributionOf = (
  item: Pick<ExportDocument, 'type' | 'id' | 'document'>,
): { currency: string; amount: string } => {
  const { document } = item;
  if (item.type === 'receipt') {
    const totals = document.computed_totals;
    if (!isJsonObject(totals)) throw new ExportFormatError(`receipt ${item.id} has no computed_totals`);
    return {
      currency: requiredText(totals, 'currency', `receipt ${item.id}`),
      amount: amountOf(totals.total, `the total of receipt ${item.id}`),
    };
  }
  return {
    currency: requiredText(document, 'currency', `refund ${item.id}`),
    amount: amountOf(document.net, `the net of refund ${item.id}`),
  };
};

/** Totals per currency (sorted by currency) of a set of documents. */
export const totalsOf = (
  items: readonly Pick<ExportDocument, 'type' | 'id' | 'document'>[],
): Record<string, CurrencyTotals> => {
  interface Running {
    receipts: number;
    gross: Decimal;
    refunds_count: number;
    refunds: Decimal;
    chargebacks_count: number;
    chargebacks: Decimal;
    decimals: number;
  }
  const running = new Map<string, Running>();
  for (const item of items) {
    const { currency, amount } = contributionOf(item);
    const current = running.get(currency) ?? {
      receipts: 0,
      gross: new Decimal(0),
      refunds_count: 0,
      refunds: new Decimal(0),
      chargebacks_count: 0,
      chargebacks: new Decimal(0),
      decimals: 0,
    };
    const value = new Decimal(amount);
    current.decimals = Math.max(current.decimals, decimalsOf(amount));
    if (item.type === 'receipt') {
      current.receipts += 1;
      current.gross = current.gross.plus(value);
    } else if (item.type === 'refund') {
      current.refunds_count += 1;
      current.refunds = current.refunds.plus(value);
    } else {
      current.chargebacks_count += 1;
      current.chargebacks = current.chargebacks.plus(value);
    }
    running.set(currency, current);
  }
  const totals: Record<string, CurrencyTotals> = {};
  for (const currency of [...running.keys()].sort()) {
    const sums = running.get(currency) as Running;
    const format = (value: Decimal) => value.toFixed(sums.decimals);
    totals[currency] = {
      receipts: sums.receipts,
      gross: format(sums.gross),
      refunds_count: sums.refunds_count,
      refunds: format(sums.refunds),
      chargebacks_count: sums.chargebacks_count,
      chargebacks: format(sums.chargebacks),
      net: format(sums.gross.minus(sums.refunds).minus(sums.chargebacks)),
    };
  }
  return totals;
};

/** Adds up per-currency totals (of several days), keeping each currency's decimals. */
export const sumTotals = (
  parts: readonly Readonly<Record<string, CurrencyTotals>>[],
): Record<string, CurrencyTotals> => {
  const merged = new Map<string, CurrencyTotals>();
  for (const part of parts) {
    for (const [currency, totals] of Object.entries(part)) {
      const before = merged.get(currency);
      if (!before) {
        merged.set(currency, totals);
        continue;
      }
      const decimals = Math.max(decimalsOf(before.gross), decimalsOf(totals.gross));
      const add = (a: string, b: string) => new Decimal(a).plus(new Decimal(b)).toFixed(decimals);
      merged.set(currency, {
        receipts: before.receipts + totals.receipts,
        gross: add(before.gross, totals.gross),
        refunds_count: before.refunds_count + totals.refunds_count,
        refunds: add(before.refunds, totals.refunds),
        chargebacks_count: before.chargebacks_count + totals.chargebacks_count,
        chargebacks: add(before.chargebacks, totals.chargebacks),
        net: add(before.net, totals.net),
      });
    }
  }
  return Object.fromEntries([...merged.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));
};
