/**
 * An endpoint's delivery statistics (C32 `GET /webhooks/endpoints/{id}/stats`): attempts counted by status class
 * and by latency bucket in 5-minute slots, summed over 1 h, 24 h or 7 d. Latency percentiles come from the
 * histogram: each is the upper bound of the bucket the percentile falls in (an estimate from above, exact to the
 * bucket), the way Prometheus histograms report them.
 */

export const STATS_WINDOWS = { '1h': 3_600, '24h': 86_400, '7d': 604_800 } as const;
export type StatsWindow = keyof typeof STATS_WINDOWS;

/** Slots are this long; a window is read as the slots that overlap it. */
export const STATS_SLOT_SECONDS = 300;
/** Slots are kept a little longer than the longest window. */
export const STATS_RETENTION_DAYS = 8;

/**
 * Each endpoint's slots are spread over this many partition keys (`<endpoint_id>#<shard>`), a write going to one
 * at random: an endpoint taking thousands of deliveries a second stays below a partition's write limit, and a read
 * sums the shards (docs/capacity.md §8a).
 */
export const STATS_SHARDS = 8;
export const statsKey = (endpointId: string, shard: number): string => `${endpointId}#${shard}`;

/** Upper bounds (ms) of the latency buckets; one more bucket holds everything slower. */
export const LATENCY_BOUNDS_MS = [50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000] as const;

export const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx', 'network'] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

/** Counts of one slot (or a sum of slots): attempts by status class, and by latency bucket (`latency[i]`). */
export interface AttemptTally {
  readonly by_class: Readonly<Record<StatusClass, number>>;
  readonly latency: readonly number[];
}

export const emptyTally = (): AttemptTally => ({
  by_class: { '2xx': 0, '3xx': 0, '4xx': 0, '5xx': 0, network: 0 },
  latency: LATENCY_BOUNDS_MS.map(() => 0).concat(0),
});

/** An HTTP attempt as the history records it: its status, or no status (a network error), and its duration. */
export interface SentAttempt {
  readonly http_status?: number;
  readonly duration_ms: number;
}

export const statusClassOf = (attempt: SentAttempt): StatusClass => {
  const status = attempt.http_status;
  if (status === undefined) return 'network';
  if (status >= 200 && status < 300) return '2xx';
  if (status >= 300 && status < 400) return '3xx';
  if (status >= 400 && status < 500) return '4xx';
  return '5xx';
};

export const latencyBucketOf = (durationMs: number): number => {
  const index = LATENCY_BOUNDS_MS.findIndex((bound) => durationMs <= bound);
  return index < 0 ? LATENCY_BOUNDS_MS.length : index;
};

export const addAttempt = (tally: AttemptTally, attempt: SentAttempt): AttemptTally => {
  const statusClass = statusClassOf(attempt);
  const bucket = latencyBucketOf(attempt.duration_ms);
  return {
    by_class: { ...tally.by_class, [statusClass]: tally.by_class[statusClass] + 1 },
    latency: tally.latency.map((count, index) => (index === bucket ? count + 1 : count)),
  };
};

export const sumTallies = (tallies: readonly AttemptTally[]): AttemptTally =>
  tallies.reduce(
    (sum, tally) => ({
      by_class: Object.fromEntries(
        STATUS_CLASSES.map((statusClass) => [
          statusClass,
          sum.by_class[statusClass] + tally.by_class[statusClass],
        ]),
      ) as Record<StatusClass, number>,
      latency: sum.latency.map((count, index) => count + (tally.latency[index] ?? 0)),
    }),
    emptyTally(),
  );

/** The slot (`YYYY-MM-DDTHH:MM`, UTC, floored to 5 minutes) an attempt made at `at` is counted in. */
export const slotOf = (at: Date): string => {
  const floored = new Date(
    Math.floor(at.getTime() / (STATS_SLOT_SECONDS * 1000)) * STATS_SLOT_SECONDS * 1000,
  );
  return floored.toISOString().slice(0, 16);
};

/** Upper bound (ms) of the bucket holding the `q`-quantile; null without attempts, or past the last bound. */
const percentile = (latency: readonly number[], q: number): number | null => {
  const total = latency.reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  let seen = 0;
  for (const [index, count] of latency.entries()) {
    seen += count;
    if (seen >= q * total) return LATENCY_BOUNDS_MS[index] ?? null;
  }
  return null;
};

export interface EndpointStats {
  readonly attempts: number;
  /** 2xx attempts over all attempts; null without attempts. */
  readonly success_rate: number | null;
  /** Upper bounds of the buckets holding the median and the 95th percentile; null when none (or above 30 s). */
  readonly latency_ms: { readonly p50: number | null; readonly p95: number | null };
  readonly by_status_class: Readonly<Record<StatusClass, number>>;
}

export const endpointStats = (tally: AttemptTally): EndpointStats => {
  const attempts = STATUS_CLASSES.reduce((sum, statusClass) => sum + tally.by_class[statusClass], 0);
  return {
    attempts,
    success_rate: attempts === 0 ? null : Math.round((tally.by_class['2xx'] / attempts) * 10_000) / 10_000,
    latency_ms: { p50: percentile(tally.latency, 0.5), p95: percentile(tally.latency, 0.95) },
    by_status_class: tally.by_class,
  };
};
