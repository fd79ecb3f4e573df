/**
 * The steps of one FX ingestion run up to the claim, in the order `ingestRates` runs them; the side effects
 * after the claim are in `ingest-effects.ts`. Each step takes the run's state (`Run`, see `ingest-run.ts`)
 * and answers the next one. A pair moves through the stages
 *
 *   found → due → observed → decided → claimed → finished
 *
 * or straight to `finished` when it is skipped (not due, breaker open, another run's lease, another run came
 * first), and from `found` to `claimed` when an earlier run's work is resumed. What a tick does is decided by
 * the rate domain (`decidePair`); the steps do the I/O around it. Two conditional writes frame each pair's side
 * effects: the claim records them as the pair's `work`, the confirmation clears what was done.
 */
import {
  type Admission,
  admitTick,
  decidePair,
  type PairRateState,
  type PairRules,
} from '../../domain/rates/decision';
import { canonicalPair, ratesByPair } from '../../domain/rates/pairs';
import type { PairState, PairWork } from '../../ports/rates';
import type { RatePairPolicy } from '../../schemas/rate-policy';
import { breakerEntry, failureEntry, heldEntry } from './ingest-journal';
import { aggregateQuotes, fetchQuotes, twapWindowOf } from './ingest-quotes';
import {
  type Claim,
  type ClaimedPair,
  DEFAULT_LEASE_SECONDS,
  type DecidedPair,
  type DuePair,
  type FinishedPair,
  type FoundPair,
  finished,
  type IngestDeps,
  type IngestOptions,
  type IngestReport,
  type ObservedPair,
  type Run,
  type RunContext,
} from './ingest-run';

/** Writes a pair's state conditionally, keeping the ticks its TWAP window needs. */
export const savePair = (deps: IngestDeps, context: RunContext, pair: RatePairPolicy, state: PairState) =>
  deps.state.put(state, twapWindowOf(pair, context.now));

/** What the rate domain reads of a pair: its stored state and the rate in force (else its last published). */
const rateStateOf = (context: RunContext, pair: RatePairPolicy, stored: PairState): PairRateState => {
  const lastRate = context.inCatalog.get(pair.pair)?.rate ?? stored.last_published?.rate;
  return {
    breaker: stored.breaker,
    ...(stored.last_slot !== undefined ? { last_slot: stored.last_slot } : {}),
    ...(lastRate !== undefined ? { last_rate: lastRate } : {}),
    ...(stored.held ? { held: stored.held } : {}),
  };
};

/** The pair's rules: its policy entry (at the local stack's interval, if set) and the policy's breaker. */
const rulesOf = (context: RunContext, pair: RatePairPolicy): PairRules => ({
  ...pair,
  interval_seconds: context.intervalOverrideSeconds ?? pair.interval_seconds,
  breaker: context.policy.breaker,
});

/** A pair the decision does not let tick in this run. */
const skipped = (pair: RatePairPolicy, admission: Exclude<Admission, { due: true }>): FinishedPair =>
  finished(
    pair.pair,
    admission.outcome,
    admission.outcome === 'breaker_open' && admission.retry_at ? { retry_at: admission.retry_at } : {},
  );

/**
 * Start: the clock, the run's identity and lease, the rates and policy in force, and every pair's stored
 * state. Without a rate policy there is nothing to ingest: the answer is the (empty) report.
 */
export const startRun = async (
  deps: IngestDeps,
  options: IngestOptions,
): Promise<{ readonly run: Run<FoundPair> } | { readonly report: IngestReport }> => {
  const now = deps.clock.now();
  const runId = options.runId ?? options.traceId;
  const override = options.intervalOverrideSeconds;
  if (override !== undefined && (!Number.isInteger(override) || override < 1))
    throw new RangeError(`intervalOverrideSeconds must be a positive integer: ${override}`);
  const leaseSeconds = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
  const current = await deps.current.current();
  const policy = current.policy;
  if (!policy)
    return { report: { at: now.toISOString(), trace_id: options.traceId, run_id: runId, pairs: [] } };
  const pairs = policy.pairs.map((pair) => ({ ...pair, pair: canonicalPair(pair.pair) }));
  const stored = await Promise.all(pairs.map((pair) => deps.state.get(pair.pair)));
  return {
    run: {
      context: {
        now,
        runId,
        traceId: options.traceId,
        leaseUntil: new Date(now.getTime() + leaseSeconds * 1000).toISOString(),
        ...(override !== undefined ? { intervalOverrideSeconds: override } : {}),
        policy,
        fxVersion: current.fx_version,
        inCatalog: ratesByPair(current.rates),
      },
      pairs: pairs.map((pair, index) => ({
        stage: 'found',
        policy: pair,
        stored: stored[index] as PairState,
      })),
    },
  };
};

const claimed = (claim: Claim): ClaimedPair => {
  const held = claim.state.held;
  return {
    stage: 'claimed',
    claim,
    publication: claim.work.publication
      ? { status: 'to_publish', publication: claim.work.publication }
      : { status: 'none' },
    changeRequest: claim.work.open_change_request && held ? { status: 'to_open', held } : { status: 'none' },
    journal: { left: claim.work.journal },
  };
};

/**
 * Resume: work an earlier run left (its side effects) is taken over first — this run's own at once (a retry),
 * another run's once its lease is over — with one conditional write. Pairs without work are left as found.
 */
export const resumeWork = async (
  deps: IngestDeps,
  run: Run<FoundPair>,
): Promise<Run<FoundPair | ClaimedPair | FinishedPair>> => {
  const { now, runId, leaseUntil } = run.context;
  const pairs = await Promise.all(
    run.pairs.map(async (found): Promise<FoundPair | ClaimedPair | FinishedPair> => {
      const { policy, stored } = found;
      const work = stored.work;
      if (!work) return found;
      if (work.run_id !== runId && Date.parse(work.lease_until) > now.getTime())
        return finished(policy.pair, 'in_progress', { retry_at: work.lease_until });
      const taken = { ...work, run_id: runId, lease_until: leaseUntil };
      const result = await savePair(deps, run.context, policy, { ...stored, work: taken });
      if (!result.saved) return finished(policy.pair, 'in_progress');
      return claimed({
        policy,
        state: result.state,
        work: taken,
        recovered: true,
        failures: [],
        transitions: [],
        outcome: 'recovered',
      });
    }),
  );
  return { ...run, pairs };
};

/** Admit: a pair ticks when its slot is new and its breaker lets it (`admitTick`); nothing else is fetched. */
export const admitTicks = (
  run: Run<FoundPair | ClaimedPair | FinishedPair>,
): Run<DuePair | ClaimedPair | FinishedPair> => ({
  ...run,
  pairs: run.pairs.map((pair) => {
    if (pair.stage !== 'found') return pair;
    const { context } = run;
    const admission = admitTick(
      rateStateOf(context, pair.policy, pair.stored),
      rulesOf(context, pair.policy),
      context.now,
    );
    return admission.due
      ? { stage: 'due', policy: pair.policy, stored: pair.stored }
      : skipped(pair.policy, admission);
  }),
});

/** Fetch and aggregate: the due pairs' quotes from their sources, then each pair's rate by its method. */
export const observeTicks = async (
  deps: IngestDeps,
  run: Run<DuePair | ClaimedPair | FinishedPair>,
): Promise<Run<ObservedPair | ClaimedPair | FinishedPair>> => {
  const { now, policy } = run.context;
  const due = run.pairs.filter((pair): pair is DuePair => pair.stage === 'due');
  const fetched = await fetchQuotes(
    typeof deps.sources === 'function' ? deps.sources(policy) : deps.sources,
    due.map((pair) => pair.policy),
    now,
  );
  return {
    ...run,
    pairs: run.pairs.map((pair) => {
      if (pair.stage !== 'due') return pair;
      const { quotes = [], failures = [] } = fetched.get(pair.policy.pair) ?? {};
      const { observation, ticks } = aggregateQuotes(pair.policy, pair.stored.ticks, quotes, now);
      return { stage: 'observed', policy: pair.policy, stored: pair.stored, observation, ticks, failures };
    }),
  };
};

/**
 * Decide: the rate domain's decision for each observed pair (`decidePair`), written down as the state to
 * claim the slot with and the side effects (`work`) that follow from it.
 */
export const decideTicks = (
  run: Run<ObservedPair | ClaimedPair | FinishedPair>,
): Run<DecidedPair | ClaimedPair | FinishedPair> => ({
  ...run,
  pairs: run.pairs.map((pair) => (pair.stage === 'observed' ? decideTick(run.context, pair) : pair)),
});

const decideTick = (context: RunContext, pair: ObservedPair): DecidedPair | FinishedPair => {
  const { runId, traceId, leaseUntil, now } = context;
  const { policy, stored, failures } = pair;
  const decision = decidePair(
    rateStateOf(context, policy, stored),
    pair.observation,
    rulesOf(context, policy),
    now,
  );
  // Admitted before the fetch, so due now (the decision is pure: the same inputs give the same admission).
  if (!('next' in decision)) return skipped(policy, decision);
  const { slot, transitions } = decision;
  const joined =
    decision.outcome === 'held' && decision.change_request.action === 'join'
      ? heldEntry(policy, decision.proposal, decision.change_request.cr_id, false, traceId)
      : undefined;
  const work: PairWork = {
    run_id: runId,
    lease_until: leaseUntil,
    slot,
    trace_id: traceId,
    ...(decision.outcome === 'published' ? { publication: decision.publication } : {}),
    ...(decision.previous_rate !== undefined ? { previous_rate: decision.previous_rate } : {}),
    ...('move_bps' in decision && decision.move_bps !== undefined ? { move_bps: decision.move_bps } : {}),
    ...(decision.outcome === 'held' && decision.change_request.action === 'open'
      ? { open_change_request: true }
      : {}),
    journal: [
      ...transitions.map((transition) => breakerEntry(policy.pair, slot, transition, traceId)),
      ...failures.map((failure) => failureEntry(policy.pair, slot, failure, traceId)),
      ...(joined ? [joined] : []),
    ],
  };
  const { held: _held, work: _work, ...rest } = stored;
  return {
    stage: 'decided',
    policy,
    next: {
      ...rest,
      last_slot: decision.next.last_slot,
      breaker: decision.next.breaker,
      ticks: pair.ticks,
      ...(decision.next.held ? { held: decision.next.held } : {}),
      work,
    },
    outcome: decision.outcome,
    failures,
    transitions,
    ...(decision.outcome === 'held' ? { proposal: decision.proposal } : {}),
  };
};

/**
 * Claim: one conditional write per decided pair of its next state with its work. A pair another run wrote
 * first is left to that run (`concurrent`): two runs never both handle one slot.
 */
export const claimTicks = async (
  deps: IngestDeps,
  run: Run<DecidedPair | ClaimedPair | FinishedPair>,
): Promise<Run<ClaimedPair | FinishedPair>> => ({
  ...run,
  pairs: await Promise.all(
    run.pairs.map(async (pair): Promise<ClaimedPair | FinishedPair> => {
      if (pair.stage !== 'decided') return pair;
      const result = await savePair(deps, run.context, pair.policy, pair.next);
      if (!result.saved) return finished(pair.policy.pair, 'concurrent');
      return claimed({
        policy: pair.policy,
        state: result.state,
        work: pair.next.work,
        recovered: false,
        failures: pair.failures,
        transitions: pair.transitions,
        outcome: pair.outcome,
        ...(pair.proposal ? { proposal: pair.proposal } : {}),
      });
    }),
  ),
});
