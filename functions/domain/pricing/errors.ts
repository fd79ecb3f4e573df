import { ServiceError } from '../errors';

/** What refused a request the catalog cannot price. */
export type PricingRefusal =
  | 'currency_not_available'
  | 'unknown_sku'
  | 'no_price'
  | 'invalid_request'
  | 'not_sellable'
  | 'price_not_available';

/**
 * A request the catalog cannot price: the caller gets a 4xx naming the rule that refused. A malformed request is
 * `invalid_request`; what is left is not about one request's price — a rate past its maximum age (rule 10,
 * documented as `currency_not_available` with `reason` `stale_rate`) or a currency the limits route cannot
 * convert to — and is `currency_not_available` with the rule and its reason.
 */
export class PricingError extends ServiceError {
  constructor(
    readonly kind: PricingRefusal,
    readonly rule: string,
    message: string,
    details?: Readonly<Record<string, unknown>>,
  ) {
    super(
      kind === 'invalid_request' || kind === 'price_not_available' ? kind : 'currency_not_available',
      message,
      {
        details:
          details ??
          (kind === 'invalid_request'
            ? undefined
            : {
                rule,
                ...(rule === 'stale_rate' ? { reason: 'stale_rate' } : {}),
                reasons: [reasonOf({ rule, message })],
              }),
      },
    );
    this.name = 'PricingError';
  }
}

/**
 * Why a request has no price (C28). Each code names one reason; a refusal lists every reason that applies.
 * - `region_not_served`: no display rule for the region;
 * - `currency_not_offered`: the currency is not in the region's `currency_whitelist`;
 * - `unknown_currency`: not an ISO 4217 currency nor a crypto currency of the catalog;
 * - `currency_blocked`, `conversion_blocked`, `provider_blocked`, `bank_blocked`, `token_blocked`,
 *   `player_blocked`: an availability rule (rule 12) refuses it;
 * - `no_rate`: no published rate (direct, inverse, cross or chained) for a pair the price needs;
 * - `unknown_sku`: not in the primary price list; `not_sellable`: a region policy excludes it there;
 * - `no_price`: no price in the currency's own list (strategy `price_lists`), or a bundle naming an unpriced
 *   position;
 * - `no_price_list_in_force`: the price list is not in force at the time of pricing (`effective_from` /
 *   `effective_to`);
 * - `stale_rate`: the rate is past its maximum age (rule 10; quotes only).
 */
export type UnpriceableCode =
  | 'region_not_served'
  | 'currency_not_offered'
  | 'unknown_currency'
  | 'currency_blocked'
  | 'conversion_blocked'
  | 'provider_blocked'
  | 'bank_blocked'
  | 'token_blocked'
  | 'player_blocked'
  | 'no_rate'
  | 'unknown_sku'
  | 'not_sellable'
  | 'no_price'
  | 'no_price_list_in_force'
  | 'stale_rate';

export interface UnpriceableReason {
  readonly code: UnpriceableCode;
  /** For a human: what refused, naming the SKU, pair, list or rule. */
  readonly detail: string;
  /** The SKU the reason concerns, when it concerns one. */
  readonly sku_id?: string;
}

/** No price: every reason that applied (C28), not only the first one met. */
export class PriceNotAvailableError extends PricingError {
  constructor(readonly reasons: readonly UnpriceableReason[]) {
    super(
      'price_not_available',
      reasons[0]?.code ?? 'unknown',
      `no price: ${reasons.map((reason) => reason.detail).join('; ')}`,
      { reasons: reasons.map((reason) => ({ ...reason })) },
    );
    this.name = 'PriceNotAvailableError';
  }
}

/** The reason code of each rule name the engine's own errors carry. */
export const CODE_OF_RULE: Readonly<Record<string, UnpriceableCode>> = {
  region: 'region_not_served',
  currency_whitelist: 'currency_not_offered',
  blocked_currency: 'currency_blocked',
  blocked_conversion: 'conversion_blocked',
  player_block: 'player_blocked',
  blocked_bank: 'bank_blocked',
  blocked_token: 'token_blocked',
  blocked_provider: 'provider_blocked',
  currency: 'unknown_currency',
  fx_rate: 'no_rate',
  pricelist: 'unknown_sku',
  region_policy: 'not_sellable',
  price_lists: 'no_price',
  bundle: 'no_price',
  pricelist_in_force: 'no_price_list_in_force',
  stale_rate: 'stale_rate',
};

/** The reason an engine error names (an error of no known rule is `no_price`). */
export const reasonOf = (error: Pick<PricingError, 'rule' | 'message'>): UnpriceableReason => ({
  code: CODE_OF_RULE[error.rule] ?? 'no_price',
  detail: error.message,
});
