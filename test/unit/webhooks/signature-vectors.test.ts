/**
 * The published signature vectors (docs/webhook-signature-vectors.json): (1) the file is exactly what
 * bin/webhook-vectors.ts generates, and (2) an independent verifier, written here from the spec's
 * "Authentication" section and decision C13 alone with node:crypto (it does not import functions/domain),
 * accepts every vector and rejects a tampered body, a wrong secret and a shifted timestamp.
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderVectors, VECTORS_FILE } from '../../../bin/webhook-vectors';

interface Vector {
  name: string;
  secret?: string;
  secrets?: string[];
  method: string;
  path: string;
  timestamp: string;
  body: string;
  body_sha256_hex: string;
  canonical_string: string;
  expected_signature: string;
}

const committed = readFileSync(VECTORS_FILE, 'utf8');
const document = JSON.parse(committed) as { scheme: string; canonical_string: string; vectors: Vector[] };
const secretsOf = (vector: Vector): string[] => vector.secrets ?? (vector.secret ? [vector.secret] : []);

// ---- independent verifier: C13 in its own words ------------------------------------------------------------

/** C12: the HMAC key is the decoded bytes of the base64 after `whsec_`. */
const keyOf = (secret: string): Buffer => {
  if (!secret.startsWith('whsec_')) throw new Error('not a whsec_ secret');
  return Buffer.from(secret.slice('whsec_'.length), 'base64');
};

/** C13: X-Timestamp, method, path with query, lowercase hex SHA-256 of the raw body, joined by "\n". */
const canonical = (timestamp: string, method: string, path: string, rawBody: Buffer): string =>
  [timestamp, method, path, createHash('sha256').update(rawBody).digest('hex')].join('\n');

/** Spec "Authentication": X-Signature = "v1=" + base64 HMAC-SHA-256 of the canonical string; constant time. */
const independentVerify = (request: {
  header: string;
  secret: string;
  timestamp: string;
  method: string;
  path: string;
  rawBody: Buffer;
}): boolean => {
  const expected = createHmac('sha256', keyOf(request.secret))
    .update(Buffer.from(canonical(request.timestamp, request.method, request.path, request.rawBody), 'utf8'))
    .digest();
  return request.header
    .split(' ')
    .filter((part) => part.startsWith('v1='))
    .map((part) => Buffer.from(part.slice(3), 'base64'))
    .some((given) => given.length === expected.length && timingSafeEqual(given, expected));
};

// -------------------------------------------------------------------------------------------------------------

const requestOf = (vector: Vector, secret: string) => ({
  header: vector.expected_signature,
  secret,
  timestamp: vector.timestamp,
  method: vector.method,
  path: vector.path,
  rawBody: Buffer.from(vector.body, 'utf8'),
});

describe('docs/webhook-signature-vectors.json', () => {
  it('is exactly what bin/webhook-vectors.ts generates', () => {
    expect(committed).toBe(renderVectors());
  });

  it('covers the cases partners need', () => {
    expect(document.scheme).toBe('v1');
    expect(document.canonical_string).toMatch(/lowercase hexadecimal SHA-256/);
    const vectors = document.vectors;
    expect(vectors.length).toBeGreaterThanOrEqual(6);
    expect(vectors.some((vector) => vector.body === '')).toBe(true);
    expect(vectors.some((vector) => Buffer.byteLength(vector.body, 'utf8') > vector.body.length)).toBe(true);
    expect(vectors.some((vector) => vector.path.includes('?'))).toBe(true);
    expect(vectors.some((vector) => Buffer.byteLength(vector.body, 'utf8') >= 1024)).toBe(true);
    const rotation = vectors.filter((vector) => secretsOf(vector).length === 2);
    expect(rotation.length).toBeGreaterThanOrEqual(1);
    for (const vector of rotation) expect(vector.expected_signature.split(' ')).toHaveLength(2);
    for (const vector of vectors) {
      expect(vector.timestamp).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
      for (const secret of secretsOf(vector)) {
        expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
        expect(keyOf(secret)).toHaveLength(32);
      }
    }
    expect(new Set(vectors.map((vector) => vector.name)).size).toBe(vectors.length);
  });
});

describe.each(document.vectors.map((vector) => [vector.name, vector] as const))(
  'vector "%s"',
  (_name, vector) => {
    const rawBody = Buffer.from(vector.body, 'utf8');

    it('states the body hash and the canonical string as C13 defines them', () => {
      expect(vector.body_sha256_hex).toBe(createHash('sha256').update(rawBody).digest('hex'));
      expect(vector.body_sha256_hex).toMatch(/^[0-9a-f]{64}$/);
      expect(vector.canonical_string).toBe(canonical(vector.timestamp, vector.method, vector.path, rawBody));
    });

    it('has one v1= signature per secret, in order, each 32 bytes of standard padded base64', () => {
      const parts = vector.expected_signature.split(' ');
      const secrets = secretsOf(vector);
      expect(parts).toHaveLength(secrets.length);
      parts.forEach((part, index) => {
        expect(part).toMatch(/^v1=[A-Za-z0-9+/]{43}=$/);
        const mac = createHmac('sha256', keyOf(secrets[index]!))
          .update(vector.canonical_string, 'utf8')
          .digest('base64');
        expect(part).toBe(`v1=${mac}`);
      });
    });

    it('verifies with every one of its secrets', () => {
      for (const secret of secretsOf(vector)) expect(independentVerify(requestOf(vector, secret))).toBe(true);
    });

    it('rejects a tampered body', () => {
      for (const secret of secretsOf(vector)) {
        const tampered = Buffer.concat([rawBody, Buffer.from(' ')]);
        expect(independentVerify({ ...requestOf(vector, secret), rawBody: tampered })).toBe(false);
        if (rawBody.length > 0) {
          const flipped = Buffer.from(rawBody);
          flipped[flipped.length >> 1]! ^= 0x01;
          expect(independentVerify({ ...requestOf(vector, secret), rawBody: flipped })).toBe(false);
        }
      }
    });

    it('rejects a wrong secret', () => {
      const wrong = `whsec_${Buffer.alloc(32, 0x5a).toString('base64')}`;
      expect(independentVerify(requestOf(vector, wrong))).toBe(false);
    });

    it('rejects a shifted timestamp, another path and another method', () => {
      const secret = secretsOf(vector)[0]!;
      const shifted = new Date(Date.parse(vector.timestamp) + 1).toISOString();
      expect(independentVerify({ ...requestOf(vector, secret), timestamp: shifted })).toBe(false);
      expect(independentVerify({ ...requestOf(vector, secret), path: `${vector.path}/` })).toBe(false);
      expect(independentVerify({ ...requestOf(vector, secret), method: 'PUT' })).toBe(false);
    });
  },
);

describe('rotation vectors', () => {
  const rotation = document.vectors.filter((vector) => secretsOf(vector).length > 1);

  it.each(rotation.map((vector) => [vector.name, vector] as const))(
    '"%s": each signature alone verifies with its own secret only',
    (_name, vector) => {
      const [first, second] = vector.expected_signature.split(' ');
      const [newSecret, oldSecret] = secretsOf(vector);
      expect(independentVerify({ ...requestOf(vector, newSecret!), header: first! })).toBe(true);
      expect(independentVerify({ ...requestOf(vector, oldSecret!), header: second! })).toBe(true);
      expect(independentVerify({ ...requestOf(vector, newSecret!), header: second! })).toBe(false);
      expect(independentVerify({ ...requestOf(vector, oldSecret!), header: first! })).toBe(false);
    },
  );
});
