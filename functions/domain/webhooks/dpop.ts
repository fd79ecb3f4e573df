/**
 * DPoP (RFC 9449) for partner callbacks: the checks that need no clock and no I/O. The time comes in; the JWS
 * signature itself is verified by an adapter (jose) behind the `DpopProofVerifier` port, which hands the
 * proof's protected header and claims to `checkDpopProof`.
 *
 * - A registered key is a public EC P-256 (`ES256`) or Ed25519 (`EdDSA`, or its RFC 9864 name `Ed25519`) JWK;
 *   a private key (`d`, or any member of a private or symmetric key) is refused, never stored.
 * - A key is compared by its RFC 7638 thumbprint (base64url SHA-256 of the required members in lexicographic
 *   order), so `kid`, `alg` or `use` beside the key never make two equal keys differ.
 * - A proof: `typ` `dpop+jwt`, `alg` one the registered key's curve signs with, `jwk` the registered key (by
 *   thumbprint), `htm` the request method, `htu` the request's target URI without query and fragment
 *   (compared normalized: scheme and host lower case, no default port), `iat` within ±window of now, `jti` a
 *   string of 1–256 characters, and `ath`, required, the hash of the partner key it comes with.
 */
import { createHash, createPublicKey } from 'node:crypto';

export const DPOP_PROOF_TYPE = 'dpop+jwt';
/** How far a proof's `iat` may be from the server's clock, both ways, unless configured otherwise. */
export const DEFAULT_DPOP_WINDOW_SECONDS = 60;
/** Longest proof accepted (a P-256 proof is about 600 characters). */
export const DPOP_MAX_PROOF_LENGTH = 8192;
export const DPOP_MAX_JTI_LENGTH = 256;

/** A registered DPoP key, reduced to its RFC 7638 required members. */
export type DpopPublicJwk =
  | { readonly kty: 'EC'; readonly crv: 'P-256'; readonly x: string; readonly y: string }
  | { readonly kty: 'OKP'; readonly crv: 'Ed25519'; readonly x: string };

/** The JWS algorithms each supported curve signs with. */
const ALGORITHMS_BY_CURVE: Readonly<Record<DpopPublicJwk['crv'], readonly string[]>> = {
  'P-256': ['ES256'],
  Ed25519: ['EdDSA', 'Ed25519'],
};

/** Every algorithm a DPoP key may use here (advertised in `WWW-Authenticate` when no key is known). */
export const DPOP_ALGORITHMS: readonly string[] = Object.values(ALGORITHMS_BY_CURVE).flat();

/** The algorithms a proof made with this key may name. */
export const dpopAlgorithms = (jwk: DpopPublicJwk): readonly string[] => ALGORITHMS_BY_CURVE[jwk.crv];

/** Members that only a private (or symmetric) key has. */
const PRIVATE_MEMBERS = ['d', 'p', 'q', 'dp', 'dq', 'qi', 'oth', 'k'] as const;

/** base64url (no padding) of 32 bytes: a P-256 coordinate or an Ed25519 public key. */
const BASE64URL_32_BYTES = /^[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;

export interface DpopJwkProblem {
  /** The member at fault (empty for the key as a whole). */
  readonly path: string;
  readonly message: string;
}

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const member = (value: Readonly<Record<string, unknown>>, name: string): unknown =>
  Object.hasOwn(value, name) ? value[name] : undefined;

const isCurve = (value: unknown): value is DpopPublicJwk['crv'] => value === 'P-256' || value === 'Ed25519';

/** Whether Node accepts the key (an EC point must lie on P-256). */
const importable = (jwk: DpopPublicJwk): boolean => {
  try {
    createPublicKey({ key: { ...jwk }, format: 'jwk' });
    return true;
  } catch {
    return false;
  }
};

/**
 * Why `value` cannot be a partner's DPoP key, or undefined when it can: a public EC P-256 or Ed25519 JWK, `alg`
 * (when present) one its curve signs with, `use` (when present) `sig`. Never a private key.
 */
export const dpopJwkProblem = (value: unknown): DpopJwkProblem | undefined => {
  if (!isRecord(value)) return { path: '', message: 'a JWK (JSON object) is required' };
  for (const name of PRIVATE_MEMBERS) {
    if (Object.hasOwn(value, name)) {
      return { path: name, message: 'a private key is never accepted: register the public key only' };
    }
  }
  const kty = member(value, 'kty');
  const crv = member(value, 'crv');
  if (kty !== 'EC' && kty !== 'OKP') {
    return { path: 'kty', message: 'kty must be EC (P-256) or OKP (Ed25519)' };
  }
  if (kty === 'EC' && crv !== 'P-256') return { path: 'crv', message: 'an EC key must be on P-256' };
  if (kty === 'OKP' && crv !== 'Ed25519') return { path: 'crv', message: 'an OKP key must be Ed25519' };
  const x = member(value, 'x');
  if (typeof x !== 'string' || !BASE64URL_32_BYTES.test(x)) {
    return { path: 'x', message: 'x must be 32 bytes in base64url without padding' };
  }
  const y = member(value, 'y');
  if (kty === 'EC' && (typeof y !== 'string' || !BASE64URL_32_BYTES.test(y))) {
    return { path: 'y', message: 'y must be 32 bytes in base64url without padding' };
  }
  if (kty === 'OKP' && Object.hasOwn(value, 'y')) return { path: 'y', message: 'an Ed25519 key has no y' };
  const alg = member(value, 'alg');
  const curve = crv as DpopPublicJwk['crv'];
  if (alg !== undefined && !ALGORITHMS_BY_CURVE[curve].includes(String(alg))) {
    return {
      path: 'alg',
      message: `alg must be one of ${ALGORITHMS_BY_CURVE[curve].join(', ')} for this key`,
    };
  }
  const use = member(value, 'use');
  if (use !== undefined && use !== 'sig') return { path: 'use', message: 'use must be sig' };
  if (!importable(publicDpopJwk(value))) return { path: '', message: 'not a valid public key of its curve' };
  return undefined;
};

/**
 * The registered form of a key `dpopJwkProblem` accepted: its required members only (what the thumbprint
 * covers). Throws on a key it would refuse.
 */
export const publicDpopJwk = (value: Readonly<Record<string, unknown>>): DpopPublicJwk => {
  const crv = member(value, 'crv');
  const x = member(value, 'x');
  const y = member(value, 'y');
  if (!isCurve(crv) || typeof x !== 'string') throw new TypeError('not a DPoP public key');
  if (crv === 'Ed25519') return { kty: 'OKP', crv, x };
  if (typeof y !== 'string') throw new TypeError('not a DPoP public key');
  return { kty: 'EC', crv, x, y };
};

/** RFC 7638 thumbprint (SHA-256, base64url): the members in lexicographic order, no whitespace. */
export const jwkThumbprint = (jwk: DpopPublicJwk): string => {
  const input =
    jwk.kty === 'EC'
      ? JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y })
      : JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x });
  return createHash('sha256').update(input, 'utf8').digest('base64url');
};

/** Why a proof is refused; each maps to one `error_description`. */
export type DpopRefusal =
  | 'missing'
  | 'malformed'
  | 'signature'
  | 'typ'
  | 'alg'
  | 'jwk'
  | 'key_mismatch'
  | 'htm'
  | 'htu'
  | 'iat'
  | 'jti'
  | 'ath'
  | 'replayed';

const REFUSAL_DESCRIPTIONS: Readonly<Record<DpopRefusal, string>> = {
  missing: 'this endpoint requires a DPoP proof in the DPoP header',
  malformed: 'the DPoP header must carry exactly one compact JWS',
  signature: 'the DPoP proof signature does not verify with its jwk',
  typ: 'the DPoP proof typ must be dpop+jwt',
  alg: "the DPoP proof alg is not one the endpoint's key signs with",
  jwk: 'the DPoP proof jwk must be a supported public key',
  key_mismatch: 'the DPoP proof is not made with the key registered for this endpoint',
  htm: 'the DPoP proof htm does not match the request method',
  htu: 'the DPoP proof htu does not match the request URI',
  iat: 'the DPoP proof iat is outside the accepted window',
  jti: 'the DPoP proof needs a jti of 1 to 256 characters',
  ath: 'the DPoP proof ath must be the hash of the partner key it comes with',
  replayed: 'the DPoP proof jti was already used',
};

export const dpopRefusalDescription = (refusal: DpopRefusal): string => REFUSAL_DESCRIPTIONS[refusal];

/** Compact JWS: three base64url parts. */
const COMPACT_JWS = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/**
 * The one proof among the request's `DPoP` header values: none is `missing`; two headers, a list, or anything
 * that is not one compact JWS of at most `DPOP_MAX_PROOF_LENGTH` characters is `malformed`.
 */
export const singleDpopProof = (
  values: readonly string[],
): { readonly proof: string } | { readonly refusal: DpopRefusal } => {
  if (values.length === 0) return { refusal: 'missing' };
  const [value] = values;
  if (values.length > 1 || value === undefined) return { refusal: 'malformed' };
  const proof = value.trim();
  if (proof.length === 0) return { refusal: 'missing' };
  if (proof.length > DPOP_MAX_PROOF_LENGTH || !COMPACT_JWS.test(proof)) return { refusal: 'malformed' };
  return { proof };
};

/** `host[:port]`: a DNS name, an IPv4 address or a bracketed IPv6 address. */
const HOST = /^(?:[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?|\[[0-9A-Fa-f:.]{2,45}\])(?::\d{1,5})?$/;

/**
 * A target URI in the form compared: `scheme://host[:port]/path`, scheme and host lower case, default port
 * dropped, dot segments resolved; query, fragment and credentials never. Undefined when it is not an absolute
 * http(s) URI.
 */
export const normalizeTargetUri = (value: string): string | undefined => {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return undefined;
  if (url.username !== '' || url.password !== '') return undefined;
  return `${url.protocol}//${url.host}${url.pathname}`;
};

/**
 * The target URI of a request as a client addressed it: `<scheme>://<Host header><path>`, normalized; undefined
 * when the host or path cannot be part of one.
 */
export const requestTargetUri = (request: {
  readonly scheme: 'http' | 'https';
  readonly host: string;
  readonly path: string;
}): string | undefined => {
  if (!HOST.test(request.host) || !request.path.startsWith('/') || /[?#\s]/.test(request.path))
    return undefined;
  return normalizeTargetUri(`${request.scheme}://${request.host}${request.path}`);
};

/** What the adapter read from a proof whose signature verified with the key in its own header. */
export interface DpopProofContents {
  readonly header: Readonly<Record<string, unknown>>;
  readonly claims: unknown;
}

/** What the proof must match. */
export interface DpopExpectations {
  /** RFC 7638 thumbprint of the registered key. */
  readonly keyThumbprint: string;
  /** `dpopAlgorithms` of the registered key. */
  readonly algorithms: readonly string[];
  /** The request's method, as sent (`POST`). */
  readonly method: string;
  /** `requestTargetUri` of the request. */
  readonly targetUri: string;
  /** base64url SHA-256 of the access credential presented with the proof (the partner key). */
  readonly credentialHash: string;
  readonly now: Date;
  readonly windowSeconds: number;
}

export type DpopCheck =
  | {
      readonly ok: true;
      readonly jti: string;
      /** Epoch seconds after which the proof can no longer be accepted (its `iat` + the window). */
      readonly acceptableUntil: number;
    }
  | { readonly ok: false; readonly refusal: DpopRefusal };

const refuse = (refusal: DpopRefusal): DpopCheck => ({ ok: false, refusal });

/** The thumbprint of a proof's `jwk` header, or undefined when it is not a supported public key. */
const headerKeyThumbprint = (jwk: unknown): string | undefined =>
  isRecord(jwk) && dpopJwkProblem(jwk) === undefined ? jwkThumbprint(publicDpopJwk(jwk)) : undefined;

/**
 * RFC 9449 §4.3 checks of a proof whose signature verified with the key in its header, in this order: `typ`,
 * `alg`, `jwk` (a supported public key, then the registered one by thumbprint), `htm`, `htu`, `iat`, `jti`,
 * `ath`. Replay (`jti` seen before) is the caller's check, after this one passed.
 */
export const checkDpopProof = (proof: DpopProofContents, expected: DpopExpectations): DpopCheck => {
  const { header, claims } = proof;
  if (member(header, 'typ') !== DPOP_PROOF_TYPE) return refuse('typ');
  const alg = member(header, 'alg');
  if (typeof alg !== 'string' || !expected.algorithms.includes(alg)) return refuse('alg');
  const thumbprint = headerKeyThumbprint(member(header, 'jwk'));
  if (thumbprint === undefined) return refuse('jwk');
  if (thumbprint !== expected.keyThumbprint) return refuse('key_mismatch');
  if (!isRecord(claims)) return refuse('malformed');
  if (member(claims, 'htm') !== expected.method) return refuse('htm');
  const htu = member(claims, 'htu');
  if (typeof htu !== 'string' || normalizeTargetUri(htu) !== expected.targetUri) return refuse('htu');
  const iat = member(claims, 'iat');
  const now = expected.now.getTime() / 1000;
  if (typeof iat !== 'number' || !Number.isFinite(iat) || Math.abs(now - iat) > expected.windowSeconds) {
    return refuse('iat');
  }
  const jti = member(claims, 'jti');
  if (typeof jti !== 'string' || jti.length === 0 || jti.length > DPOP_MAX_JTI_LENGTH) return refuse('jti');
  const ath = member(claims, 'ath');
  // The proof is bound to the partner key it comes with (RFC 9449 §4.2): a proof without `ath` could be
  // replayed with any other key the same holder has.
  if (ath !== expected.credentialHash) return refuse('ath');
  return { ok: true, jti, acceptableUntil: Math.ceil(iat + expected.windowSeconds) };
};

/** The `ath` of a credential: base64url SHA-256 of its ASCII bytes (RFC 9449 §4.2). */
export const credentialHash = (credential: string): string =>
  createHash('sha256').update(credential, 'ascii').digest('base64url');

/** `WWW-Authenticate` of a refusal (RFC 9449 §7.1): the error, its description and the algorithms accepted. */
export const dpopChallenge = (refusal: DpopRefusal, algorithms: readonly string[]): string =>
  `DPoP error="invalid_dpop_proof", error_description="${dpopRefusalDescription(refusal)}", algs="${algorithms.join(' ')}"`;
