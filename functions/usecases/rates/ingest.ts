import {
  AggregationError,
  isPositiveRate,
  medianRate,
  parseRate,
  roundRate,
  type Tick,
  twapRate,
  twapWeights,
} from '../../domain/rates/aggregate';
import {
  type BreakerTransition,
  breakerGate,
  breakerRecord,
  checkTickCap,
} from '../../domain/rates/protection';
import type { Clock } from '../../ports/clock';
import type {
  CurrentRates,
  FxRate,
  HeldTick,
  HeldTickOpener,
  JournalAppender,
  PairState,
  PairWork,
  PendingJournalEntry,
  PublishedRate,
  RatePublisher,
  RateQuote,
  RateSource,
  RateStateStore,
} from '../../ports/rates';
import { canonicalPair, type RatePairPolicy, type RatePolicy } from '../../schemas/rate-policy';

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
 */

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
/** A quote observed further in the future than this (clock skew) is malformed. */
export const FUTURE_QUOTE_TOLERANCE_SECONDS = 60;

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

const FX_PUBLICATION = 'fx_publication';
const FX_PROTECTION = 'fx_protection';
const MAX_SOURCE_CHARS = 100;

const pairKey = (pair: string): string => pair.replace('→', '-');
const slotIso = (slot: number): string => new Date(slot * 1000).toISOString();
const protectionId = (pair: string, slot: number, what: string): string =>
  `fx-protection:${pairKey(pair)}:${slotIso(slot)}:${what}`;

const reasonOf = (error: unknown): string => {
  const reason = (error as { reason?: unknown } | undefined)?.reason;
  return typeof reason === 'string' ? reason : 'error';
};

const messageOf = (error: unknown): string => (error instanceof Error ? error.message : String(error));

type Fetched = { quotes: RateQuote[]; failures: SourceFailure[] };

/** One source's answer for some pairs: a validated quote or a failure reason per pair. */
const askSource = async (
  source: RateSource | undefined,
  sourceId: string,
  pairs: readonly RatePairPolicy[],
  now: Date,
): Promise<Map<string, RateQuote | string>> => {
  const answers = new Map<string, RateQuote | string>();
  if (!source) {
    for (const pair of pairs) answers.set(pair.pair, 'unknown_source');
    return answers;
  }
  let quotes: RateQuote[];
  try {
    quotes = await source.fetch(
      pairs.map((pair) => pair.pair),
      now,
    );
  } catch (error) {
    for (const pair of pairs) answers.set(pair.pair, reasonOf(error));
    return answers;
  }
  for (const pair of pairs) {
    const quote = quotes.find((candidate) => canonicalPair(String(candidate?.pair)) === pair.pair);
    const observed = Date.parse(String(quote?.observed_at));
    if (!quote) answers.set(pair.pair, 'no_quote');
    else if (quote.source !== sourceId || !isPositiveRate(quote.rate) || Number.isNaN(observed))
      answers.set(pair.pair, 'malformed');
    else if (observed > now.getTime() + FUTURE_QUOTE_TOLERANCE_SECONDS * 1000)
      answers.set(pair.pair, 'future_quote');
    else if (now.getTime() - observed > pair.stale_after_seconds * 1000)
      answers.set(pair.pair, 'stale_quote');
    else
      answers.set(pair.pair, {
        pair: pair.pair,
        rate: quote.rate,
        source: sourceId,
        observed_at: new Date(observed).toISOString(),
      });
  }
  return answers;
};

/**
 * Quotes for every pair, one `fetch` per source per round. `median` pairs ask all their sources at once;
 * `provider` and `twap` pairs ask their first source, then the next one after each failure (fallback order).
 */
const collectQuotes = async (
  sources: ReadonlyMap<string, RateSource>,
  pairs: readonly RatePairPolicy[],
  now: Date,
): Promise<Map<string, Fetched>> => {
  const results = new Map<string, Fetched>(pairs.map((pair) => [pair.pair, { quotes: [], failures: [] }]));
  let round = pairs.map((pair) => ({
    pair,
    ids: pair.method === 'median' ? pair.sources : pair.sources.slice(0, 1),
  }));
  while (round.length > 0) {
    const bySource = new Map<string, RatePairPolicy[]>();
    for (const { pair, ids } of round)
      for (const id of ids) bySource.set(id, [...(bySource.get(id) ?? []), pair]);
    const answers = new Map(
      await Promise.all(
        [...bySource].map(
          async ([id, asked]) => [id, await askSource(sources.get(id), id, asked, now)] as const,
        ),
      ),
    );
    const next: typeof round = [];
    for (const { pair, ids } of round) {
      const fetched = results.get(pair.pair) as Fetched;
      for (const id of ids) {
        const answer = answers.get(id)?.get(pair.pair) as RateQuote | string;
        if (typeof answer !== 'string') {
          fetched.quotes.push(answer);
          continue;
        }
        const fallback = pair.method === 'median' ? undefined : pair.sources[pair.sources.indexOf(id) + 1];
        fetched.failures.push({
          source_id: id,
          reason: answer,
          ...(fallback ? { fallback_to: fallback } : {}),
        });
        if (fallback) next.push({ pair, ids: [fallback] });
      }
    }
    round = next;
  }
  return results;
};

const truncateSource = (ids: readonly string[]): string => {
  const joined = [...new Set(ids)].join('+');
  return joined.length <= MAX_SOURCE_CHARS ? joined : `${joined.slice(0, MAX_SOURCE_CHARS - 1)}…`;
};

type Aggregated =
  | { readonly rate: string; readonly source: string; readonly observed_at: string; readonly ticks: Tick[] }
  | { readonly failure: string; readonly ticks: Tick[] };

/** The pair's rate by its method, from this run's quotes (and, for `twap`, the ticks before them). */
const aggregate = (
  pair: RatePairPolicy,
  state: PairState,
  quotes: readonly RateQuote[],
  now: Date,
): Aggregated => {
  const spot = quotes[0];
  const keptTicks = pair.method === 'twap' ? [...state.ticks] : [];
  if (!spot) return { failure: 'no_source_answered', ticks: keptTicks };
  try {
    if (pair.method === 'median') {
      const latest = quotes
        .map((quote) => quote.observed_at)
        .sort()
        .at(-1) as string;
      return {
        rate: medianRate(
          quotes.map((quote) => quote.rate),
          pair.precision,
        ),
        source: truncateSource(quotes.map((quote) => quote.source)),
        observed_at: latest,
        ticks: keptTicks,
      };
    }
    if (pair.method === 'twap') {
      const ticks = [...keptTicks, { rate: spot.rate, observed_at: spot.observed_at, source: spot.source }];
      const window = { end: now, seconds: pair.twap_window_seconds as number };
      const weighted = twapWeights(ticks, window).map(({ tick }) => tick.source ?? spot.source);
      return {
        rate: twapRate(ticks, window, pair.precision),
        source: truncateSource(weighted.length > 0 ? weighted : [spot.source]),
        observed_at: spot.observed_at,
        ticks,
      };
    }
    return {
      rate: roundRate(parseRate(spot.rate), pair.precision),
      source: spot.source,
      observed_at: spot.observed_at,
      ticks: keptTicks,
    };
  } catch (error) {
    if (error instanceof AggregationError) return { failure: error.reason, ticks: keptTicks };
    throw error;
  }
};

const breakerEntry = (pair: string, slot: number, transition: BreakerTransition, traceId: string) => ({
  entry_id: protectionId(pair, slot, `breaker-${transition.to}`),
  type: FX_PROTECTION,
  data: {
    decision: 'breaker',
    transition: transition.to === 'open' ? 'opened' : transition.to,
    pair,
    from: transition.from,
    to: transition.to,
    at: transition.at,
    reason: transition.reason,
    trace_id: traceId,
  },
});

const failureEntry = (pair: string, slot: number, failure: SourceFailure, traceId: string) => ({
  entry_id: protectionId(pair, slot, `source-failed:${failure.source_id}`),
  type: FX_PROTECTION,
  data: {
    decision: failure.fallback_to ? 'fallback' : 'source_failed',
    pair,
    source: failure.source_id,
    reason: failure.reason,
    fallback_to: failure.fallback_to ?? null,
    trace_id: traceId,
  },
});

const heldEntry = (
  pair: RatePairPolicy,
  held: HeldTick,
  crId: string,
  fresh: boolean,
  traceId: string,
): PendingJournalEntry => ({
  entry_id: protectionId(pair.pair, held.slot, 'held'),
  type: FX_PROTECTION,
  data: {
    decision: 'held',
    pair: pair.pair,
    proposed_rate: held.rate,
    last_rate: held.last_rate,
    move_bps: held.move_bps,
    max_tick_move_bps: pair.max_tick_move_bps,
    source: held.source,
    observed_at: held.observed_at,
    cr_id: crId,
    new_change_request: fresh,
    trace_id: traceId,
  },
});

interface Claimed {
  readonly policy: RatePairPolicy;
  /** The state as stored by the claim (its version is the one to confirm against). */
  readonly state: PairState;
  readonly work: PairWork;
  readonly recovered: boolean;
  readonly failures: readonly SourceFailure[];
  readonly transitions: readonly BreakerTransition[];
  readonly outcome: 'published' | 'held' | 'unavailable' | 'recovered';
  /** The held tick of this run (for the report). */
  readonly proposal?: HeldTick;
}

interface TickPlan {
  readonly policy: RatePairPolicy;
  readonly state: PairState;
  readonly slot: number;
  readonly gate: ReturnType<typeof breakerGate>;
}

const sameRate = (current: FxRate | undefined, publication: NonNullable<PairWork['publication']>): boolean =>
  current !== undefined &&
  current.rate === publication.rate &&
  current.effective_from === publication.effective_from &&
  current.source === publication.source &&
  current.method === publication.method &&
  current.precision === publication.precision;

const laterInCatalog = (current: FxRate | undefined, effectiveFrom: string): boolean =>
  current?.effective_from !== undefined && Date.parse(current.effective_from) > Date.parse(effectiveFrom);

const publicationRate = (publication: NonNullable<PairWork['publication']>): FxRate => ({
  pair: publication.pair,
  rate: publication.rate,
  source: publication.source,
  method: publication.method,
  precision: publication.precision,
  effective_from: publication.effective_from,
});

/** One ingestion pass. Throws `RateIngestionError` (with the report) when some side effect failed. */
export const ingestRates = async (deps: IngestDeps, options: IngestOptions): Promise<IngestReport> => {
  const now = deps.clock.now();
  const at = now.toISOString();
  const runId = options.runId ?? options.traceId;
  const traceId = options.traceId;
  const leaseSeconds = options.leaseSeconds ?? DEFAULT_LEASE_SECONDS;
  const override = options.intervalOverrideSeconds;
  if (override !== undefined && (!Number.isInteger(override) || override < 1))
    throw new RangeError(`intervalOverrideSeconds must be a positive integer: ${override}`);
  const leaseUntil = new Date(now.getTime() + leaseSeconds * 1000).toISOString();
  const base = { at, trace_id: traceId, run_id: runId };

  const current = await deps.current.current();
  const policy: RatePolicy | undefined = current.policy;
  if (!policy) return { ...base, pairs: [] };
  const inCatalog = new Map(current.rates.map((rate) => [canonicalPair(rate.pair), rate]));
  const pairs = policy.pairs.map((pair) => ({ ...pair, pair: canonicalPair(pair.pair) }));
  const states = await Promise.all(pairs.map((pair) => deps.state.get(pair.pair)));

  const reports = new Map<string, PairReport>();
  const skip = (pair: string, outcome: PairOutcome, extra: Partial<PairReport> = {}) =>
    reports.set(pair, { pair, outcome, failures: [], transitions: [], ...extra });
  const claimed: Claimed[] = [];
  const ticks: TickPlan[] = [];
  const retentionOf = (pair: RatePairPolicy) =>
    pair.method === 'twap' ? { end: now, seconds: pair.twap_window_seconds as number } : undefined;

  // Work left by an earlier run is completed first (ours at once, another run's once its lease is over).
  await Promise.all(
    pairs.map(async (pair, index) => {
      const state = states[index] as PairState;
      const work = state.work;
      if (work) {
        if (work.run_id !== runId && Date.parse(work.lease_until) > now.getTime()) {
          skip(pair.pair, 'in_progress', { retry_at: work.lease_until });
          return;
        }
        const taken = { ...work, run_id: runId, lease_until: leaseUntil };
        const result = await deps.state.put({ ...state, work: taken }, retentionOf(pair));
        if (!result.saved) skip(pair.pair, 'in_progress');
        else
          claimed.push({
            policy: pair,
            state: result.state,
            work: taken,
            recovered: true,
            failures: [],
            transitions: [],
            outcome: 'recovered',
          });
        return;
      }
      const interval = override ?? pair.interval_seconds;
      const slot = Math.floor(now.getTime() / 1000 / interval) * interval;
      if (state.last_slot !== undefined && state.last_slot >= slot) {
        skip(pair.pair, 'not_due');
        return;
      }
      const gate = breakerGate(state.breaker, policy.breaker, now);
      if (!gate.allowed) {
        skip(pair.pair, 'breaker_open', gate.retry_at ? { retry_at: gate.retry_at } : {});
        return;
      }
      ticks.push({ policy: pair, state, slot, gate });
    }),
  );

  const fetched = await collectQuotes(
    typeof deps.sources === 'function' ? deps.sources(policy) : deps.sources,
    ticks.map((plan) => plan.policy),
    now,
  );

  await Promise.all(
    ticks.map(async ({ policy: pair, state, slot, gate }) => {
      const { quotes, failures } = fetched.get(pair.pair) as Fetched;
      const aggregated = aggregate(pair, state, quotes, now);
      const baseline = inCatalog.get(pair.pair)?.rate ?? state.last_published?.rate;
      const journal: PendingJournalEntry[] = failures.map((failure) =>
        failureEntry(pair.pair, slot, failure, traceId),
      );
      let held = state.held;
      let outcome: Claimed['outcome'];
      let step: ReturnType<typeof breakerRecord>;
      let publication: PairWork['publication'];
      let moveBps: string | undefined;
      let proposal: HeldTick | undefined;
      let openChangeRequest = false;
      if ('failure' in aggregated) {
        step = breakerRecord(gate.state, policy.breaker, 'failure', now);
        outcome = 'unavailable';
      } else {
        const cap = checkTickCap(baseline, aggregated.rate, pair.max_tick_move_bps);
        moveBps = cap.move_bps;
        if (cap.decision === 'held') {
          step = breakerRecord(gate.state, policy.breaker, 'anomaly', now);
          outcome = 'held';
          // One change request per held episode: while an earlier held tick against the same published rate
          // is still under review (younger than max_age_seconds), another held tick joins it.
          proposal = {
            rate: aggregated.rate,
            last_rate: baseline as string,
            move_bps: cap.move_bps as string,
            source: aggregated.source,
            observed_at: aggregated.observed_at,
            slot,
          };
          const ongoing =
            held?.cr_id !== undefined &&
            held.last_rate === baseline &&
            now.getTime() - Date.parse(held.observed_at) <= pair.max_age_seconds * 1000;
          if (ongoing) journal.push(heldEntry(pair, proposal, held?.cr_id as string, false, traceId));
          else {
            held = proposal;
            openChangeRequest = true;
          }
        } else {
          step = breakerRecord(gate.state, policy.breaker, 'success', now);
          outcome = 'published';
          held = undefined;
          publication = {
            pair: pair.pair,
            rate: aggregated.rate,
            source: aggregated.source,
            method: pair.method,
            precision: pair.precision,
            effective_from: new Date(now.getTime() + pair.publication_delay_seconds * 1000).toISOString(),
            observed_at: aggregated.observed_at,
          };
        }
      }
      const transitions = [...gate.transitions, ...step.transitions];
      journal.unshift(...transitions.map((transition) => breakerEntry(pair.pair, slot, transition, traceId)));
      const work: PairWork = {
        run_id: runId,
        lease_until: leaseUntil,
        slot,
        trace_id: traceId,
        ...(publication ? { publication } : {}),
        ...(baseline !== undefined ? { previous_rate: baseline } : {}),
        ...(moveBps !== undefined ? { move_bps: moveBps } : {}),
        ...(openChangeRequest ? { open_change_request: true } : {}),
        journal,
      };
      const { held: _held, work: _work, ...rest } = state;
      const next: PairState = {
        ...rest,
        last_slot: slot,
        breaker: step.state,
        ticks: aggregated.ticks,
        ...(held ? { held } : {}),
        work,
      };
      const result = await deps.state.put(next, retentionOf(pair));
      if (!result.saved) {
        skip(pair.pair, 'concurrent');
        return;
      }
      claimed.push({
        policy: pair,
        state: result.state,
        work,
        recovered: false,
        failures,
        transitions,
        outcome,
        ...(proposal ? { proposal } : {}),
      });
    }),
  );

  // Publication: every claimed pair's rate in one new fx version.
  const toPublish: Claimed[] = [];
  const applied = new Map<string, string>();
  const superseded = new Set<string>();
  for (const claim of claimed) {
    const publication = claim.work.publication;
    if (!publication) continue;
    const inForce = inCatalog.get(claim.policy.pair);
    if (sameRate(inForce, publication)) applied.set(claim.policy.pair, current.fx_version);
    else if (laterInCatalog(inForce, publication.effective_from)) superseded.add(claim.policy.pair);
    else toPublish.push(claim);
  }
  let fxVersion: string | undefined;
  let publishError: unknown;
  if (toPublish.length > 0) {
    try {
      const result = await deps.publisher.publish({
        rates: toPublish.map((claim) =>
          publicationRate(claim.work.publication as NonNullable<PairWork['publication']>),
        ),
        traceId,
      });
      fxVersion = result.fx_version;
      for (const claim of toPublish) applied.set(claim.policy.pair, fxVersion);
    } catch (error) {
      publishError = error;
    }
  }

  // Change requests for newly held ticks.
  const opened = new Map<string, string>();
  const openErrors = new Map<string, unknown>();
  for (const claim of claimed) {
    const held = claim.state.held;
    if (!claim.work.open_change_request || !held) continue;
    try {
      const { cr_id } = await deps.heldTicks.open({
        pair: claim.policy.pair,
        proposed_rate: held.rate,
        last_rate: held.last_rate,
        move_bps: held.move_bps,
        source: held.source,
        observed_at: held.observed_at,
        trace_id: claim.work.trace_id,
      });
      opened.set(claim.policy.pair, cr_id);
    } catch (error) {
      openErrors.set(claim.policy.pair, error);
    }
  }

  // Journal: one fx_publication entry per fx version, then each pair's protection entries.
  const publicationEntries = new Map<string, PendingJournalEntry>();
  for (const version of new Set(applied.values())) {
    const published = claimed.filter((claim) => applied.get(claim.policy.pair) === version);
    publicationEntries.set(version, {
      entry_id: `fx-publication:${version}`,
      type: FX_PUBLICATION,
      data: {
        fx_version: version,
        trace_id: traceId,
        pairs: published.map(({ work }) => {
          const publication = work.publication as NonNullable<PairWork['publication']>;
          return {
            ...publicationRate(publication),
            effective_from: publication.effective_from,
            observed_at: publication.observed_at,
            previous_rate: work.previous_rate ?? null,
            move_bps: work.move_bps ?? null,
          };
        }),
      },
    });
  }
  const appended = new Set<string>();
  const journalErrors = new Map<string, unknown>();
  const append = async (entry: PendingJournalEntry): Promise<void> => {
    if (appended.has(entry.entry_id)) return;
    await deps.journal.append(entry);
    appended.add(entry.entry_id);
  };
  const leftovers = new Map<string, PendingJournalEntry[]>();
  for (const claim of claimed) {
    const pair = claim.policy.pair;
    const entries = [...claim.work.journal];
    const version = applied.get(pair);
    if (version) entries.unshift(publicationEntries.get(version) as PendingJournalEntry);
    const crId = opened.get(pair);
    const held = claim.state.held;
    if (crId && held) entries.push(heldEntry(claim.policy, held, crId, true, claim.work.trace_id));
    const left: PendingJournalEntry[] = [];
    for (const entry of entries) {
      try {
        await append(entry);
      } catch (error) {
        journalErrors.set(pair, error);
        left.push(entry);
      }
    }
    leftovers.set(pair, left);
  }

  // Confirm: clear what was done; what failed stays as the pair's work for the next run.
  await Promise.all(
    claimed.map(async (claim) => {
      const pair = claim.policy.pair;
      const version = applied.get(pair);
      const publication = claim.work.publication;
      const publishFailed = publication !== undefined && version === undefined && !superseded.has(pair);
      const crId = opened.get(pair);
      const crFailed = openErrors.has(pair);
      const left = leftovers.get(pair) ?? [];
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
      const held = previousHeld && crId ? { ...previousHeld, cr_id: crId } : previousHeld;
      const next: PairState = {
        ...rest,
        ...(last_published ? { last_published } : {}),
        ...(held ? { held } : {}),
        ...(remaining ? { work: remaining } : {}),
      };
      await deps.state.put(next, retentionOf(claim.policy));
      const error = publishFailed ? publishError : (openErrors.get(pair) ?? journalErrors.get(pair));
      const outcome: PairOutcome = remaining
        ? 'incomplete'
        : superseded.has(pair)
          ? 'superseded'
          : claim.outcome;
      const shown = publication ?? claim.proposal;
      const heldCr = claim.outcome === 'held' ? (crId ?? held?.cr_id) : undefined;
      reports.set(pair, {
        pair,
        outcome,
        ...(shown ? { rate: shown.rate, source: shown.source } : {}),
        ...(claim.work.move_bps ? { move_bps: claim.work.move_bps } : {}),
        ...(heldCr ? { cr_id: heldCr } : {}),
        ...(version ? { fx_version: version, effective_from: publication?.effective_from } : {}),
        ...(remaining ? { error: messageOf(error) } : {}),
        failures: claim.failures,
        transitions: claim.transitions,
      });
    }),
  );

  const report: IngestReport = {
    ...base,
    ...(fxVersion ? { fx_version: fxVersion } : {}),
    pairs: pairs.map((pair) => reports.get(pair.pair) as PairReport),
  };
  if (report.pairs.some((pair) => pair.outcome === 'incomplete'))
    throw new RateIngestionError(report, {
      cause: publishError ?? [...openErrors.values(), ...journalErrors.values()][0],
    });
  return report;
};
