/**
 * The write-once audit journal (issue 7, C23): entries appended in index order, sealed in slices by signed tree
 * heads (RFC 9162 Merkle tree heads in a DSSE envelope, signed with the receipt key whose public half is in
 * `GET /keys`), with inclusion proofs of any entry and consistency proofs between any two heads.
 *
 * - Append: read the state (size and Merkle frontier), write the entry, its `entry_id` marker and the new state
 *   in one conditional transaction; a lost race re-reads and tries again (bounded, jittered). An `entry_id`
 *   already appended answers its index with `created: false`.
 * - Slices: after an append that leaves `sliceSize` entries unsealed, and from the scheduled function every
 *   minute (entries waiting and the last head `sliceSeconds` old), a head is signed for the state's size with
 *   the root of the state's frontier: the root of exactly those entries, without reading them.
 * - Mirror: when a slice closes, its entries and head are copied as objects (write-once), the head after its
 *   entries, and `mirrored_size` in the state moves past them. A copy that fails is reported through
 *   `onMirrorError` and resumed from `mirrored_size` by the next closure or scheduled run, so the mirror always
 *   catches up and every object in it is sealed by a head already in DynamoDB.
 */
import { type DsseSigner, signEnvelope } from '../../domain/audit/dsse';
import {
  entryJson,
  entryLeafHash,
  hashFromHex,
  type JournalExport,
  type SignedTreeHead,
  type StoredEntry,
  signedTreeHeadJson,
  TREE_HEAD_PAYLOAD_TYPE,
  type TreeHead,
  toHex,
  treeHeadPayload,
} from '../../domain/audit/journal-verify';
import {
  appendToFrontier,
  consistencyProofOfLeafHashes,
  frontierRoot,
  inclusionProofOfLeafHashes,
  type MerkleFrontier,
  verifyConsistency,
  verifyInclusion,
} from '../../domain/audit/merkle';
import { ServiceError } from '../../domain/errors';
import type { Clock } from '../../ports/clock';
import type { JournalEntryInput, JournalMirror, JournalState, JournalStore } from '../../ports/journal';
import { cursorCodec } from '../../shared/cursor';
import { CONFLICT, type RetryPolicy, retryOnConflict } from '../../shared/retry';

/** No entry (or no head) of that index (size). */
export class JournalNotFoundError extends ServiceError {
  constructor(message: string) {
    super('not_found', message);
    this.name = 'JournalNotFoundError';
  }
}

/** The entry exists but no signed head covers it yet: its slice has not closed. */
export class EntryNotSealedError extends ServiceError {
  constructor(
    readonly index: number,
    /** The size of the latest signed head (0 before the first). */
    readonly sealedSize: number,
  ) {
    super(
      'conflict',
      `entry ${index} is not sealed yet: the latest signed tree head covers ${sealedSize} entries; ` +
        'it will be covered when its slice closes',
      { details: { index, sealed_size: sealedSize } },
    );
    this.name = 'EntryNotSealedError';
  }
}

/** A request out of range: a negative or non-integer index or size, `from` after `to`, an entry past a tree. */
export class JournalRangeError extends ServiceError {
  constructor(message: string) {
    super('invalid_request', message);
    this.name = 'JournalRangeError';
  }
}

/** An entry the journal refuses (empty id or type, too large, not JSON). */
export class InvalidJournalEntryError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'InvalidJournalEntryError';
  }
}

/** Every attempt lost a race with other writers; the caller may try again (appends are idempotent). */
export class JournalContentionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JournalContentionError';
  }
}

/** What is stored contradicts itself (a proof that does not verify, a missing entry below the size). */
export class JournalIntegrityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JournalIntegrityError';
  }
}

/** Where a mirror copy failed: the state's `mirrored_size` when it did. */
export interface MirrorFailure {
  readonly mirrored_size: number;
}

export interface JournalDependencies {
  readonly store: JournalStore;
  readonly mirror?: JournalMirror;
  readonly signer: DsseSigner;
  readonly clock: Clock;
  /** Names the log in every signed head. */
  readonly logId: string;
  /** A slice closes once this many entries wait for a head. */
  readonly sliceSize: number;
  /** …or once entries wait and the last head is this old. */
  readonly sliceSeconds: number;
  /** A mirror copy failed (it is resumed later); for logging. */
  readonly onMirrorError?: (error: unknown, failure: MirrorFailure) => void;
  /** Attempts of a write that loses races (default 60). */
  readonly maxAttempts?: number;
  /** Waits between attempts (default a timer); tests make it instant. */
  readonly sleep?: (ms: number) => Promise<void>;
}

/** An entry with its inclusion proof against a signed head. */
export interface EntryWithProof {
  readonly entry: StoredEntry;
  readonly leaf_hash: string;
  readonly inclusion: { readonly tree_size: number; readonly proof: readonly string[] };
  readonly head: SignedTreeHead;
}

export interface ConsistencyAnswer {
  readonly from_head: SignedTreeHead;
  readonly to_head: SignedTreeHead;
  readonly proof: readonly string[];
}

export interface HeadsPage {
  readonly heads: readonly SignedTreeHead[];
  /** `from` of the next page, when there is one. */
  readonly next?: number;
}

/** One page of the journal export, and the cursor of the next one. */
export interface JournalExportPage extends JournalExport {
  readonly tree_size: number;
  readonly next_cursor?: string;
}

/** The export's position: the pinned head's size and the next entry index. */
const exportCursor = cursorCodec('journal-export', (position): { size: number; from: number } | undefined => {
  if (typeof position !== 'object' || position === null || Array.isArray(position)) return undefined;
  const { size, from, ...rest } = position as { size?: unknown; from?: unknown };
  return Object.keys(rest).length === 0 &&
    Number.isSafeInteger(size) &&
    Number.isSafeInteger(from) &&
    (from as number) >= 0 &&
    (from as number) <= (size as number)
    ? { size: size as number, from: from as number }
    : undefined;
});

export interface EntriesPage {
  /** The signed head the page is read against: only entries it covers are listed. */
  readonly tree_size: number;
  readonly entries: readonly StoredEntry[];
  readonly next?: number;
}

const MAX_ENTRY_BYTES = 256 * 1024;
const MAX_ID_LENGTH = 512;
const MAX_PAGE = 1000;
const EXPORT_PAGE = 500;
const MIRROR_PARALLEL = 8;
/** Heads (with their slices) a closure copies to the mirror at most, so a long outage catches up in steps. */
const MIRROR_HEADS_PER_RUN = 50;

const encoder = new TextEncoder();

const requireIndex = (name: string, value: number): void => {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new JournalRangeError(`${name} must be a non-negative integer, got ${String(value)}`);
  }
};

const requirePageSize = (limit: number): void => {
  if (!Number.isSafeInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new JournalRangeError(`limit must be an integer from 1 to ${MAX_PAGE}, got ${String(limit)}`);
  }
};

const bytesOf = (hex: string, what: string): Uint8Array => {
  const bytes = hashFromHex(hex);
  if (!bytes) throw new JournalIntegrityError(`${what} is not a SHA-256 hash in hex`);
  return bytes;
};

/** Number of set bits of a size (sizes may pass 32 bits, so no bitwise operators). */
const peakCount = (size: number): number => {
  let count = 0;
  for (let rest = size; rest > 0; rest = Math.floor(rest / 2)) count += rest % 2;
  return count;
};

const frontierOf = (state: JournalState | undefined): MerkleFrontier => {
  if (!state) return { size: 0, peaks: [] };
  if (state.peaks.length !== peakCount(state.size)) {
    throw new JournalIntegrityError(
      `the state's frontier has ${state.peaks.length} peaks for size ${state.size}`,
    );
  }
  return { size: state.size, peaks: state.peaks.map((peak) => bytesOf(peak, 'a frontier peak')) };
};

export class Journal {
  /** A lost race re-reads and tries again: full jitter, 5 ms doubling up to 200 ms. */
  private readonly retry: RetryPolicy;

  constructor(private readonly deps: JournalDependencies) {
    if (!Number.isSafeInteger(deps.sliceSize) || deps.sliceSize < 1) {
      throw new RangeError(`sliceSize must be a positive integer, got ${deps.sliceSize}`);
    }
    if (!(deps.sliceSeconds > 0)) {
      throw new RangeError(`sliceSeconds must be positive, got ${deps.sliceSeconds}`);
    }
    this.retry = {
      attempts: deps.maxAttempts ?? 60,
      baseMs: 5,
      capMs: 200,
      ...(deps.sleep ? { sleep: deps.sleep } : {}),
    };
  }

  /**
   * Appends an entry (idempotent by `entry_id`: a known id answers its index and `created: false`), then
   * closes the slice when `sliceSize` entries wait for a head.
   */
  async append(input: JournalEntryInput): Promise<{ index: number; created: boolean }> {
    const { entry_id, type, data } = input;
    if (typeof entry_id !== 'string' || entry_id.length === 0 || entry_id.length > MAX_ID_LENGTH) {
      throw new InvalidJournalEntryError(`entry_id must be a string of 1 to ${MAX_ID_LENGTH} characters`);
    }
    if (typeof type !== 'string' || type.length === 0 || type.length > MAX_ID_LENGTH) {
      throw new InvalidJournalEntryError(`type must be a string of 1 to ${MAX_ID_LENGTH} characters`);
    }
    return retryOnConflict(
      this.retry,
      async () => {
        const state = await this.deps.store.state();
        const index = state?.size ?? 0;
        const entry: StoredEntry = { index, entry_id, type, at: this.deps.clock.now().toISOString(), data };
        let json: string;
        try {
          json = entryJson(entry);
        } catch (error) {
          throw new InvalidJournalEntryError('data is not JSON (RFC 8785)', { cause: error });
        }
        if (encoder.encode(json).length > MAX_ENTRY_BYTES) {
          throw new InvalidJournalEntryError(`the entry is larger than ${MAX_ENTRY_BYTES} bytes`);
        }
        const hash = entryLeafHash(entry);
        const frontier = appendToFrontier(frontierOf(state), hash);
        const outcome = await this.deps.store.append({
          entry,
          json,
          leaf_hash: toHex(hash),
          peaks: frontier.peaks.map(toHex),
        });
        if (outcome === 'appended') {
          if (index + 1 - (state?.last_head_size ?? 0) >= this.deps.sliceSize) {
            // The entry is in; a closure that keeps losing races is left to the other writers and the schedule.
            await this.closeSliceIfDue().catch((error: unknown) => {
              if (!(error instanceof JournalContentionError)) throw error;
            });
          }
          return { index, created: true };
        }
        const existing = await this.deps.store.indexOf(entry_id);
        if (existing !== undefined) return { index: existing, created: false };
        return CONFLICT;
      },
      () => new JournalContentionError(`entry ${entry_id}: every attempt lost a race; try again`),
    );
  }

  /**
   * Signs a head when entries wait and either `sliceSize` of them do or the last head (before the first: the
   * first entry) is `sliceSeconds` old; answers the head it signed, else `undefined` (nothing due, or another
   * writer sealed them). With `force`, waiting entries are sealed now (the local stack seals its seed history).
   * Resumes the mirror copy in any case.
   */
  async closeSliceIfDue(options: { readonly force?: boolean } = {}): Promise<SignedTreeHead | undefined> {
    return retryOnConflict(
      this.retry,
      async () => {
        const state = await this.deps.store.state();
        if (!state) return undefined;
        if (state.size <= state.last_head_size || !(options.force || (await this.isDue(state)))) {
          await this.copyToMirror(state);
          return undefined;
        }
        const head = await this.signHead(state);
        if ((await this.deps.store.putHead(head)) === 'written') {
          await this.copyToMirror({ ...state, last_head_size: head.tree_size, last_head_at: head.timestamp });
          return head;
        }
        return CONFLICT;
      },
      () => new JournalContentionError('closing the slice lost every race; the next run will close it'),
    );
  }

  private async isDue(state: JournalState): Promise<boolean> {
    if (state.size - state.last_head_size >= this.deps.sliceSize) return true;
    const since = state.last_head_at ?? (await this.deps.store.entry(state.last_head_size))?.entry.at;
    if (since === undefined) return false;
    return this.deps.clock.now().getTime() - Date.parse(since) >= this.deps.sliceSeconds * 1000;
  }

  /** The head of the state's size: its root is the root of the state's frontier. */
  private async signHead(state: JournalState): Promise<SignedTreeHead> {
    const head: TreeHead = {
      log_id: this.deps.logId,
      tree_size: state.size,
      root_hash: toHex(frontierRoot(frontierOf(state))),
      timestamp: this.deps.clock.now().toISOString(),
    };
    const envelope = await signEnvelope(TREE_HEAD_PAYLOAD_TYPE, treeHeadPayload(head), this.deps.signer);
    return { ...head, envelope };
  }

  /**
   * Copies sealed slices to the mirror from `mirrored_size` on: each head's entries, then the head, then the
   * state's `mirrored_size`. Failures are reported, never thrown: the next run resumes where this one stopped.
   */
  private async copyToMirror(state: JournalState): Promise<void> {
    const { mirror, store } = this.deps;
    if (!mirror || state.mirrored_size >= state.last_head_size) return;
    let mirrored = state.mirrored_size;
    try {
      for (const head of await store.heads(mirrored + 1, MIRROR_HEADS_PER_RUN)) {
        for (let from = mirrored; from < head.tree_size; ) {
          const records = await store.entries(from, Math.min(EXPORT_PAGE, head.tree_size - from));
          if (records.length === 0) throw new JournalIntegrityError(`entry ${from} is missing below a head`);
          for (let start = 0; start < records.length; start += MIRROR_PARALLEL) {
            await Promise.all(
              records
                .slice(start, start + MIRROR_PARALLEL)
                .map((record) => mirror.putEntry(record.entry.index, record.json)),
            );
          }
          from += records.length;
        }
        await mirror.putHead(head.tree_size, signedTreeHeadJson(head));
        await store.markMirrored(head.tree_size);
        mirrored = head.tree_size;
      }
    } catch (error) {
      this.deps.onMirrorError?.(error, { mirrored_size: mirrored });
    }
  }

  /** Whether an entry of this `entry_id` was appended (one consistent read). */
  async has(entryId: string): Promise<boolean> {
    return (await this.deps.store.indexOf(entryId)) !== undefined;
  }

  /** The latest signed head; `undefined` before the first. */
  latestHead(): Promise<SignedTreeHead | undefined> {
    return this.deps.store.latestHead();
  }

  /** Signed heads of tree size `from` or more, in size order. */
  async heads(options: { from?: number; limit?: number } = {}): Promise<HeadsPage> {
    const from = options.from ?? 0;
    const limit = options.limit ?? 100;
    requireIndex('from', from);
    requirePageSize(limit);
    const heads = await this.deps.store.heads(from, limit + 1);
    const next = heads[limit];
    return { heads: heads.slice(0, limit), ...(next ? { next: next.tree_size } : {}) };
  }

  /** The leaf hashes of the first `size` entries, as bytes; the store must hold every one of them. */
  private async leafHashes(size: number): Promise<Uint8Array[]> {
    const hashes = await this.deps.store.leafHashes(size);
    if (hashes.length !== size) {
      throw new JournalIntegrityError(
        `the journal holds ${hashes.length} of the ${size} entries a head signs`,
      );
    }
    return hashes.map((hash, index) => bytesOf(hash, `the leaf hash of entry ${index}`));
  }

  private async signedHead(treeSize: number): Promise<SignedTreeHead> {
    const head = await this.deps.store.head(treeSize);
    if (!head) throw new JournalNotFoundError(`no signed tree head of size ${treeSize}`);
    return head;
  }

  /**
   * An entry with its inclusion proof against the latest signed head, or against the signed head of
   * `treeSize`. Unknown index: `JournalNotFoundError`; not covered by the latest head: `EntryNotSealedError`;
   * not in the tree of `treeSize`: `JournalRangeError`.
   */
  async entry(index: number, options: { treeSize?: number } = {}): Promise<EntryWithProof> {
    requireIndex('index', index);
    if (options.treeSize !== undefined) requireIndex('tree_size', options.treeSize);
    const record = await this.deps.store.entry(index);
    if (!record) throw new JournalNotFoundError(`no journal entry ${index}`);
    let head: SignedTreeHead;
    if (options.treeSize === undefined) {
      const latest = await this.deps.store.latestHead();
      if (!latest || index >= latest.tree_size) throw new EntryNotSealedError(index, latest?.tree_size ?? 0);
      head = latest;
    } else {
      head = await this.signedHead(options.treeSize);
      if (index >= head.tree_size) {
        throw new JournalRangeError(`entry ${index} is not in the tree of size ${head.tree_size}`);
      }
    }
    const hashes = await this.leafHashes(head.tree_size);
    const leaf = entryLeafHash(record.entry);
    const proof = inclusionProofOfLeafHashes(hashes, index);
    const included = verifyInclusion({
      index,
      treeSize: head.tree_size,
      leafHash: leaf,
      proof,
      rootHash: bytesOf(head.root_hash, `the root of head ${head.tree_size}`),
    });
    if (!included || toHex(leaf) !== record.leaf_hash) {
      throw new JournalIntegrityError(`entry ${index} does not verify against head ${head.tree_size}`);
    }
    return {
      entry: record.entry,
      leaf_hash: record.leaf_hash,
      inclusion: { tree_size: head.tree_size, proof: proof.map(toHex) },
      head,
    };
  }

  /** The consistency proof between the signed heads of sizes `from` ≤ `to`. */
  async consistency(from: number, to: number): Promise<ConsistencyAnswer> {
    requireIndex('from', from);
    requireIndex('to', to);
    if (from > to) throw new JournalRangeError(`from (${from}) must not be greater than to (${to})`);
    const fromHead = await this.signedHead(from);
    const toHead = await this.signedHead(to);
    const proof = consistencyProofOfLeafHashes(await this.leafHashes(to), from, to);
    const consistent = verifyConsistency({
      oldSize: from,
      newSize: to,
      oldRoot: bytesOf(fromHead.root_hash, `the root of head ${from}`),
      newRoot: bytesOf(toHead.root_hash, `the root of head ${to}`),
      proof,
    });
    if (!consistent) throw new JournalIntegrityError(`head ${to} is not consistent with head ${from}`);
    return { from_head: fromHead, to_head: toHead, proof: proof.map(toHex) };
  }

  /** Entries covered by the latest signed head (or by the head of `treeSize`), `limit` at a time. */
  async entries(options: { from?: number; limit?: number; treeSize?: number } = {}): Promise<EntriesPage> {
    const from = options.from ?? 0;
    const limit = options.limit ?? 100;
    requireIndex('from', from);
    requirePageSize(limit);
    if (options.treeSize !== undefined) requireIndex('tree_size', options.treeSize);
    const treeSize =
      options.treeSize === undefined
        ? ((await this.deps.store.latestHead())?.tree_size ?? 0)
        : (await this.signedHead(options.treeSize)).tree_size;
    const records =
      from < treeSize ? await this.deps.store.entries(from, Math.min(limit, treeSize - from)) : [];
    const end = from + records.length;
    return {
      tree_size: treeSize,
      entries: records.map((record) => record.entry),
      ...(end < treeSize ? { next: end } : {}),
    };
  }

  /**
   * The export document (`npm run verify-journal`): every entry the latest signed head covers and every head up
   * to it. Entries appended after it follow in a later export, once their slice has closed.
   */
  /**
   * One page of the export `npm run verify-journal` checks: the entries `[from, from + limit)` of the head the
   * export is pinned to (the latest when its first page is read), and the heads whose tree size falls in them (the
   * first page also those of size 0). The pages together are the whole document (`exportAll`), each bounded.
   */
  async exportPage(options: {
    readonly limit: number;
    readonly cursor?: string;
  }): Promise<JournalExportPage> {
    const position = options.cursor === undefined ? undefined : exportCursor.decode(options.cursor);
    const latest = (await this.deps.store.latestHead())?.tree_size ?? 0;
    // The cursor is the caller's: a head the journal never signed is a bad request, not a missing entry.
    if (position && position.size > latest)
      throw new JournalRangeError(
        `the cursor names tree size ${position.size}, past the latest head ${latest}`,
      );
    const size = position?.size ?? latest;
    const from = Math.min(position?.from ?? 0, size);
    const to = Math.min(size, from + options.limit);
    const entries: StoredEntry[] = [];
    while (from + entries.length < to) {
      const at = from + entries.length;
      const page = await this.deps.store.entries(at, Math.min(EXPORT_PAGE, to - at));
      const gap = page.findIndex((record, i) => record.entry.index !== at + i);
      if (gap !== -1 || page.length === 0) {
        throw new JournalIntegrityError(`entry ${at + Math.max(gap, 0)} is missing below head ${size}`);
      }
      entries.push(...page.map((record) => record.entry));
    }
    const heads: SignedTreeHead[] = [];
    for (let next = from === 0 ? 0 : from + 1; next <= to; ) {
      const page = (await this.deps.store.heads(next, EXPORT_PAGE)).filter((head) => head.tree_size <= to);
      heads.push(...page);
      if (page.length < EXPORT_PAGE) break;
      next = (page.at(-1) as SignedTreeHead).tree_size + 1;
    }
    return {
      log_id: this.deps.logId,
      tree_size: size,
      entries,
      heads,
      ...(to < size ? { next_cursor: exportCursor.encode({ size, from: to }) } : {}),
    };
  }

  /** The whole export, page after page (in process: tests and tools; the API serves it by page). */
  async exportAll(): Promise<JournalExport> {
    const entries: StoredEntry[] = [];
    const heads: SignedTreeHead[] = [];
    let cursor: string | undefined;
    do {
      const page = await this.exportPage({ limit: EXPORT_PAGE, ...(cursor ? { cursor } : {}) });
      entries.push(...page.entries);
      heads.push(...page.heads);
      cursor = page.next_cursor;
    } while (cursor);
    return { log_id: this.deps.logId, entries, heads };
  }
}
