/**
 * Catalog files too large for one API response or request (Lambda's 6 MB, the API's 256 KB request bodies):
 * a release's document stored once as gzip JSON and handed out as a time-limited download link, and documents
 * uploaded through a time-limited link to be imported. S3 with pre-signed URLs in AWS, fauxqs locally.
 */

/** A pre-signed URL and when it stops working. */
export interface FileLink {
  readonly url: string;
  readonly expires_at: string;
}

/** A file too large to accept: its size and the limit. */
export class FileTooLargeError extends Error {
  constructor(
    readonly size: number,
    readonly limit: number,
  ) {
    super(`the file is ${size} bytes; at most ${limit} are accepted`);
    this.name = 'FileTooLargeError';
  }
}

/** A file that is not gzip or plain UTF-8 JSON. */
export class FileUnreadableError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'FileUnreadableError';
  }
}

export interface CatalogFiles {
  /**
   * Stores a JSON text gzipped under `<prefix><SHA-256 of the text>.json.gz`, once: the same document is the same
   * object, never written twice. Returns the key and the stored size in bytes.
   */
  storeJson(prefix: string, json: string): Promise<{ readonly key: string; readonly bytes: number }>;
  /** A link that downloads the object under `key` for `seconds`. */
  downloadLink(key: string, seconds: number): Promise<FileLink>;
  /** A link that uploads one object of exactly `bytes` under `key` (HTTP PUT) for `seconds`. */
  uploadLink(key: string, seconds: number, bytes: number): Promise<FileLink>;
  /**
   * The JSON value of the object under `key` (gzip or plain), `undefined` when there is none;
   * `FileTooLargeError` past `maxBytes` stored or decompressed, `FileUnreadableError` when it is not JSON.
   */
  readJson(key: string, maxBytes: number): Promise<unknown>;
}
