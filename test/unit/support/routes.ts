import type { RouteDefinition } from '../../../functions/definitions';

/** A route of the `api` function without auth, for tests that bring their own route table. */
export const route = (
  method: RouteDefinition['method'],
  path: string,
  operation: string,
): RouteDefinition => ({
  method,
  path,
  function: 'api',
  operation,
  auth: 'none',
  summary: operation,
});
