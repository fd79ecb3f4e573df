import type { AvailabilityRules, BasketRequest, DisplayRule } from './types';

export type Availability =
  | { readonly available: true }
  | { readonly available: false; readonly rule: string; readonly reason: string };

const refused = (rule: string, reason: string): Availability => ({ available: false, rule, reason });

type AvailabilityRequest = Pick<BasketRequest, 'region' | 'currency' | 'payment' | 'player_id'>;

type Check = (
  request: AvailabilityRequest,
  rules: AvailabilityRules,
  baseCurrency: string,
) => Availability | undefined;

/** Rule 12's checks after the region and its white-list, in their fixed order. */
const CHECKS: readonly Check[] = [
  ({ currency, region }, rules) => {
    const blocked = (rules.blocked_currencies ?? []).find(
      (block) => block.currency === currency && (!block.regions || block.regions.includes(region)),
    );
    return blocked
      ? refused('blocked_currency', `${currency} is blocked${blocked.regions ? ` in ${region}` : ''}`)
      : undefined;
  },
  ({ currency }, rules, baseCurrency) =>
    (rules.blocked_conversions ?? []).some((block) => block.from === baseCurrency && block.to === currency)
      ? refused('blocked_conversion', `conversion ${baseCurrency}→${currency} is not allowed`)
      : undefined,
  ({ currency, player_id }, rules) =>
    player_id &&
    (rules.player_blocks ?? []).some(
      (block) => block.player_id === player_id && block.currencies.includes(currency),
    )
      ? refused('player_block', `${currency} is not available to this player`)
      : undefined,
  ({ payment }, rules) =>
    payment?.bank && (rules.blocked_banks ?? []).includes(payment.bank)
      ? refused('blocked_bank', `bank ${payment.bank} is blocked`)
      : undefined,
  ({ payment }, rules) =>
    payment?.token && (rules.blocked_tokens ?? []).includes(payment.token)
      ? refused('blocked_token', `token ${payment.token} is blocked`)
      : undefined,
  ({ currency, payment }, rules) => {
    const provider = payment?.provider
      ? (rules.blocked_providers ?? []).find(
          (block) =>
            block.provider === payment.provider && (!block.currencies || block.currencies.includes(currency)),
        )
      : undefined;
    return provider
      ? refused('blocked_provider', `provider ${provider.provider} is blocked for ${currency}`)
      : undefined;
  },
];

const regionRefusal = (
  request: AvailabilityRequest,
  displayRule: DisplayRule | undefined,
): Availability | undefined => {
  if (!displayRule) return refused('region', `region ${request.region} is not served`);
  if (!displayRule.currency_whitelist.includes(request.currency))
    return refused('currency_whitelist', `${request.currency} is not offered in ${request.region}`);
  return undefined;
};

const AVAILABLE: Availability = { available: true };

/**
 * Rule 12: whether the basket currency may be used by this buyer, in this region, with this payment, and
 * converted from the catalog's base currency. The first rule that refuses is named.
 */
export const checkAvailability = (
  request: AvailabilityRequest,
  displayRule: DisplayRule | undefined,
  rules: AvailabilityRules,
  baseCurrency: string,
): Availability => {
  const region = regionRefusal(request, displayRule);
  if (region) return region;
  for (const check of CHECKS) {
    const refusal = check(request, rules, baseCurrency);
    if (refusal) return refusal;
  }
  return AVAILABLE;
};

/**
 * Every rule of rule 12 that refuses (C28: a refusal names all its reasons), in the order `checkAvailability`
 * meets them. Without a display rule for the region, the other rules are still checked.
 */
export const availabilityRefusals = (
  request: AvailabilityRequest,
  displayRule: DisplayRule | undefined,
  rules: AvailabilityRules,
  baseCurrency: string,
): { readonly rule: string; readonly reason: string }[] => {
  const found: { rule: string; reason: string }[] = [];
  const collect = (availability: Availability | undefined): void => {
    if (availability && !availability.available)
      found.push({ rule: availability.rule, reason: availability.reason });
  };
  collect(regionRefusal(request, displayRule));
  for (const check of CHECKS) collect(check(request, rules, baseCurrency));
  return found;
};
