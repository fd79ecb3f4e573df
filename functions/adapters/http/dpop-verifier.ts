/**
 * The JWS part of DPoP proof verification (RFC 9449 §4.3, checks 2–7 of the signature), with `jose`: the proof
 * is a compact JWS whose signature must verify with the public key in its own `jwk` header, for one of the
 * algorithms the endpoint's key signs with. What the proof says (typ, key, htm, htu, iat, jti) is checked
 * afterwards by `checkDpopProof` in the domain, with the time passed in.
 */
import { type CompactVerifyGetKey, compactVerify, EmbeddedJWK, errors } from 'jose';
import { dpopJwkProblem } from '../../domain/webhooks/dpop';
import type { DpopProofVerifier } from '../../ports/webhooks';

/** The `jwk` header is not a public key of a supported curve (a private key included): refused before use. */
class UnsupportedProofKeyError extends Error {
  constructor() {
    super('unsupported DPoP proof key');
    this.name = 'UnsupportedProofKeyError';
  }
}

/** jose's embedded-key resolver, behind the domain's key check (never a private key, only P-256 or Ed25519). */
const proofKey: CompactVerifyGetKey = async (protectedHeader, token) => {
  if (dpopJwkProblem(protectedHeader.jwk) !== undefined) throw new UnsupportedProofKeyError();
  return EmbeddedJWK(protectedHeader, token);
};

type Verification = Awaited<ReturnType<DpopProofVerifier['verify']>>;

const refusalOf = (error: unknown): Verification => {
  if (error instanceof UnsupportedProofKeyError) return { ok: false, refusal: 'jwk' };
  if (error instanceof errors.JOSEAlgNotAllowed) return { ok: false, refusal: 'alg' };
  if (error instanceof errors.JWSSignatureVerificationFailed) return { ok: false, refusal: 'signature' };
  return { ok: false, refusal: 'malformed' };
};

/** A `DpopProofVerifier` with jose (WebCrypto). */
export const createDpopVerifier = (): DpopProofVerifier => ({
  async verify(proof, algorithms) {
    let verified: Awaited<ReturnType<typeof compactVerify>>;
    try {
      verified = await compactVerify(proof, proofKey, { algorithms: [...algorithms] });
    } catch (error) {
      return refusalOf(error);
    }
    let claims: unknown;
    try {
      claims = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(verified.payload));
    } catch {
      return { ok: false, refusal: 'malformed' };
    }
    return { ok: true, header: { ...verified.protectedHeader }, claims };
  },
});
