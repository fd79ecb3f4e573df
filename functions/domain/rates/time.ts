/**
 * Instants of the rate domain: ISO 8601 strings in stored state, quotes and published rates. The clock is
 * never read here; `now` is always an argument.
 */

/** Epoch milliseconds of an ISO 8601 instant (or a Date); a `RangeError` when it is not a time. */
export const instantOf = (value: string | Date): number => {
  const time = typeof value === 'string' ? Date.parse(value) : value.getTime();
  if (Number.isNaN(time)) throw new RangeError(`not a time: ${JSON.stringify(String(value))}`);
  return time;
};

/**
 * Whether `instant` lies more than `seconds` before `now`, to the millisecond (exactly `seconds` old is not
 * older). An instant that is not a time is older than any.
 */
export const olderThan = (instant: string, seconds: number, now: Date): boolean =>
  !(now.getTime() - Date.parse(instant) <= seconds * 1000);
