import { allocate } from '../money/allocation';
import { fromMinor, toMinor } from '../money/currency';
import { type Decimal, dec, ONE, sum, ZERO } from '../money/decimal';
import { round, step } from '../money/rounding';
import type { TaxComponent, TaxRule } from './types';

export interface TaxableLine {
  readonly tax_class: string;
  readonly quantity: number;
  /** Line amount after discounts (9 decimals); tax-inclusive when the rule includes tax. */
  readonly amount: Decimal;
}

export interface LineTax {
  readonly name: string;
  readonly tax_class: string;
  /** The component's rate as the rule states it (e.g. "0.20"). */
  readonly rate: string;
  /** Rounded to minor units by the rule's mode at the rule's level. */
  readonly amount: Decimal;
  readonly included: boolean;
}

/** Whether tax is charged at all for this buyer (business buyers under reverse charge pay none). */
export const chargesTax = (rule: TaxRule | undefined, buyerType: 'consumer' | 'business'): boolean =>
  rule !== undefined && !(buyerType === 'business' && rule.business_buyers === 'reverse_charge');

/**
 * Tax per unit of net amount for each component, in order: a simple rate on the net amount, a compound rate on
 * the net amount plus the components before it (federal + state, or a tax on a tax). `factor` is gross / net.
 */
export const componentRates = (
  components: readonly TaxComponent[],
): { rates: Decimal[]; factor: Decimal } => {
  const rates: Decimal[] = [];
  let taxesSoFar = ZERO;
  for (const component of components) {
    const rate = dec(component.rate);
    const effective = component.compound ? ONE.plus(taxesSoFar).times(rate) : rate;
    rates.push(effective);
    taxesSoFar = taxesSoFar.plus(effective);
  }
  return { rates, factor: ONE.plus(taxesSoFar) };
};

/** Net amount of a tax-inclusive amount: gross / factor (spec: tax = gross × r / (1 + r)). */
export const netOf = (gross: Decimal, components: readonly TaxComponent[]): Decimal =>
  step(gross.dividedBy(componentRates(components).factor));

/**
 * Step 3, taxes. For each line and each component of its class: the exact tax (on the net amount; for included
 * tax, extracted from the gross as gross × r / (1 + r)), rounded with the rule's mode (HALF_UP, BANKERS, FLOOR or
 * CEIL) to minor units at the rule's level: per unit (then × quantity), per line, or per basket (the basket's
 * tax per component is rounded once and spread over the lines by largest remainder, ties by line order).
 * Below the rule's threshold (taxable basket amount), no tax is charged.
 */
export const computeTaxes = (
  lines: readonly TaxableLine[],
  rule: TaxRule | undefined,
  buyerType: 'consumer' | 'business',
  minorUnits: number,
  thresholdInCurrency: Decimal | undefined,
): LineTax[][] => {
  if (!rule || !chargesTax(rule, buyerType)) return lines.map(() => []);
  const taxable = sum(lines.map((line) => line.amount));
  if (thresholdInCurrency && taxable.lessThan(thresholdInCurrency)) return lines.map(() => []);
  const included = rule.tax_mode.inclusion === 'included';
  const { mode, level } = rule.rounding;
  const roundTax = (value: Decimal) => round(value, minorUnits, mode);

  const exact = lines.map((line) => {
    const components = rule.rates[line.tax_class] ?? [];
    const { rates, factor } = componentRates(components);
    const net = included ? line.amount.dividedBy(factor) : line.amount;
    return components.map((component, index) => {
      const rate = rates[index] as Decimal;
      const unitNet = net.dividedBy(line.quantity);
      const amount =
        level === 'per_unit'
          ? roundTax(step(unitNet.times(rate))).times(line.quantity)
          : step(net.times(rate));
      return { name: component.name, tax_class: line.tax_class, rate: component.rate, amount, included };
    });
  });

  if (level === 'per_unit') return exact;
  if (level === 'per_line')
    return exact.map((taxes) => taxes.map((tax) => ({ ...tax, amount: roundTax(tax.amount) })));

  // per_basket: round each (component, class) once for the basket, then spread it over its lines.
  const groups = new Map<string, { line: number; index: number; amount: Decimal }[]>();
  exact.forEach((taxes, line) => {
    taxes.forEach((tax, index) => {
      const key = `${tax.name}\u0000${tax.tax_class}`;
      groups.set(key, [...(groups.get(key) ?? []), { line, index, amount: tax.amount }]);
    });
  });
  const result = exact.map((taxes) => taxes.map((tax) => ({ ...tax })));
  for (const members of groups.values()) {
    const basketTax = roundTax(sum(members.map((member) => member.amount)));
    const weights = members.map((member) => member.amount.abs());
    const units = toMinor(basketTax, minorUnits);
    const parts = weights.every((weight) => weight.isZero())
      ? members.map(() => 0n)
      : allocate(units, weights);
    members.forEach((member, position) => {
      const target = (result[member.line] as LineTax[])[member.index] as { amount: Decimal };
      target.amount = fromMinor(parts[position] as bigint, minorUnits);
    });
  }
  return result;
};
