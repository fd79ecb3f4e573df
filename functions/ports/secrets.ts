/**
 * Secret values by reference. Catalog data (the rate policy) names a provider credential only by its
 * `secret_ref`; the value lives in a secret store (Secrets Manager in AWS, `<DATA_DIR>/secrets/<ref>` files
 * locally) and is read when a request needs it. A value is never logged and never part of an error message.
 */
export interface SecretValues {
  /**
   * The secret's text (printable ASCII, trailing line breaks removed). Rejects with `SecretUnavailableError`
   * when the secret is missing, unreadable or unusable; the rejection never carries the value.
   */
  value(ref: string): Promise<string>;
}

/** Why a secret could not be had (a fixed vocabulary: safe to log, to journal and to show). */
export type SecretUnavailableReason =
  /** The reference is not a valid `secret_ref`. */
  | 'invalid_reference'
  | 'not_found'
  | 'access_denied'
  /** A local secret file other users may read or write. */
  | 'insecure_permissions'
  /** Empty, too long, not printable ASCII, or not a text secret. */
  | 'invalid_value'
  /** Anything else: the store failed, timed out or answered something unexpected. */
  | 'unreadable'
  /** No secret store is configured for this process. */
  | 'not_configured';

/** A secret could not be read. Its message names the reference and the reason, never the value. */
export class SecretUnavailableError extends Error {
  readonly code = 'ESECRETUNAVAILABLE';
  constructor(
    /** The reference as asked, when it is a valid `secret_ref`; else `(invalid)`. */
    readonly ref: string,
    readonly reason: SecretUnavailableReason,
    /** A fixed identifier of the store's error (e.g. `ResourceNotFoundException`, `ENOENT`), never its text. */
    readonly detail?: string,
  ) {
    super(`secret ${ref} unavailable: ${reason.replaceAll('_', ' ')}${detail ? ` (${detail})` : ''}`);
    this.name = 'SecretUnavailableError';
  }
}

/** Characters of a `secret_ref` (those of a Secrets Manager name), 1–128 of them. */
export const SECRET_REF_PATTERN = /^[A-Za-z0-9/_+=.@-]{1,128}$/;

/**
 * A valid `secret_ref`: `SECRET_REF_PATTERN`, and `/`-separated segments that are neither empty nor `.` or
 * `..` (a reference is a name under the store's prefix or directory, never a way out of it).
 */
export const isSecretRef = (ref: unknown): ref is string =>
  typeof ref === 'string' &&
  SECRET_REF_PATTERN.test(ref) &&
  ref.split('/').every((segment) => segment !== '' && segment !== '.' && segment !== '..');

/** Longest secret value accepted (Secrets Manager's own limit is 64 KiB). */
export const MAX_SECRET_VALUE_CHARS = 8192;

/**
 * The usable value of a secret's text, or undefined: trailing CR/LF removed (a file written with `echo`), then
 * 1–`MAX_SECRET_VALUE_CHARS` printable ASCII characters (it travels in a header or a query parameter), not
 * starting or ending with a space.
 */
export const usableSecretValue = (text: string): string | undefined => {
  const value = text.replace(/[\r\n]+$/, '');
  if (value.length === 0 || value.length > MAX_SECRET_VALUE_CHARS) return undefined;
  if (!/^[\x20-\x7e]+$/.test(value) || value.startsWith(' ') || value.endsWith(' ')) return undefined;
  return value;
};
