import type {
  AppendRequest,
  JournalMirror,
  JournalState,
  JournalStore,
  MirrorOutcome,
  SignedTreeHead,
  StoredEntryRecord,
} from '../../functions/ports/journal';
import { journalEntryKey, journalHeadKey } from '../../functions/ports/journal';

/** Lets other callers run between a read and a write, as a network round trip would. */
const roundTrip = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * The journal store in memory, with the DynamoDB adapter's conditions: an append writes only if its index, its
 * entry id and the state's size are as expected; a head only if its size is new and above the last head.
 * Every call yields first, so concurrent appends really race.
 */
export class MemoryJournalStore implements JournalStore {
  readonly records = new Map<number, StoredEntryRecord>();
  readonly headsBySize = new Map<number, SignedTreeHead>();
  readonly ids = new Map<string, number>();
  current: JournalState | undefined;
  /** Transactions refused by a condition (appends and heads). */
  conflicts = 0;

  async state(): Promise<JournalState | undefined> {
    await roundTrip();
    return this.current === undefined ? undefined : { ...this.current, peaks: [...this.current.peaks] };
  }

  async append(request: AppendRequest): Promise<'appended' | 'conflict'> {
    await roundTrip();
    const { index, entry_id } = request.entry;
    const sizeMatches = index === 0 ? this.current === undefined : this.current?.size === index;
    if (this.records.has(index) || this.ids.has(entry_id) || !sizeMatches) {
      this.conflicts += 1;
      return 'conflict';
    }
    this.records.set(index, { entry: request.entry, json: request.json, leaf_hash: request.leaf_hash });
    this.ids.set(entry_id, index);
    this.current = {
      last_head_size: 0,
      mirrored_size: 0,
      ...this.current,
      size: index + 1,
      peaks: [...request.peaks],
    };
    return 'appended';
  }

  async indexOf(entryId: string): Promise<number | undefined> {
    await roundTrip();
    return this.ids.get(entryId);
  }

  async entry(index: number): Promise<StoredEntryRecord | undefined> {
    await roundTrip();
    return this.records.get(index);
  }

  async entries(from: number, limit: number): Promise<StoredEntryRecord[]> {
    await roundTrip();
    return [...this.records.entries()]
      .filter(([index]) => index >= from)
      .sort(([a], [b]) => a - b)
      .slice(0, limit)
      .map(([, record]) => record);
  }

  async leafHashes(size: number): Promise<string[]> {
    await roundTrip();
    const hashes: string[] = [];
    for (let index = 0; index < size; index += 1) {
      const record = this.records.get(index);
      if (!record) break;
      hashes.push(record.leaf_hash);
    }
    return hashes;
  }

  async putHead(head: SignedTreeHead): Promise<'written' | 'conflict'> {
    await roundTrip();
    const state = this.current;
    if (
      this.headsBySize.has(head.tree_size) ||
      !state ||
      state.last_head_size >= head.tree_size ||
      state.size < head.tree_size
    ) {
      this.conflicts += 1;
      return 'conflict';
    }
    this.headsBySize.set(head.tree_size, head);
    this.current = { ...state, last_head_size: head.tree_size, last_head_at: head.timestamp };
    return 'written';
  }

  async head(treeSize: number): Promise<SignedTreeHead | undefined> {
    await roundTrip();
    return this.headsBySize.get(treeSize);
  }

  private sortedHeads(): SignedTreeHead[] {
    return [...this.headsBySize.values()].sort((a, b) => a.tree_size - b.tree_size);
  }

  async latestHead(): Promise<SignedTreeHead | undefined> {
    await roundTrip();
    return this.sortedHeads().at(-1);
  }

  async heads(from: number, limit: number): Promise<SignedTreeHead[]> {
    await roundTrip();
    return this.sortedHeads()
      .filter((head) => head.tree_size >= from)
      .slice(0, limit);
  }

  async markMirrored(size: number): Promise<void> {
    await roundTrip();
    if (this.current && this.current.mirrored_size < size)
      this.current = { ...this.current, mirrored_size: size };
  }
}

/** The mirror in memory: write-once objects by key; `failing` makes every put throw. */
export class MemoryJournalMirror implements JournalMirror {
  readonly objects = new Map<string, string>();
  failing = false;
  puts = 0;

  putEntry(index: number, json: string): Promise<MirrorOutcome> {
    return this.put(journalEntryKey(index), json);
  }

  putHead(treeSize: number, json: string): Promise<MirrorOutcome> {
    return this.put(journalHeadKey(treeSize), json);
  }

  private async put(key: string, body: string): Promise<MirrorOutcome> {
    await roundTrip();
    if (this.failing) throw new Error('the mirror is unavailable');
    this.puts += 1;
    const existing = this.objects.get(key);
    if (existing !== undefined) {
      if (existing !== body) throw new Error(`the mirror already holds other content at ${key}`);
      return 'exists';
    }
    this.objects.set(key, body);
    return 'created';
  }
}
