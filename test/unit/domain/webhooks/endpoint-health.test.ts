/**
 * An endpoint failing continuously (C32): warnings at 50, 75 and 90 % of `disable_after_days`, each once and only
 * the latest due, then disabling at 100 %; nothing before half the time, nothing for a clock behind the run.
 */
import { describe, expect, it } from 'vitest';
import { failingDecision } from '../../../../functions/domain/webhooks/endpoint-health';

const SINCE = '2026-11-20T00:00:00.000Z';
const at = (days: number) => new Date(Date.parse(SINCE) + days * 86_400_000);
const decide = (days: number, warned?: number) =>
  failingDecision({ failingSince: SINCE, warned, now: at(days), disableAfterDays: 5 });

describe('failingDecision', () => {
  it('says nothing before half the time, then warns at 50, 75 and 90 %', () => {
    expect(decide(2.4)).toEqual({ kind: 'none' });
    expect(decide(2.5)).toEqual({ kind: 'warn', percent: 50 });
    expect(decide(3.75, 50)).toEqual({ kind: 'warn', percent: 75 });
    expect(decide(4.5, 75)).toEqual({ kind: 'warn', percent: 90 });
  });

  it('warns each step once, and only the latest due when several are (attempts were sparse)', () => {
    expect(decide(3, 50)).toEqual({ kind: 'none' });
    expect(decide(4.6)).toEqual({ kind: 'warn', percent: 90 });
    expect(decide(4.9, 90)).toEqual({ kind: 'none' });
  });

  it('disables at 100 %, warned or not', () => {
    expect(decide(5, 90)).toEqual({ kind: 'disable' });
    expect(decide(12)).toEqual({ kind: 'disable' });
  });

  it('does nothing for a clock behind the start of the run', () => {
    expect(decide(-1)).toEqual({ kind: 'none' });
  });
});
