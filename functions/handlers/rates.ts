import { awsDependencies } from '../composition/aws';
import { changeRequestDependencies } from '../composition/change-requests';
import type { ServiceDependencies } from '../composition/dependencies';
import { rateIngestion } from '../composition/rates';
import { newId } from '../shared/ids';
import { completePendingChangeRequests } from '../usecases/change-requests/change-requests';
import { readBreakers } from '../usecases/objectives/report';
import { type IngestReport, RateIngestionError } from '../usecases/rates/ingest';
import { lazyHandler } from './lazy';
import { causeOf } from './middleware/http';

export interface RatesRunReport {
  /** What FX ingestion did per pair (absent when no catalog is published yet). */
  readonly ingestion?: IngestReport;
  /** Approved change requests a crash had left half-way, now finished. */
  readonly completed_changes: number;
  /** Size of the signed tree head this run closed, if it closed one. */
  readonly closed_slice?: number;
}

export type RatesHandler = (event: unknown, context: unknown) => Promise<RatesRunReport>;

const requestIdOf = (context: unknown): string | undefined => {
  const id = (context as { awsRequestId?: unknown } | undefined)?.awsRequestId;
  return typeof id === 'string' && id.length > 0 ? id : undefined;
};

/**
 * The `rates` function, run every minute by an EventBridge Scheduler rate schedule (a timer locally): FX
 * ingestion (sources, protection, publication inside the approved rate policy), then finishing approved changes
 * left half-way and closing the audit journal's slice when it is due. Each part runs even when another fails; a
 * failure is logged (ingestion's unfinished work stays recorded) and the next run resumes it. A retried
 * invocation (same request id) resumes its own ingestion work at once.
 */
export const createRatesHandler = (deps: ServiceDependencies): RatesHandler => {
  const logger = deps.createLogger('rates');
  const changes = changeRequestDependencies(deps);
  const ingest = rateIngestion(deps);
  const metrics = deps.metrics.recorder('rates');
  return async (_event, context) => {
    let completed = 0;
    let closed: number | undefined;
    let ingestion: IngestReport | undefined;
    const traceId = newId('trc');
    try {
      ingestion = await ingest({ traceId, runId: requestIdOf(context) ?? traceId });
      for (const pair of ingestion?.pairs ?? []) {
        if (pair.outcome === 'held' || pair.outcome === 'breaker_open' || pair.outcome === 'unavailable') {
          logger.warn('rate not published', { pair: pair.pair, outcome: pair.outcome });
        }
      }
    } catch (error) {
      if (error instanceof RateIngestionError) ingestion = error.report;
      logger.error('rate ingestion failed', {
        ...causeOf(error),
        ...(ingestion ? { report: JSON.stringify(ingestion) } : {}),
      });
    }
    if (ingestion) {
      // The breakers of every pair of the policy after this run (the rate state, read back).
      try {
        const breakers = await readBreakers(
          deps.rates.state,
          ingestion.pairs.map((pair) => pair.pair),
        );
        metrics.breakerStates({ pairs: breakers.pairs, open: breakers.open.length });
        metrics.flush();
      } catch (error) {
        logger.warn('breaker states not measured', causeOf(error));
      }
    }
    try {
      completed = await completePendingChangeRequests(changes);
    } catch (error) {
      logger.error('finishing approved change requests failed', causeOf(error));
    }
    try {
      closed = (await deps.journal.closeSliceIfDue())?.tree_size;
    } catch (error) {
      logger.error('closing the journal slice failed', causeOf(error));
    }
    return {
      ...(ingestion ? { ingestion } : {}),
      completed_changes: completed,
      ...(closed === undefined ? {} : { closed_slice: closed }),
    };
  };
};

export const handler = lazyHandler(() => createRatesHandler(awsDependencies('rates')));
