import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from 'vitest';
import { createLogger, MASK, maskSensitive } from '../../../functions/shared/logger';

let lines: string[];
let spies: MockInstance<typeof process.stdout.write>[];

/** Powertools writes INFO lines to stdout and WARN/ERROR lines to stderr; both are captured in order. */
const capture = (stream: NodeJS.WriteStream): MockInstance<typeof process.stdout.write> =>
  vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array): boolean => {
    lines.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    return true;
  });

beforeEach(() => {
  lines = [];
  spies = [capture(process.stdout), capture(process.stderr)];
});

afterEach(() => {
  for (const spy of spies) spy.mockRestore();
});

const logged = (): Record<string, unknown>[] =>
  lines
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
    expect(lines.join('')).not.toContain('sensitive-value-123');
  });

  it('masks sensitive fields at any depth, in objects and arrays', () => {
    logger().info('request', {
      request: { headers: { 'x-api-key': 'k-123456', Authorization: 'Bearer t-abcdef', accept: 'json' } },
      endpoints: [{ id: 'ep_1', secret: 'whsec_zzz' }],
    });
    const line = onlyLine();
    expect(line.request).toEqual({ headers: { 'x-api-key': MASK, Authorization: MASK, accept: 'json' } });
    expect(line.endpoints).toEqual([{ id: 'ep_1', secret: MASK }]);
    expect(lines.join('')).not.toMatch(/k-123456|t-abcdef|whsec_zzz/);
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
    expect(lines).toEqual([]);
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
