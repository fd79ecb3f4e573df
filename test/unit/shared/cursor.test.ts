import { describe, expect, it } from 'vitest';
import {
  cursorCodec,
  InvalidCursorError,
  keyCursor,
  MAX_CURSOR_LENGTH,
} from '../../../functions/shared/cursor';

const raw = (value: unknown): string => Buffer.from(JSON.stringify(value), 'utf8').toString('base64url');

const deliveries = keyCursor('deliveries-by-endpoint', {
  event_id: 'string',
  endpoint_id: 'string',
  ts_id: 'string',
});
const endpoints = keyCursor('endpoints', { endpoint_id: 'string' });
const KEY = { event_id: 'evt_1', endpoint_id: 'ep_1', ts_id: '2026-01-01T00:00:00.000Z#evt_1' };

describe('the pagination cursor codec', () => {
  it('round-trips a LastEvaluatedKey; no key is no cursor', () => {
    const cursor = deliveries.encode(KEY) as string;
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(deliveries.decode(cursor)).toEqual(KEY);
    expect(deliveries.encode(undefined)).toBeUndefined();
    expect(deliveries.decode(undefined)).toBeUndefined();
  });

  it('refuses malformed cursors: not base64url, not JSON, not the envelope', () => {
    for (const cursor of [
      '',
      '!!not-a-cursor',
      'x',
      raw('text'),
      raw([]),
      raw(null),
      raw({ p: KEY }),
      `${raw(KEY)}=`,
    ]) {
      expect(() => deliveries.decode(cursor), cursor).toThrow(InvalidCursorError);
    }
  });

  it('refuses an oversized cursor before decoding it', () => {
    const big = deliveries.encode({ ...KEY, ts_id: 'x'.repeat(MAX_CURSOR_LENGTH) }) as string;
    expect(big.length).toBeGreaterThan(MAX_CURSOR_LENGTH);
    expect(() => deliveries.decode(big)).toThrow(InvalidCursorError);
  });

  it('refuses a position of the wrong shape: missing, extra or mistyped attributes', () => {
    const listing = 'deliveries-by-endpoint';
    for (const position of [
      { event_id: 'evt_1', endpoint_id: 'ep_1' },
      { ...KEY, extra: 'x' },
      { ...KEY, ts_id: 5 },
      { ...KEY, ts_id: { S: 'x' } },
      [KEY],
      'evt_1',
    ]) {
      expect(() => deliveries.decode(raw({ l: listing, p: position })), JSON.stringify(position)).toThrow(
        InvalidCursorError,
      );
    }
    expect(() => deliveries.decode(raw({ l: listing, p: KEY, x: 1 }))).toThrow(InvalidCursorError);
  });

  it("refuses another listing's cursor, even one of the same shape", () => {
    const twin = keyCursor('deliveries-by-status', {
      event_id: 'string',
      endpoint_id: 'string',
      ts_id: 'string',
    });
    expect(() => deliveries.decode(endpoints.encode({ endpoint_id: 'ep_1' }))).toThrow(InvalidCursorError);
    expect(() => deliveries.decode(twin.encode(KEY))).toThrow(InvalidCursorError);
  });

  it('carries a use case position validated by its reader', () => {
    const codec = cursorCodec('pages', (position) =>
      typeof position === 'number' && Number.isSafeInteger(position) && position > 0 ? position : undefined,
    );
    expect(codec.decode(codec.encode(3))).toBe(3);
    expect(() => codec.decode(codec.encode(-1))).toThrow(InvalidCursorError);
    expect(() => codec.decode(raw({ l: 'pages', p: '3' }))).toThrow(
      'the cursor is not one this API returned',
    );
  });
});
