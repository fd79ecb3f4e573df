/**
 * The catalog side of FX ingestion: automatic publication of rate ticks inside the approved rate policy, change
 * requests for held ticks, and the rates and policy in force. Ticks go through the catalog's one write path
 * (new `fx_version`, `catalog.FXRatePublished` event in the same transaction); nothing else about the catalog
 * changes, and a tick of one pair never touches another pair's rate.
 */
import { canonicalPair, rateOfPair, ratesByPair } from '../../domain/rates/pairs';
import type { CatalogRepository } from '../../ports/catalog';
import type { Clock } from '../../ports/clock';
import type { CurrentRates, FxRate, HeldTickInput, HeldTickOpener, RatePublisher } from '../../ports/rates';
import { currentCatalog, publishCatalogChange } from '../catalog/import';
import { type FxPart, fxVersionName } from '../catalog/release';
import { type ChangeRequestDependencies, createChangeRequest } from '../change-requests/change-requests';

/** The identity that authors change requests for held ticks. */
export const RATE_INGESTION_AUTHOR = 'system:fx-ingestion';

const fxPartOf = (content: unknown): FxPart => content as FxPart;

/** The newest publication and its fx part. */
const fxPartInForce = async (repository: CatalogRepository) => {
  const current = await currentCatalog(repository);
  if (!current) throw new Error('no catalog is published yet');
  return { publication: current.publication, part: fxPartOf(current.parts.fx.content) };
};

/** The fx part with `rates` replacing the published rates of their pairs (new pairs are added). */
export const withRates = (part: FxPart, rates: readonly FxRate[]): FxPart => {
  const replacing = ratesByPair(rates);
  const kept = part.fx_rates.rates.map((rate) => {
    const replacement = replacing.get(canonicalPair(rate.pair));
    if (replacement) replacing.delete(canonicalPair(rate.pair));
    return replacement ?? rate;
  });
  return { ...part, fx_rates: { ...part.fx_rates, rates: [...kept, ...replacing.values()] } };
};

const latestEffectiveFrom = (rates: readonly FxRate[], now: string): string =>
  rates.reduce(
    (latest, rate) => (rate.effective_from && rate.effective_from > latest ? rate.effective_from : latest),
    now,
  );

/**
 * Publishes ticks as a new fx version. The publication is in force from the latest `effective_from` of its
 * rates (fetch time + the pair's publication delay): until then the previous version stays in force.
 */
export class CatalogRatePublisher implements RatePublisher {
  constructor(
    private readonly repository: CatalogRepository,
    private readonly clock: Clock,
  ) {}

  async publish(input: {
    readonly rates: readonly FxRate[];
    readonly traceId: string;
  }): Promise<{ fx_version: string }> {
    const result = await publishCatalogChange(
      { repository: this.repository, clock: this.clock, traceId: input.traceId },
      {
        plan: (current) => {
          if (!current) throw new Error('no catalog is published: there is no fx part to publish rates into');
          return { fx: withRates(fxPartOf(current.parts.fx.content), input.rates) };
        },
        effectiveFrom: latestEffectiveFrom(input.rates, this.clock.now().toISOString()),
        skipUnchanged: true,
      },
    );
    // Identical rates publish nothing and answer the fx version at the pointer.
    return { fx_version: result.versions.fx_version };
  }
}

/** The rates and rate policy of the newest publication (what the next tick is compared with). */
export class CatalogCurrentRates implements CurrentRates {
  constructor(private readonly repository: CatalogRepository) {}

  async current() {
    const { publication, part } = await fxPartInForce(this.repository);
    return {
      fx_version: fxVersionName(publication.versions.fx),
      base_currency: part.fx_rates.base_currency,
      rates: part.fx_rates.rates,
      ...(part.rate_policy ? { policy: part.rate_policy } : {}),
    };
  }
}

/**
 * A tick beyond the per-tick cap becomes a change request of kind `fx_rates` (C23): the rate set in force with
 * that pair at the held rate, authored by the ingestion, decided by two people like any other change.
 */
export class ChangeRequestHeldTicks implements HeldTickOpener {
  constructor(private readonly deps: ChangeRequestDependencies) {}

  async open(input: HeldTickInput): Promise<{ cr_id: string }> {
    const { part } = await fxPartInForce(this.deps.repository);
    const published = rateOfPair(part.fx_rates.rates, input.pair);
    const proposed: FxRate = {
      pair: published?.pair ?? input.pair,
      rate: input.proposed_rate,
      source: input.source,
      method: published?.method ?? 'provider',
      precision: published?.precision ?? input.proposed_rate.split('.')[1]?.length ?? 0,
      effective_from: input.observed_at,
    };
    const created = await createChangeRequest(
      { ...this.deps, traceId: input.trace_id },
      {
        kind: 'fx_rates',
        payload: { fx_rates: withRates(part, [proposed]).fx_rates },
        note:
          `automatic tick of ${input.pair} held: ${input.last_rate} → ${input.proposed_rate} ` +
          `(${input.move_bps} bps, beyond the per-tick cap) from ${input.source} at ${input.observed_at}`,
      },
      RATE_INGESTION_AUTHOR,
    );
    return { cr_id: created.cr_id };
  }
}
