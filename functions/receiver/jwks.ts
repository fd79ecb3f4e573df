/**
 * The sender's public keys for Ed25519 deliveries (C33): `GET /webhooks/jwks.json`, cached.
 *
 * ```ts
 * const jwks = new JwksCache({ url: 'https://api.example.com/v1/webhooks/jwks.json' });
 * const envelope = verifyWebhook({ ...request, secrets: [], publicKeys: await jwks.keysFor(kidOf(req.headers)),
 *   now: new Date() });
 * ```
 *
 * Keys are kept `maxAgeSeconds` (default 300). A delivery naming a key id the cache does not hold makes it fetch
 * again at once (the sender publishes a key a day before it signs with it, so this is rare), but not more often
 * than every `minRefetchSeconds` (default 10), so a stream of forged key ids cannot make it hammer the sender.
 * Concurrent callers share one fetch; a failed fetch keeps the keys it had, for at most `maxStaleSeconds` (a day)
 * after the last successful one.
 */

/** A public key of the JWKS: Ed25519 (RFC 8037). */
export interface PublicJwk {
  readonly kty: string;
  readonly crv: string;
  readonly x: string;
  readonly kid: string;
  readonly alg?: string;
  readonly use?: string;
}

export interface JwksCacheOptions {
  /** The sender's JWKS URL (`<API>/webhooks/jwks.json`). */
  readonly url: string;
  readonly maxAgeSeconds?: number;
  readonly minRefetchSeconds?: number;
  /**
   * Keys not confirmed by a successful fetch for this long are dropped (default a day): a key the sender withdrew
   * (an emergency rotation) is not trusted forever by a cache that cannot reach it.
   */
  readonly maxStaleSeconds?: number;
  /** Defaults to the global `fetch`. */
  readonly fetch?: (url: string) => Promise<{ ok: boolean; status: number; json(): Promise<unknown> }>;
  /** Milliseconds now (tests inject a clock). */
  readonly now?: () => number;
}

const isPublicJwk = (value: unknown): value is PublicJwk => {
  if (typeof value !== 'object' || value === null) return false;
  const key = value as Record<string, unknown>;
  return (
    key.kty === 'OKP' &&
    key.crv === 'Ed25519' &&
    typeof key.x === 'string' &&
    typeof key.kid === 'string' &&
    key.kid.length > 0
  );
};

export class JwksCache {
  private keys: readonly PublicJwk[] = [];
  private fetchedAt = Number.NEGATIVE_INFINITY;
  private confirmedAt = Number.NEGATIVE_INFINITY;
  private readonly maxStaleMs: number;
  private inFlight: Promise<void> | undefined;
  private readonly maxAgeMs: number;
  private readonly minRefetchMs: number;
  private readonly now: () => number;

  constructor(private readonly options: JwksCacheOptions) {
    this.maxAgeMs = (options.maxAgeSeconds ?? 300) * 1000;
    this.minRefetchMs = (options.minRefetchSeconds ?? 10) * 1000;
    this.maxStaleMs = (options.maxStaleSeconds ?? 86_400) * 1000;
    this.now = options.now ?? Date.now;
  }

  /**
   * The current keys, fetched when they are older than `maxAgeSeconds`, or when `kid` is not among them and the
   * last fetch is at least `minRefetchSeconds` old. A failed fetch answers the keys held (possibly none).
   */
  async keysFor(kid?: string): Promise<readonly PublicJwk[]> {
    const age = this.now() - this.fetchedAt;
    const unknown = kid !== undefined && !this.keys.some((key) => key.kid === kid);
    if (age >= this.maxAgeMs || (unknown && age >= this.minRefetchMs)) await this.refresh();
    return this.keys;
  }

  private refresh(): Promise<void> {
    this.inFlight ??= (async () => {
      try {
        const response = await (this.options.fetch ?? fetch)(this.options.url);
        if (!response.ok) throw new Error(`the JWKS answered ${response.status}`);
        const body = (await response.json()) as { keys?: unknown };
        if (!Array.isArray(body.keys)) throw new Error('the JWKS has no keys array');
        this.keys = body.keys.filter(isPublicJwk);
        this.confirmedAt = this.now();
      } catch {
        // Keep what was held (the next call after the refetch interval tries again), but not past the stale limit.
        if (this.now() - this.confirmedAt > this.maxStaleMs) this.keys = [];
      } finally {
        this.fetchedAt = this.now();
        this.inFlight = undefined;
      }
    })();
    return this.inFlight;
  }
}
