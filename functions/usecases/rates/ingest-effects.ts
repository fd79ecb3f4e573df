/**
 * The side-effect steps of an FX ingestion run, after the claim: publish, open change requests, append to the
 * journal (emit), confirm. Each records its result on the claimed pairs (`ClaimedPair`: what was done, what
 * failed); the confirmation writes back what is left as each pair's work and finishes every pair. Side effects
 * run in claim order (`claimsInOrder`).
 */
import type { HeldTick, RatePublication } from '../../domain/rates/decision';
import type { FxRate, PairState, PairWork, PendingJournalEntry, PublishedRate } from '../../ports/rates';
import type { OperationalSignal } from '../webhooks/operational-events';
import { heldEntry, publicationEntry, publicationRate } from './ingest-journal';
import {
  type ClaimedPair,
  claimsInOrder,
  type FinishedPair,
  type IngestDeps,
  type IngestReport,
  type PairOutcome,
  type PublicationEffect,
  RateIngestionError,
  type Run,
} from './ingest-run';
import { savePair } from './ingest-steps';

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

const sameRate = (current: FxRate | undefined, publication: RatePublication): boolean =>
  current !== undefined &&
  current.rate === publication.rate &&
  current.effective_from === publication.effective_from &&
  current.source === publication.source &&
  current.method === publication.method &&
  current.precision === publication.precision;

const laterInCatalog = (current: FxRate | undefined, effectiveFrom: string): boolean =>
  current?.effective_from !== undefined && Date.parse(current.effective_from) > Date.parse(effectiveFrom);

type Effected = Run<ClaimedPair | FinishedPair>;

/** The run with each claimed pair replaced by `update(pair)`. */
const updateClaims = (run: Effected, update: (pair: ClaimedPair) => ClaimedPair): Effected => ({
  ...run,
  pairs: run.pairs.map((pair) => (pair.stage === 'claimed' ? update(pair) : pair)),
});

/**
 * Publish: every claimed rate in one new fx version. A rate the catalog already holds (a run that died after
 * publishing) is recognised, one a later rate replaced is dropped.
 */
export const publishRates = async (deps: IngestDeps, run: Effected): Promise<Effected> => {
  const { inCatalog, fxVersion, traceId } = run.context;
  const checked = updateClaims(run, (pair) => {
    if (pair.publication.status !== 'to_publish') return pair;
    const inForce = inCatalog.get(pair.claim.policy.pair);
    const { publication } = pair.publication;
    if (sameRate(inForce, publication))
      return { ...pair, publication: { status: 'applied', fx_version: fxVersion } };
    if (laterInCatalog(inForce, publication.effective_from))
      return { ...pair, publication: { status: 'superseded' } };
    return pair;
  });
  const rates = claimsInOrder(checked.pairs).flatMap((pair) =>
    pair.publication.status === 'to_publish' ? [publicationRate(pair.publication.publication)] : [],
  );
  if (rates.length === 0) return checked;
  let outcome: PublicationEffect;
  try {
    outcome = {
      status: 'applied',
      fx_version: (await deps.publisher.publish({ rates, traceId })).fx_version,
    };
  } catch (error) {
    outcome = { status: 'failed', error };
  }
  return {
    ...updateClaims(checked, (pair) =>
      pair.publication.status === 'to_publish' ? { ...pair, publication: outcome } : pair,
    ),
    ...(outcome.status === 'applied' ? { fxVersion: outcome.fx_version } : {}),
  };
};

/** Carries out `step` for each claimed pair, one after the other in claim order. */
const eachClaim = async (
  run: Effected,
  step: (pair: ClaimedPair) => Promise<ClaimedPair>,
): Promise<Effected> => {
  const done = new Map<ClaimedPair, ClaimedPair>();
  for (const pair of claimsInOrder(run.pairs)) done.set(pair, await step(pair));
  return updateClaims(run, (pair) => done.get(pair) ?? pair);
};

/** Open change requests: one for each newly held tick (`held` of the claimed state). */
export const openChangeRequests = (deps: IngestDeps, run: Effected): Promise<Effected> =>
  eachClaim(run, async (pair) => {
    if (pair.changeRequest.status !== 'to_open') return pair;
    const { held } = pair.changeRequest;
    try {
      const { cr_id } = await deps.heldTicks.open({
        pair: pair.claim.policy.pair,
        proposed_rate: held.rate,
        last_rate: held.last_rate,
        move_bps: held.move_bps,
        source: held.source,
        observed_at: held.observed_at,
        trace_id: pair.claim.work.trace_id,
      });
      return { ...pair, changeRequest: { status: 'opened', cr_id } };
    } catch (error) {
      return { ...pair, changeRequest: { status: 'failed', error } };
    }
  });

const appliedVersion = (pair: ClaimedPair): string | undefined =>
  pair.publication.status === 'applied' ? pair.publication.fx_version : undefined;

/** The `operations.fx_breaker_opened` signal of a breaker entry that records an opening, else undefined. */
const breakerOpened = (entry: PendingJournalEntry): Omit<OperationalSignal, 'traceId'> | undefined => {
  const data = entry.data as Readonly<Record<string, unknown>>;
  if (data.decision !== 'breaker' || data.transition !== 'opened') return undefined;
  return {
    type: 'operations.fx_breaker_opened',
    key: `fx_breaker_opened:${entry.entry_id}`,
    data: {
      pair: String(data.pair),
      at: String(data.at),
      reason: typeof data.reason === 'string' ? data.reason : null,
      journal_entry_id: entry.entry_id,
    },
  };
};

/**
 * Emit: the journal entries of each claimed pair — its fx version's `fx_publication` entry (one per version),
 * the protection entries recorded with its work, and the held entry of a change request just opened. An entry
 * that fails stays with the pair's work.
 */
export const appendJournal = async (deps: IngestDeps, run: Effected): Promise<Effected> => {
  const claims = claimsInOrder(run.pairs);
  const publications = new Map<string, PendingJournalEntry>();
  for (const version of new Set(claims.map(appliedVersion)))
    if (version !== undefined)
      publications.set(
        version,
        publicationEntry(
          version,
          claims.filter((pair) => appliedVersion(pair) === version).map((pair) => pair.claim.work),
          run.context.traceId,
        ),
      );
  const appended = new Set<string>();
  return eachClaim(run, async (pair) => {
    const { claim, changeRequest } = pair;
    const version = appliedVersion(pair);
    const held = claim.state.held;
    const entries = [
      ...(version !== undefined ? [publications.get(version) as PendingJournalEntry] : []),
      ...claim.work.journal,
      ...(changeRequest.status === 'opened' && held
        ? [heldEntry(claim.policy, held, changeRequest.cr_id, true, claim.work.trace_id)]
        : []),
    ];
    const left: PendingJournalEntry[] = [];
    let error: unknown;
    let failed = false;
    for (const entry of entries) {
      if (appended.has(entry.entry_id)) continue;
      try {
        await deps.journal.append(entry);
        // A breaker that opened is also a signal (C32); it fails with its entry, so both come again next run
        // (the journal and the outbox each take an entry id once).
        const opened = breakerOpened(entry);
        if (opened) await deps.operations?.emit({ ...opened, traceId: claim.work.trace_id });
        appended.add(entry.entry_id);
      } catch (caught) {
        failed = true;
        error = caught;
        left.push(entry);
      }
    }
    return { ...pair, journal: failed ? { left, error } : { left } };
  });
};

const undone = (effect: { readonly status: string }): boolean =>
  effect.status === 'failed' || effect.status === 'to_publish' || effect.status === 'to_open';

const errorOf = (effect: { readonly status: string; readonly error?: unknown }): unknown =>
  effect.status === 'failed' ? effect.error : undefined;

/** The pair's state once its side effects are carried out: what failed stays as its work. */
const confirmedState = (pair: ClaimedPair): { state: PairState; remaining?: PairWork } => {
  const { claim, publication: published, changeRequest } = pair;
  const publication = claim.work.publication;
  const version = appliedVersion(pair);
  const left = pair.journal.left;
  const publishFailed = undone(published);
  const crFailed = undone(changeRequest);
  const { publication: _done, open_change_request: _opened, ...workRest } = claim.work;
  const remaining: PairWork | undefined =
    publishFailed || crFailed || left.length > 0
      ? {
          ...workRest,
          ...(publishFailed && publication ? { publication } : {}),
          ...(crFailed ? { open_change_request: true } : {}),
          journal: left,
        }
      : undefined;
  const { work: _work, held: previousHeld, last_published: previousPublished, ...rest } = claim.state;
  const last_published: PublishedRate | undefined =
    version && publication
      ? {
          rate: publication.rate,
          source: publication.source,
          effective_from: publication.effective_from,
          observed_at: publication.observed_at,
          fx_version: version,
        }
      : previousPublished;
  const crId = changeRequest.status === 'opened' ? changeRequest.cr_id : undefined;
  const held: HeldTick | undefined = previousHeld && crId ? { ...previousHeld, cr_id: crId } : previousHeld;
  return {
    state: {
      ...rest,
      ...(last_published ? { last_published } : {}),
      ...(held ? { held } : {}),
      ...(remaining ? { work: remaining } : {}),
    },
    ...(remaining ? { remaining } : {}),
  };
};

const confirmedReport = (pair: ClaimedPair, state: PairState, remaining: PairWork | undefined) => {
  const { claim, publication: published, changeRequest } = pair;
  const publication = claim.work.publication;
  const version = appliedVersion(pair);
  const crId = changeRequest.status === 'opened' ? changeRequest.cr_id : undefined;
  const error = undone(published) ? errorOf(published) : (errorOf(changeRequest) ?? pair.journal.error);
  const outcome: PairOutcome = remaining
    ? 'incomplete'
    : published.status === 'superseded'
      ? 'superseded'
      : claim.outcome;
  const shown = publication ?? claim.proposal;
  const heldCr = claim.outcome === 'held' ? (crId ?? state.held?.cr_id) : undefined;
  return {
    pair: claim.policy.pair,
    outcome,
    ...(shown ? { rate: shown.rate, source: shown.source } : {}),
    ...(claim.work.move_bps ? { move_bps: claim.work.move_bps } : {}),
    ...(heldCr ? { cr_id: heldCr } : {}),
    ...(version ? { fx_version: version, effective_from: publication?.effective_from } : {}),
    ...(remaining ? { error: messageOf(error) } : {}),
    failures: claim.failures,
    transitions: claim.transitions,
  };
};

/**
 * Confirm: each claimed pair's state written back without what was done (one conditional write each); what
 * failed stays as its work for the next run. Every pair is then finished.
 */
export const confirmWork = async (deps: IngestDeps, run: Effected): Promise<Run<FinishedPair>> => {
  const claims = claimsInOrder(run.pairs);
  const confirmed = new Map(
    await Promise.all(
      claims.map(async (pair) => {
        const { state, remaining } = confirmedState(pair);
        await savePair(deps, run.context, pair.claim.policy, state);
        const report: FinishedPair = { stage: 'finished', report: confirmedReport(pair, state, remaining) };
        return [pair, report] as const;
      }),
    ),
  );
  const publishFailure = claims.find((pair) => pair.publication.status === 'failed');
  const publishError = publishFailure ? errorOf(publishFailure.publication) : undefined;
  const sideErrors = [
    ...claims
      .filter((pair) => pair.changeRequest.status === 'failed')
      .map((pair) => errorOf(pair.changeRequest)),
    ...claims.filter((pair) => 'error' in pair.journal).map((pair) => pair.journal.error),
  ];
  return {
    ...run,
    pairs: run.pairs.map((pair) => (pair.stage === 'claimed' ? (confirmed.get(pair) as FinishedPair) : pair)),
    failure: publishError ?? sideErrors[0],
  };
};

/** The run's report; a `RateIngestionError` (with the report) when some work is left for the next run. */
export const reportRun = (run: Run<FinishedPair>): IngestReport => {
  const { now, traceId, runId } = run.context;
  const report: IngestReport = {
    at: now.toISOString(),
    trace_id: traceId,
    run_id: runId,
    ...(run.fxVersion ? { fx_version: run.fxVersion } : {}),
    pairs: run.pairs.map((pair) => pair.report),
  };
  if (report.pairs.some((pair) => pair.outcome === 'incomplete'))
    throw new RateIngestionError(report, { cause: run.failure });
  return report;
};
