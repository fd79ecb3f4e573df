import path from 'node:path';
import {
  createSecretsManagerClient,
  DEFAULT_FX_SECRETS_PREFIX,
  SecretsManagerSecretValues,
} from '../adapters/aws/secrets-manager';
import { createGuardedFetch, type EgressPolicy } from '../adapters/http/guarded-http-client';
import { type FetchLike, rateSourcesFor } from '../adapters/http/rate-sources';
import { FileSecretValues } from '../adapters/local/file-secrets';
import { SimulatedFeed } from '../domain/rates/simulated';
import type { RateSource } from '../ports/rates';
import type { RatePolicy } from '../schemas/rate-policy';
import { type IngestDeps, type IngestOptions, ingestRates } from '../usecases/rates/ingest';
import {
  CatalogCurrentRates,
  CatalogRatePublisher,
  ChangeRequestHeldTicks,
} from '../usecases/rates/publisher';
import { changeRequestDependencies } from './change-requests';
import type { RateIngestionDependencies, ServiceDependencies } from './dependencies';
import { type Environment, integerSetting } from './environment';
import { AWS_EGRESS } from './webhooks';

/** Settings of the rate sources' access: egress policy and secret store. */
export type RateSourceAccess = Required<Pick<RateIngestionDependencies, 'egress' | 'secrets'>>;

/** `FX_SECRETS_PREFIX`: prepended to every `secret_ref` to make the Secrets Manager `SecretId`. */
export const FX_SECRETS_PREFIX_ENV = 'FX_SECRETS_PREFIX';

/**
 * The Secrets Manager name prefix of FX provider credentials: `FX_SECRETS_PREFIX`, default `pricing/fx/`
 * (the characters of a secret name, at most 256; empty allowed: references are then full names).
 */
export const fxSecretsPrefixFromEnv = (env: Environment): string => {
  const value = env[FX_SECRETS_PREFIX_ENV];
  if (value === undefined) return DEFAULT_FX_SECRETS_PREFIX;
  if (value !== '' && !/^[A-Za-z0-9/_+=.@-]{1,256}$/.test(value))
    throw new Error(
      `${FX_SECRETS_PREFIX_ENV} must be a Secrets Manager name prefix (A–Z a–z 0–9 / _ + = . @ -)`,
    );
  return value;
};

/**
 * In AWS: https to public addresses only (`AWS_EGRESS`), credentials from Secrets Manager
 * (`<FX_SECRETS_PREFIX><secret_ref>`, cached five minutes; the client is created on the first read).
 */
export const awsRateSourceAccess = (env: Environment, region: string): RateSourceAccess => ({
  egress: AWS_EGRESS,
  secrets: new SecretsManagerSecretValues({
    client: () => createSecretsManagerClient(region),
    prefix: fxSecretsPrefixFromEnv(env),
  }),
});

/**
 * The local stack: the webhooks' egress policy (loopback over http allowed, for test providers) and
 * credentials from the files `<dataDir>/secrets/<secret_ref>` (not readable by other users).
 */
export const localRateSourceAccess = (dataDir: string, egress: EgressPolicy): RateSourceAccess => ({
  egress,
  secrets: new FileSecretValues(path.join(dataDir, 'secrets')),
});

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
  // One guarded GET per function instance (it holds no connection: every request opens and closes its own).
  const fetch: FetchLike = createGuardedFetch({ policy: deps.rates.egress ?? AWS_EGRESS });
  const secrets = deps.rates.secrets;
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
      rateSourcesFor(policy, {
        fetch,
        ...(secrets ? { secrets } : {}),
        ...(holder.feed ? { simulatedFeed: holder.feed } : {}),
      }),
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
    ...(changes.operations ? { operations: changes.operations } : {}),
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
