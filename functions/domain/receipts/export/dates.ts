/**
 * The days of the finance export (UTC calendar dates `YYYY-MM-DD`): which day a document belongs to, ranges of
 * days, and which days are closed and due a manifest. Pure: the instant `now` is always given.
 */
import { ExportFormatError } from './errors';

const DAY_MS = 86_400_000;
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** Whether a text is a calendar date `YYYY-MM-DD` (a real day: no 2026-02-30). */
export const isExportDate = (text: unknown): text is string => {
  if (typeof text !== 'string') return false;
  const match = DATE.exec(text);
  if (!match) return false;
  const time = Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3]));
  return new Date(time).toISOString().slice(0, 10) === text;
};

/** Throws `ExportFormatError` unless `date` is a calendar date. */
export const requireDate = (date: string): void => {
  if (!isExportDate(date)) throw new ExportFormatError(`not a date (YYYY-MM-DD): ${JSON.stringify(date)}`);
};

/** Epoch milliseconds of 00:00 UTC of a date. */
export const dayStart = (date: string): number => {
  requireDate(date);
  return Date.parse(`${date}T00:00:00.000Z`);
};

/** The date `days` days after (before, if negative) a date. */
export const addDays = (date: string, days: number): string =>
  new Date(dayStart(date) + days * DAY_MS).toISOString().slice(0, 10);

/** The UTC date of an instant. */
export const utcDate = (instant: Date): string => instant.toISOString().slice(0, 10);

/** The UTC date (`dt` partition) of an ISO 8601 timestamp. */
export const partitionDate = (timestamp: string): string => {
  const time = Date.parse(timestamp);
  if (!ISO_TIMESTAMP.test(timestamp) || Number.isNaN(time)) {
    throw new ExportFormatError(`not an ISO 8601 timestamp: ${JSON.stringify(timestamp)}`);
  }
  return utcDate(new Date(time));
};

/** Every date from `from` to `to`, both included; at most `limit` of them. */
export const datesBetween = (from: string, to: string, limit = 366): string[] => {
  const days = Math.round((dayStart(to) - dayStart(from)) / DAY_MS);
  if (days < 0) throw new ExportFormatError(`${from} is after ${to}`);
  if (days + 1 > limit) throw new ExportFormatError(`${from} to ${to} is more than ${limit} days`);
  return Array.from({ length: days + 1 }, (_, offset) => addDays(from, offset));
};

/** Whether a day is closed at `now`: its next day has begun (UTC) `graceMinutes` ago or more. */
export const isDayClosed = (date: string, now: Date, graceMinutes: number): boolean =>
  now.getTime() >= dayStart(date) + DAY_MS + graceMinutes * 60_000;

/** The closed days among the last `lookbackDays` ones before `now` (oldest first). */
export const closedDays = (now: Date, graceMinutes: number, lookbackDays: number): string[] => {
  const latest = addDays(utcDate(new Date(now.getTime() - graceMinutes * 60_000)), -1);
  return Array.from({ length: lookbackDays }, (_, offset) => addDays(latest, offset - lookbackDays + 1));
};

/**
 * The closed days that are due a manifest: those from the export's first day on (its earliest manifest or
 * document). Days before the first document have nothing to attest; every day after it gets a manifest, empty
 * or not. No first day (nothing exported yet) → none.
 */
export const dueDays = (closed: readonly string[], firstDay: string | undefined): string[] =>
  firstDay === undefined ? [] : closed.filter((date) => date >= firstDay);
