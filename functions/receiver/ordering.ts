/**
 * Judging which data is newer (spec "Delivery guarantees" 2): delivery is at-least-once and unordered, so an
 * older event can arrive after a newer one. Deduplication (process-once.ts) stops the same event from applying
 * twice; this helper stops an older *different* event from overwriting newer state.
 *
 * ```ts
 * const stored = await readPriceList(id);             // { ts, version } kept with your state
 * if (isNewer(envelope, stored, { field: 'version' })) await writePriceList(id, envelope);
 * ```
 *
 * To make the comparison race-free, put it in the write itself as a condition (e.g. DynamoDB
 * `attribute_not_exists(version) OR version < :incoming`); this function is the same rule in code.
 */

/** A domain sequence field inside `data`: catalog events carry `version` (C11); other producers may use `seq`. */
export type OrderingField = 'seq' | 'version';

/** What the receiver kept from the last applied event: its `ts`, and its `seq` or `version` when it had one. */
export interface StoredOrdering {
  readonly ts: string;
  readonly seq?: number | string;
  readonly version?: number | string;
}

const INTEGER = /^-?\d+$/;
const DECIMAL = /^-?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;

type Comparable =
  | { readonly kind: 'integer'; readonly value: bigint }
  | { readonly kind: 'number'; readonly value: number };

/** A sequence value as a comparable number: integers (also as strings, any size) exactly, others as floats. */
const comparable = (value: unknown): Comparable | undefined => {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) return undefined;
    return Number.isSafeInteger(value)
      ? { kind: 'integer', value: BigInt(value) }
      : { kind: 'number', value };
  }
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (INTEGER.test(text)) return { kind: 'integer', value: BigInt(text) };
  if (DECIMAL.test(text)) {
    const number = Number(text);
    return Number.isFinite(number) ? { kind: 'number', value: number } : undefined;
  }
  return undefined;
};

/** −1, 0 or 1. */
const compare = (a: Comparable, b: Comparable): number => {
  if (a.kind === 'integer' && b.kind === 'integer') return a.value < b.value ? -1 : a.value > b.value ? 1 : 0;
  const x = Number(a.value);
  const y = Number(b.value);
  return x < y ? -1 : x > y ? 1 : 0;
};

const timeOf = (ts: string, which: string): number => {
  const ms = Date.parse(ts);
  if (!Number.isFinite(ms)) throw new RangeError(`${which} ts is not a timestamp`);
  return ms;
};

/**
 * Whether an incoming event carries newer data than what is stored.
 *
 * - Nothing stored: newer.
 * - By the domain field (`options.field`; without it `seq` when the incoming `data` has one, else `version`):
 *   when both the incoming `data[field]` and the stored `field` are numbers or numeric strings (integers
 *   compared exactly at any size), a greater incoming value is newer; a smaller **or equal** one is not (the
 *   same version is the same data). The field decides alone: `ts` is not consulted.
 * - Otherwise (the field is missing or not numeric on either side) by `ts`: a strictly later incoming `ts` is
 *   newer; an earlier or equal one is not.
 *
 * Throws RangeError when it falls back to `ts` and either `ts` is not a timestamp.
 */
export const isNewer = (
  incoming: { ts: string; data?: Record<string, unknown> },
  stored: StoredOrdering | undefined,
  options?: { field?: OrderingField },
): boolean => {
  if (stored === undefined) return true;
  const field: OrderingField = options?.field ?? (incoming.data?.seq !== undefined ? 'seq' : 'version');
  const incomingValue = comparable(incoming.data?.[field]);
  const storedValue = comparable(stored[field]);
  if (incomingValue !== undefined && storedValue !== undefined)
    return compare(incomingValue, storedValue) > 0;
  return timeOf(incoming.ts, 'incoming') > timeOf(stored.ts, 'stored');
};
