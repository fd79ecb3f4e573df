/**
 * An endpoint failing continuously (C32): every attempt since `failing_since` failed. Warnings go out at 50 %,
 * 75 % and 90 % of the time after which it is disabled (`disable_after_days`, default 5 days), each once; at 100 %
 * it is disabled. A success ends the run (and re-enabling starts afresh).
 */

export const DEFAULT_DISABLE_AFTER_DAYS = 5;
export const FAILING_WARNINGS = [50, 75, 90] as const;
export type FailingWarning = (typeof FAILING_WARNINGS)[number];

export type FailingDecision =
  | { readonly kind: 'none' }
  | { readonly kind: 'warn'; readonly percent: FailingWarning }
  | { readonly kind: 'disable' };

const DAY_MS = 86_400_000;

/** What a failed attempt at `now` means for an endpoint failing since `failingSince` (ISO). */
export const failingDecision = (input: {
  readonly failingSince: string;
  readonly warned: number | undefined;
  readonly now: Date;
  readonly disableAfterDays: number;
}): FailingDecision => {
  const elapsed = input.now.getTime() - Date.parse(input.failingSince);
  const share = (elapsed / (input.disableAfterDays * DAY_MS)) * 100;
  if (!(share >= 0)) return { kind: 'none' };
  if (share >= 100) return { kind: 'disable' };
  const due = FAILING_WARNINGS.filter((percent) => share >= percent && percent > (input.warned ?? 0));
  const percent = due.at(-1);
  return percent === undefined ? { kind: 'none' } : { kind: 'warn', percent };
};
