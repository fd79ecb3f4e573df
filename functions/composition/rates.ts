import { rateSourcesFor } from '../adapters/http/rate-sources';
import { SimulatedFeed } from '../domain/rates/simulated';
import type { RateSource, RateStateStore } from '../ports/rates';
import type { RatePolicy } from '../schemas/rate-policy';
import { type IngestDeps, type IngestOptions, ingestRates } from '../usecases/rates/ingest';
import {
  CatalogCurrentRates,
  CatalogRatePublisher,
  ChangeRequestHeldTicks,
} from '../usecases/rates/publisher';
import { changeRequestDependencies } from './change-requests';
import type { ServiceDependencies } from './dependencies';
import { type Environment, integerSetting } from './environment';

/** FX ingestion's own dependencies: its state, and the local stack's faster pace when configured. */
export interface RateIngestionDependencies {
  readonly state: RateStateStore;
  /** Every pair ticks at this interval instead of its policy's (the local stack's `FX_TICK_SECONDS`). */
  readonly intervalOverrideSeconds?: number;
  /** Step of the simulated feed (seconds): one move of its random walk. */
  readonly simulatedStepSeconds: number;
  /**
   * The process's simulated feed once a policy needed it (the local stack and tests drive it: an outage, a
   * spike). Filled on the first ingestion run.
   */
  readonly simulated: { feed?: SimulatedFeed };
}

/**
 * `FX_TICK_SECONDS` (local stack only; default unset: each pair's policy interval): every governed pair
 * ticks at this interval, and the simulated feed moves at this pace, so a demo shows a new `fx_version` every
 * few seconds.
 */
export const fxTickSecondsFromEnv = (env: Environment): number | undefined =>
  integerSetting(env, 'FX_TICK_SECONDS', 1, 86_400);

/**
 * The sources of a policy. A `simulated` source reads one volatile random walk per process, started from the
 * rates in force when it is first needed (so a restart continues from the published rates).
 */
const sourcesOf = (deps: ServiceDependencies) => {
  const holder = deps.rates.simulated;
  return {
    prepare: async (): Promise<void> => {
      if (holder.feed) return;
      const current = await new CatalogCurrentRates(deps.catalogRepository).current();
      holder.feed = new SimulatedFeed({
        seed: 'pricing-simulated-feed',
        start_rates: Object.fromEntries(current.rates.map((rate) => [rate.pair, rate.rate])),
        step_seconds: deps.rates.simulatedStepSeconds,
        volatility_bps: 8,
        max_drift_bps: 1500,
        epoch: deps.clock.now().toISOString(),
      });
    },
    of: (policy: RatePolicy): ReadonlyMap<string, RateSource> =>
      rateSourcesFor(policy, holder.feed ? { simulatedFeed: holder.feed } : {}),
  };
};

/** One FX ingestion run for the `rates` function: sources, protection, publication, journal. */
export const rateIngestion = (deps: ServiceDependencies) => {
  const sources = sourcesOf(deps);
  const changes = changeRequestDependencies(deps);
  const ingestion: IngestDeps = {
    sources: (policy) => sources.of(policy),
    state: deps.rates.state,
    publisher: new CatalogRatePublisher(deps.catalogRepository, deps.clock),
    heldTicks: new ChangeRequestHeldTicks(changes),
    journal: deps.journal,
    current: new CatalogCurrentRates(deps.catalogRepository),
    clock: deps.clock,
  };
  return async (options: Omit<IngestOptions, 'intervalOverrideSeconds'>) => {
    if (!(await deps.catalogRepository.current())) return undefined;
    await sources.prepare();
    return ingestRates(ingestion, {
      ...options,
      ...(deps.rates.intervalOverrideSeconds
        ? { intervalOverrideSeconds: deps.rates.intervalOverrideSeconds }
        : {}),
    });
  };
};
