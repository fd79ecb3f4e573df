import type { SignedTreeHead, StoredEntry } from '../domain/audit/journal-verify';
import type { Json } from '../domain/money/canonical';

export type {
  JournalExport,
  SignedTreeHead,
  StoredEntry,
  TreeHead,
} from '../domain/audit/journal-verify';

/** What a caller appends; the journal adds `index` and `at`. Appends are idempotent by `entry_id`. */
export interface JournalEntryInput {
  readonly entry_id: string;
  readonly type: string;
  readonly data: Json;
}

/**
 * The journal's one mutable record: the size of the tree and its Merkle frontier (the peaks, lowercase hex,
 * largest first, as `MerkleFrontier`), written in the same transaction as each entry, so a head signed from it
 * has exactly the root of the first `size` entries. `last_head_size`/`last_head_at`: the latest signed head
 * (0 and absent before the first). `mirrored_size`: the entries below it and the heads up to it are in the
 * mirror.
 */
export interface JournalState {
  readonly size: number;
  readonly peaks: readonly string[];
  readonly last_head_size: number;
  readonly last_head_at?: string;
  readonly mirrored_size: number;
}

/** An entry with what is stored beside it. */
export interface StoredEntryRecord {
  readonly entry: StoredEntry;
  /** The entry's RFC 8785 text: its leaf bytes (UTF-8) and the mirror object's body. */
  readonly json: string;
  /** `leafHash` of the entry, lowercase hex. */
  readonly leaf_hash: string;
}

/** One append: the entry at index `entry.index` (= the state's size before it) and the frontier after it. */
export interface AppendRequest extends StoredEntryRecord {
  readonly peaks: readonly string[];
}

/**
 * The journal's storage. Every write is conditional and nothing is ever overwritten: entries, heads and
 * idempotency markers are put only where nothing is; the state moves only from the size (or last head) it was
 * read at. A write that loses a race answers `conflict` (nothing written); the caller re-reads and decides.
 */
export interface JournalStore {
  /** The state (a consistent read); `undefined` before the first entry. */
  state(): Promise<JournalState | undefined>;
  /**
   * In one transaction: the entry (only if its index is free), the marker of its `entry_id` (only if the id is
   * new) and the state (only if its size is still `entry.index`: the entry extends exactly what was read).
   */
  append(request: AppendRequest): Promise<'appended' | 'conflict'>;
  /** The index an `entry_id` was appended at. */
  indexOf(entryId: string): Promise<number | undefined>;
  entry(index: number): Promise<StoredEntryRecord | undefined>;
  /** Up to `limit` entries from index `from` on, in index order. */
  entries(from: number, limit: number): Promise<StoredEntryRecord[]>;
  /** The leaf hashes (hex) of entries `0..size-1` in index order (fewer only if entries are missing). */
  leafHashes(size: number): Promise<string[]>;
  /**
   * In one transaction: the head (only if no head of its size exists) and the state's last head (only if the
   * head is newer than the last one and within the state's size). Heads thus grow strictly in size.
   */
  putHead(head: SignedTreeHead): Promise<'written' | 'conflict'>;
  head(treeSize: number): Promise<SignedTreeHead | undefined>;
  latestHead(): Promise<SignedTreeHead | undefined>;
  /** Up to `limit` heads of tree size `from` or more, in size order. */
  heads(from: number, limit: number): Promise<SignedTreeHead[]>;
  /** Raises `mirrored_size` to `size` (never lowers it). */
  markMirrored(size: number): Promise<void>;
}

/** What a mirror put found: a new object, or one already there with the same bytes. */
export type MirrorOutcome = 'created' | 'exists';

/**
 * A write-once copy of the journal as objects (S3 with Object Lock in AWS): each entry's RFC 8785 text at
 * `journalEntryKey(index)`, each signed head's RFC 8785 text at `journalHeadKey(tree_size)`. Putting the same
 * bytes again is harmless; an object is never replaced by other bytes.
 */
export interface JournalMirror {
  putEntry(index: number, json: string): Promise<MirrorOutcome>;
  putHead(treeSize: number, json: string): Promise<MirrorOutcome>;
}

const pad12 = (value: number): string => String(value).padStart(12, '0');

/** `journal/entries/<index, 12 digits>.json` */
export const journalEntryKey = (index: number): string => `journal/entries/${pad12(index)}.json`;

/** `journal/heads/<tree size, 12 digits>.json` */
export const journalHeadKey = (treeSize: number): string => `journal/heads/${pad12(treeSize)}.json`;
