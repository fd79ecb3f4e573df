/**
 * Request limits shared by the CDK API (usage plan throttle) and the local gateway (token bucket), so the
 * deployed and the local limits cannot drift. Pure data.
 */

export interface RateLimit {
  /** Steady rate: tokens added to a caller's bucket per second. */
  readonly requestsPerSecond: number;
  /** Bucket capacity: requests a caller may send at once after being idle. */
  readonly burst: number;
}

/**
 * Largest request body accepted (C22), checked by the local gateway and by every HTTP function (API Gateway's
 * own limit is 10 MB and Lambda's 6 MB), so the answer is the same 413 locally and in AWS.
 */
export const MAX_REQUEST_BODY_BYTES = 256 * 1024;

/**
 * Largest catalog document accepted by upload (`POST /admin/catalog/uploads`), as stored and once decompressed
 * (about 200 000 price rows): the admin function (1 024 MB) holds the text, the parsed document and the change
 * request's diff at once, measured at ≈ 20 × the text here. Past it, a 413, never an instance out of memory.
 */
export const MAX_CATALOG_UPLOAD_BYTES = 32 * 1024 * 1024;

/** Per API key on the catalog (`api_key`) routes (ARCHITECTURE C22). */
export const CATALOG_RATE_LIMIT = { requestsPerSecond: 100, burst: 200 } as const satisfies RateLimit;
