import { instantOf } from './time';

/**
 * How old a published rate is against its pair's rate policy: `stale` past `stale_after_seconds` (a read may
 * still use it, flagged), `refuse` past `max_age_seconds` (a quote must not use it). Pairs without a policy
 * (rates imported by hand) are never stale.
 */

export interface FreshnessPolicy {
  readonly stale_after_seconds: number;
  readonly max_age_seconds: number;
}

export interface RateFreshness {
  readonly stale: boolean;
  /** Whole seconds since the rate came into force (0 while it is not yet in force). */
  readonly age_seconds: number;
  readonly refuse: boolean;
}

export const rateFreshness = (
  policy: FreshnessPolicy | undefined,
  rateEffectiveFrom: string | Date,
  now: Date,
): RateFreshness => {
  const from = instantOf(rateEffectiveFrom);
  const age_seconds = Math.max(0, Math.floor((now.getTime() - from) / 1000));
  if (!policy) return { stale: false, age_seconds, refuse: false };
  return {
    stale: age_seconds > policy.stale_after_seconds,
    age_seconds,
    refuse: age_seconds > policy.max_age_seconds,
  };
};
