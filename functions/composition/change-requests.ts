import { DEFAULT_GUARDRAILS, type GuardrailSettings } from '../domain/change-control/guardrails';
import { DECIMAL_STRING } from '../domain/money/decimal';
import type { ChangeRequestDependencies } from '../usecases/change-requests/change-requests';
import { operationalSignals } from '../usecases/webhooks/operational-events';
import type { ServiceDependencies } from './dependencies';
import type { Environment } from './environment';

const percent = (env: Environment, name: string, fallback: string): string => {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  if (!DECIMAL_STRING.test(value) || value.startsWith('-')) {
    throw new Error(
      `${name} must be a non-negative decimal percentage such as "25", got ${JSON.stringify(value)}`,
    );
  }
  return value;
};

/**
 * Guardrail limits of change requests: `CR_MAX_PRICE_MOVE_PERCENT` (default 25) and
 * `CR_MAX_RATE_MOVE_PERCENT` (default 5); a move beyond them needs each approver's acknowledgement.
 */
export const guardrailsFromEnv = (env: Environment): GuardrailSettings => ({
  maxPriceMovePercent: percent(env, 'CR_MAX_PRICE_MOVE_PERCENT', DEFAULT_GUARDRAILS.maxPriceMovePercent),
  maxRateMovePercent: percent(env, 'CR_MAX_RATE_MOVE_PERCENT', DEFAULT_GUARDRAILS.maxRateMovePercent),
});

/** What the change-request use cases need, from a function's dependencies. */
export const changeRequestDependencies = (
  deps: ServiceDependencies,
  traceId?: string,
): ChangeRequestDependencies => ({
  store: deps.changeRequests,
  repository: deps.catalogRepository,
  clock: deps.clock,
  signer: deps.receiptSigner,
  journal: deps.journal,
  guardrails: deps.guardrails,
  // Built on the first signal: only a function that opens change requests reaches the events table for it.
  operations: {
    emit: (signal) =>
      operationalSignals({
        clock: deps.clock,
        events: deps.webhooks.events,
        settings: deps.webhooks.settings,
      }).emit(signal),
  },
  ...(traceId ? { traceId } : {}),
});
