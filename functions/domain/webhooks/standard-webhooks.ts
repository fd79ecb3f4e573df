/**
 * Standard Webhooks signatures (C33 `signature_scheme: "standard-webhooks"`; https://www.standardwebhooks.com):
 * `webhook-id` (the event id: the same on every attempt, so receivers deduplicate by it), `webhook-timestamp`
 * (Unix seconds of the attempt) and `webhook-signature`: `v1,` + standard padded base64 of HMAC-SHA-256 over
 * `<id>.<timestamp>.<raw body>`, keyed with the secret's decoded bytes (the `whsec_` secrets of C12 are already in
 * the specification's format). During a rotation one signature per valid secret, space-separated, newest first.
 * Receivers verify with the published `standardwebhooks` libraries; the ±300 s window is theirs to check.
 */
import { anySignatureMatches, hmacSha256, versionedSignatures } from './signature';

/** How an endpoint's deliveries are signed: this service's `X-Signature` (C13) or Standard Webhooks'. */
export const SIGNATURE_SCHEMES = ['native', 'standard-webhooks'] as const;
export type SignatureScheme = (typeof SIGNATURE_SCHEMES)[number];

/** How an endpoint's deliveries are signed: HMAC with its secret, or Ed25519 with the service's key (JWKS). */
export const SIGNING_ALGORITHMS = ['hmac-sha256', 'ed25519'] as const;
export type SigningAlgorithm = (typeof SIGNING_ALGORITHMS)[number];

export const STANDARD_WEBHOOKS_HEADERS = {
  id: 'webhook-id',
  timestamp: 'webhook-timestamp',
  signature: 'webhook-signature',
} as const;

/** The HMAC version tag of the specification (`v1a` is its Ed25519 one). */
const HMAC_PREFIX = 'v1,';

/** Unix seconds, as the `webhook-timestamp` header carries them. */
export const unixSeconds = (at: Date): string => String(Math.floor(at.getTime() / 1000));

/** What is signed: `<id>.<timestamp>.<body>`, the body as its raw bytes. */
export const standardSignedContent = (input: {
  readonly id: string;
  readonly timestamp: string;
  readonly body: Uint8Array;
}): Buffer => Buffer.concat([Buffer.from(`${input.id}.${input.timestamp}.`, 'utf8'), input.body]);

/** The `webhook-signature` value: `v1,<base64>` per secret, space-separated in the order given. */
export const standardSignatureHeader = (input: {
  readonly secrets: readonly Uint8Array[];
  readonly id: string;
  readonly timestamp: string;
  readonly body: Uint8Array;
}): string => {
  if (input.secrets.length === 0) throw new Error('no_secret');
  const content = standardSignedContent(input);
  return input.secrets
    .map((secret) => `${HMAC_PREFIX}${hmacSha256(secret, content).toString('base64')}`)
    .join(' ');
};

/**
 * Constant-time check of a `webhook-signature` header against secrets: true when any `v1,` signature matches any
 * secret (every pair compared, no early exit). Entries of other versions, and signatures not in canonical padded
 * base64, are ignored; nothing throws.
 */
export const verifyStandardSignature = (input: {
  readonly header: string;
  readonly secrets: readonly Uint8Array[];
  readonly id: string;
  readonly timestamp: string;
  readonly body: Uint8Array;
}): boolean => {
  const content = standardSignedContent(input);
  return anySignatureMatches(
    input.secrets.map((secret) => hmacSha256(secret, content)),
    versionedSignatures(input.header, HMAC_PREFIX),
  );
};
