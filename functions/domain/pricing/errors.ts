/** A request the catalog cannot price: the caller gets a 4xx naming `code` and the rule that refused. */
export class PricingError extends Error {
  constructor(
    readonly code:
      | 'currency_not_available'
      | 'unknown_sku'
      | 'no_price'
      | 'invalid_request'
      | 'not_sellable'
      | 'price_not_available',
    readonly rule: string,
    message: string,
  ) {
    super(message);
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
    );
    this.name = 'PriceNotAvailableError';
  }
}
