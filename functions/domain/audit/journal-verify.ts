import { canonicalJson, type Json } from '../money/canonical';
import { type DsseEnvelope, type DsseKeys, type DsseVerificationError, verifyEnvelope } from './dsse';
import {
  appendToFrontier,
  consistencyProofOfLeafHashes,
  EMPTY_FRONTIER,
  frontierRoot,
  inclusionProofOfLeafHashes,
  leafHash,
  type MerkleFrontier,
  verifyConsistency,
  verifyInclusion,
} from './merkle';

/**
 * The audit journal's formats and their offline verification.
 *
 * An entry's leaf is the UTF-8 of the RFC 8785 form of exactly `{ index, entry_id, type, at, data }`; the journal
 * is the RFC 9162 Merkle tree of those leaves in index order. A signed tree head states `{ log_id, tree_size,
 * root_hash, timestamp }` (the RFC 8785 form of exactly those fields is the DSSE payload, of type
 * `TREE_HEAD_PAYLOAD_TYPE`) and carries the envelope. An export is `{ log_id, entries, heads }`.
 *
 * `verifyJournalExport` trusts nothing in the document but the signatures: it checks every head's signature
 * and signed fields, the entries' numbering, the root of every head recomputed from the entries, the inclusion
 * proof of every entry against the last head and the consistency proof between consecutive heads, and reports
 * each problem with where it is.
 */

/** DSSE payload type of a signed tree head. */
export const TREE_HEAD_PAYLOAD_TYPE = 'application/vnd.pricing.tree-head+json';

/** One journal entry as stored, exported and hashed. */
export interface StoredEntry {
  readonly index: number;
  readonly entry_id: string;
  readonly type: string;
  /** ISO 8601 time of the append. */
  readonly at: string;
  readonly data: Json;
}

/** What a tree head states (and signs). `root_hash` is lowercase hex. */
export interface TreeHead {
  readonly log_id: string;
  readonly tree_size: number;
  readonly root_hash: string;
  readonly timestamp: string;
}

/** A tree head with its DSSE envelope over `treeHeadPayload(head)`. */
export interface SignedTreeHead extends TreeHead {
  readonly envelope: DsseEnvelope;
}

/** The export of a journal: its entries in index order and its signed heads in size order. */
export interface JournalExport {
  readonly log_id: string;
  readonly entries: readonly StoredEntry[];
  readonly heads: readonly SignedTreeHead[];
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** The RFC 8785 text of exactly the entry's fields: what the leaf hashes and the mirror stores. */
export const entryJson = (entry: StoredEntry): string =>
  canonicalJson({
    index: entry.index,
    entry_id: entry.entry_id,
    type: entry.type,
    at: entry.at,
    data: entry.data,
  });

/** The leaf hash of an entry: `leafHash(UTF-8(entryJson(entry)))`. */
export const entryLeafHash = (entry: StoredEntry): Uint8Array => leafHash(encoder.encode(entryJson(entry)));

/** The RFC 8785 text of exactly the head's signed fields. */
export const treeHeadJson = (head: TreeHead): string =>
  canonicalJson({
    log_id: head.log_id,
    tree_size: head.tree_size,
    root_hash: head.root_hash,
    timestamp: head.timestamp,
  });

/** The DSSE payload of a tree head: UTF-8 of `treeHeadJson(head)`. */
export const treeHeadPayload = (head: TreeHead): Uint8Array => encoder.encode(treeHeadJson(head));

/** The RFC 8785 text of a signed head, envelope included: the mirror's object for it. */
export const signedTreeHeadJson = (head: SignedTreeHead): string =>
  canonicalJson({
    log_id: head.log_id,
    tree_size: head.tree_size,
    root_hash: head.root_hash,
    timestamp: head.timestamp,
    envelope: {
      payloadType: head.envelope.payloadType,
      payload: head.envelope.payload,
      signatures: head.envelope.signatures.map(({ keyid, sig }) => ({ keyid, sig })),
    },
  });

/** Lowercase hex of bytes. */
export const toHex = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');

const HASH_HEX = /^[0-9a-f]{64}$/;

/** The bytes of a SHA-256 hash written as 64 lowercase hex digits; `undefined` for any other text. */
export const hashFromHex = (text: string): Uint8Array | undefined =>
  HASH_HEX.test(text) ? new Uint8Array(Buffer.from(text, 'hex')) : undefined;

// ---------------------------------------------------------------------------------------------------------
// Verification
// ---------------------------------------------------------------------------------------------------------

/**
 * What can be wrong with an export.
 * - `malformed`: the document, an entry or a head is not of the export's shape.
 * - `removed`: entries are missing (a gap in the numbering, or fewer entries than a signed head covers).
 * - `reordered`: entries (or heads) are out of order; also two entries swapped with their indexes rewritten.
 * - `duplicated`: two entries with one index, or two heads with one tree size.
 * - `altered`: an entry's content differs from what the heads signed (located to the slice of the first head
 *   that disagrees, and to the entry when that slice holds one entry or the numbering gives it away).
 * - `unsealed`: entries no signed head covers.
 * - `bad_signature`: a head's envelope does not verify with the keys (or names no known key).
 * - `payload_mismatch`: a head's fields differ from what its envelope signs.
 * - `wrong_log`: a head of another log.
 * - `root_mismatch`: a head whose root is not that of the entries although later heads agree with them.
 * - `not_included` / `inconsistent`: an inclusion or consistency proof computed from the entries does not
 *   verify against the signed roots.
 */
export type JournalProblemKind =
  | 'malformed'
  | 'removed'
  | 'reordered'
  | 'duplicated'
  | 'altered'
  | 'unsealed'
  | 'bad_signature'
  | 'payload_mismatch'
  | 'wrong_log'
  | 'root_mismatch'
  | 'not_included'
  | 'inconsistent';

export interface JournalProblem {
  readonly kind: JournalProblemKind;
  /** The entry concerned, when known exactly. */
  readonly index?: number;
  /** The entries concerned (inclusive) when the problem is located to a range. */
  readonly range?: { readonly from: number; readonly to: number };
  /** The head concerned. */
  readonly tree_size?: number;
  readonly message: string;
}

export interface JournalVerificationReport {
  /** True when there is no problem at all. */
  readonly ok: boolean;
  readonly log_id?: string;
  /** How many entries and heads the document holds. */
  readonly entries: number;
  readonly heads: number;
  /** Heads whose signature, fields and root all check out. */
  readonly verified_heads: number;
  /** Size and root of the last verified head. */
  readonly tree_size?: number;
  readonly root_hash?: string;
  /** How many inclusion and consistency proofs were computed and verified. */
  readonly inclusion_checked: number;
  readonly consistency_checked: number;
  /** Every problem, the earliest in the log first. */
  readonly problems: readonly JournalProblem[];
}

export interface VerifyJournalOptions {
  /**
   * At most this many inclusion proofs (and as many consistency proofs) are checked, spread evenly over the
   * entries (heads), the first and the last always included. Default: every one. Each proof costs a pass over
   * the tree, so checking all of them is quadratic in the journal's size; roots are always recomputed in full.
   */
  readonly proofSample?: number;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isIndex = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

const SWAP_DIAGNOSIS_MAX_SLICE = 64;

/** An entry of the document with its position in the `entries` array. */
interface Placed {
  readonly position: number;
  readonly entry: StoredEntry;
}

const parseEntry = (value: unknown, position: number, problems: JournalProblem[]): Placed | undefined => {
  const fault = (message: string) => {
    problems.push({ kind: 'malformed', index: position, message: `entries[${position}] ${message}` });
    return undefined;
  };
  if (!isRecord(value)) return fault('is not an object');
  if (!isIndex(value.index)) return fault('has no non-negative integer index');
  for (const field of ['entry_id', 'type', 'at'] as const) {
    if (typeof value[field] !== 'string') return fault(`has no string ${field}`);
  }
  if (!('data' in value)) return fault('has no data');
  const entry: StoredEntry = {
    index: value.index,
    entry_id: value.entry_id as string,
    type: value.type as string,
    at: value.at as string,
    data: value.data as Json,
  };
  return { position, entry };
};

const parseHead = (value: unknown, position: number, problems: JournalProblem[]) => {
  const size = isRecord(value) && isIndex(value.tree_size) ? value.tree_size : undefined;
  const fault = (message: string) => {
    problems.push({
      kind: 'malformed',
      ...(size === undefined ? {} : { tree_size: size }),
      message: `heads[${position}] ${message}`,
    });
    return undefined;
  };
  if (!isRecord(value)) return fault('is not an object');
  if (size === undefined) return fault('has no non-negative integer tree_size');
  if (typeof value.log_id !== 'string') return fault('has no string log_id');
  if (typeof value.root_hash !== 'string' || !HASH_HEX.test(value.root_hash)) {
    return fault('has no root_hash of 64 lowercase hex digits');
  }
  if (typeof value.timestamp !== 'string') return fault('has no string timestamp');
  const head: TreeHead = {
    log_id: value.log_id,
    tree_size: size,
    root_hash: value.root_hash,
    timestamp: value.timestamp,
  };
  return { head, envelope: value.envelope };
};

/** The first problem in the entries' numbering (positions must hold indexes 0, 1, 2, … in order). */
const numberingProblem = (placed: readonly Placed[]): JournalProblem | undefined => {
  const positions = new Map<number, number[]>();
  for (const { position, entry } of placed) {
    positions.set(entry.index, [...(positions.get(entry.index) ?? []), position]);
  }
  for (const { position, entry } of placed) {
    if (entry.index === position) continue;
    const at = positions.get(entry.index) as number[];
    if (at.length > 1) {
      return {
        kind: 'duplicated',
        index: entry.index,
        message: `index ${entry.index} appears at positions ${at.join(', ')}`,
      };
    }
    const found = positions.get(position);
    if (found !== undefined) {
      return {
        kind: 'reordered',
        index: position,
        message: `entry ${position} is at position ${found[0]}; position ${position} holds entry ${entry.index}`,
      };
    }
    // The next entry in its place means this one's index was rewritten; otherwise entries are missing.
    const next = placed.find((other) => other.position > position);
    if (next !== undefined && next.entry.index === next.position) {
      return {
        kind: 'altered',
        index: position,
        message: `entry ${position} carries index ${entry.index}: its index was changed`,
      };
    }
    let end = position;
    while (!positions.has(end + 1) && end + 1 < entry.index) end += 1;
    return {
      kind: 'removed',
      index: position,
      ...(end > position ? { range: { from: position, to: end } } : {}),
      message:
        end > position
          ? `entries ${position}–${end} are missing`
          : `entry ${position} is missing (the next entry holds index ${entry.index})`,
    };
  }
  return undefined;
};

/** Why a head's signature or fields cannot be trusted, if they cannot. */
const headProblem = (
  head: TreeHead,
  envelope: unknown,
  logId: string,
  keys: DsseKeys,
): JournalProblem | undefined => {
  const at = { tree_size: head.tree_size };
  let payload: Uint8Array;
  try {
    payload = verifyEnvelope(envelope, keys, { expectedPayloadType: TREE_HEAD_PAYLOAD_TYPE }).payload;
  } catch (error) {
    const { reason, message } = error as DsseVerificationError;
    return {
      kind: 'bad_signature',
      ...at,
      message: `head ${head.tree_size}: the signature does not verify (${reason}: ${message})`,
    };
  }
  const signed = decoder.decode(payload);
  if (signed !== treeHeadJson(head)) {
    return {
      kind: 'payload_mismatch',
      ...at,
      message: `head ${head.tree_size}: the envelope signs ${signed}, the head states ${treeHeadJson(head)}`,
    };
  }
  if (head.log_id !== logId) {
    return {
      kind: 'wrong_log',
      ...at,
      message: `head ${head.tree_size} is of log ${head.log_id}, not ${logId}`,
    };
  }
  return undefined;
};

/** At most `limit` of `0..count-1`, evenly spread, first and last included. */
const spread = (count: number, limit: number): number[] => {
  if (count <= limit) return Array.from({ length: count }, (_, i) => i);
  if (limit <= 1) return limit === 1 ? [count - 1] : [];
  return [...new Set(Array.from({ length: limit }, (_, i) => Math.round((i * (count - 1)) / (limit - 1))))];
};

/** A head whose signature and fields check out, with the frontier of the entries at its size. */
interface Anchor {
  readonly head: TreeHead;
  readonly frontier?: MerkleFrontier;
  readonly matches: boolean;
}

/**
 * Locates what makes the entries of `[from, to)` disagree with the head of size `to`, knowing that the entries
 * before `from` agree (their frontier is `start`): two entries swapped with rewritten indexes (tried for small
 * slices), else an alteration somewhere in the slice.
 */
const diagnoseSlice = (
  byIndex: ReadonlyMap<number, StoredEntry>,
  start: MerkleFrontier,
  head: TreeHead,
): JournalProblem => {
  const from = start.size;
  const to = head.tree_size;
  const slice = Array.from({ length: to - from }, (_, i) => byIndex.get(from + i) as StoredEntry);
  const leaves = slice.map(entryLeafHash);
  const rootWith = (hashes: readonly Uint8Array[]) =>
    toHex(frontierRoot(hashes.reduce(appendToFrontier, start)));
  if (slice.length <= SWAP_DIAGNOSIS_MAX_SLICE) {
    for (let a = 0; a < slice.length; a += 1) {
      for (let b = a + 1; b < slice.length; b += 1) {
        const swapped = [...leaves];
        swapped[a] = entryLeafHash({ ...(slice[b] as StoredEntry), index: from + a });
        swapped[b] = entryLeafHash({ ...(slice[a] as StoredEntry), index: from + b });
        if (rootWith(swapped) === head.root_hash) {
          return {
            kind: 'reordered',
            index: from + a,
            range: { from: from + a, to: from + b },
            tree_size: to,
            message: `entries ${from + a} and ${from + b} were swapped (their indexes rewritten)`,
          };
        }
      }
    }
  }
  const single = to - from === 1;
  return {
    kind: 'altered',
    ...(single ? { index: from } : {}),
    range: { from, to: to - 1 },
    tree_size: to,
    message: single
      ? `entry ${from} differs from what head ${to} signed`
      : `an entry among ${from}–${to - 1} differs from what head ${to} signed (it agrees up to ${from})`,
  };
};

/** Where a problem is in the log, to list the earliest first: entries by index, a head after its last entry. */
const positionOf = (problem: JournalProblem): number =>
  problem.index ?? problem.range?.from ?? (problem.tree_size as number) - 0.5;

/**
 * Verifies an export document (parsed JSON of unknown shape) offline with the public keys (`GET /keys`).
 * Never throws: anything wrong is a problem of the report.
 */
export const verifyJournalExport = (
  document: unknown,
  keys: DsseKeys,
  options: VerifyJournalOptions = {},
): JournalVerificationReport => {
  const problems: JournalProblem[] = [];
  const empty = { entries: 0, heads: 0, verified_heads: 0, inclusion_checked: 0, consistency_checked: 0 };
  if (
    !isRecord(document) ||
    typeof document.log_id !== 'string' ||
    !Array.isArray(document.entries) ||
    !Array.isArray(document.heads)
  ) {
    const message = 'the document is not a journal export ({ log_id, entries: [...], heads: [...] })';
    return { ok: false, ...empty, problems: [{ kind: 'malformed', message }] };
  }
  const logId = document.log_id;
  const rawEntries: readonly unknown[] = document.entries;
  const rawHeads: readonly unknown[] = document.heads;

  // Entries: shape, then numbering.
  const placed = rawEntries.flatMap((value, position) => parseEntry(value, position, problems) ?? []);
  const numbering = numberingProblem(placed);
  if (numbering) problems.push(numbering);
  const byIndex = new Map<number, StoredEntry>();
  for (const { entry } of placed) if (!byIndex.has(entry.index)) byIndex.set(entry.index, entry);

  // Heads: shape, order, signature and signed fields.
  const anchorsHeads: TreeHead[] = [];
  let previous: TreeHead | undefined;
  let coveredSize = 0;
  rawHeads.forEach((value, position) => {
    const parsed = parseHead(value, position, problems);
    if (!parsed) return;
    const { head, envelope } = parsed;
    coveredSize = Math.max(coveredSize, head.tree_size);
    if (previous && head.tree_size <= previous.tree_size) {
      const same = head.tree_size === previous.tree_size;
      problems.push({
        kind: same ? 'duplicated' : 'reordered',
        tree_size: head.tree_size,
        message: same
          ? `two heads of tree size ${head.tree_size}`
          : `head ${head.tree_size} comes after head ${previous.tree_size}`,
      });
      return;
    }
    previous = head;
    const problem = headProblem(head, envelope, logId, keys);
    if (problem) problems.push(problem);
    else anchorsHeads.push(head);
  });

  // Roots: one pass over the entries in index order, the frontier compared at every trusted head.
  let frontier = EMPTY_FRONTIER;
  const leafHashes: Uint8Array[] = [];
  const anchors: Anchor[] = anchorsHeads.map((head) => {
    while (frontier.size < head.tree_size && byIndex.has(frontier.size)) {
      const hash = entryLeafHash(byIndex.get(frontier.size) as StoredEntry);
      leafHashes.push(hash);
      frontier = appendToFrontier(frontier, hash);
    }
    if (frontier.size < head.tree_size) return { head, matches: false };
    return { head, frontier, matches: toHex(frontierRoot(frontier)) === head.root_hash };
  });
  const lastMatch = anchors.findLastIndex((anchor) => anchor.matches);
  anchors.forEach(({ head, matches }, i) => {
    // Before the last head that agrees with the entries, every root is computable.
    if (i < lastMatch && !matches) {
      problems.push({
        kind: 'root_mismatch',
        tree_size: head.tree_size,
        message: `head ${head.tree_size} signs a root that is not the root of the first ${head.tree_size} entries, which later heads sign`,
      });
    }
  });
  const tail = anchors[lastMatch + 1];
  const reportedGap = numbering?.kind === 'removed' || numbering?.kind === 'altered';
  const lastSize = anchors.at(-1)?.head.tree_size ?? 0;
  const start = lastMatch >= 0 ? ((anchors[lastMatch] as Anchor).frontier as MerkleFrontier) : EMPTY_FRONTIER;
  if (tail?.frontier && frontier.size < lastSize && !reportedGap) {
    // Fewer entries than the last head signs, numbered without a gap, disagreeing from this slice on: entries
    // were taken out and the ones after them renumbered.
    const from = start.size;
    problems.push({
      kind: 'removed',
      range: { from, to: tail.head.tree_size - 1 },
      tree_size: tail.head.tree_size,
      message:
        `head ${lastSize} signs ${lastSize} entries, the export holds ${frontier.size} numbered without a gap, ` +
        `and they disagree with head ${tail.head.tree_size}: entries among ${from}–${tail.head.tree_size - 1} were removed and the later ones renumbered`,
    });
  } else if (tail?.frontier) {
    problems.push(diagnoseSlice(byIndex, start, tail.head));
  } else if (tail && !reportedGap) {
    problems.push({
      kind: 'removed',
      index: frontier.size,
      range: { from: frontier.size, to: tail.head.tree_size - 1 },
      tree_size: tail.head.tree_size,
      message: `head ${tail.head.tree_size} signs ${tail.head.tree_size} entries; the export holds only the first ${frontier.size}`,
    });
  }

  // Entries no head covers.
  const beyond = placed.filter(({ entry }) => entry.index >= coveredSize).map(({ entry }) => entry.index);
  if (beyond.length > 0) {
    const from = Math.min(...beyond);
    const to = Math.max(...beyond);
    problems.push({
      kind: 'unsealed',
      index: from,
      range: { from, to },
      message:
        coveredSize === 0
          ? 'no signed head covers any entry'
          : `entries ${from}–${to} are beyond the last head (${coveredSize})`,
    });
  }

  // Proofs against the verified heads: every entry in the last one, every pair of consecutive ones.
  const verified = anchors.filter((anchor) => anchor.matches).map((anchor) => anchor.head);
  const last = verified.at(-1);
  const sample = options.proofSample ?? Number.POSITIVE_INFINITY;
  let inclusionChecked = 0;
  if (last) {
    const tree = leafHashes.slice(0, last.tree_size);
    const rootHash = hashFromHex(last.root_hash) as Uint8Array;
    const indexes = spread(last.tree_size, sample);
    inclusionChecked = indexes.length;
    const failed = indexes.filter(
      (index) =>
        !verifyInclusion({
          index,
          treeSize: last.tree_size,
          leafHash: tree[index] as Uint8Array,
          proof: inclusionProofOfLeafHashes(tree, index),
          rootHash,
        }),
    );
    problems.push(
      ...failed.map(
        (index): JournalProblem => ({
          kind: 'not_included',
          index,
          tree_size: last.tree_size,
          message: `the inclusion proof of entry ${index} does not verify against head ${last.tree_size}`,
        }),
      ),
    );
  }
  const pairs = spread(Math.max(verified.length - 1, 0), sample);
  const inconsistent = pairs.filter((i) => {
    const older = verified[i] as TreeHead;
    const newer = verified[i + 1] as TreeHead;
    return !verifyConsistency({
      oldSize: older.tree_size,
      newSize: newer.tree_size,
      oldRoot: hashFromHex(older.root_hash) as Uint8Array,
      newRoot: hashFromHex(newer.root_hash) as Uint8Array,
      proof: consistencyProofOfLeafHashes(leafHashes, older.tree_size, newer.tree_size),
    });
  });
  problems.push(
    ...inconsistent.map(
      (i): JournalProblem => ({
        kind: 'inconsistent',
        tree_size: (verified[i + 1] as TreeHead).tree_size,
        message: `head ${(verified[i + 1] as TreeHead).tree_size} is not consistent with head ${(verified[i] as TreeHead).tree_size}`,
      }),
    ),
  );

  const sorted = problems
    .map((problem, order) => ({ problem, order }))
    .sort((a, b) => positionOf(a.problem) - positionOf(b.problem) || a.order - b.order)
    .map(({ problem }) => problem);
  return {
    ok: sorted.length === 0,
    log_id: logId,
    entries: rawEntries.length,
    heads: rawHeads.length,
    verified_heads: verified.length,
    ...(last ? { tree_size: last.tree_size, root_hash: last.root_hash } : {}),
    inclusion_checked: inclusionChecked,
    consistency_checked: pairs.length,
    problems: sorted,
  };
};
