import { appendJournal, confirmWork, openChangeRequests, publishRates, reportRun } from './ingest-effects';
import type { IngestDeps, IngestOptions, IngestReport } from './ingest-run';
import { admitTicks, claimTicks, decideTicks, observeTicks, resumeWork, startRun } from './ingest-steps';

/**
 * One pass of FX rate ingestion (spec rules 9 and 10, C23). For each pair of the catalog's rate policy that
 * is due, the rate is fetched through the pair's sources, aggregated by its method and checked by its breaker
 * and its per-tick cap against the last published rate. Passing pairs are published together in one new fx
 * version; a tick beyond the cap is held for a change request; breaker transitions, held ticks and source
 * failures go to the journal.
 *
 * Concurrency and retries. Time is cut into slots per pair (`interval_seconds`, aligned to the epoch). A run
 * claims a pair's slot with one conditional write of its state (version check) that also records the slot's
 * side effects as `work` under a lease: two runs can never both handle (and publish) one slot. The side
 * effects (publication, change request, journal entries) are then carried out and the work is cleared with a
 * second conditional write. A run that dies leaves its work for the next run: a retry with the same `runId`
 * resumes it at once, any other run once the lease is over. Journal entries have deterministic ids, so
 * appending one again is a no-op; a publication already in the catalog is recognised and not published again,
 * and one that a later rate has replaced is dropped.
 *
 * Where things are: the per-pair decision (slot, breaker, tick cap, held episode, publication) is the pure
 * `decidePair` of `domain/rates/decision.ts`; the steps below are in `ingest-steps.ts` (to the claim) and
 * `ingest-effects.ts` (the side effects), the run's state and
 * report types in `ingest-run.ts`, fetching and aggregation in `ingest-quotes.ts`, journal entries in
 * `ingest-journal.ts`.
 */

export { FUTURE_QUOTE_TOLERANCE_SECONDS } from './ingest-quotes';
export {
  DEFAULT_LEASE_SECONDS,
  type IngestDeps,
  type IngestOptions,
  type IngestReport,
  type PairOutcome,
  type PairReport,
  RateIngestionError,
  type SourceFailure,
} from './ingest-run';

/** One ingestion pass. Throws `RateIngestionError` (with the report) when some side effect failed. */
export const ingestRates = async (deps: IngestDeps, options: IngestOptions): Promise<IngestReport> => {
  const started = await startRun(deps, options);
  if ('report' in started) return started.report;
  // Work an earlier run left, then this run's ticks: which are due, their quotes, the decision, the claim.
  const resumed = await resumeWork(deps, started.run);
  const observed = await observeTicks(deps, admitTicks(resumed));
  const claimed = await claimTicks(deps, decideTicks(observed));
  // The claimed side effects, in order: publication, change requests, journal; then the confirmation.
  const published = await publishRates(deps, claimed);
  const requested = await openChangeRequests(deps, published);
  const emitted = await appendJournal(deps, requested);
  return reportRun(await confirmWork(deps, emitted));
};
