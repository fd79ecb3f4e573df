import type { AvailabilityRules, BasketRequest, DisplayRule } from './types';

export type Availability =
  | { readonly available: true }
  | { readonly available: false; readonly rule: string; readonly reason: string };

const refused = (rule: string, reason: string): Availability => ({ available: false, rule, reason });

/**
 * Rule 12: whether the basket currency may be used by this buyer, in this region, with this payment, and
 * converted from the catalog's base currency. The first rule that refuses is named.
 */
export const checkAvailability = (
  request: Pick<BasketRequest, 'region' | 'currency' | 'payment' | 'player_id'>,
  displayRule: DisplayRule | undefined,
  rules: AvailabilityRules,
  baseCurrency: string,
): Availability => {
  const { currency, region } = request;
  if (!displayRule) return refused('region', `region ${region} is not served`);
  if (!displayRule.currency_whitelist.includes(currency)) {
    return refused('currency_whitelist', `${currency} is not offered in ${region}`);
  }
  const blockedCurrency = (rules.blocked_currencies ?? []).find(
    (block) => block.currency === currency && (!block.regions || block.regions.includes(region)),
  );
  if (blockedCurrency)
    return refused(
      'blocked_currency',
      `${currency} is blocked${blockedCurrency.regions ? ` in ${region}` : ''}`,
    );
  const conversion = (rules.blocked_conversions ?? []).find(
    (block) => block.from === baseCurrency && block.to === currency,
  );
  if (conversion)
    return refused('blocked_conversion', `conversion ${baseCurrency}→${currency} is not allowed`);
  const player = request.player_id
    ? (rules.player_blocks ?? []).find(
        (block) => block.player_id === request.player_id && block.currencies.includes(currency),
      )
    : undefined;
  if (player) return refused('player_block', `${currency} is not available to this player`);
  const payment = request.payment;
  if (payment?.bank && (rules.blocked_banks ?? []).includes(payment.bank)) {
    return refused('blocked_bank', `bank ${payment.bank} is blocked`);
  }
  if (payment?.token && (rules.blocked_tokens ?? []).includes(payment.token)) {
    return refused('blocked_token', `token ${payment.token} is blocked`);
  }
  const provider = payment?.provider
    ? (rules.blocked_providers ?? []).find(
        (block) =>
          block.provider === payment.provider && (!block.currencies || block.currencies.includes(currency)),
      )
    : undefined;
  if (provider)
    return refused('blocked_provider', `provider ${provider.provider} is blocked for ${currency}`);
  return { available: true };
};
