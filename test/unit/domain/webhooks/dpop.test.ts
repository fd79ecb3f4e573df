import { createHash, generateKeyPairSync, type JsonWebKey } from 'node:crypto';
import { calculateJwkThumbprint } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  checkDpopProof,
  credentialHash,
  DEFAULT_DPOP_WINDOW_SECONDS,
  DPOP_ALGORITHMS,
  DPOP_MAX_JTI_LENGTH,
  DPOP_MAX_PROOF_LENGTH,
  type DpopExpectations,
  type DpopProofContents,
  type DpopPublicJwk,
  dpopAlgorithms,
  dpopChallenge,
  dpopJwkProblem,
  dpopRefusalDescription,
  jwkThumbprint,
  normalizeTargetUri,
  publicDpopJwk,
  requestTargetUri,
  singleDpopProof,
} from '../../../../functions/domain/webhooks/dpop';

const exportJwk = (type: 'ec' | 'ed25519'): { publicJwk: JsonWebKey; privateJwk: JsonWebKey } => {
  const pair =
    type === 'ec' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('ed25519');
  return {
    publicJwk: pair.publicKey.export({ format: 'jwk' }),
    privateJwk: pair.privateKey.export({ format: 'jwk' }),
  };
};

const ec = exportJwk('ec');
const ed = exportJwk('ed25519');
const other = exportJwk('ec');
const ecKey = publicDpopJwk(ec.publicJwk as Record<string, unknown>);
const edKey = publicDpopJwk(ed.publicJwk as Record<string, unknown>);

/** 32 bytes, base64url: valid shape, not a point on P-256. */
const ZEROS = 'A'.repeat(43);

describe('dpopJwkProblem: which keys may be registered', () => {
  it('accepts a public P-256 key and a public Ed25519 key, with alg, use and kid beside them', () => {
    expect(dpopJwkProblem(ec.publicJwk)).toBeUndefined();
    expect(dpopJwkProblem(ed.publicJwk)).toBeUndefined();
    expect(dpopJwkProblem({ ...ec.publicJwk, alg: 'ES256', use: 'sig', kid: 'k1' })).toBeUndefined();
    expect(dpopJwkProblem({ ...ed.publicJwk, alg: 'EdDSA' })).toBeUndefined();
    expect(dpopJwkProblem({ ...ed.publicJwk, alg: 'Ed25519' })).toBeUndefined();
  });

  it('never accepts a private key: d (or any private or symmetric member) is refused by name', () => {
    expect(dpopJwkProblem(ec.privateJwk)).toEqual({
      path: 'd',
      message: 'a private key is never accepted: register the public key only',
    });
    expect(dpopJwkProblem(ed.privateJwk)?.path).toBe('d');
    for (const member of ['p', 'q', 'dp', 'dq', 'qi', 'oth', 'k']) {
      expect(dpopJwkProblem({ ...ec.publicJwk, [member]: 'AAAA' })?.path).toBe(member);
    }
  });

  it('refuses anything that is not a JWK object', () => {
    for (const value of [null, undefined, 'jwk', 42, [ec.publicJwk]]) {
      expect(dpopJwkProblem(value)).toEqual({ path: '', message: 'a JWK (JSON object) is required' });
    }
  });

  it('refuses other key types and curves', () => {
    expect(dpopJwkProblem({ kty: 'RSA', n: 'AQAB', e: 'AQAB' })?.path).toBe('kty');
    expect(dpopJwkProblem({ ...ec.publicJwk, kty: undefined })?.path).toBe('kty');
    expect(dpopJwkProblem({ ...ec.publicJwk, crv: 'P-384' })).toEqual({
      path: 'crv',
      message: 'an EC key must be on P-256',
    });
    expect(dpopJwkProblem({ ...ed.publicJwk, crv: 'X25519' })).toEqual({
      path: 'crv',
      message: 'an OKP key must be Ed25519',
    });
  });

  it('refuses coordinates that are not 32 bytes of canonical base64url', () => {
    expect(dpopJwkProblem({ ...ec.publicJwk, x: 42 })?.path).toBe('x');
    expect(dpopJwkProblem({ ...ec.publicJwk, x: `${ZEROS}A` })?.path).toBe('x');
    expect(dpopJwkProblem({ ...ec.publicJwk, x: `${'A'.repeat(42)}B` })?.path).toBe('x');
    expect(dpopJwkProblem({ ...ec.publicJwk, x: `${'A'.repeat(42)}=` })?.path).toBe('x');
    const { y: _y, ...withoutY } = ec.publicJwk;
    expect(dpopJwkProblem(withoutY)?.path).toBe('y');
    expect(dpopJwkProblem({ ...ec.publicJwk, y: 'short' })?.path).toBe('y');
    expect(dpopJwkProblem({ ...ed.publicJwk, y: ZEROS })).toEqual({
      path: 'y',
      message: 'an Ed25519 key has no y',
    });
  });

  it('refuses an alg its curve does not sign with, and a use other than sig', () => {
    expect(dpopJwkProblem({ ...ec.publicJwk, alg: 'EdDSA' })).toEqual({
      path: 'alg',
      message: 'alg must be one of ES256 for this key',
    });
    expect(dpopJwkProblem({ ...ed.publicJwk, alg: 'ES256' })?.message).toBe(
      'alg must be one of EdDSA, Ed25519 for this key',
    );
    expect(dpopJwkProblem({ ...ec.publicJwk, alg: { name: 'ES256' } })?.path).toBe('alg');
    expect(dpopJwkProblem({ ...ec.publicJwk, use: 'enc' })).toEqual({
      path: 'use',
      message: 'use must be sig',
    });
  });

  it('refuses a P-256 "key" whose point is not on the curve', () => {
    expect(dpopJwkProblem({ kty: 'EC', crv: 'P-256', x: ZEROS, y: ZEROS })).toEqual({
      path: '',
      message: 'not a valid public key of its curve',
    });
  });

  it('only looks at own members (an inherited d is not a member, an inherited kty is no kty)', () => {
    const inherited = Object.create({ d: 'AAAA', kty: 'EC' }) as Record<string, unknown>;
    expect(dpopJwkProblem(inherited)?.path).toBe('kty');
  });
});

describe('publicDpopJwk and jwkThumbprint (RFC 7638)', () => {
  it('keeps only the required members', () => {
    expect(publicDpopJwk({ ...ec.publicJwk, kid: 'k', alg: 'ES256' })).toEqual({
      kty: 'EC',
      crv: 'P-256',
      x: ec.publicJwk.x,
      y: ec.publicJwk.y,
    });
    expect(publicDpopJwk({ ...ed.publicJwk, use: 'sig' })).toEqual({
      kty: 'OKP',
      crv: 'Ed25519',
      x: ed.publicJwk.x,
    });
  });

  it('throws on what it cannot reduce', () => {
    expect(() => publicDpopJwk({ kty: 'EC', crv: 'P-384', x: ZEROS, y: ZEROS })).toThrow(TypeError);
    expect(() => publicDpopJwk({ kty: 'EC', crv: 'P-256', x: 1, y: ZEROS })).toThrow(TypeError);
    expect(() => publicDpopJwk({ kty: 'EC', crv: 'P-256', x: ZEROS })).toThrow(TypeError);
  });

  it('equals jose calculateJwkThumbprint for both curves, and ignores members beside the key', async () => {
    expect(jwkThumbprint(ecKey)).toBe(await calculateJwkThumbprint(ec.publicJwk as never));
    expect(jwkThumbprint(edKey)).toBe(await calculateJwkThumbprint(ed.publicJwk as never));
    expect(jwkThumbprint(publicDpopJwk({ ...ec.publicJwk, kid: 'other' }))).toBe(jwkThumbprint(ecKey));
    expect(jwkThumbprint(ecKey)).not.toBe(
      jwkThumbprint(publicDpopJwk(other.publicJwk as Record<string, unknown>)),
    );
  });

  it('hashes the members in lexicographic order without whitespace', () => {
    const input = `{"crv":"Ed25519","kty":"OKP","x":"${edKey.x}"}`;
    expect(jwkThumbprint(edKey)).toBe(createHash('sha256').update(input).digest('base64url'));
  });

  it('names the algorithms of each curve', () => {
    expect(dpopAlgorithms(ecKey)).toEqual(['ES256']);
    expect(dpopAlgorithms(edKey)).toEqual(['EdDSA', 'Ed25519']);
    expect(DPOP_ALGORITHMS).toEqual(['ES256', 'EdDSA', 'Ed25519']);
  });
});

describe('singleDpopProof', () => {
  const jws = 'eyJh.eyJi.c2ln';

  it('takes exactly one compact JWS', () => {
    expect(singleDpopProof([jws])).toEqual({ proof: jws });
    expect(singleDpopProof([` ${jws} `])).toEqual({ proof: jws });
  });

  it('no header, or an empty one, is missing', () => {
    expect(singleDpopProof([])).toEqual({ refusal: 'missing' });
    expect(singleDpopProof([''])).toEqual({ refusal: 'missing' });
    expect(singleDpopProof(['   '])).toEqual({ refusal: 'missing' });
  });

  it('two headers, a list, a non-JWS or an oversized value is malformed', () => {
    expect(singleDpopProof([jws, jws])).toEqual({ refusal: 'malformed' });
    expect(singleDpopProof([`${jws},${jws}`])).toEqual({ refusal: 'malformed' });
    expect(singleDpopProof(['eyJh.eyJi'])).toEqual({ refusal: 'malformed' });
    expect(singleDpopProof(['eyJh.eyJi.c2ln.extra'])).toEqual({ refusal: 'malformed' });
    expect(singleDpopProof([`eyJh.eyJi.${'a'.repeat(DPOP_MAX_PROOF_LENGTH)}`])).toEqual({
      refusal: 'malformed',
    });
    expect(singleDpopProof(Array<string>(1))).toEqual({ refusal: 'malformed' });
  });
});

describe('target URIs (htu)', () => {
  it('normalizes scheme and host case and the default port, and drops query and fragment', () => {
    expect(normalizeTargetUri('HTTPS://API.Example.com:443/prod/partner/confirmations?x=1#f')).toBe(
      'https://api.example.com/prod/partner/confirmations',
    );
    expect(normalizeTargetUri('http://127.0.0.1:80/a/./b/../c')).toBe('http://127.0.0.1/a/c');
    expect(normalizeTargetUri('https://api.example.com:8443/p')).toBe('https://api.example.com:8443/p');
  });

  it('is undefined for what is not an absolute http(s) URI without credentials', () => {
    expect(normalizeTargetUri('/partner/confirmations')).toBeUndefined();
    expect(normalizeTargetUri('ftp://example.com/x')).toBeUndefined();
    expect(normalizeTargetUri('https://user:password@example.com/x')).toBeUndefined();
    expect(normalizeTargetUri('https://user@example.com/x')).toBeUndefined();
  });

  it('builds the request URI from scheme, Host header and path', () => {
    expect(
      requestTargetUri({ scheme: 'https', host: 'abc.execute-api.eu-west-1.amazonaws.com', path: '/prod/p' }),
    ).toBe('https://abc.execute-api.eu-west-1.amazonaws.com/prod/p');
    expect(requestTargetUri({ scheme: 'http', host: 'LOCALHOST:3000', path: '/p' })).toBe(
      'http://localhost:3000/p',
    );
    expect(requestTargetUri({ scheme: 'https', host: '[::1]:8443', path: '/p' })).toBe(
      'https://[::1]:8443/p',
    );
  });

  it('is undefined for a host or path that cannot be part of one', () => {
    for (const host of ['', 'evil.com/x', 'user@host', 'a b', 'host:port', '-host']) {
      expect(requestTargetUri({ scheme: 'https', host, path: '/p' }), host).toBeUndefined();
    }
    for (const path of ['p', '/p?q=1', '/p#f', '/a b']) {
      expect(requestTargetUri({ scheme: 'https', host: 'example.com', path }), path).toBeUndefined();
    }
  });
});

describe('checkDpopProof (RFC 9449 §4.3)', () => {
  const now = new Date('2026-11-22T10:00:00.000Z');
  const nowSeconds = now.getTime() / 1000;
  const targetUri = 'https://api.example.com/prod/partner/confirmations';
  const partnerKey = `pk_${'a'.repeat(43)}`;
  const expected: DpopExpectations = {
    keyThumbprint: jwkThumbprint(ecKey),
    algorithms: dpopAlgorithms(ecKey),
    method: 'POST',
    targetUri,
    credentialHash: credentialHash(partnerKey),
    now,
    windowSeconds: DEFAULT_DPOP_WINDOW_SECONDS,
  };
  const proof = (
    header: Record<string, unknown> = {},
    claims: Record<string, unknown> | unknown = {},
  ): DpopProofContents => ({
    header: { typ: 'dpop+jwt', alg: 'ES256', jwk: ec.publicJwk, ...header },
    claims:
      typeof claims === 'object' && claims !== null && !Array.isArray(claims)
        ? {
            htm: 'POST',
            htu: targetUri,
            iat: nowSeconds,
            jti: 'jti-1',
            ath: credentialHash(partnerKey),
            ...claims,
          }
        : claims,
  });

  it('accepts a proof that matches, and says until when it could be accepted', () => {
    expect(checkDpopProof(proof(), expected)).toEqual({
      ok: true,
      jti: 'jti-1',
      acceptableUntil: nowSeconds + 60,
    });
    // htu may carry a query or fragment, and differ in case or default port: compared normalized.
    expect(
      checkDpopProof(
        proof({}, { htu: 'HTTPS://api.example.com:443/prod/partner/confirmations?a=1#b' }),
        expected,
      ).ok,
    ).toBe(true);
    // The edges of the window are inside it; a fractional iat is a NumericDate too.
    expect(checkDpopProof(proof({}, { iat: nowSeconds - 60 }), expected).ok).toBe(true);
    expect(checkDpopProof(proof({}, { iat: nowSeconds + 60 }), expected)).toEqual({
      ok: true,
      jti: 'jti-1',
      acceptableUntil: nowSeconds + 120,
    });
    expect(checkDpopProof(proof({}, { iat: nowSeconds + 0.5 }), expected)).toMatchObject({
      acceptableUntil: nowSeconds + 61,
    });
    // A jwk header with kid/alg beside the key is the same key.
    expect(checkDpopProof(proof({ jwk: { ...ec.publicJwk, kid: 'x', alg: 'ES256' } }), expected).ok).toBe(
      true,
    );
    // ath is required: the hash of the partner key presented (issue 15).
    expect(checkDpopProof(proof({}, { ath: credentialHash(partnerKey) }), expected).ok).toBe(true);
    // Ed25519 keys: EdDSA or its RFC 9864 name.
    const edExpected = {
      ...expected,
      keyThumbprint: jwkThumbprint(edKey),
      algorithms: dpopAlgorithms(edKey),
    };
    expect(checkDpopProof(proof({ alg: 'EdDSA', jwk: ed.publicJwk }), edExpected).ok).toBe(true);
    expect(checkDpopProof(proof({ alg: 'Ed25519', jwk: ed.publicJwk }), edExpected).ok).toBe(true);
  });

  const refusals: readonly (readonly [string, DpopProofContents, string])[] = [
    ['typ absent', proof({ typ: undefined }), 'typ'],
    ['typ JWT', proof({ typ: 'JWT' }), 'typ'],
    ['typ in another case', proof({ typ: 'DPOP+JWT' }), 'typ'],
    ['alg not a string', proof({ alg: 7 }), 'alg'],
    ['alg of another curve', proof({ alg: 'EdDSA' }), 'alg'],
    ['alg none', proof({ alg: 'none' }), 'alg'],
    ['jwk absent', proof({ jwk: undefined }), 'jwk'],
    ['jwk a private key', proof({ jwk: ec.privateJwk }), 'jwk'],
    ['jwk not an object', proof({ jwk: 'key' }), 'jwk'],
    ['jwk another key', proof({ jwk: other.publicJwk }), 'key_mismatch'],
    ['jwk another curve', proof({ alg: 'ES256', jwk: ed.publicJwk }), 'key_mismatch'],
    ['claims not an object', proof({}, 'claims'), 'malformed'],
    ['claims an array', proof({}, []), 'malformed'],
    ['claims null', proof({}, null), 'malformed'],
    ['htm absent', proof({}, { htm: undefined }), 'htm'],
    ['htm GET', proof({}, { htm: 'GET' }), 'htm'],
    ['htm lower case', proof({}, { htm: 'post' }), 'htm'],
    ['htu absent', proof({}, { htu: undefined }), 'htu'],
    ['htu not a URI', proof({}, { htu: 'partner/confirmations' }), 'htu'],
    ['htu another path', proof({}, { htu: 'https://api.example.com/partner/confirmations' }), 'htu'],
    ['htu another host', proof({}, { htu: 'https://evil.example.com/prod/partner/confirmations' }), 'htu'],
    ['htu http', proof({}, { htu: 'http://api.example.com/prod/partner/confirmations' }), 'htu'],
    ['iat absent', proof({}, { iat: undefined }), 'iat'],
    ['iat a string', proof({}, { iat: String(nowSeconds) }), 'iat'],
    ['iat infinite', proof({}, { iat: Number.POSITIVE_INFINITY }), 'iat'],
    ['iat stale', proof({}, { iat: nowSeconds - 61 }), 'iat'],
    ['iat in the future', proof({}, { iat: nowSeconds + 61 }), 'iat'],
    ['iat in milliseconds', proof({}, { iat: now.getTime() }), 'iat'],
    ['jti absent', proof({}, { jti: undefined }), 'jti'],
    ['jti a number', proof({}, { jti: 42 }), 'jti'],
    ['jti empty', proof({}, { jti: '' }), 'jti'],
    ['jti too long', proof({}, { jti: 'j'.repeat(DPOP_MAX_JTI_LENGTH + 1) }), 'jti'],
    ['ath of another credential', proof({}, { ath: credentialHash('pk_other') }), 'ath'],
    ['ath absent', proof({}, { ath: undefined }), 'ath'],
  ];

  it.each(refusals)('refuses %s', (_label, contents, refusal) => {
    expect(checkDpopProof(contents, expected)).toEqual({ ok: false, refusal });
  });

  it('accepts a jti of the maximum length', () => {
    expect(checkDpopProof(proof({}, { jti: 'j'.repeat(DPOP_MAX_JTI_LENGTH) }), expected).ok).toBe(true);
  });

  it('takes the window from its input', () => {
    expect(checkDpopProof(proof({}, { iat: nowSeconds - 100 }), { ...expected, windowSeconds: 120 }).ok).toBe(
      true,
    );
    expect(checkDpopProof(proof({}, { iat: nowSeconds - 5 }), { ...expected, windowSeconds: 1 })).toEqual({
      ok: false,
      refusal: 'iat',
    });
  });
});

describe('refusal texts', () => {
  it('describes each refusal and builds the RFC 9449 challenge', () => {
    expect(dpopRefusalDescription('replayed')).toBe('the DPoP proof jti was already used');
    expect(dpopChallenge('missing', ['ES256'])).toBe(
      'DPoP error="invalid_dpop_proof", error_description="this endpoint requires a DPoP proof in the DPoP header", algs="ES256"',
    );
    expect(dpopChallenge('iat', dpopAlgorithms(edKey))).toContain('algs="EdDSA Ed25519"');
  });

  it('hashes a credential as ath does: base64url SHA-256 of its bytes', () => {
    expect(credentialHash('pk_x')).toBe(createHash('sha256').update('pk_x').digest('base64url'));
  });

  it('reduces keys of both curves to a DpopPublicJwk', () => {
    const keys: DpopPublicJwk[] = [ecKey, edKey];
    expect(keys.map((key) => key.kty)).toEqual(['EC', 'OKP']);
  });
});
