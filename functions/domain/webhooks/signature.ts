/**
 * Webhook request signatures (C13, spec "Authentication"). The canonical string is the `X-Timestamp` value, the
 * HTTP method, the request path (with its query, if any) and the lowercase hex SHA-256 of the raw body bytes,
 * joined by `\n`. `X-Signature` carries `v1=` + standard padded base64 of HMAC-SHA-256 over that string
 * (UTF-8), keyed with the endpoint secret's decoded bytes; during a rotation one signature per valid secret,
 * space-separated. The ±300 s timestamp window is the receiver's check, not part of this module.
 */
import { createHash, createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_SCHEME = 'v1';

const SCHEME_PREFIX = `${SIGNATURE_SCHEME}=`;

/** Standard (RFC 4648 §4) base64 with padding. */
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** An X-Signature header with no `v1=` signature in it. The message never echoes the header. */
export class MalformedSignatureHeaderError extends Error {
  constructor(options?: ErrorOptions) {
    super('malformed_signature_header', options);
    this.name = 'MalformedSignatureHeaderError';
  }
}

/**
 * Canonical-string parts that would make the string ambiguous (a line break inside one of them), or a
 * signature asked for with no secret. Programming errors of the caller; the message names the field only.
 */
export class SignatureInputError extends Error {
  constructor(
    readonly code: 'line_break_in_timestamp' | 'line_break_in_method' | 'line_break_in_path' | 'no_secret',
    options?: ErrorOptions,
  ) {
    super(code, options);
    this.name = 'SignatureInputError';
  }
}

const LINE_BREAK = /[\r\n]/;

/**
 * C13: X-Timestamp value \n METHOD \n path (with query) \n lowercase hex SHA-256 of raw body bytes. The parts
 * are used exactly as given (the method is not case-folded, the path not normalised): sign what goes on the
 * wire. Throws SignatureInputError when a part holds a line break (the string would be ambiguous).
 */
export const canonicalString = (input: {
  timestamp: string;
  method: string;
  path: string;
  body: Uint8Array;
}): string => {
  if (LINE_BREAK.test(input.timestamp)) throw new SignatureInputError('line_break_in_timestamp');
  if (LINE_BREAK.test(input.method)) throw new SignatureInputError('line_break_in_method');
  if (LINE_BREAK.test(input.path)) throw new SignatureInputError('line_break_in_path');
  const bodyHash = createHash('sha256').update(input.body).digest('hex');
  return `${input.timestamp}\n${input.method}\n${input.path}\n${bodyHash}`;
};

/**
 * HMAC-SHA-256 of `content` (a string as UTF-8) keyed with the secret's bytes. The key goes through
 * `createSecretKey` on purpose: on Node 24 `createHmac` with raw key bytes is about three
 * times slower than with a KeyObject made per call (see bench/webhooks-sign.bench.ts). A fresh KeyObject per
 * call copies the bytes as they are now, so nothing is cached that a caller could later change.
 */
export const hmacSha256 = (secret: Uint8Array, content: string | Uint8Array): Buffer =>
  createHmac('sha256', createSecretKey(secret)).update(content).digest();

/** `v1=` + base64 (standard, padded) HMAC-SHA-256(secretBytes, canonical string as UTF-8). */
export const signCanonical = (secret: Uint8Array, canonical: string): string =>
  `${SCHEME_PREFIX}${hmacSha256(secret, canonical).toString('base64')}`;

/**
 * The X-Signature header value: one `v1=` signature per secret, space-separated, in the order given (rotation:
 * new first, then old). Throws SignatureInputError (`no_secret`) if secrets is empty.
 */
export const signatureHeader = (input: {
  secrets: readonly Uint8Array[];
  timestamp: string;
  method: string;
  path: string;
  body: Uint8Array;
}): string => {
  if (input.secrets.length === 0) throw new SignatureInputError('no_secret');
  const canonical = canonicalString(input);
  return input.secrets.map((secret) => signCanonical(secret, canonical)).join(' ');
};

/**
 * Parses an X-Signature header into its v1 signatures: the base64 parts without `v1=`, in header order.
 * Entries are separated by whitespace; entries of another scheme (`v2=…`) and `v1=` entries that are not padded
 * standard base64 in its canonical form are ignored. Throws MalformedSignatureHeaderError if nothing parseable is left.
 */
export const parseSignatureHeader = (header: string): string[] => {
  const signatures = versionedSignatures(header, SCHEME_PREFIX);
  if (signatures.length === 0) throw new MalformedSignatureHeaderError();
  return signatures;
};

/**
 * The base64 signatures of a header's whitespace-separated entries that start with `prefix` (`v1=`, Standard
 * Webhooks' `v1,`), without it. Canonical padded base64 only: the last character's unused bits must be zero, so
 * each signature has exactly one spelling (a header changed in any character never verifies).
 */
export const versionedSignatures = (header: string, prefix: string): string[] =>
  header
    .split(/\s+/)
    .filter((entry) => entry.startsWith(prefix))
    .map((entry) => entry.slice(prefix.length))
    .filter(
      (value) =>
        value.length > 0 && BASE64.test(value) && Buffer.from(value, 'base64').toString('base64') === value,
    );

/**
 * Constant-time: whether any received signature (base64) equals any expected MAC. Every pair is compared with
 * `crypto.timingSafeEqual` after an equal-length guard, with no early exit.
 */
export const anySignatureMatches = (expected: readonly Buffer[], received: readonly string[]): boolean => {
  const decoded = received.map((signature) => Buffer.from(signature, 'base64'));
  let matched = false;
  for (const want of expected) {
    for (const got of decoded) {
      if (got.length === want.length && timingSafeEqual(got, want)) matched = true;
    }
  }
  return matched;
};

/**
 * Constant-time check of a header against secrets: true when any v1 signature matches any secret. Each
 * signature is decoded to raw bytes and compared with `crypto.timingSafeEqual` (after an equal-length guard)
 * against the HMAC of every secret; every pair is compared, with no early exit. A malformed header, no
 * secrets or an ambiguous canonical part give false, never an exception.
 */
export const verifySignatureHeader = (input: {
  header: string;
  secrets: readonly Uint8Array[];
  timestamp: string;
  method: string;
  path: string;
  body: Uint8Array;
}): boolean => {
  let canonical: string;
  let signatures: string[];
  try {
    canonical = canonicalString(input);
    signatures = parseSignatureHeader(input.header);
  } catch (error) {
    if (error instanceof MalformedSignatureHeaderError || error instanceof SignatureInputError) return false;
    throw error;
  }
  return anySignatureMatches(
    input.secrets.map((secret) => hmacSha256(secret, canonical)),
    signatures,
  );
};
