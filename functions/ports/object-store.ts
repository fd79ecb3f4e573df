/** What a write-once put found: a new object, or one already there with the same bytes. */
export type PutOnceOutcome = 'created' | 'exists';

/** An object that exists under a key. `sha256`: lowercase hex of its bytes' SHA-256, when the store knows it. */
export interface ObjectHead {
  readonly size: number;
  readonly sha256?: string;
}

export interface ListedObject {
  readonly key: string;
  readonly size: number;
}

/** An object exists under the key with other bytes than the ones to write: a write-once store never replaces one. */
export class ObjectConflictError extends Error {
  constructor(readonly key: string) {
    super(`${key} already holds other content; it is never replaced`);
    this.name = 'ObjectConflictError';
  }
}

/**
 * A bucket of write-once objects (S3 with Object Lock in AWS, fauxqs locally). Every object carries the SHA-256
 * of its bytes, so writing the same bytes again is recognised without reading them back.
 */
export interface ObjectStore {
  /**
   * Writes `body` under `key` where no object is: `created`; the same bytes already there: `exists` (nothing
   * written); other bytes there: `ObjectConflictError`.
   */
  putOnce(key: string, body: Uint8Array, contentType: string): Promise<PutOnceOutcome>;
  /** The object's size and SHA-256; `undefined` when there is none. */
  head(key: string): Promise<ObjectHead | undefined>;
  /** The object's bytes; `undefined` when there is none. */
  get(key: string): Promise<Uint8Array | undefined>;
  /** Every object whose key starts with `prefix`, in key order (all pages). */
  list(prefix: string): Promise<ListedObject[]>;
  /** The first key (in key order) that starts with `prefix`; `undefined` when there is none. One request. */
  firstKey(prefix: string): Promise<string | undefined>;
}
