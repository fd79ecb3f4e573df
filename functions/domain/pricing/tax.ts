import { allocate } from '../money/allocation';
import { formatAmount, fromMinor, toMinor } from '../money/currency';
import { type Decimal, dec, ONE, sum, ZERO } from '../money/decimal';
import { round, step } from '../money/rounding';
import { type ExplainTrace, figure } from './explain';
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
  trace?: ExplainTrace,
): LineTax[][] => {
  if (!rule || !chargesTax(rule, buyerType)) {
    if (trace) {
      explainNoTax(
        trace,
        lines,
        minorUnits,
        rule
          ? `business buyer under reverse_charge in ${rule.region}: no tax charged, tax-inclusive prices net of tax`
          : 'no tax rule for this region: no tax',
        rule,
      );
    }
    return lines.map(() => []);
  }
  const taxable = sum(lines.map((line) => line.amount));
  if (thresholdInCurrency && taxable.lessThan(thresholdInCurrency)) {
    if (trace) {
      explainNoTax(
        trace,
        lines,
        minorUnits,
        `the taxable amount ${figure(taxable)} is below the rule's threshold ${figure(thresholdInCurrency)} ` +
          `(${rule.threshold?.amount} ${rule.threshold?.currency}): no tax`,
        rule,
        { taxable: figure(taxable), threshold: figure(thresholdInCurrency) },
      );
    }
    return lines.map(() => []);
  }
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

  let result: LineTax[][];
  if (level === 'per_unit') result = exact;
  else if (level === 'per_line')
    result = exact.map((taxes) => taxes.map((tax) => ({ ...tax, amount: roundTax(tax.amount) })));
  else {
    // per_basket: round each (component, class) once for the basket, then spread it over its lines.
    const groups = new Map<string, { line: number; index: number; amount: Decimal }[]>();
    exact.forEach((taxes, line) => {
      taxes.forEach((tax, index) => {
        const key = `${tax.name}\u0000${tax.tax_class}`;
        groups.set(key, [...(groups.get(key) ?? []), { line, index, amount: tax.amount }]);
      });
    });
    const spread = exact.map((taxes) => taxes.map((tax) => ({ ...tax })));
    for (const [key, members] of groups) {
      const basketTax = roundTax(sum(members.map((member) => member.amount)));
      const weights = members.map((member) => member.amount.abs());
      const units = toMinor(basketTax, minorUnits);
      const parts = weights.every((weight) => weight.isZero())
        ? members.map(() => 0n)
        : allocate(units, weights);
      members.forEach((member, position) => {
        const target = (spread[member.line] as LineTax[])[member.index] as { amount: Decimal };
        target.amount = fromMinor(parts[position] as bigint, minorUnits);
      });
      if (trace) {
        const [name, taxClass] = key.split('\u0000') as [string, string];
        trace.add({
          step: 'taxes',
          rule: 'tax_basket_rounding',
          input: {
            name,
            tax_class: taxClass,
            exact: figure(sum(members.map((member) => member.amount))),
          },
          output: {
            amount: formatAmount(basketTax, minorUnits),
            lines: members.map((member, position) => ({
              line: member.line + 1,
              exact: figure(member.amount),
              amount: formatAmount(fromMinor(parts[position] as bigint, minorUnits), minorUnits),
            })),
          },
          detail:
            `per_basket: the basket's ${name} on class ${taxClass} is rounded once (${mode}), ` +
            'then spread over its lines by largest remainder of their exact taxes, ties by line order',
        });
      }
    }
    result = spread;
  }
  if (trace) explainTaxes(trace, { lines, rule, exact, result, taxable, minorUnits }, thresholdInCurrency);
  return result;
};

/** Step 3 explained when no tax is charged: the reason, and each line unchanged (so the lines still chain). */
const explainNoTax = (
  trace: ExplainTrace,
  lines: readonly TaxableLine[],
  minorUnits: number,
  detail: string,
  rule: TaxRule | undefined,
  figures: Readonly<Record<string, string>> = {},
): void => {
  trace.add({
    step: 'taxes',
    rule: 'tax_rule',
    input: { ...figures, ...(rule ? { region: rule.region } : {}) },
    output: {
      charged: false,
      ...(rule
        ? {
            tax_mode: { type: rule.tax_mode.type, inclusion: rule.tax_mode.inclusion },
            rounding: { mode: rule.rounding.mode, level: rule.rounding.level },
          }
        : {}),
    },
    detail,
  });
  lines.forEach((line, index) => {
    trace.add({
      step: 'taxes',
      rule: 'tax',
      line: index + 1,
      input: { amount: figure(line.amount), tax_class: line.tax_class },
      output: { amount: figure(line.amount), tax: formatAmount(ZERO, minorUnits), taxes: [] },
      detail: 'no tax',
    });
  });
};

/** Step 3 explained: the rule (mode, rounding level) for the basket, then each line's components. */
const explainTaxes = (
  trace: ExplainTrace,
  computed: {
    readonly lines: readonly TaxableLine[];
    readonly rule: TaxRule;
    readonly exact: readonly (readonly LineTax[])[];
    readonly result: readonly (readonly LineTax[])[];
    readonly taxable: Decimal;
    readonly minorUnits: number;
  },
  threshold: Decimal | undefined,
): void => {
  const { lines, rule, exact, result, taxable, minorUnits } = computed;
  const money = (value: Decimal) => formatAmount(value, minorUnits);
  const included = rule.tax_mode.inclusion === 'included';
  const { mode, level } = rule.rounding;
  trace.add({
    step: 'taxes',
    rule: 'tax_rule',
    input: {
      region: rule.region,
      taxable: figure(taxable),
      ...(threshold ? { threshold: figure(threshold) } : {}),
    },
    output: {
      charged: true,
      tax_mode: { type: rule.tax_mode.type, inclusion: rule.tax_mode.inclusion },
      rounding: { mode, level },
    },
    detail:
      `${rule.tax_mode.type} ${rule.tax_mode.inclusion} in ${rule.region}` +
      (included ? ' (extracted from the price: gross × r / (1 + r))' : ' (added on top of the price)') +
      `; rounded ${mode} ${level}` +
      (threshold ? `; the taxable amount reaches the threshold ${figure(threshold)}` : ''),
  });
  lines.forEach((line, index) => {
    const components = rule.rates[line.tax_class] ?? [];
    const { rates } = componentRates(components);
    const taxes = result[index] as readonly LineTax[];
    const excluded = sum(taxes.filter((tax) => !tax.included).map((tax) => tax.amount));
    trace.add({
      step: 'taxes',
      rule: 'tax',
      line: index + 1,
      input: { amount: figure(line.amount), tax_class: line.tax_class },
      output: {
        amount: figure(line.amount.plus(excluded)),
        tax: money(sum(taxes.map((tax) => tax.amount))),
        taxes: taxes.map((tax, position) => ({
          name: tax.name,
          rate: tax.rate,
          effective_rate: figure(rates[position] as Decimal),
          ...(components[position]?.compound ? { compound: true } : {}),
          included: tax.included,
          exact: figure(((exact[index] as readonly LineTax[])[position] as LineTax).amount),
          amount: money(tax.amount),
        })),
      },
      detail:
        components.length === 0
          ? `class ${line.tax_class} is not taxed in ${rule.region}`
          : `${components.map((component) => `${component.name} ${component.rate}${component.compound ? ' (compound)' : ''}`).join(' + ')}` +
            `, ${included ? 'included' : 'excluded'}, rounded ${mode} ${level}`,
    });
  });
};
