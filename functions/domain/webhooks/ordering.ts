import { createHash } from 'node:crypto';
import { type FilterSubject, pathValue } from './filter';

/**
 * An endpoint's ordering (C31 `ordering`): deliveries with the same key start one after another, each only after
 * the one before it ended (delivered, stopped or dead). The key is the whole endpoint, the event's tenant, or a
 * field of its `data` (`data.payout_id`, `data.sku_id`, a dotted path).
 */
export interface EndpointOrdering {
  readonly key: OrderingKeySpec;
}

export type OrderingKeySpec = 'endpoint' | 'tenant' | `data.${string}`;

/** `data.<field>` with dotted segments of letters, digits, `_` and `-`, at most 8 deep. */
export const DATA_KEY_PATTERN = /^data(\.[A-Za-z0-9_-]{1,64}){1,8}$/;

export const isOrderingKeySpec = (value: string): value is OrderingKeySpec =>
  value === 'endpoint' || value === 'tenant' || DATA_KEY_PATTERN.test(value);

/** Longest key value kept as it is; a longer one (a large `data` value) is replaced by its SHA-256. */
const MAX_KEY_VALUE_CHARS = 200;

/**
 * The key an event's delivery is ordered by on an endpoint: `endpoint` for the whole endpoint, else the spec and
 * the event's value of it (JSON, so `1` and `"1"` differ); an event without the value shares the key of every
 * other such event (`<spec>` alone). Values too long to be a key are hashed.
 */
export const orderingKeyOf = (ordering: EndpointOrdering, subject: FilterSubject): string => {
  if (ordering.key === 'endpoint') return 'endpoint';
  const value = pathValue(subject, ordering.key);
  if (value === undefined) return ordering.key;
  const encoded = JSON.stringify(value);
  return encoded.length <= MAX_KEY_VALUE_CHARS
    ? `${ordering.key}=${encoded}`
    : `${ordering.key}#sha256=${createHash('sha256').update(encoded).digest('hex')}`;
};
