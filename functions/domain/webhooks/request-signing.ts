/**
 * The signature headers of one webhook request, for every pairing of scheme (C13 native or Standard Webhooks) and
 * algorithm (HMAC with the endpoint's secrets, or Ed25519 with the service's key, C33): the one place a request's
 * signature headers are assembled.
 */
import type { KeyObject } from 'node:crypto';
import { nativeAsymmetricSignature, standardAsymmetricSignature } from './sender-keys';
import { canonicalString, signatureHeader } from './signature';
import {
  type SignatureScheme,
  STANDARD_WEBHOOKS_HEADERS,
  standardSignatureHeader,
  standardSignedContent,
  unixSeconds,
} from './standard-webhooks';

/** The header that names the Ed25519 key of a `v1a` signature, for the JWKS lookup. */
export const SIGNATURE_KEY_ID_HEADER = 'X-Signature-Key-Id';

/** What signs: the endpoint's valid secrets (newest first during a rotation), or the service's active key. */
export type WebhookSigner =
  | { readonly algorithm: 'hmac-sha256'; readonly secrets: readonly Uint8Array[] }
  | { readonly algorithm: 'ed25519'; readonly kid: string; readonly privateKey: KeyObject };

export interface SignedRequest {
  /** The event id: Standard Webhooks' `webhook-id`. */
  readonly id: string;
  readonly at: Date;
  /** The path the native canonical string signs (with its query). */
  readonly path: string;
  readonly body: Uint8Array;
}

/**
 * `X-Timestamp` (ISO 8601) and `X-Signature` (`v1=` per secret, or `v1a=`) in the native scheme; `webhook-id`,
 * `webhook-timestamp` (Unix seconds) and `webhook-signature` (`v1,` per secret, or `v1a,`) in Standard Webhooks';
 * with Ed25519, `X-Signature-Key-Id` too. An HMAC signer without secrets throws (`no_secret`).
 */
export const signedRequestHeaders = (
  signer: WebhookSigner,
  scheme: SignatureScheme,
  request: SignedRequest,
): Record<string, string> => {
  const keyId: Record<string, string> =
    signer.algorithm === 'ed25519' ? { [SIGNATURE_KEY_ID_HEADER]: signer.kid } : {};
  if (scheme === 'standard-webhooks') {
    const timestamp = unixSeconds(request.at);
    const content = { id: request.id, timestamp, body: request.body };
    return {
      [STANDARD_WEBHOOKS_HEADERS.id]: request.id,
      [STANDARD_WEBHOOKS_HEADERS.timestamp]: timestamp,
      [STANDARD_WEBHOOKS_HEADERS.signature]:
        signer.algorithm === 'ed25519'
          ? standardAsymmetricSignature(signer.privateKey, standardSignedContent(content))
          : standardSignatureHeader({ ...content, secrets: signer.secrets }),
      ...keyId,
    };
  }
  const timestamp = request.at.toISOString();
  const signed = { timestamp, method: 'POST', path: request.path, body: request.body };
  return {
    'X-Timestamp': timestamp,
    'X-Signature':
      signer.algorithm === 'ed25519'
        ? nativeAsymmetricSignature(signer.privateKey, canonicalString(signed))
        : signatureHeader({ ...signed, secrets: signer.secrets }),
    ...keyId,
  };
};
