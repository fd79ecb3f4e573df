/**
 * The journal entries of FX ingestion: one `fx_publication` per fx version, and `fx_protection` decisions
 * (breaker transitions, source failures and fallbacks, held ticks). Entry ids are deterministic (pair, slot,
 * what), so appending one again is a no-op.
 */
import type { HeldTick } from '../../domain/rates/decision';
import type { BreakerTransition } from '../../domain/rates/protection';
import type { FxRate, JsonValue, PairWork, PendingJournalEntry } from '../../ports/rates';
import type { RatePairPolicy } from '../../schemas/rate-policy';
import type { SourceFailure } from './ingest-run';

const FX_PUBLICATION = 'fx_publication';
const FX_PROTECTION = 'fx_protection';

type Publication = NonNullable<PairWork['publication']>;

/** The catalog's rate of a publication (without its `observed_at`). */
export const publicationRate = (publication: Publication): FxRate => ({
  pair: publication.pair,
  rate: publication.rate,
  source: publication.source,
  method: publication.method,
  precision: publication.precision,
  effective_from: publication.effective_from,
});

/** The fx version's entry: every pair it published with its observation and its move. */
export const publicationEntry = (
  fxVersion: string,
  works: readonly PairWork[],
  traceId: string,
): PendingJournalEntry => ({
  entry_id: `fx-publication:${fxVersion}`,
  type: FX_PUBLICATION,
  data: {
    fx_version: fxVersion,
    trace_id: traceId,
    pairs: works.map((work) => {
      const publication = work.publication as Publication;
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

const protectionEntry = (
  pair: string,
  slot: number,
  what: string,
  data: { readonly decision: string; readonly [field: string]: JsonValue },
  traceId: string,
): PendingJournalEntry => ({
  entry_id: `fx-protection:${pair.replace('→', '-')}:${new Date(slot * 1000).toISOString()}:${what}`,
  type: FX_PROTECTION,
  data: { ...data, trace_id: traceId },
});

export const breakerEntry = (
  pair: string,
  slot: number,
  transition: BreakerTransition,
  traceId: string,
): PendingJournalEntry =>
  protectionEntry(
    pair,
    slot,
    `breaker-${transition.to}`,
    {
      decision: 'breaker',
      transition: transition.to === 'open' ? 'opened' : transition.to,
      pair,
      from: transition.from,
      to: transition.to,
      at: transition.at,
      reason: transition.reason,
    },
    traceId,
  );

export const failureEntry = (
  pair: string,
  slot: number,
  failure: SourceFailure,
  traceId: string,
): PendingJournalEntry =>
  protectionEntry(
    pair,
    slot,
    `source-failed:${failure.source_id}`,
    {
      decision: failure.fallback_to ? 'fallback' : 'source_failed',
      pair,
      source: failure.source_id,
      reason: failure.reason,
      fallback_to: failure.fallback_to ?? null,
    },
    traceId,
  );

/** A held tick, with the change request it opened (`fresh`) or joined. */
export const heldEntry = (
  pair: RatePairPolicy,
  held: HeldTick,
  crId: string,
  fresh: boolean,
  traceId: string,
): PendingJournalEntry =>
  protectionEntry(
    pair.pair,
    held.slot,
    'held',
    {
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
    },
    traceId,
  );
