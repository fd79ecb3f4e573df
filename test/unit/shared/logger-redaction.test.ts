/**
 * The service logger redacts secrets by their value (wherever they are: free text, nested fields under any
 * name, error messages) besides masking fields by name, and logs errors as their cause chain without stacks.
 */

import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createLogger,
  MASK,
  MAX_CAUSE_DEPTH,
  maskSensitive,
  redactSecrets,
} from '../../../functions/shared/logger';
import { captureLogLines } from '../support/log-capture';

const log = captureLogLines();

const output = (): string => log.lines().join('');

const onlyLine = (): Record<string, unknown> => {
  const entries = output()
    .split('\n')
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(entries).toHaveLength(1);
  const [entry] = entries;
  if (!entry) throw new Error('no log line');
  return entry;
};

const logger = () => createLogger({ serviceName: 'pricing-test', logLevel: 'INFO' });

/** Secrets of every kind the service handles, made fresh for each run (none is in the source). */
const secrets = () => {
  const pem = generateKeyPairSync('ec', { namedCurve: 'P-256' })
    .privateKey.export({ type: 'pkcs8', format: 'pem' })
    .toString();
  const jwt = [
    Buffer.from('{"typ":"dpop+jwt","alg":"ES256"}').toString('base64url'),
    Buffer.from(`{"jti":"${randomBytes(8).toString('hex')}","htm":"POST"}`).toString('base64url'),
    randomBytes(64).toString('base64url'),
  ].join('.');
  return {
    webhook_secret: `whsec_${randomBytes(32).toString('base64')}`,
    partner_key: `pk_${randomBytes(32).toString('base64url')}`,
    local_api_key: `key_local_${randomBytes(24).toString('base64url')}`,
    tenant_api_key: `mck_${randomBytes(32).toString('base64url')}`,
    operator_token: `adm_local_${randomBytes(24).toString('base64url')}`,
    bearer_token: randomBytes(32).toString('base64url'),
    dpop_proof: jwt,
    pem,
    aws_access_key_id: `AKIA${randomBytes(8).toString('hex').toUpperCase()}`,
  };
};

type Secrets = ReturnType<typeof secrets>;

/** The parts of a secret that must not appear: the whole value, and for a PEM block its key body lines. */
const fragments = (secret: string): string[] =>
  secret.startsWith('-----BEGIN')
    ? secret.split('\n').filter((line) => line.length > 0 && !line.startsWith('-----'))
    : [secret];

const expectNoSecret = (text: string, all: Secrets): void => {
  for (const [kind, secret] of Object.entries(all))
    for (const fragment of fragments(secret)) expect(text, kind).not.toContain(fragment);
};

/** A sentence carrying each secret the way it would be written in free text. */
const sentences = (s: Secrets): Record<keyof Secrets, string> => ({
  webhook_secret: `endpoint ep_1 rotated to ${s.webhook_secret} at noon`,
  partner_key: `partner key ${s.partner_key} refused for ep_1`,
  local_api_key: `x-api-key: ${s.local_api_key} was not recognised`,
  tenant_api_key: `caller ${s.tenant_api_key} over quota`,
  operator_token: `operator token ${s.operator_token} expired`,
  bearer_token: `upstream sent Authorization: Bearer ${s.bearer_token} twice`,
  dpop_proof: `DPoP proof ${s.dpop_proof} replayed`,
  pem: `client certificate key follows\n${s.pem}and then the request went on`,
  aws_access_key_id: `credentials ${s.aws_access_key_id} rejected by STS`,
});

describe('createLogger: redaction by value', () => {
  it.each(Object.keys(sentences(secrets())) as (keyof Secrets)[])(
    'redacts a %s in a free-text message and keeps the rest of it',
    (kind) => {
      const all = secrets();
      const sentence = sentences(all)[kind];
      logger().info(sentence);
      const line = onlyLine();
      expectNoSecret(output(), all);
      expect(line.message).toContain(MASK);
      // The words around the secret are still there.
      const words = sentence.split(/\s+/).filter((word) => /^[a-z]{4,}$/.test(word));
      expect(words.length).toBeGreaterThan(0);
      for (const word of words) expect(line.message).toContain(word);
    },
  );

  it('redacts secrets in nested fields and arrays under names that say nothing', () => {
    const all = secrets();
    const text = sentences(all);
    logger().info('delivery attempt', {
      event_id: 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C',
      context: { note: text.webhook_secret, response: { body: text.partner_key, lines: [text.pem] } },
      // A bare random string says nothing; a bearer token is recognised by its scheme.
      values: Object.values({ ...all, bearer_token: `Bearer ${all.bearer_token}` }),
      headers: [['X-Forwarded', text.bearer_token]],
    });
    const line = onlyLine();
    expectNoSecret(output(), all);
    expect(line.event_id).toBe('evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C');
    expect(line.values).toEqual([
      `whsec_${MASK}`,
      `pk_${MASK}`,
      `key_${MASK}`,
      `mck_${MASK}`,
      `adm_${MASK}`,
      `Bearer ${MASK}`,
      MASK,
      `${MASK}\n`,
      MASK,
    ]);
  });

  it('redacts secrets in error messages, in causes and in errors given as extra input', () => {
    const all = secrets();
    const text = sentences(all);
    const cause = new Error(text.operator_token);
    const error = new Error(`${text.tenant_api_key}; ${text.pem}`, { cause });
    logger().error('request failed', { error, detail: new TypeError(text.dpop_proof) });
    logger().warn('retrying', new Error(text.local_api_key, { cause: text.webhook_secret }));
    expectNoSecret(output(), all);
    expect(output()).toContain('over quota');
  });

  it('redacts secrets in persistent keys and in a JSON document logged as a string', () => {
    const all = secrets();
    const instance = logger();
    instance.appendKeys({ caller: all.tenant_api_key });
    instance.info('ingestion report', {
      report: JSON.stringify({
        headers: { authorization: all.bearer_token, 'x-api-key': all.local_api_key },
      }),
    });
    const line = onlyLine();
    expectNoSecret(output(), all);
    expect(line.report).toBe(`{"headers":{"authorization":"${MASK}","x-api-key":"${MASK}"}}`);
  });

  it('leaves prose, identifiers and digests readable', () => {
    const prose = [
      'Bearer token missing',
      'DPoP proof required for endpoint ep_01JQ4S6T1X5V8R2W3Y4Z5A6B7C',
      'refusal key_mismatch',
      'setting key_rotation_overlap_seconds is unset',
      'api key ak_01JQ4S6T1X5V8R2W3Y4Z5A6B7C revoked',
      'price 12.30 EUR, basic rate',
      'whsec_ secrets are 32 bytes',
      'receipt signed with local-0123456789abcdef',
    ];
    for (const text of prose) expect(redactSecrets(text)).toBe(text);
  });
});

describe('createLogger: masking by name', () => {
  it.each([
    'partner_key',
    'partnerKey',
    'previous_partner_key',
    'partner_keys',
    'client_key',
    'clientKey',
    'dpop',
    'DPoP',
    'dpop_proof',
  ])('masks a %s field', (field) => {
    logger().info('request', { [field]: 'plain-value-123' });
    expect(onlyLine()[field]).toBe(MASK);
    expect(output()).not.toContain('plain-value-123');
  });

  it("walks a dpop object (the service's refusal details) instead of masking it", () => {
    logger().info('request refused', { dpop: { endpoint_id: 'ep_1', refusal: 'key_mismatch' } });
    expect(onlyLine().dpop).toEqual({ endpoint_id: 'ep_1', refusal: 'key_mismatch' });
  });

  it('keeps what is about a partner key without being it: its digest (not a secret), its validity', () => {
    const digest = 'ab'.repeat(32);
    const until = '2026-11-26T00:00:00.000Z';
    logger().info('partner call', {
      partner_key_sha256: digest,
      partnerKeyHash: digest,
      previous_partner_key_valid_until: until,
    });
    expect(onlyLine()).toMatchObject({
      partner_key_sha256: digest,
      partnerKeyHash: digest,
      previous_partner_key_valid_until: until,
    });
  });
});

describe('createLogger: errors', () => {
  /** Where this file is: a stack frame would name it. */
  const HERE = import.meta.filename;

  const expectNoStack = (text: string): void => {
    expect(text).not.toContain('"stack"');
    expect(text).not.toContain('"location"');
    expect(text).not.toContain(HERE);
    expect(text).not.toMatch(/\.(?:ts|js|mjs):\d+/);
    expect(text).not.toMatch(/\bat [\w.<>]+ \(/);
  };

  class ConflictError extends Error {
    readonly code = 'version_conflict';
    readonly details = { internal: 'not logged' };
    constructor(message: string, options?: ErrorOptions) {
      super(message, options);
      this.name = 'ConflictError';
    }
  }

  it('logs an error with a nested cause as name, message, code and cause, never its stack', () => {
    const root = new RangeError('socket hang up');
    const middle = new ConflictError('price list moved on', { cause: root });
    const error = new Error('commit failed', { cause: middle });
    expect(error.stack).toContain(HERE);
    logger().error('commit failed', { error });
    expectNoStack(output());
    expect(onlyLine().error).toEqual({
      name: 'Error',
      message: 'commit failed',
      cause: {
        name: 'ConflictError',
        message: 'price list moved on',
        code: 'version_conflict',
        cause: { name: 'RangeError', message: 'socket hang up' },
      },
    });
  });

  it('formats an error given as extra input, and in a child logger, the same way', () => {
    const instance = logger();
    instance.error('fan-out failed', new Error('boom', { cause: 'timeout' }));
    instance.createChild().warn('again', { error: new TypeError('bad') });
    expectNoStack(output());
    const [first, second] = output()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(first?.error).toEqual({ name: 'Error', message: 'boom', cause: 'timeout' });
    expect(second?.error).toEqual({ name: 'TypeError', message: 'bad' });
  });

  it("logs an AWS SDK error's class and HTTP status, not its message, request or response (C6)", () => {
    const sdkError = Object.assign(new Error('The conditional request failed for item pk=TENANT#t1'), {
      name: 'ConditionalCheckFailedException',
      $fault: 'client',
      $metadata: { httpStatusCode: 400, requestId: 'REQ1' },
      $response: { headers: { 'x-amzn-requestid': 'REQ1' } },
    });
    logger().error('write failed', { error: new Error('commit failed', { cause: sdkError }) });
    expectNoStack(output());
    expect(onlyLine().error).toEqual({
      name: 'Error',
      message: 'commit failed',
      cause: { name: 'ConditionalCheckFailedException', http_status: 400 },
    });
  });

  it('bounds the cause chain, circular ones included', () => {
    let chain = new Error('level 0');
    for (let level = 1; level <= 10; level += 1) chain = new Error(`level ${level}`, { cause: chain });
    const circular = new Error('circular');
    (circular as { cause?: unknown }).cause = circular;
    logger().error('deep', { chain, circular });
    const line = onlyLine();
    let depth = 0;
    let node = line.chain as { cause?: unknown; truncated?: boolean };
    while (node.cause !== undefined) {
      node = node.cause as typeof node;
      depth += 1;
    }
    expect(depth).toBe(MAX_CAUSE_DEPTH);
    expect(node.truncated).toBe(true);
    expect(JSON.stringify(line.circular)).toContain('"truncated":true');
  });

  it('serialises an error through maskSensitive alone, outside any logger', () => {
    const json = JSON.stringify({ error: new Error('x', { cause: new Error('y') }) }, maskSensitive);
    expect(JSON.parse(json)).toEqual({
      error: { name: 'Error', message: 'x', cause: { name: 'Error', message: 'y' } },
    });
  });
});
