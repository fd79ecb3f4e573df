import {
  meetsObjective,
  OBJECTIVES,
  type ObjectiveDefinition,
  type ObjectiveId,
} from '../../definitions/objectives';
import type { CatalogRepository } from '../../ports/catalog';
import type { LatencyFigure, ObjectiveFigures, ObjectiveFiguresReader } from '../../ports/metrics';
import type { QueueDepths } from '../../ports/queue';
import type { RateStateStore } from '../../ports/rates';
import { canonicalPair } from '../../schemas/rate-policy';
import { CatalogCurrentRates } from '../rates/publisher';

/** One objective as `GET /admin/slo` reports it. */
export interface ObjectiveReport extends ObjectiveDefinition {
  /** The measured value (a fraction, ms, messages or breakers), null without samples. */
  readonly measured: number | null;
  /** Decisions, requests or deliveries measured; for live readings, what was read (1 queue, N pairs). */
  readonly samples: number;
  readonly status: 'met' | 'not_met' | 'no_data';
  /** `window`: over the report's window; `live`: read at `window_end`. */
  readonly basis: 'window' | 'live';
}

export interface OpenBreaker {
  readonly pair: string;
  readonly opened_at: string;
}

export interface ServiceObjectivesReport {
  readonly window_start: string;
  readonly window_end: string;
  readonly source: ObjectiveFigures['source'];
  readonly objectives: Readonly<Record<ObjectiveId, ObjectiveReport>>;
  readonly open_breakers: readonly OpenBreaker[];
}

export interface BreakerReading {
  readonly pairs: number;
  readonly open: readonly OpenBreaker[];
}

/** The breakers of these pairs as the rate state records them (a pair never stored is closed). */
export const readBreakers = async (
  state: RateStateStore,
  pairs: readonly string[],
): Promise<BreakerReading> => {
  const states = await Promise.all(pairs.map((pair) => state.get(pair)));
  const open = states.flatMap((pairState) =>
    pairState.breaker.status === 'open'
      ? [{ pair: pairState.pair, opened_at: pairState.breaker.opened_at }]
      : [],
  );
  return { pairs: pairs.length, open };
};

/** The pairs of the rate policy in force; none before the first publication or without a policy. */
export const policyPairs = async (repository: CatalogRepository): Promise<string[]> => {
  if (!(await repository.current())) return [];
  const { policy } = await new CatalogCurrentRates(repository).current();
  return (policy?.pairs ?? []).map((pair) => canonicalPair(pair.pair));
};

export interface ObjectivesReportDependencies {
  readonly figures: ObjectiveFiguresReader;
  readonly queue: QueueDepths;
  readonly rateState: RateStateStore;
  readonly catalog: CatalogRepository;
}

const objective = (
  id: ObjectiveId,
  measured: number | null,
  samples: number,
  basis: ObjectiveReport['basis'] = 'window',
): ObjectiveReport => {
  const definition: ObjectiveDefinition = OBJECTIVES[id];
  const status =
    measured === null || samples === 0 ? 'no_data' : meetsObjective(definition, measured) ? 'met' : 'not_met';
  return { ...definition, measured: samples === 0 ? null : measured, samples, status, basis };
};

/** `part / whole`, or null without a whole. */
const share = (part: number, whole: number): number | null => (whole > 0 ? part / whole : null);

const latency = (id: ObjectiveId, figure: LatencyFigure): ObjectiveReport =>
  objective(id, figure.p95Ms, figure.count);

/**
 * Every objective with its target, measured value, sample count and status: the window figures (CloudWatch's
 * last 24 h in AWS, the in-process counters locally), the delivery DLQ's depth read live from SQS and the FX
 * breakers read live from the rate state.
 */
export const serviceObjectivesReport = async (
  deps: ObjectivesReportDependencies,
): Promise<ServiceObjectivesReport> => {
  const [figures, dlqDepth, breakers] = await Promise.all([
    deps.figures.read(),
    deps.queue.depth('deliveryDlq'),
    policyPairs(deps.catalog).then((pairs) => readBreakers(deps.rateState, pairs)),
  ]);
  const { receipts, lockWindow, delivery, requests } = figures;
  return {
    window_start: figures.windowStart.toISOString(),
    window_end: figures.windowEnd.toISOString(),
    source: figures.source,
    objectives: {
      totals_match: objective(
        'totals_match',
        share(receipts.issued - receipts.totalsMismatched, receipts.issued),
        receipts.issued,
      ),
      lock_window: objective('lock_window', share(lockWindow.inside, lockWindow.decided), lockWindow.decided),
      signed_receipts: objective(
        'signed_receipts',
        share(receipts.issued - receipts.unsigned, receipts.issued),
        receipts.issued,
      ),
      price_latency_p95: latency('price_latency_p95', figures.latency.getPrice),
      quote_latency_p95: latency('quote_latency_p95', figures.latency.quote),
      delivery_latency_p95: latency('delivery_latency_p95', delivery.latency),
      delivery_first_attempt_success: objective(
        'delivery_first_attempt_success',
        share(delivery.firstAttemptSuccesses, delivery.firstAttempts),
        delivery.firstAttempts,
      ),
      delivery_dlq_depth: objective('delivery_dlq_depth', dlqDepth, 1, 'live'),
      fx_breakers_open: {
        ...objective('fx_breakers_open', breakers.open.length, breakers.pairs, 'live'),
        // No pair to watch: nothing can be open.
        ...(breakers.pairs === 0 ? { measured: 0, status: 'met' as const } : {}),
      },
      availability: objective(
        'availability',
        share(requests.total - requests.serverErrors, requests.total),
        requests.total,
      ),
    },
    open_breakers: breakers.open,
  };
};
