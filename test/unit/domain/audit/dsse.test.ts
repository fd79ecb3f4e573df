import {
  generateKeyPairSync,
  type KeyObject,
  createPublicKey as nodeCreatePublicKey,
  sign,
  verify,
} from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type DsseEnvelope,
  type DsseSigner,
  DsseVerificationError,
  pae,
  RELEASE_PAYLOAD_TYPE,
  type ReleasePayloadInput,
  releasePayload,
  signEnvelope,
  verifyEnvelope,
} from '../../../../functions/domain/audit/dsse';
import { CanonicalizationError } from '../../../../functions/domain/money/canonical';
import type { PublicJwk } from '../../../../functions/ports/signing';

// ---------------------------------------------------------------------------------------------------------
// An independent verifier written from the DSSE v1 protocol text (protocol.md, envelope.md); it imports
// nothing from the module under test.
//   PAE(type, body) = "DSSEv1" + SP + LEN(type) + SP + type + SP + LEN(body) + SP + body
//   LEN(s) = ASCII decimal encoding of the byte length of s, with no leading zeros
// Verification: decode payload and sig from Base64, find the key by keyid, verify the signature over
// PAE(UTF8(payloadType), payload); reject if the payload type is not the one supported.
// ---------------------------------------------------------------------------------------------------------

const independentPae = (type: string, body: Buffer): Buffer => {
  const typeBytes = Buffer.from(type, 'utf8');
  return Buffer.concat([
    Buffer.from(`DSSEv1 ${typeBytes.length} `, 'utf8'),
    typeBytes,
    Buffer.from(` ${body.length} `, 'utf8'),
    body,
  ]);
};

const independentVerify = (
  envelope: DsseEnvelope,
  jwks: { keys: PublicJwk[] },
  expectedType: string,
): boolean => {
  const body = Buffer.from(envelope.payload, 'base64');
  if (body.toString('base64') !== envelope.payload) return false;
  return envelope.signatures.some((signature) => {
    const jwk = jwks.keys.find((key) => key.kid === signature.keyid);
    if (!jwk) return false;
    const sig = Buffer.from(signature.sig, 'base64');
    if (sig.toString('base64') !== signature.sig) return false;
    const key = nodeCreatePublicKey({
      key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y },
      format: 'jwk',
    });
    const ok = verify('sha256', independentPae(envelope.payloadType, body), key, sig);
    return ok && envelope.payloadType === expectedType;
  });
};

// ---------------------------------------------------------------------------------------------------------

interface TestKey {
  readonly signer: DsseSigner;
  readonly jwk: PublicJwk;
  readonly privateKey: KeyObject;
}

/** A real P-256 key wrapped in the ReceiptSigner shape: DER ECDSA over SHA-256 of the message. */
const makeKey = (kid: string): TestKey => {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { x, y } = publicKey.export({ format: 'jwk' });
  if (typeof x !== 'string' || typeof y !== 'string') throw new Error('no EC point in the exported JWK');
  return {
    privateKey,
    jwk: { kty: 'EC', crv: 'P-256', x, y, kid, alg: 'ES256', use: 'sig' },
    signer: { keyId: kid, sign: async (message) => sign('sha256', message, privateKey) },
  };
};

const key = makeKey('release-key-1');
const otherKey = makeKey('release-key-2');
const jwks = { keys: [otherKey.jwk, key.jwk] };

const release: ReleasePayloadInput = {
  cr_id: 'cr_01HZX',
  kind: 'pricelist',
  versions: { pricelist_version: 42, fx_version: '2025-06-01T10:00:00Z#17', tax_rule_version: 3 },
  content_sha256: 'sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08',
  author: 'alice',
  approvers: ['bob', 'carol'],
  effective_from: '2025-06-01T12:00:00Z',
};

const reasonOf = (run: () => unknown): string => {
  try {
    run();
  } catch (error) {
    if (error instanceof DsseVerificationError) return error.reason;
    throw error;
  }
  return 'verified';
};

const text = (bytes: Uint8Array): string => Buffer.from(bytes).toString('utf8');

describe('pae', () => {
  it('gives the DSSE specification example', () => {
    const encoded = pae('http://example.com/HelloWorld', Buffer.from('hello world'));
    expect(text(encoded)).toBe('DSSEv1 29 http://example.com/HelloWorld 11 hello world');
  });

  it('counts bytes, not characters, and handles empty fields and binary bodies', () => {
    expect(text(pae('', new Uint8Array()))).toBe('DSSEv1 0  0 ');
    expect(text(pae('tÿpe/€', Buffer.from('é')))).toBe('DSSEv1 9 tÿpe/€ 2 é');
    const binary = Uint8Array.of(0, 255, 10, 32);
    expect(Buffer.from(pae('b', binary)).equals(Buffer.concat([Buffer.from('DSSEv1 1 b 4 '), binary]))).toBe(
      true,
    );
  });

  it('equals the independent PAE for any type and body', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.uint8Array({ maxLength: 300 }), (type, body) => {
        expect(Buffer.from(pae(type, body)).equals(independentPae(type, Buffer.from(body)))).toBe(true);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('releasePayload', () => {
  const expected =
    '{"approvers":["bob","carol"],"author":"alice",' +
    '"content_sha256":"sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",' +
    '"cr_id":"cr_01HZX","effective_from":"2025-06-01T12:00:00Z","kind":"pricelist",' +
    '"versions":{"fx_version":"2025-06-01T10:00:00Z#17","pricelist_version":42,"tax_rule_version":3}}';

  it('is the UTF-8 of the JCS form of exactly the release fields', () => {
    expect(text(releasePayload(release))).toBe(expected);
  });

  it('does not depend on the order of the input keys and signs no extra field', () => {
    const shuffled = {
      extra: 'not signed',
      versions: {
        tax_rule_version: 3,
        fx_version: '2025-06-01T10:00:00Z#17',
        pricelist_version: 42,
        more: 1,
      },
      effective_from: '2025-06-01T12:00:00Z',
      approvers: ['bob', 'carol'],
      author: 'alice',
      kind: 'pricelist',
      content_sha256: release.content_sha256,
      cr_id: 'cr_01HZX',
    };
    expect(text(releasePayload(shuffled))).toBe(expected);
  });

  it('writes numbers as JCS does and keeps non-ASCII text as UTF-8', () => {
    const payload = releasePayload({
      ...release,
      author: 'Zoë',
      versions: { pricelist_version: 7.0, fx_version: 'v1', tax_rule_version: 1e21 },
    });
    expect(text(payload)).toContain('"author":"Zoë"');
    expect(text(payload)).toContain(
      '"versions":{"fx_version":"v1","pricelist_version":7,"tax_rule_version":1e+21}',
    );
    expect(Buffer.from(payload).includes(Buffer.from([0xc3, 0xab]))).toBe(true);
  });

  it('refuses a non-finite version number', () => {
    const bad = { ...release, versions: { ...release.versions, pricelist_version: Number.NaN } };
    expect(() => releasePayload(bad)).toThrow(CanonicalizationError);
  });
});

describe('signEnvelope and verifyEnvelope', () => {
  it('signs PAE with the injected signer and verifies with ours and the independent verifier', async () => {
    const payload = releasePayload(release);
    const envelope = await signEnvelope(RELEASE_PAYLOAD_TYPE, payload, key.signer);
    expect(envelope.payloadType).toBe(RELEASE_PAYLOAD_TYPE);
    expect(envelope.payload).toBe(Buffer.from(payload).toString('base64'));
    expect(envelope.signatures).toHaveLength(1);
    expect(envelope.signatures[0]!.keyid).toBe('release-key-1');
    expect(independentVerify(envelope, jwks, RELEASE_PAYLOAD_TYPE)).toBe(true);

    const verified = verifyEnvelope(envelope, jwks, { expectedPayloadType: RELEASE_PAYLOAD_TYPE });
    expect(verified.keyid).toBe('release-key-1');
    expect(verified.payloadType).toBe(RELEASE_PAYLOAD_TYPE);
    expect(text(verified.payload)).toBe(text(payload));
    // A plain list of JWKs works as well as a JWKS document, and the expected type is optional.
    expect(verifyEnvelope(envelope, [key.jwk]).keyid).toBe('release-key-1');
    // Round trip through JSON, as the envelope travels.
    expect(verifyEnvelope(JSON.parse(JSON.stringify(envelope)), jwks).payload).toEqual(verified.payload);
  });

  it('passes exactly the PAE bytes to the signer', async () => {
    const seen: Uint8Array[] = [];
    const recorder: DsseSigner = {
      keyId: 'k',
      sign: async (message) => {
        seen.push(message);
        return Uint8Array.of(1, 2, 3);
      },
    };
    const envelope = await signEnvelope('t', Buffer.from('body'), recorder);
    expect(text(seen[0]!)).toBe('DSSEv1 1 t 4 body');
    expect(envelope.signatures).toEqual([{ keyid: 'k', sig: 'AQID' }]);
  });

  it('fails on any single changed byte of the payload, the payload type or the signature', async () => {
    const payload = releasePayload(release);
    const envelope = await signEnvelope(RELEASE_PAYLOAD_TYPE, payload, key.signer);
    const sig = Buffer.from(envelope.signatures[0]!.sig, 'base64');
    const type = Buffer.from(RELEASE_PAYLOAD_TYPE, 'utf8');
    const targets = ['payload', 'payloadType', 'signature'] as const;
    fc.assert(
      fc.property(
        fc.constantFrom(...targets),
        fc.nat(),
        fc.integer({ min: 1, max: 255 }),
        (target, at, delta) => {
          const change = (bytes: Uint8Array): Buffer => {
            const copy = Buffer.from(bytes);
            const index = at % copy.length;
            copy[index] = (copy[index]! + delta) % 256;
            return copy;
          };
          const tampered: DsseEnvelope =
            target === 'payload'
              ? { ...envelope, payload: change(payload).toString('base64') }
              : target === 'payloadType'
                ? { ...envelope, payloadType: change(type).toString('latin1') }
                : { ...envelope, signatures: [{ keyid: key.jwk.kid, sig: change(sig).toString('base64') }] };
          expect(independentVerify(tampered, jwks, RELEASE_PAYLOAD_TYPE)).toBe(false);
          expect(reasonOf(() => verifyEnvelope(tampered, jwks))).toBe('bad_signature');
        },
      ),
      { numRuns: 1500 },
    );
  });

  it('refuses an unknown keyid, and a signature by another key under a known keyid', async () => {
    const envelope = await signEnvelope(RELEASE_PAYLOAD_TYPE, releasePayload(release), key.signer);
    expect(reasonOf(() => verifyEnvelope(envelope, [otherKey.jwk]))).toBe('unknown_keyid');
    expect(reasonOf(() => verifyEnvelope(envelope, { keys: [] }))).toBe('unknown_keyid');
    const renamed = { ...envelope, signatures: [{ ...envelope.signatures[0]!, keyid: 'release-key-2' }] };
    expect(reasonOf(() => verifyEnvelope(renamed, jwks))).toBe('bad_signature');
    expect(independentVerify(renamed, jwks, RELEASE_PAYLOAD_TYPE)).toBe(false);
    expect(() => verifyEnvelope(envelope, [otherKey.jwk])).toThrow(/no known key for keyids: release-key-1/);
  });

  it('refuses a valid envelope of another payload type when one is expected, after checking the signature', async () => {
    const envelope = await signEnvelope('application/json', Buffer.from('{}'), key.signer);
    expect(verifyEnvelope(envelope, jwks).payloadType).toBe('application/json');
    expect(
      reasonOf(() => verifyEnvelope(envelope, jwks, { expectedPayloadType: RELEASE_PAYLOAD_TYPE })),
    ).toBe('wrong_payload_type');
    expect(independentVerify(envelope, jwks, RELEASE_PAYLOAD_TYPE)).toBe(false);
    const forged = {
      ...envelope,
      signatures: [
        {
          keyid: key.jwk.kid,
          sig: envelope.signatures[0]!.sig.replace(/^./, (c) => (c === 'M' ? 'N' : 'M')),
        },
      ],
    };
    expect(reasonOf(() => verifyEnvelope(forged, jwks, { expectedPayloadType: RELEASE_PAYLOAD_TYPE }))).toBe(
      'bad_signature',
    );
  });

  it('accepts any verifying signature among several, whatever comes first', async () => {
    const payload = releasePayload(release);
    const mine = await signEnvelope(RELEASE_PAYLOAD_TYPE, payload, key.signer);
    const theirs = await signEnvelope(RELEASE_PAYLOAD_TYPE, payload, otherKey.signer);
    const stranger = { keyid: 'stranger', sig: 'AQID' };
    const broken = { keyid: key.jwk.kid, sig: theirs.signatures[0]!.sig };
    const both = { ...mine, signatures: [stranger, broken, ...theirs.signatures, ...mine.signatures] };
    expect(verifyEnvelope(both, jwks).keyid).toBe('release-key-2');
    expect(verifyEnvelope(both, [key.jwk]).keyid).toBe('release-key-1');
    expect(independentVerify(both, jwks, RELEASE_PAYLOAD_TYPE)).toBe(true);
  });

  it('accepts URL-safe and unpadded Base64, as DSSE allows', async () => {
    const envelope = await signEnvelope(RELEASE_PAYLOAD_TYPE, Buffer.from('??>>~~ payload'), key.signer);
    const urlSafe = (value: string) => Buffer.from(value, 'base64').toString('base64url');
    const relaxed = {
      ...envelope,
      payload: urlSafe(envelope.payload),
      signatures: [{ keyid: key.jwk.kid, sig: envelope.signatures[0]!.sig.replace(/=+$/, '') }],
    };
    expect(relaxed.payload).toMatch(/[-_]/);
    expect(text(verifyEnvelope(relaxed, jwks).payload)).toBe('??>>~~ payload');
  });

  it.each([
    ['null', null],
    ['an array', []],
    ['a string', 'envelope'],
    ['no payloadType', { payload: 'e30=', signatures: [{ keyid: 'k', sig: 'AQID' }] }],
    ['a numeric payload', { payloadType: 't', payload: 1, signatures: [{ keyid: 'k', sig: 'AQID' }] }],
    [
      'a payload outside Base64',
      { payloadType: 't', payload: 'e30=!', signatures: [{ keyid: 'k', sig: 'AQID' }] },
    ],
    [
      'mixed Base64 alphabets',
      { payloadType: 't', payload: 'a+b_', signatures: [{ keyid: 'k', sig: 'AQID' }] },
    ],
    ['misplaced padding', { payloadType: 't', payload: 'e30', signatures: [{ keyid: 'k', sig: 'AQ=' }] }],
    [
      'non-canonical Base64 bits',
      { payloadType: 't', payload: 'e31=', signatures: [{ keyid: 'k', sig: 'AQID' }] },
    ],
    ['no signatures', { payloadType: 't', payload: 'e30=' }],
    ['an empty signature list', { payloadType: 't', payload: 'e30=', signatures: [] }],
    ['a signature without keyid', { payloadType: 't', payload: 'e30=', signatures: [{ sig: 'AQID' }] }],
    ['a signature that is not an object', { payloadType: 't', payload: 'e30=', signatures: ['AQID'] }],
    ['an empty signature', { payloadType: 't', payload: 'e30=', signatures: [{ keyid: 'k', sig: '' }] }],
    [
      'a signature outside Base64',
      { payloadType: 't', payload: 'e30=', signatures: [{ keyid: 'k', sig: '*' }] },
    ],
  ])('refuses a malformed envelope: %s', (_name, envelope) => {
    expect(reasonOf(() => verifyEnvelope(envelope, jwks))).toBe('malformed_envelope');
  });

  it('refuses keys that are not EC P-256 JWKs and ignores entries that are not keys', async () => {
    const envelope = await signEnvelope(RELEASE_PAYLOAD_TYPE, Buffer.from('x'), key.signer);
    const kid = key.jwk.kid;
    expect(reasonOf(() => verifyEnvelope(envelope, [{ kty: 'RSA', kid }]))).toBe('malformed_key');
    expect(
      reasonOf(() =>
        verifyEnvelope(envelope, [{ kty: 'EC', crv: 'P-384', x: key.jwk.x, y: key.jwk.y, kid }]),
      ),
    ).toBe('malformed_key');
    expect(reasonOf(() => verifyEnvelope(envelope, [{ kty: 'EC', crv: 'P-256', x: key.jwk.x, kid }]))).toBe(
      'malformed_key',
    );
    let error: unknown;
    try {
      verifyEnvelope(envelope, [{ ...key.jwk, x: key.jwk.y }]);
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(DsseVerificationError);
    expect((error as DsseVerificationError).reason).toBe('malformed_key');
    expect((error as DsseVerificationError).cause).toBeInstanceOf(Error);
    expect((error as DsseVerificationError).name).toBe('DsseVerificationError');
    const junk = [null, 'key', { kid }, key.jwk] as unknown as PublicJwk[];
    expect(verifyEnvelope(envelope, junk).keyid).toBe(kid);
    expect(
      reasonOf(() => verifyEnvelope(envelope, { keys: 'none' } as unknown as { keys: PublicJwk[] })),
    ).toBe('malformed_key');
  });
});
