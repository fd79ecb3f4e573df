import { createHash, createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalString,
  MalformedSignatureHeaderError,
  parseSignatureHeader,
  SIGNATURE_SCHEME,
  SignatureInputError,
  signatureHeader,
  signCanonical,
  verifySignatureHeader,
} from '../../../../functions/domain/webhooks/signature';

const utf8 = (text: string) => new TextEncoder().encode(text);
const key = (fill: number) => new Uint8Array(32).fill(fill);

const NEW_KEY = key(1);
const OLD_KEY = key(2);
const OTHER_KEY = key(3);

const request = {
  timestamp: '2026-11-01T12:00:00.000Z',
  method: 'POST',
  path: '/webhooks/v1/catalog',
  body: utf8('{"event_id":"evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C","type":"catalog.PriceListUpdated"}'),
};

const EMPTY_SHA256 = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855';

describe('canonicalString', () => {
  it('joins timestamp, method, path and lowercase hex SHA-256 of the raw body with \\n (C13)', () => {
    const bodyHash = createHash('sha256').update(request.body).digest('hex');
    expect(canonicalString(request)).toBe(
      `2026-11-01T12:00:00.000Z\nPOST\n/webhooks/v1/catalog\n${bodyHash}`,
    );
    expect(bodyHash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('hashes an empty body as the SHA-256 of zero bytes', () => {
    expect(canonicalString({ ...request, body: new Uint8Array() }).split('\n')[3]).toBe(EMPTY_SHA256);
  });

  it('keeps the query string and uses the parts exactly as given', () => {
    const canonical = canonicalString({ ...request, method: 'post', path: '/hooks/v1/catalog?b=2&a=1' });
    expect(canonical.split('\n').slice(1, 3)).toEqual(['post', '/hooks/v1/catalog?b=2&a=1']);
  });

  it('hashes the raw bytes, not a re-encoding of them', () => {
    const latin1 = Uint8Array.of(0xe9); // "é" in ISO-8859-1: not valid UTF-8
    expect(canonicalString({ ...request, body: latin1 }).split('\n')[3]).toBe(
      createHash('sha256').update(latin1).digest('hex'),
    );
  });

  it.each([
    ['timestamp', 'line_break_in_timestamp'],
    ['method', 'line_break_in_method'],
    ['path', 'line_break_in_path'],
  ] as const)('refuses a line break in the %s', (field, code) => {
    for (const brk of ['\n', '\r']) {
      expect(() => canonicalString({ ...request, [field]: `a${brk}b` })).toThrow(code);
    }
    expect(() => canonicalString({ ...request, [field]: 'a\nb' })).toThrow(SignatureInputError);
  });
});

describe('signCanonical and signatureHeader', () => {
  it('is v1= + padded standard base64 of HMAC-SHA-256 keyed with the secret bytes', () => {
    const canonical = canonicalString(request);
    const expected = createHmac('sha256', NEW_KEY).update(canonical, 'utf8').digest('base64');
    expect(SIGNATURE_SCHEME).toBe('v1');
    expect(signCanonical(NEW_KEY, canonical)).toBe(`v1=${expected}`);
    expect(expected).toMatch(/^[A-Za-z0-9+/]{43}=$/);
  });

  it('signs the canonical string as UTF-8', () => {
    const canonical = 'ts\nPOST\n/webhooks/v1/caf\u00e9?q=\u20ac\nhash';
    const expected = createHmac('sha256', NEW_KEY).update(Buffer.from(canonical, 'utf8')).digest('base64');
    expect(signCanonical(NEW_KEY, canonical)).toBe(`v1=${expected}`);
  });

  it('puts one signature per secret in the order given (rotation: new first, then old)', () => {
    const canonical = canonicalString(request);
    const header = signatureHeader({ ...request, secrets: [NEW_KEY, OLD_KEY] });
    expect(header).toBe(`${signCanonical(NEW_KEY, canonical)} ${signCanonical(OLD_KEY, canonical)}`);
    expect(signatureHeader({ ...request, secrets: [NEW_KEY] })).toBe(signCanonical(NEW_KEY, canonical));
  });

  it('throws without a secret', () => {
    expect(() => signatureHeader({ ...request, secrets: [] })).toThrow(SignatureInputError);
    expect(() => signatureHeader({ ...request, secrets: [] })).toThrow('no_secret');
  });
});

describe('parseSignatureHeader', () => {
  const sig = `${'A'.repeat(43)}=`;

  it('returns the v1 signatures without the prefix, in header order', () => {
    expect(parseSignatureHeader(`v1=${sig}`)).toEqual([sig]);
    const other = `${'B'.repeat(42)}A=`;
    expect(parseSignatureHeader(`v1=${sig} v1=${other}`)).toEqual([sig, other]);
  });

  it('ignores unknown schemes, stray whitespace and unparseable v1 values', () => {
    expect(parseSignatureHeader(`  v2=abc   v1=${sig}\tv0=${sig} v1=not*base64 v1= v1`)).toEqual([sig]);
  });

  it.each([
    ['empty', ''],
    ['blank', '   '],
    ['only another scheme', `v2=${sig}`],
    ['Standard Webhooks form', `v1,${sig}`],
    ['no scheme', sig],
    ['v1 with an empty value', 'v1='],
    ['v1 with unpadded base64', `v1=${'A'.repeat(43)}`],
    ['upper-case scheme', `V1=${sig}`],
  ])('throws MalformedSignatureHeaderError for %s', (_name, header) => {
    expect(() => parseSignatureHeader(header)).toThrow(MalformedSignatureHeaderError);
  });

  it('does not echo the header in the error', () => {
    expect(() => parseSignatureHeader('secret-looking-value')).toThrow(/^malformed_signature_header$/);
  });
});

describe('verifySignatureHeader', () => {
  const signed = (secrets: Uint8Array[]) => ({
    ...request,
    header: signatureHeader({ ...request, secrets }),
  });

  it('accepts a header signed with the secret', () => {
    expect(verifySignatureHeader({ ...signed([NEW_KEY]), secrets: [NEW_KEY] })).toBe(true);
  });

  it('during rotation, accepts a two-signature header with either the new or the old secret', () => {
    const input = signed([NEW_KEY, OLD_KEY]);
    expect(verifySignatureHeader({ ...input, secrets: [NEW_KEY] })).toBe(true);
    expect(verifySignatureHeader({ ...input, secrets: [OLD_KEY] })).toBe(true);
    expect(verifySignatureHeader({ ...input, secrets: [OTHER_KEY, OLD_KEY] })).toBe(true);
  });

  it('a receiver holding both secrets accepts a header signed with the old one only', () => {
    expect(verifySignatureHeader({ ...signed([OLD_KEY]), secrets: [NEW_KEY, OLD_KEY] })).toBe(true);
  });

  it('rejects a wrong key, a tampered body, another path, method or timestamp', () => {
    const input = signed([NEW_KEY]);
    expect(verifySignatureHeader({ ...input, secrets: [OTHER_KEY] })).toBe(false);
    expect(verifySignatureHeader({ ...input, secrets: [NEW_KEY], body: utf8('{"event_id":"x"}') })).toBe(
      false,
    );
    expect(verifySignatureHeader({ ...input, secrets: [NEW_KEY], path: '/webhooks/v1/payout' })).toBe(false);
    expect(verifySignatureHeader({ ...input, secrets: [NEW_KEY], method: 'PUT' })).toBe(false);
    expect(
      verifySignatureHeader({ ...input, secrets: [NEW_KEY], timestamp: '2026-11-01T12:00:00.001Z' }),
    ).toBe(false);
  });

  it('ignores an unknown scheme next to a valid v1 signature', () => {
    const input = signed([NEW_KEY]);
    expect(verifySignatureHeader({ ...input, header: `v2=xyz ${input.header}`, secrets: [NEW_KEY] })).toBe(
      true,
    );
  });

  it('gives false (never throws) for no secrets, a malformed header, a truncated signature or a bad part', () => {
    const input = signed([NEW_KEY]);
    const truncated = `v1=${Buffer.from(input.header.slice(3), 'base64').subarray(0, 16).toString('base64')}`;
    expect(verifySignatureHeader({ ...input, secrets: [] })).toBe(false);
    expect(verifySignatureHeader({ ...input, header: 'garbage', secrets: [NEW_KEY] })).toBe(false);
    expect(verifySignatureHeader({ ...input, header: '', secrets: [NEW_KEY] })).toBe(false);
    expect(verifySignatureHeader({ ...input, header: truncated, secrets: [NEW_KEY] })).toBe(false);
    expect(verifySignatureHeader({ ...input, secrets: [NEW_KEY], path: '/a\nb' })).toBe(false);
  });

  it('still throws on a programming error, such as a body that is not bytes', () => {
    const input = signed([NEW_KEY]);
    const body = 42 as unknown as Uint8Array;
    expect(() => verifySignatureHeader({ ...input, secrets: [NEW_KEY], body })).toThrow(TypeError);
  });

  it('signs and verifies any request, and a flipped body bit fails (property)', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.uint8Array({ minLength: 1, maxLength: 512 }),
        fc.string({ unit: 'grapheme', maxLength: 40 }).filter((path) => !/[\r\n]/.test(path)),
        fc.nat(),
        (secret, body, path, bit) => {
          const input = { ...request, path: `/${path}`, body };
          const header = signatureHeader({ ...input, secrets: [secret] });
          expect(parseSignatureHeader(header)).toHaveLength(1);
          expect(verifySignatureHeader({ ...input, header, secrets: [secret] })).toBe(true);
          const tampered = Uint8Array.from(body);
          const index = bit % (body.length * 8);
          tampered[index >> 3]! ^= 1 << (index & 7);
          expect(verifySignatureHeader({ ...input, body: tampered, header, secrets: [secret] })).toBe(false);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('accepts a header when and only when it carries a signature of one of the secrets (property)', () => {
    const keys = [key(10), key(11), key(12), key(13)];
    fc.assert(
      fc.property(
        fc.subarray([0, 1, 2, 3], { minLength: 1 }),
        fc.subarray([0, 1, 2, 3]),
        (signedWith, heldBy) => {
          const header = signatureHeader({ ...request, secrets: signedWith.map((index) => keys[index]!) });
          const ok = verifySignatureHeader({
            ...request,
            header,
            secrets: heldBy.map((index) => keys[index]!),
          });
          expect(ok).toBe(signedWith.some((index) => heldBy.includes(index)));
        },
      ),
    );
  });
});

describe('signature spelling', () => {
  it('accepts only the canonical base64 spelling of a signature (no malleable last character)', () => {
    const secret = new Uint8Array(32).fill(7);
    const input = {
      timestamp: '2026-11-22T12:00:00.000Z',
      method: 'POST',
      path: '/webhooks/v1/payout',
      body: new TextEncoder().encode('{"event_id":"evt_1"}'),
    };
    const header = signatureHeader({ ...input, secrets: [secret] });
    expect(verifySignatureHeader({ ...input, header, secrets: [secret] })).toBe(true);
    // A 32-byte MAC in base64 ends in one data character and '='; its two low bits are unused.
    const last = header.at(-2) as string;
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const index = alphabet.indexOf(last);
    for (const variant of [index ^ 1, index ^ 2, index ^ 3]) {
      const respelled = `${header.slice(0, -2)}${alphabet[variant]}=`;
      expect(Buffer.from(respelled.slice(3), 'base64')).toEqual(Buffer.from(header.slice(3), 'base64'));
      expect(verifySignatureHeader({ ...input, header: respelled, secrets: [secret] })).toBe(false);
    }
  });
});
