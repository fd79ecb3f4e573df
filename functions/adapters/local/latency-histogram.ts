/**
 * A log-linear latency histogram (HDR style) over whole microseconds: values below 128 µs have a bucket each;
 * above, every power of two is split into 64 buckets, so a bucket is never wider than 1/64 of its lower bound.
 * Memory is fixed (`BUCKET_COUNT` counters) however many values are recorded; values beyond the last bucket
 * (about 36 minutes) are counted in it.
 */

/** Values below this have exact buckets. */
const LINEAR = 128;
/** Buckets per power of two above `LINEAR`. */
const SUB_BUCKETS = 64;
/** Largest power of two covered: values up to 2^31 - 1 µs. */
const MAX_EXPONENT = 30;
const MAX_VALUE = 2 ** 31 - 1;

/** 128 exact buckets, then 64 for each exponent from 7 to 30. */
export const BUCKET_COUNT = LINEAR + (MAX_EXPONENT - 6) * SUB_BUCKETS;

/** Relative width of the widest bucket: a percentile read from it is at most this much above the true one. */
export const RELATIVE_ERROR = 1 / SUB_BUCKETS;

const bucketOf = (micros: number): number => {
  if (micros < LINEAR) return micros;
  const exponent = 31 - Math.clz32(micros);
  const shift = exponent - 6;
  return LINEAR + (shift - 1) * SUB_BUCKETS + ((micros >>> shift) - SUB_BUCKETS);
};

/** The largest value (µs) a bucket holds. */
const upperOf = (bucket: number): number => {
  if (bucket < LINEAR) return bucket;
  const offset = bucket - LINEAR;
  const shift = Math.floor(offset / SUB_BUCKETS) + 1;
  const sub = (offset % SUB_BUCKETS) + SUB_BUCKETS;
  return (sub + 1) * 2 ** shift - 1;
};

export class LatencyHistogram {
  private readonly counts = new Float64Array(BUCKET_COUNT);
  private total = 0;
  private maxMicros = 0;

  /** Records one duration in milliseconds (rounded to the microsecond; negative counts as 0). */
  record(ms: number): void {
    const micros = Number.isFinite(ms) ? Math.min(MAX_VALUE, Math.max(0, Math.round(ms * 1000))) : MAX_VALUE;
    const bucket = bucketOf(micros);
    this.counts[bucket] = (this.counts[bucket] ?? 0) + 1;
    this.total += 1;
    if (micros > this.maxMicros) this.maxMicros = micros;
  }

  get count(): number {
    return this.total;
  }

  /** Counters held: the same whatever was recorded. */
  get size(): number {
    return this.counts.length;
  }

  /**
   * The nearest-rank percentile (`q` in (0, 1]) in milliseconds, or null when empty: the upper bound of the
   * bucket holding the value of rank ⌈q·n⌉, never above the largest value recorded. It is never below the
   * true percentile (of the µs-rounded values) and at most `RELATIVE_ERROR` above it.
   */
  percentile(q: number): number | null {
    if (this.total === 0) return null;
    const rank = Math.max(1, Math.ceil(q * this.total));
    let seen = 0;
    for (let bucket = 0; bucket < this.counts.length; bucket += 1) {
      seen += this.counts[bucket] ?? 0;
      if (seen >= rank) return Math.min(upperOf(bucket), this.maxMicros) / 1000;
    }
    return this.maxMicros / 1000;
  }
}
