import { CompactSign, type CryptoKey, exportJWK, generateKeyPair, SignJWT } from 'jose';
import { describe, expect, it } from 'vitest';
import { createDpopVerifier } from '../../../../functions/adapters/http/dpop-verifier';

const verifier = createDpopVerifier();
const claims = {
  htm: 'POST',
  htu: 'https://api.example.com/partner/confirmations',
  iat: 1_800_000_000,
  jti: 'j-1',
};

const keyPair = async (alg: 'ES256' | 'EdDSA') => {
  const pair = await generateKeyPair(alg, { extractable: true });
  return { ...pair, jwk: await exportJWK(pair.publicKey), privateJwk: await exportJWK(pair.privateKey) };
};

const es = await keyPair('ES256');
const ed = await keyPair('EdDSA');
const other = await keyPair('ES256');

const sign = (
  key: CryptoKey,
  header: Record<string, unknown>,
  payload: Record<string, unknown> = claims,
): Promise<string> =>
  new SignJWT(payload).setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', ...header }).sign(key);

describe('the jose DPoP verifier (signature with the key in the jwk header)', () => {
  it('returns the protected header and claims of a proof that verifies', async () => {
    const proof = await sign(es.privateKey, { jwk: es.jwk });
    expect(await verifier.verify(proof, ['ES256'])).toEqual({
      ok: true,
      header: { alg: 'ES256', typ: 'dpop+jwt', jwk: es.jwk },
      claims,
    });
    const edProof = await sign(ed.privateKey, { alg: 'EdDSA', jwk: ed.jwk });
    expect(await verifier.verify(edProof, ['EdDSA', 'Ed25519'])).toMatchObject({ ok: true, claims });
  });

  it('refuses a proof signed by another key than the one in its header', async () => {
    const proof = await sign(other.privateKey, { jwk: es.jwk });
    expect(await verifier.verify(proof, ['ES256'])).toEqual({ ok: false, refusal: 'signature' });
  });

  it('refuses a proof whose payload was changed after signing', async () => {
    const proof = await sign(es.privateKey, { jwk: es.jwk });
    const [header, , signature] = proof.split('.');
    const payload = Buffer.from(JSON.stringify({ ...claims, htm: 'GET' })).toString('base64url');
    expect(await verifier.verify(`${header}.${payload}.${signature}`, ['ES256'])).toEqual({
      ok: false,
      refusal: 'signature',
    });
  });

  it('refuses an algorithm the endpoint key does not sign with', async () => {
    const proof = await sign(ed.privateKey, { alg: 'EdDSA', jwk: ed.jwk });
    expect(await verifier.verify(proof, ['ES256'])).toEqual({ ok: false, refusal: 'alg' });
  });

  it('refuses a header without a jwk, with a private jwk, or with an unsupported key', async () => {
    expect(await verifier.verify(await sign(es.privateKey, {}), ['ES256'])).toEqual({
      ok: false,
      refusal: 'jwk',
    });
    expect(await verifier.verify(await sign(es.privateKey, { jwk: es.privateJwk }), ['ES256'])).toEqual({
      ok: false,
      refusal: 'jwk',
    });
    const rsa = await generateKeyPair('RS256', { extractable: true });
    const rsaProof = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'RS256', typ: 'dpop+jwt', jwk: await exportJWK(rsa.publicKey) })
      .sign(rsa.privateKey);
    expect(await verifier.verify(rsaProof, ['RS256'])).toEqual({ ok: false, refusal: 'jwk' });
  });

  it('refuses what is not a compact JWS, and a payload that is not JSON', async () => {
    expect(await verifier.verify('not.a.jws', ['ES256'])).toEqual({ ok: false, refusal: 'malformed' });
    expect(await verifier.verify('a.b', ['ES256'])).toEqual({ ok: false, refusal: 'malformed' });
    const text = await new CompactSign(new TextEncoder().encode('not json'))
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: es.jwk })
      .sign(es.privateKey);
    expect(await verifier.verify(text, ['ES256'])).toEqual({ ok: false, refusal: 'malformed' });
    const invalidUtf8 = await new CompactSign(Uint8Array.of(0x7b, 0xff, 0x7d))
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: es.jwk })
      .sign(es.privateKey);
    expect(await verifier.verify(invalidUtf8, ['ES256'])).toEqual({ ok: false, refusal: 'malformed' });
  });
});
