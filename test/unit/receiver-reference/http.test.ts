import { describe, expect, it } from 'vitest';
import { countingEffect } from '../../../functions/receiver/reference/effect';
import {
  errorResult,
  headersOf,
  isTransient,
  rawBodyOf,
  traceIdOf,
} from '../../../functions/receiver/reference/http';
import { proxyEvent } from './support';

describe('rawBodyOf', () => {
  it('decodes base64 bodies and takes text bodies as UTF-8', () => {
    const bytes = Buffer.from('Café 🎉\r\n');
    expect(rawBodyOf(proxyEvent({ method: 'POST', path: '/', body: bytes }))).toEqual({ kind: 'ok', bytes });
    expect(rawBodyOf(proxyEvent({ method: 'POST', path: '/', body: bytes, base64: false }))).toEqual({
      kind: 'ok',
      bytes,
    });
    expect(rawBodyOf(proxyEvent({ method: 'POST', path: '/' }))).toEqual({
      kind: 'ok',
      bytes: Buffer.alloc(0),
    });
  });

  it('refuses more than the limit, counted in bytes', () => {
    const event = (body: string, base64: boolean) => proxyEvent({ method: 'POST', path: '/', body, base64 });
    expect(rawBodyOf(event('é'.repeat(6), false), 12).kind).toBe('ok');
    expect(rawBodyOf(event('é'.repeat(7), false), 12).kind).toBe('too_large');
    expect(rawBodyOf(event('x'.repeat(12), true), 12).kind).toBe('ok');
    expect(rawBodyOf(event('x'.repeat(13), true), 12).kind).toBe('too_large');
    expect(rawBodyOf(event('x'.repeat(10_000), true), 12).kind).toBe('too_large');
  });
});

describe('headersOf', () => {
  it('keeps every value of a repeated header', () => {
    const event = proxyEvent({
      method: 'POST',
      path: '/',
      headers: { 'X-Signature': 'v1=b' },
      multiValueHeaders: { 'X-Signature': ['v1=a', 'v1=b'] },
    });
    expect(headersOf(event)).toEqual({ 'X-Signature': ['v1=a', 'v1=b'] });
  });
});

describe('traceIdOf', () => {
  it('takes a valid X-Trace-Id, else the request id, else a fresh one', () => {
    expect(
      traceIdOf(proxyEvent({ method: 'GET', path: '/', headers: { 'X-TRACE-ID': 'abc-12345678' } })),
    ).toBe('abc-12345678');
    const event = proxyEvent({ method: 'GET', path: '/', headers: { 'x-trace-id': 'short' } });
    expect(traceIdOf(event)).toBe(event.requestContext.requestId);
    const bare = { ...event, requestContext: { ...event.requestContext, requestId: '' } };
    expect(traceIdOf(bare)).toMatch(/^trc_[0-9a-f]{32}$/);
  });
});

describe('errorResult', () => {
  it('is the C6 shape with X-Trace-Id, JSON content type and an optional Retry-After', () => {
    expect(errorResult('unavailable', 'retry later', 'trace-1', { retryAfterSeconds: 5 })).toEqual({
      statusCode: 503,
      headers: {
        'Content-Type': 'application/json',
        'Cache-Control': 'no-store',
        'Retry-After': '5',
        'X-Trace-Id': 'trace-1',
      },
      body: JSON.stringify({ error: 'unavailable', error_description: 'retry later', trace_id: 'trace-1' }),
    });
  });
});

describe('isTransient', () => {
  it('recognises throttling, conflicts, 5xx and connection failures', () => {
    const named = (name: string) => Object.assign(new Error(name), { name });
    expect(isTransient(named('ProvisionedThroughputExceededException'))).toBe(true);
    expect(isTransient(named('TransactionConflictException'))).toBe(true);
    expect(isTransient(Object.assign(new Error('x'), { $metadata: { httpStatusCode: 500 } }))).toBe(true);
    expect(isTransient(Object.assign(new Error('x'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isTransient(named('ValidationException'))).toBe(false);
    expect(isTransient('nope')).toBe(false);
  });
});

describe('countingEffect', () => {
  it('adds one to effects#<topic> and puts applied#<event_id> only if absent, with a TTL', async () => {
    const now = new Date('2026-11-01T12:00:00.000Z');
    const effect = countingEffect({
      tableName: 'receiver',
      clock: () => now,
      markerRetentionSeconds: 86_400,
    });
    const items = await effect(
      {
        event_id: 'evt_1',
        type: 'catalog.PriceListUpdated',
        version: '2026-11-01',
        ts: now.toISOString(),
        attempt: 1,
      },
      { topic: 'catalog' },
    );
    expect(items).toEqual([
      {
        Update: {
          TableName: 'receiver',
          Key: { event_id: 'effects#catalog' },
          UpdateExpression: 'ADD applied :one SET last_event_id = :event_id, updated_at = :now',
          ExpressionAttributeValues: { ':one': 1, ':event_id': 'evt_1', ':now': now.toISOString() },
        },
      },
      {
        Put: {
          TableName: 'receiver',
          Item: {
            event_id: 'applied#evt_1',
            topic: 'catalog',
            type: 'catalog.PriceListUpdated',
            applied_at: now.toISOString(),
            expires_at: Math.floor(now.getTime() / 1000) + 86_400,
          },
          ConditionExpression: 'attribute_not_exists(event_id)',
        },
      },
    ]);
  });
});
