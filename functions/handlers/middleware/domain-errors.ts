import { InvalidApiKeyCursorError } from '../../adapters/aws/api-key-store';
import { InvalidCursorError } from '../../adapters/aws/webhook-store';
import { PriceNotAvailableError, PricingError } from '../../domain/pricing/errors';
import { QuantityNotAllowedError } from '../../domain/pricing/quantity';
import { reasonOf } from '../../domain/pricing/reasons';
import { ApiKeyConflictError } from '../../ports/api-keys';
import { ApiKeyError } from '../../usecases/access/api-keys';
import { EntryNotSealedError, JournalNotFoundError, JournalRangeError } from '../../usecases/audit/journal';
import { CatalogConflictError } from '../../usecases/catalog/import';
import { CatalogNotFoundError } from '../../usecases/catalog/reader';
import { CatalogValidationError } from '../../usecases/catalog/validate';
import { ChangeRequestError } from '../../usecases/change-requests/change-requests';
import { CheckoutError } from '../../usecases/checkout/checkout';
import { EndpointConflictError, EndpointNotFoundError } from '../../usecases/webhooks/endpoints';
import { EventRefusedError } from '../../usecases/webhooks/events';
import { EventNotFoundError, InvalidListingError } from '../../usecases/webhooks/history';
import { EndpointValidationError } from '../../usecases/webhooks/mtls';
import { PartnerUnauthorizedError, SnapshotInFutureError } from '../../usecases/webhooks/partner';
import { ReplayRefusedError } from '../../usecases/webhooks/replay';
import { HttpError } from './errors';

/** Errors of the use cases that a caller caused or can act on, as C6 errors; anything else stays a 500. */
export const toHttpError = (error: unknown): HttpError | undefined => {
  if (error instanceof HttpError) return error;
  if (error instanceof CatalogValidationError) {
    const summary = error.problems
      .slice(0, 5)
      .map((problem) => `${problem.path}: ${problem.message}`)
      .join('; ');
    return new HttpError('invalid_request', summary, { details: { problems: error.problems } });
  }
  if (error instanceof EndpointValidationError) {
    return new HttpError('invalid_request', error.message, { details: { problems: error.problems } });
  }
  // C28: no price, with every reason that applied (unknown or unsellable SKU, region, currency, rate, list).
  if (error instanceof PriceNotAvailableError) {
    return new HttpError('price_not_available', error.message, {
      details: { reasons: error.reasons.map((reason) => ({ ...reason })) },
    });
  }
  // A line's quantity breaks its product's quantity rules: every such line, named.
  if (error instanceof QuantityNotAllowedError) {
    return new HttpError('quantity_not_allowed', error.message, {
      details: { violations: error.violations.map((violation) => ({ ...violation })) },
    });
  }
  if (error instanceof PricingError) {
    if (error.code === 'invalid_request') return new HttpError('invalid_request', error.message);
    // What is left is not about one request's price: a rate past its maximum age (rule 10, documented as
    // `currency_not_available` with `reason` `stale_rate`) or a currency the limits route cannot convert to.
    const reason = reasonOf(error);
    return new HttpError('currency_not_available', error.message, {
      details: {
        rule: error.rule,
        ...(error.rule === 'stale_rate' ? { reason: 'stale_rate' } : {}),
        reasons: [{ ...reason }],
      },
    });
  }
  if (error instanceof CatalogNotFoundError) return new HttpError('not_found', error.message);
  if (error instanceof CheckoutError)
    return new HttpError(error.code, error.message, { details: error.details });
  if (error instanceof EventRefusedError || error instanceof ReplayRefusedError)
    return new HttpError(error.code, error.message, error.details ? { details: error.details } : {});
  if (error instanceof EndpointNotFoundError || error instanceof EventNotFoundError)
    return new HttpError('not_found', error.message);
  if (error instanceof EndpointConflictError)
    return new HttpError('conflict', error.message, { retryAfterSeconds: 1 });
  if (error instanceof PartnerUnauthorizedError) return new HttpError('unauthorized', error.message);
  if (error instanceof SnapshotInFutureError) return new HttpError('invalid_request', error.message);
  if (error instanceof InvalidListingError || error instanceof InvalidCursorError)
    return new HttpError('invalid_request', error.message);
  if (error instanceof ApiKeyError)
    return new HttpError(error.code === 'not_found' ? 'not_found' : 'invalid_state', error.message);
  if (error instanceof ApiKeyConflictError)
    return new HttpError('conflict', error.message, { retryAfterSeconds: 1 });
  if (error instanceof InvalidApiKeyCursorError) return new HttpError('invalid_request', error.message);
  if (error instanceof ChangeRequestError) {
    const code =
      error.code === 'author_cannot_approve' || error.code === 'machine_cannot_approve'
        ? 'forbidden'
        : error.code === 'not_pending'
          ? 'conflict'
          : error.code === 'guardrails_not_acknowledged'
            ? 'invalid_state'
            : 'not_found';
    return new HttpError(code, error.message, error.details ? { details: error.details } : {});
  }
  if (error instanceof EntryNotSealedError) {
    return new HttpError('conflict', error.message, {
      details: { index: error.index, sealed_size: error.sealedSize },
    });
  }
  if (error instanceof JournalNotFoundError) return new HttpError('not_found', error.message);
  if (error instanceof JournalRangeError) return new HttpError('invalid_request', error.message);
  if (error instanceof CatalogConflictError) {
    return new HttpError('request_in_progress', error.message, { retryAfterSeconds: 1 });
  }
  return undefined;
};
