import { describe, expect, it } from 'vitest';
import { createLogger, MASK, maskSensitive } from '../../../functions/shared/logger';
import { captureLogLines } from '../support/log-capture';

const log = captureLogLines();

const logged = (): Record<string, unknown>[] =>
  log
    .lines()
    .join('')
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>);

const onlyLine = (): Record<string, unknown> => {
  const entries = logged();
  expect(entries).toHaveLength(1);
  const [entry] = entries;
  if (!entry) throw new Error('no log line');
  return entry;
};

const logger = () => createLogger({ serviceName: 'pricing-test', logLevel: 'INFO' });

describe('createLogger: masking', () => {
  it.each([
    'secret',
    'webhook_secret',
    'token',
    'adminToken',
    'api_key',
    'apiKey',
    'x-api-key',
    'authorization',
    'Authorization',
    'signature',
    'X-Signature',
    'password',
    'client_credentials',
    'cookie',
    'private_key',
    'x-amz-security-token',
  ])('masks a top-level %s field', (field) => {
    logger().info('request', { [field]: 'sensitive-value-123' });
    const line = onlyLine();
    expect(line[field]).toBe(MASK);
    expect(log.lines().join('')).not.toContain('sensitive-value-123');
  });

  it('masks sensitive fields at any depth, in objects and arrays', () => {
    logger().info('request', {
      request: { headers: { 'x-api-key': 'k-123456', Authorization: 'Bearer t-abcdef', accept: 'json' } },
      endpoints: [{ id: 'ep_1', secret: 'whsec_zzz' }],
    });
    const line = onlyLine();
    expect(line.request).toEqual({ headers: { 'x-api-key': MASK, Authorization: MASK, accept: 'json' } });
    expect(line.endpoints).toEqual([{ id: 'ep_1', secret: MASK }]);
    expect(log.lines().join('')).not.toMatch(/k-123456|t-abcdef|whsec_zzz/);
  });

  it('masks a sensitive field whose value is an object as a whole', () => {
    logger().info('request', { credentials: { accessKeyId: 'AKID', secretAccessKey: 'sss' } });
    expect(onlyLine().credentials).toBe(MASK);
  });

  it('leaves non-sensitive fields untouched', () => {
    logger().info('priced', {
      sku: 'sku-1',
      amount: '12.30',
      quantity: 3,
      nested: { currency: 'EUR', ok: true },
    });
    expect(onlyLine()).toMatchObject({
      message: 'priced',
      sku: 'sku-1',
      amount: '12.30',
      quantity: 3,
      nested: { currency: 'EUR', ok: true },
    });
  });

  it('appends trace_id given with appendKeys to every line', () => {
    const instance = logger();
    instance.appendKeys({ trace_id: 'trc_01TEST' });
    instance.info('first');
    instance.warn('second');
    const entries = logged();
    expect(entries.map((entry) => entry.trace_id)).toEqual(['trc_01TEST', 'trc_01TEST']);
  });

  it('masks sensitive persistent keys too', () => {
    const instance = logger();
    instance.appendKeys({ api_key: 'persisted-key-1' });
    instance.info('x');
    expect(onlyLine().api_key).toBe(MASK);
  });

  it('writes nothing at level SILENT', () => {
    createLogger({ logLevel: 'SILENT' }).error('boom', { token: 'x' });
    expect(log.lines()).toEqual([]);
  });
});

describe('maskSensitive', () => {
  it('serialises bigint values as strings', () => {
    expect(JSON.stringify({ big: 12n }, maskSensitive)).toBe('{"big":"12"}');
  });

  it('does not mask the root value', () => {
    expect(maskSensitive('', { a: 1 })).toEqual({ a: 1 });
  });
});
