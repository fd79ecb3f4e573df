import { createHmac, type KeyObject, randomBytes } from 'node:crypto';

/**
 * ECDSA P-256 over a digest the caller computed: what KMS `Sign` does with `MessageType: 'DIGEST'`. Node's
 * `crypto.sign` always hashes its input (there is no pre-hashed mode for EC keys), so the local KMS twin (and the
 * unit tests' fake KMS) sign the digest here, with the curve arithmetic on BigInt and the deterministic nonce of
 * RFC 6979 (checked against its A.2.5 vector in `test/unit/adapters/kms-signing.test.ts`); the signature
 * DER-encoded as KMS returns it verifies with `crypto.verify('sha256', message, publicKey, der)`. Not
 * constant-time: it serves the local twin and tests only, never a deployed key.
 */

const P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
const A = P - 3n;
const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const G: Point = {
  x: 0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296n,
  y: 0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5n,
};

interface Point {
  readonly x: bigint;
  readonly y: bigint;
}

const mod = (value: bigint, modulus: bigint): bigint => {
  const rest = value % modulus;
  return rest >= 0n ? rest : rest + modulus;
};

/** Inverse of `value` modulo the prime `modulus` (extended Euclid). */
const invert = (value: bigint, modulus: bigint): bigint => {
  let [oldR, r] = [mod(value, modulus), modulus];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const quotient = oldR / r;
    [oldR, r] = [r, oldR - quotient * r];
    [oldS, s] = [s, oldS - quotient * s];
  }
  if (oldR !== 1n) throw new RangeError('not invertible');
  return mod(oldS, modulus);
};

/** Affine point addition; `undefined` is the point at infinity. */
const add = (p: Point | undefined, q: Point | undefined): Point | undefined => {
  if (!p) return q;
  if (!q) return p;
  let slope: bigint;
  if (p.x === q.x) {
    if (mod(p.y + q.y, P) === 0n) return undefined;
    slope = mod((3n * p.x * p.x + A) * invert(2n * p.y, P), P);
  } else {
    slope = mod((q.y - p.y) * invert(q.x - p.x, P), P);
  }
  const x = mod(slope * slope - p.x - q.x, P);
  return { x, y: mod(slope * (p.x - x) - p.y, P) };
};

const multiply = (k: bigint, point: Point): Point | undefined => {
  let result: Point | undefined;
  let addend: Point | undefined = point;
  for (let rest = k; rest > 0n; rest >>= 1n) {
    if (rest & 1n) result = add(result, addend);
    addend = add(addend, addend);
  }
  return result;
};

const toBigInt = (bytes: Uint8Array): bigint =>
  bytes.byteLength === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString('hex')}`);

const toBytes32 = (value: bigint): Buffer => Buffer.from(value.toString(16).padStart(64, '0'), 'hex');

/** RFC 6979 §3.2 nonce for P-256 / HMAC-SHA-256 (qlen = hlen = 256 bits, so bits2octets is a reduction). */
const rfc6979Nonce = (privateKey: bigint, digest: Uint8Array): bigint => {
  const hmac = (key: Buffer, ...parts: Buffer[]): Buffer =>
    createHmac('sha256', key).update(Buffer.concat(parts)).digest();
  const seed = Buffer.concat([toBytes32(privateKey), toBytes32(mod(toBigInt(digest), N))]);
  let v: Buffer = Buffer.alloc(32, 0x01);
  let k: Buffer = Buffer.alloc(32, 0x00);
  k = hmac(k, v, Buffer.of(0x00), seed);
  v = hmac(k, v);
  k = hmac(k, v, Buffer.of(0x01), seed);
  v = hmac(k, v);
  for (;;) {
    v = hmac(k, v);
    const candidate = toBigInt(v);
    if (candidate >= 1n && candidate < N) return candidate;
    k = hmac(k, v, Buffer.of(0x00));
    v = hmac(k, v);
  }
};

const derInteger = (value: bigint): Buffer => {
  const hex = value.toString(16);
  let bytes = Buffer.from(hex.length % 2 === 0 ? hex : `0${hex}`, 'hex');
  if ((bytes[0] ?? 0) >= 0x80) bytes = Buffer.concat([Buffer.of(0x00), bytes]);
  return Buffer.concat([Buffer.of(0x02, bytes.byteLength), bytes]);
};

/** DER `SEQUENCE { INTEGER r, INTEGER s }` (always shorter than 128 bytes for P-256). */
export const derSignature = (r: bigint, s: bigint): Uint8Array => {
  const body = Buffer.concat([derInteger(r), derInteger(s)]);
  return new Uint8Array(Buffer.concat([Buffer.of(0x30, body.byteLength), body]));
};

/**
 * ECDSA P-256 signature of a 32-byte digest as given (no hashing), with the RFC 6979 nonce: `{ r, s }`.
 * Low-S is not enforced (neither does KMS).
 */
export const signP256Digest = (privateKey: bigint, digest: Uint8Array): { r: bigint; s: bigint } => {
  if (digest.byteLength !== 32) throw new RangeError('digest must be 32 bytes');
  if (privateKey < 1n || privateKey >= N) throw new RangeError('private key out of range');
  const e = mod(toBigInt(digest), N);
  for (let extra = 0; ; extra++) {
    const k = extra === 0 ? rfc6979Nonce(privateKey, digest) : mod(toBigInt(randomBytes(32)), N);
    const point = k === 0n ? undefined : multiply(k, G);
    if (!point) continue;
    const r = mod(point.x, N);
    if (r === 0n) continue;
    const s = mod(invert(k, N) * (e + r * privateKey), N);
    if (s !== 0n) return { r, s };
  }
};

/** The scalar `d` of a P-256 private KeyObject. */
export const privateScalarOf = (key: KeyObject): bigint => {
  const jwk = key.export({ format: 'jwk' });
  if (jwk.crv !== 'P-256' || !jwk.d) throw new TypeError('not a P-256 private key');
  return toBigInt(Buffer.from(jwk.d, 'base64url'));
};
