import { type KeyObject, randomBytes } from 'node:crypto';

/**
 * ECDSA P-256 over a digest the caller computed: what KMS `Sign` does with `MessageType: 'DIGEST'`. Node's
 * `crypto.sign` always hashes its input (there is no pre-hashed mode for EC keys), so the local KMS twin signs
 * the digest here, with the curve arithmetic of FIPS 186-5 on BigInt: a fresh random nonce per signature, the
 * signature DER-encoded as KMS returns it. It verifies with `crypto.verify('sha256', message, publicKey, der)`.
 * Not constant-time: it serves the local twin only, never a deployed key.
 */

const P = 0xffffffff00000001000000000000000000000000ffffffffffffffffffffffffn;
const N = 0xffffffff00000000ffffffffffffffffbce6faada7179e84f3b9cac2fc632551n;
const GX = 0x6b17d1f2e12c4247f8bce6e563a440f277037d812deb33a0f4a13945d898c296n;
const GY = 0x4fe342e2fe1a7f9b8ee7eb4a7c0f9e162bce33576b315ececbb6406837bf51f5n;

const mod = (value: bigint, modulus: bigint): bigint => {
  const result = value % modulus;
  return result >= 0n ? result : result + modulus;
};

/** The inverse modulo a prime, by the extended Euclidean algorithm. */
const inverse = (value: bigint, modulus: bigint): bigint => {
  let [oldR, r] = [mod(value, modulus), modulus];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const quotient = oldR / r;
    [oldR, r] = [r, oldR - quotient * r];
    [oldS, s] = [s, oldS - quotient * s];
  }
  if (oldR !== 1n) throw new RangeError('value has no inverse');
  return mod(oldS, modulus);
};

/** A point in Jacobian coordinates (X/Z², Y/Z³); Z = 0 is the point at infinity. */
interface Jacobian {
  readonly x: bigint;
  readonly y: bigint;
  readonly z: bigint;
}

const INFINITY: Jacobian = { x: 1n, y: 1n, z: 0n };

const double = (point: Jacobian): Jacobian => {
  if (point.z === 0n || point.y === 0n) return INFINITY;
  const { x, y, z } = point;
  const ySquared = mod(y * y, P);
  const s = mod(4n * x * ySquared, P);
  const zSquared = mod(z * z, P);
  // a = -3: M = 3(X − Z²)(X + Z²)
  const m = mod(3n * (x - zSquared) * (x + zSquared), P);
  const x3 = mod(m * m - 2n * s, P);
  const y3 = mod(m * (s - x3) - 8n * ySquared * ySquared, P);
  const z3 = mod(2n * y * z, P);
  return { x: x3, y: y3, z: z3 };
};

const add = (left: Jacobian, right: Jacobian): Jacobian => {
  if (left.z === 0n) return right;
  if (right.z === 0n) return left;
  const z1Squared = mod(left.z * left.z, P);
  const z2Squared = mod(right.z * right.z, P);
  const u1 = mod(left.x * z2Squared, P);
  const u2 = mod(right.x * z1Squared, P);
  const s1 = mod(left.y * z2Squared * right.z, P);
  const s2 = mod(right.y * z1Squared * left.z, P);
  if (u1 === u2) return s1 === s2 ? double(left) : INFINITY;
  const h = mod(u2 - u1, P);
  const r = mod(s2 - s1, P);
  const hSquared = mod(h * h, P);
  const hCubed = mod(hSquared * h, P);
  const x3 = mod(r * r - hCubed - 2n * u1 * hSquared, P);
  const y3 = mod(r * (u1 * hSquared - x3) - s1 * hCubed, P);
  const z3 = mod(h * left.z * right.z, P);
  return { x: x3, y: y3, z: z3 };
};

const multiply = (scalar: bigint, point: Jacobian): Jacobian => {
  let result = INFINITY;
  let addend = point;
  for (let k = scalar; k > 0n; k >>= 1n) {
    if (k & 1n) result = add(result, addend);
    addend = double(addend);
  }
  return result;
};

const affineX = (point: Jacobian): bigint => mod(point.x * inverse(point.z * point.z, P), P);

const toBigInt = (bytes: Uint8Array): bigint =>
  bytes.byteLength === 0 ? 0n : BigInt(`0x${Buffer.from(bytes).toString('hex')}`);

/** A DER INTEGER: big-endian, minimal, with a leading zero when the high bit is set. */
const derInteger = (value: bigint): Buffer => {
  let hex = value.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  let bytes = Buffer.from(hex, 'hex');
  if ((bytes[0] ?? 0) & 0x80) bytes = Buffer.concat([Buffer.of(0), bytes]);
  return Buffer.concat([Buffer.of(0x02, bytes.byteLength), bytes]);
};

/** The private scalar of a P-256 private key. */
export const p256PrivateScalar = (privateKey: KeyObject): bigint => {
  const jwk = privateKey.export({ format: 'jwk' });
  if (jwk.crv !== 'P-256' || !jwk.d) throw new TypeError('not a P-256 private key');
  return toBigInt(Buffer.from(jwk.d, 'base64url'));
};

/**
 * Signs a 32-byte SHA-256 digest with the private scalar `d`: ECDSA as FIPS 186-5 §6.4.1, the nonce drawn from
 * the system's CSPRNG; the signature as DER `SEQUENCE { r INTEGER, s INTEGER }`.
 */
export const signP256Digest = (digest: Uint8Array, d: bigint): Uint8Array => {
  if (digest.byteLength !== 32)
    throw new RangeError(`a SHA-256 digest is 32 bytes, got ${digest.byteLength}`);
  if (d <= 0n || d >= N) throw new RangeError('private scalar out of range');
  const e = toBigInt(digest);
  for (;;) {
    const k = mod(toBigInt(randomBytes(40)), N - 1n) + 1n;
    const r = mod(affineX(multiply(k, { x: GX, y: GY, z: 1n })), N);
    if (r === 0n) continue;
    const s = mod(inverse(k, N) * (e + r * d), N);
    if (s === 0n) continue;
    const body = Buffer.concat([derInteger(r), derInteger(s)]);
    return new Uint8Array(Buffer.concat([Buffer.of(0x30, body.byteLength), body]));
  }
};
