import { ServiceError } from '../../domain/errors';
import { HttpError } from './errors';

/**
 * Errors of the domain and the use cases that a caller caused or can act on, as C6 errors: every such error is a
 * `ServiceError`, whose code gives the status (`ERROR_STATUS`); anything else stays a 500.
 */
export const toHttpError = (error: unknown): HttpError | undefined => {
  if (error instanceof HttpError) return error;
  if (!(error instanceof ServiceError)) return undefined;
  return new HttpError(error.code, error.description, {
    ...(error.details === undefined ? {} : { details: error.details }),
    ...(error.retryAfterSeconds === undefined ? {} : { retryAfterSeconds: error.retryAfterSeconds }),
  });
};
