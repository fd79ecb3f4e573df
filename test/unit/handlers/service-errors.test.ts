import { describe, expect, it } from 'vitest';
import { ServiceError } from '../../../functions/domain/errors';
import { PriceNotAvailableError, PricingError } from '../../../functions/domain/pricing/errors';
import { toHttpError } from '../../../functions/handlers/middleware/domain-errors';
import { errorBody } from '../../../functions/handlers/middleware/errors';
import { CatalogValidationError } from '../../../functions/usecases/catalog/validate';
import { ChangeRequestError } from '../../../functions/usecases/change-requests/change-requests';
import { EndpointConflictError } from '../../../functions/usecases/webhooks/endpoints';

const answer = (error: unknown) => {
  const http = toHttpError(error);
  return (
    http && { status: http.statusCode, retryAfter: http.retryAfterSeconds, body: errorBody(http, 'trc_1') }
  );
};

describe('service errors map to C6 answers by their code', () => {
  it('maps the status from the code alone, with details, description and Retry-After', () => {
    expect(answer(new ServiceError('quote_expired', 'too late', { details: { requote: 'x' } }))).toEqual({
      status: 409,
      retryAfter: undefined,
      body: { requote: 'x', error: 'quote_expired', error_description: 'too late', trace_id: 'trc_1' },
    });
    expect(answer(new EndpointConflictError('ep_1'))).toMatchObject({ status: 409, retryAfter: 1 });
  });

  it('gives each change-request refusal its C6 code and keeps the refusal as the reason', () => {
    const codes = (
      [
        'author_cannot_approve',
        'machine_cannot_approve',
        'not_pending',
        'guardrails_not_acknowledged',
        'not_found',
        'no_release',
      ] as const
    ).map((reason) => new ChangeRequestError(reason, reason).code);
    expect(codes).toEqual(['forbidden', 'forbidden', 'conflict', 'invalid_state', 'not_found', 'not_found']);
  });

  it('answers pricing refusals as before: the rule and its reason, or every reason with no price', () => {
    expect(
      answer(new PricingError('currency_not_available', 'stale_rate', 'EUR→USD is stale'))?.body,
    ).toEqual({
      rule: 'stale_rate',
      reason: 'stale_rate',
      reasons: [{ code: 'stale_rate', detail: 'EUR→USD is stale' }],
      error: 'currency_not_available',
      error_description: 'EUR→USD is stale',
      trace_id: 'trc_1',
    });
    expect(answer(new PricingError('invalid_request', 'basket', 'no lines'))?.body).toEqual({
      error: 'invalid_request',
      error_description: 'no lines',
      trace_id: 'trc_1',
    });
    const none = new PriceNotAvailableError([{ code: 'unknown_sku', detail: 'unknown SKU x', sku_id: 'x' }]);
    expect(answer(none)).toMatchObject({
      status: 422,
      body: {
        reasons: [{ code: 'unknown_sku', detail: 'unknown SKU x', sku_id: 'x' }],
        error: 'price_not_available',
      },
    });
  });

  it('describes a catalog validation by its first problems', () => {
    const problems = Array.from({ length: 7 }, (_, index) => ({ path: `$.p${index}`, message: 'bad' }));
    const body = answer(new CatalogValidationError(problems))?.body;
    expect(body?.error_description).toBe('$.p0: bad; $.p1: bad; $.p2: bad; $.p3: bad; $.p4: bad');
    expect(body?.problems).toEqual(problems);
  });

  it('leaves every other error to the 500 path', () => {
    expect(toHttpError(new Error('boom'))).toBeUndefined();
    expect(toHttpError('text')).toBeUndefined();
  });
});
