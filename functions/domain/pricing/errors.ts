/** A request the catalog cannot price: the caller gets a 4xx naming `code` and the rule that refused. */
export class PricingError extends Error {
  constructor(
    readonly code: 'currency_not_available' | 'unknown_sku' | 'no_price' | 'invalid_request' | 'not_sellable',
    readonly rule: string,
    message: string,
  ) {
    super(message);
    this.name = 'PricingError';
  }
}
