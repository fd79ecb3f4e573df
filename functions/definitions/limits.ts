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

/** Per API key on the catalog (`api_key`) routes (ARCHITECTURE C22). */
export const CATALOG_RATE_LIMIT = { requestsPerSecond: 100, burst: 200 } as const satisfies RateLimit;
