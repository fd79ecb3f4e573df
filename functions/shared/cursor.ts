import { ServiceError } from '../domain/errors';
/**
 * The one pagination cursor codec. A cursor is base64url JSON of `{ "l": <listing>, "p": <position> }`: the
 * listing that issued it and its position there (a DynamoDB `LastEvaluatedKey`, or a use case's own position).
 * A caller's cursor is untrusted input: it is decoded only if it is at most `MAX_CURSOR_LENGTH` characters of
 * base64url, parses as JSON, names this listing (a cursor of another listing is refused) and its position has
 * exactly the expected shape. Anything else is an `InvalidCursorError`, a 400 `invalid_request`.
 */

/** The longest cursor accepted; the API schemas allow at most 2048 characters. */
export const MAX_CURSOR_LENGTH = 2048;

const BASE64URL = /^[A-Za-z0-9_-]+$/;

/** A cursor this API did not issue for this listing. */
export class InvalidCursorError extends ServiceError {
  constructor(options?: ErrorOptions) {
    super('invalid_request', 'the cursor is not one this API returned', options ?? {});
    this.name = 'InvalidCursorError';
  }
}

export interface CursorCodec<T> {
  readonly encode: (position: T) => string;
  /** The position of `cursor`; throws `InvalidCursorError` for anything this listing did not issue. */
  readonly decode: (cursor: string) => T;
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const parse = (cursor: string): unknown => {
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !BASE64URL.test(cursor)) return undefined;
  try {
    return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
};

/**
 * The codec of one listing. `read` validates a decoded position and returns it, or `undefined` when it is not
 * one of this listing's positions.
 */
export const cursorCodec = <T>(
  listing: string,
  read: (position: unknown) => T | undefined,
): CursorCodec<T> => ({
  encode: (position) =>
    Buffer.from(JSON.stringify({ l: listing, p: position }), 'utf8').toString('base64url'),
  decode: (cursor) => {
    const envelope = parse(cursor);
    if (!isPlainObject(envelope) || Object.keys(envelope).length !== 2 || envelope.l !== listing) {
      throw new InvalidCursorError();
    }
    const position = read(envelope.p);
    if (position === undefined) throw new InvalidCursorError();
    return position;
  },
});

/** The type of each attribute of a DynamoDB key. */
export type KeyShape = Readonly<Record<string, 'string' | 'number'>>;

export type DynamoKey = Record<string, string | number>;

/** Whether `value` is an object with exactly the attributes of `shape`, each of its type. */
const matches = (shape: KeyShape, value: unknown): value is DynamoKey => {
  if (!isPlainObject(value)) return false;
  const names = Object.keys(value);
  return (
    names.length === Object.keys(shape).length &&
    names.every((name) => Object.hasOwn(shape, name) && typeof value[name] === shape[name])
  );
};

/** A cursor over a DynamoDB query or scan: its `LastEvaluatedKey`, absent at the end. */
export interface KeyCursor {
  readonly encode: (key: Record<string, unknown> | undefined) => string | undefined;
  readonly decode: (cursor: string | undefined) => DynamoKey | undefined;
}

/** The codec of a DynamoDB listing whose keys have `shape` (the table's key and the index's, if any). */
export const keyCursor = (listing: string, shape: KeyShape): KeyCursor => {
  const codec = cursorCodec(listing, (position) => (matches(shape, position) ? position : undefined));
  return {
    encode: (key) => (key === undefined ? undefined : codec.encode(key as DynamoKey)),
    decode: (cursor) => (cursor === undefined ? undefined : codec.decode(cursor)),
  };
};
