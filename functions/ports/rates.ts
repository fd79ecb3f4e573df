import type { z } from 'zod';
import type { Tick } from '../domain/rates/aggregate';
import type { HeldTick } from '../domain/rates/decision';
import type { BreakerState } from '../domain/rates/protection';
import type { fxRateSchema } from '../schemas/catalog-document';
import type { RatePolicy } from '../schemas/rate-policy';

/** A tick beyond the per-tick cap, waiting for people to decide (the rate domain's, as stored). */
export type { HeldTick };

/** A published rate as the catalog's fx part holds it (`pair` written `EUR→USD`). */
export type FxRate = z.infer<typeof fxRateSchema>;

/** One source's rate for a pair at a time (C1: a decimal string). */
export interface RateQuote {
  readonly pair: string;
  readonly rate: string;
  /** The `source_id` of the source that quoted it. */
  readonly source: string;
  /** ISO 8601 UTC with milliseconds. */
  readonly observed_at: string;
}

/**
 * A rate provider. `fetch` answers the pairs it could quote; a pair left out is a failure of this source for
 * that pair, and a rejected promise a failure for every pair asked (a timeout, an error status, a malformed
 * answer). It never answers a rate it could not validate.
 */
export interface RateSource {
  readonly sourceId: string;
  fetch(pairs: readonly string[], at: Date): Promise<RateQuote[]>;
}

/** The last automatic publication of a pair. */
export interface PublishedRate {
  readonly rate: string;
  readonly source: string;
  readonly effective_from: string;
  readonly observed_at: string;
  readonly fx_version: string;
}

/** A journal entry (the `JournalAppender` input) waiting to be appended. */
export interface PendingJournalEntry {
  readonly entry_id: string;
  readonly type: string;
  readonly data: JsonValue;
}

/**
 * Side effects of one ingestion run for a pair, claimed with the state they follow from (one conditional
 * write) and cleared once done: the publication, the change request of a held tick and the journal entries. A
 * run that dies leaves them for the next run (after the lease, or at once for a retry of the same run).
 */
export interface PairWork {
  readonly run_id: string;
  readonly lease_until: string;
  readonly slot: number;
  readonly trace_id: string;
  readonly publication?: FxRate & { readonly effective_from: string; readonly observed_at: string };
  /** The previous rate and the move, for the publication's journal entry. */
  readonly previous_rate?: string;
  readonly move_bps?: string;
  /** A change request must be opened for `held`. */
  readonly open_change_request?: boolean;
  readonly journal: readonly PendingJournalEntry[];
}

/** What ingestion keeps per pair. `version` 0: nothing stored yet. */
export interface PairState {
  readonly pair: string;
  readonly version: number;
  /** The last slot (epoch seconds, a multiple of the interval) a run handled. */
  readonly last_slot?: number;
  readonly breaker: BreakerState;
  /** Recent spot ticks (TWAP pairs), oldest first. */
  readonly ticks: readonly Tick[];
  readonly last_published?: PublishedRate;
  readonly held?: HeldTick;
  readonly work?: PairWork;
}

export type SaveResult = { readonly saved: true; readonly state: PairState } | { readonly saved: false };

export interface TickRetention {
  /** Keep what a TWAP over `seconds` ending at `end` (or later) needs; 0 keeps only the last tick. */
  readonly end: Date;
  readonly seconds: number;
}

export interface RateStateStore {
  /** The pair's state (consistent read); a pair never stored has version 0 and a closed breaker. */
  get(pair: string): Promise<PairState>;
  /**
   * Writes `state` as version `state.version + 1` only if the stored version is still `state.version`;
   * `{ saved: false }` when another writer came first. Ticks are trimmed to `retention` (and `MAX_TICKS`).
   */
  put(state: PairState, retention?: TickRetention): Promise<SaveResult>;
}

export interface RatePublisher {
  /**
   * Publishes a new fx version: the current fx part with these pairs replaced (conditional publication, with
   * its `catalog.FXRatePublished` event). Publishing rates identical to what is current is a no-op that
   * answers the current `fx_version`.
   */
  publish(input: {
    readonly rates: readonly FxRate[];
    readonly traceId: string;
  }): Promise<{ fx_version: string }>;
}

export interface HeldTickInput {
  readonly pair: string;
  readonly proposed_rate: string;
  readonly last_rate: string;
  readonly move_bps: string;
  readonly source: string;
  readonly observed_at: string;
  readonly trace_id: string;
}

/** Opens a change request for a held tick, for people to decide (C23). */
export interface HeldTickOpener {
  open(input: HeldTickInput): Promise<{ cr_id: string }>;
}

export type JsonValue =
  | string
  | number
  | boolean
  | null
  | readonly JsonValue[]
  | { readonly [key: string]: JsonValue };

/** The write-once journal: appending an `entry_id` that exists is a no-op (`created: false`). */
export interface JournalAppender {
  append(input: { readonly entry_id: string; readonly type: string; readonly data: JsonValue }): Promise<{
    index: number;
    created: boolean;
  }>;
}

/** The fx part in force and the catalog's rate policy. */
export interface CurrentRates {
  current(): Promise<{
    fx_version: string;
    base_currency: string;
    rates: readonly FxRate[];
    policy?: RatePolicy;
  }>;
}
