/**
 * Standard Webhooks signatures (C33 `signature_scheme: "standard-webhooks"`; https://www.standardwebhooks.com):
 * `webhook-id` (the event id: the same on every attempt, so receivers deduplicate by it), `webhook-timestamp`
 * (Unix seconds of the attempt) and `webhook-signature`: `v1,` + standard padded base64 of HMAC-SHA-256 over
 * `<id>.<timestamp>.<raw body>`, keyed with the secret's decoded bytes (the `whsec_` secrets of C12 are already in
 * the specification's format). During a rotation one signature per valid secret, space-separated, newest first.
 * Receivers verify with the published `standardwebhooks` libraries; the ±300 s window is theirs to check.
 */
import { createHmac, createSecretKey, timingSafeEqual } from 'node:crypto';

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

const mac = (secret: Uint8Array, content: Buffer): Buffer =>
  createHmac('sha256', createSecretKey(secret)).update(content).digest();

/** The `webhook-signature` value: `v1,<base64>` per secret, space-separated in the order given. */
export const standardSignatureHeader = (input: {
  readonly secrets: readonly Uint8Array[];
  readonly id: string;
  readonly timestamp: string;
  readonly body: Uint8Array;
}): string => {
  if (input.secrets.length === 0) throw new Error('no_secret');
  const content = standardSignedContent(input);
  return input.secrets.map((secret) => `${HMAC_PREFIX}${mac(secret, content).toString('base64')}`).join(' ');
};

/** The three headers of a Standard Webhooks request. */
export const standardWebhookHeaders = (input: {
  readonly secrets: readonly Uint8Array[];
  readonly id: string;
  readonly at: Date;
  readonly body: Uint8Array;
}): Record<(typeof STANDARD_WEBHOOKS_HEADERS)[keyof typeof STANDARD_WEBHOOKS_HEADERS], string> => {
  const timestamp = unixSeconds(input.at);
  return {
    [STANDARD_WEBHOOKS_HEADERS.id]: input.id,
    [STANDARD_WEBHOOKS_HEADERS.timestamp]: timestamp,
    [STANDARD_WEBHOOKS_HEADERS.signature]: standardSignatureHeader({ ...input, timestamp }),
  };
};

/**
 * Constant-time check of a `webhook-signature` header against secrets: true when any `v1,` signature matches any
 * secret (every pair compared, no early exit). Entries of other versions are ignored; nothing throws.
 */
export const verifyStandardSignature = (input: {
  readonly header: string;
  readonly secrets: readonly Uint8Array[];
  readonly id: string;
  readonly timestamp: string;
  readonly body: Uint8Array;
}): boolean => {
  const received = input.header
    .split(' ')
    .filter((entry) => entry.startsWith(HMAC_PREFIX))
    .map((entry) => Buffer.from(entry.slice(HMAC_PREFIX.length), 'base64'));
  const content = standardSignedContent(input);
  let matched = false;
  for (const secret of input.secrets) {
    const want = mac(secret, content);
    for (const got of received) if (got.length === want.length && timingSafeEqual(got, want)) matched = true;
  }
  return matched;
};
