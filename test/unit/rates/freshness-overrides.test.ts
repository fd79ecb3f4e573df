/**
 * Rule 10 with a manual FX override: while an override of the governed pair is in force it is the rate in force,
 * so the published rate's age neither flags nor refuses a quote; once it has expired the published rate's age
 * counts again.
 */
import { describe, expect, it } from 'vitest';
import { quoteRateFreshness } from '../../../functions/usecases/rates/freshness';
import { demoDocument, releaseOf } from '../../support/demo-pricing';

const demo = demoDocument();
const EXPIRES = '2026-11-23T12:00:00.000Z';
/** EUR→USD is governed (stale after 15 min, refused after an hour); the demo rate is from 2026-11-20 15:00. */
const overridden = releaseOf({
  ...demo,
  fx_rates: {
    ...demo.fx_rates,
    overrides: [{ pair: 'USD→EUR', rate: '0.8625', expires_at: EXPIRES, reason: 'ECB feed delayed' }],
  },
});

describe('quoteRateFreshness with an override', () => {
  it('measures nothing while an override of the pair (either direction) is in force', () => {
    expect(quoteRateFreshness(overridden, 'USD', new Date('2026-11-22T12:00:00.000Z'))).toBeUndefined();
  });

  it('measures the published rate again once the override has expired', () => {
    expect(quoteRateFreshness(overridden, 'USD', new Date(EXPIRES))).toMatchObject({
      pair: 'EUR→USD',
      stale: true,
      refuse: true,
    });
    expect(quoteRateFreshness(releaseOf(demo), 'USD', new Date('2026-11-22T12:00:00.000Z'))).toMatchObject({
      refuse: true,
    });
  });
});
