/**
 * What one FX ingestion run works with: its dependencies and options, its report, and the one state object
 * its steps pass on (`Run`): the run's fixed facts and, per pair of the policy, the stage the pair has
 * reached. The steps are in `ingest-steps.ts`; the order they run in is `ingestRates` (`ingest.ts`).
 */
import type { Tick } from '../../domain/rates/aggregate';
import type { HeldTick, Observation, RatePublication } from '../../domain/rates/decision';
import type { BreakerTransition } from '../../domain/rates/protection';
import type { Clock } from '../../ports/clock';
import type {
  CurrentRates,
  FxRate,
  HeldTickOpener,
  JournalAppender,
  PairState,
  PairWork,
  PendingJournalEntry,
  RatePublisher,
  RateSource,
  RateStateStore,
} from '../../ports/rates';
import type { RatePairPolicy, RatePolicy } from '../../schemas/rate-policy';
import type { OperationalSignals } from '../webhooks/operational-events';

export interface IngestDeps {
  /** The sources by `source_id`, or how to build them from the policy in force (`rateSourcesFor`). */
  readonly sources:
    | ReadonlyMap<string, RateSource>
    | ((policy: RatePolicy) => ReadonlyMap<string, RateSource>);
  readonly state: RateStateStore;
  readonly publisher: RatePublisher;
  readonly heldTicks: HeldTickOpener;
  readonly journal: JournalAppender;
  readonly current: CurrentRates;
  readonly clock: Clock;
  /** Announces a breaker that opened (`operations.fx_breaker_opened`, C32). */
  readonly operations?: OperationalSignals;
}

export interface IngestOptions {
  readonly traceId: string;
  /** Identifies the run (default: `traceId`); a retry with the same id resumes the run's unfinished work. */
  readonly runId?: string;
  /** The local stack's shorter interval for every pair (seconds). */
  readonly intervalOverrideSeconds?: number;
  /** How long a run's claim on a pair's side effects lasts (default 300 s; above the function's timeout). */
  readonly leaseSeconds?: number;
}

export const DEFAULT_LEASE_SECONDS = 300;

export type PairOutcome =
  /** Published in this run's fx version. */
  | 'published'
  /** Beyond the per-tick cap: held for a change request. */
  | 'held'
  /** No usable rate from the pair's sources. */
  | 'unavailable'
  /** The breaker is open: nothing fetched, nothing published. */
  | 'breaker_open'
  | 'not_due'
  /** Another run holds the pair's work lease. */
  | 'in_progress'
  /** Another run claimed this slot first. */
  | 'concurrent'
  /** An earlier run's unfinished work was completed. */
  | 'recovered'
  /** The catalog already holds a later rate for the pair: this tick was dropped. */
  | 'superseded'
  /** A side effect failed; the work stays for the next run. */
  | 'incomplete';

export interface SourceFailure {
  readonly source_id: string;
  readonly reason: string;
  /** The next source of the fallback order that was asked. */
  readonly fallback_to?: string;
}

export interface PairReport {
  readonly pair: string;
  readonly outcome: PairOutcome;
  readonly rate?: string;
  readonly source?: string;
  readonly move_bps?: string;
  readonly cr_id?: string;
  readonly fx_version?: string;
  readonly effective_from?: string;
  readonly retry_at?: string;
  readonly error?: string;
  readonly failures: readonly SourceFailure[];
  readonly transitions: readonly BreakerTransition[];
}

export interface IngestReport {
  readonly at: string;
  readonly trace_id: string;
  readonly run_id: string;
  /** The fx version this run published, if any. */
  readonly fx_version?: string;
  readonly pairs: readonly PairReport[];
}

/** Some side effects failed; they stay recorded as the pairs' work and the next run completes them. */
export class RateIngestionError extends Error {
  constructor(
    readonly report: IngestReport,
    options?: { cause?: unknown },
  ) {
    const failed = report.pairs.filter((pair) => pair.outcome === 'incomplete').map((pair) => pair.pair);
    super(`rate ingestion incomplete for ${failed.join(', ')}`, options);
    this.name = 'RateIngestionError';
  }
}

/** The facts of a run, fixed when it starts. */
export interface RunContext {
  readonly now: Date;
  readonly runId: string;
  readonly traceId: string;
  /** Until when this run's claims on pairs' work hold. */
  readonly leaseUntil: string;
  readonly intervalOverrideSeconds?: number;
  readonly policy: RatePolicy;
  /** The fx version in force and its rates by canonical pair (what ticks are compared with). */
  readonly fxVersion: string;
  readonly inCatalog: ReadonlyMap<string, FxRate>;
}

/** A pair of the policy as stored before the run. */
export interface FoundPair {
  readonly stage: 'found';
  readonly policy: RatePairPolicy;
  readonly stored: PairState;
}

/** Its tick is due in this run: its sources are asked. */
export interface DuePair {
  readonly stage: 'due';
  readonly policy: RatePairPolicy;
  readonly stored: PairState;
}

/** This run's observation of the pair, aggregated by its method. */
export interface ObservedPair {
  readonly stage: 'observed';
  readonly policy: RatePairPolicy;
  readonly stored: PairState;
  readonly observation: Observation;
  /** The TWAP ticks to keep (with this run's spot tick); none for other methods. */
  readonly ticks: readonly Tick[];
  readonly failures: readonly SourceFailure[];
}

/** How a claimed pair's tick went (what its report says unless a side effect is left undone). */
export type ClaimOutcome = 'published' | 'held' | 'unavailable' | 'recovered';

/** Decided: the state to claim the slot with, its side effects recorded as its `work`. */
export interface DecidedPair {
  readonly stage: 'decided';
  readonly policy: RatePairPolicy;
  readonly next: PairState & { readonly work: PairWork };
  readonly outcome: ClaimOutcome;
  readonly failures: readonly SourceFailure[];
  readonly transitions: readonly BreakerTransition[];
  /** This run's held tick (for the report). */
  readonly proposal?: HeldTick;
}

export interface Claim {
  readonly policy: RatePairPolicy;
  /** The state as stored by the claim (its version is the one to confirm against). */
  readonly state: PairState;
  readonly work: PairWork;
  /** Work an earlier run left, taken over (not a tick of this run). */
  readonly recovered: boolean;
  readonly failures: readonly SourceFailure[];
  readonly transitions: readonly BreakerTransition[];
  readonly outcome: ClaimOutcome;
  readonly proposal?: HeldTick;
}

/** The publication of a claimed pair's work. */
export type PublicationEffect =
  | { readonly status: 'none' }
  | { readonly status: 'to_publish'; readonly publication: RatePublication }
  /** In an fx version: this run's, or the one in force when the catalog already held it. */
  | { readonly status: 'applied'; readonly fx_version: string }
  /** The catalog holds a later rate: dropped. */
  | { readonly status: 'superseded' }
  | { readonly status: 'failed'; readonly error: unknown };

/** The change request of a claimed pair's held tick. */
export type ChangeRequestEffect =
  | { readonly status: 'none' }
  | { readonly status: 'to_open'; readonly held: HeldTick }
  | { readonly status: 'opened'; readonly cr_id: string }
  | { readonly status: 'failed'; readonly error: unknown };

/** A pair whose slot (or an earlier run's work) this run claimed, with its side effects so far. */
export interface ClaimedPair {
  readonly stage: 'claimed';
  readonly claim: Claim;
  readonly publication: PublicationEffect;
  readonly changeRequest: ChangeRequestEffect;
  /** Journal entries still to append, and the last append error. */
  readonly journal: { readonly left: readonly PendingJournalEntry[]; readonly error?: unknown };
}

/** Done with in this run: its report. */
export interface FinishedPair {
  readonly stage: 'finished';
  readonly report: PairReport;
}

/** The one state object of a run: the facts, and each pair of the policy (in policy order) at its stage. */
export interface Run<Pair> {
  readonly context: RunContext;
  readonly pairs: readonly Pair[];
  /** The fx version this run published. */
  readonly fxVersion?: string;
  /** What went wrong first when some work is left undone (the `RateIngestionError` cause). */
  readonly failure?: unknown;
}

/** A pair's report when nothing was claimed for it. */
export const finished = (
  pair: string,
  outcome: PairOutcome,
  extra: Partial<PairReport> = {},
): FinishedPair => ({
  stage: 'finished',
  report: { pair, outcome, failures: [], transitions: [], ...extra },
});

/**
 * The claimed pairs in the order their side effects are carried out: work resumed from earlier runs first,
 * then this run's ticks, each in policy order.
 */
export const claimsInOrder = (pairs: readonly (ClaimedPair | FinishedPair)[]): ClaimedPair[] => {
  const claimed = pairs.filter((pair): pair is ClaimedPair => pair.stage === 'claimed');
  return [
    ...claimed.filter((pair) => pair.claim.recovered),
    ...claimed.filter((pair) => !pair.claim.recovered),
  ];
};
