import { createHash, createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { describe, expect, it, vi } from 'vitest';
import { signedRequestHeaders } from '../../../functions/domain/webhooks/request-signing';
import { InvalidSecretError, secretBytes } from '../../../functions/domain/webhooks/secret';
import { signatureHeader } from '../../../functions/domain/webhooks/signature';
import { verifyStandardSignature } from '../../../functions/domain/webhooks/standard-webhooks';
import {
  MAX_EVENT_ID_LENGTH,
  parseReceivedEnvelope,
  TIMESTAMP_TOLERANCE_SECONDS,
  type VerificationFailure,
  type VerifyWebhookInput,
  verifyWebhook,
  WebhookVerificationError,
} from '../../../functions/receiver';
import { verificationFailureOf } from '../../support/verification';
import { volume } from '../../support/volume';

// fast-check prints the seed and the counterexample path of a failure; FC_SEED=<seed> replays one.
const seed = process.env.FC_SEED === undefined ? undefined : Number(process.env.FC_SEED);
const RUNS = {
  numRuns: volume('VERIFY_PROPERTY_RUNS', { local: 2_500, ci: 10_000 }),
  ...(seed === undefined ? {} : { seed }),
} as const;

interface Vector {
  readonly name: string;
  readonly secret?: string;
  readonly secrets?: readonly string[];
  readonly method: string;
  readonly path: string;
  readonly timestamp: string;
  readonly body: string;
  readonly expected_signature: string;
}

const vectors = (
  JSON.parse(
    readFileSync(new URL('../../../docs/webhook-signature-vectors.json', import.meta.url), 'utf8'),
  ) as {
    vectors: Vector[];
  }
).vectors;

const secretOf = (label: string) => `whsec_${createHash('sha256').update(label).digest('base64')}`;
const NEW_SECRET = secretOf('receiver kit: new');
const WRONG_SECRET = secretOf('receiver kit: wrong');

const EVENT_ID = 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C';
const TIMESTAMP = '2026-11-01T12:00:05.000Z';
const NOW = new Date(TIMESTAMP);
const PATH = '/webhooks/v1/catalog';
const utf8 = (text: string) => new TextEncoder().encode(text);

const envelope = {
  event_id: EVENT_ID,
  type: 'catalog.PriceListUpdated',
  version: '2026-11-01',
  ts: '2026-11-01T12:00:00.000Z',
  attempt: 2,
  producer: 'catalog',
  trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
  pricelist_version: 42,
  fx_version: 'fx-7',
  tax_rule_version: null,
  data: { version: 42, effective_from: '2026-11-01T12:00:00.000Z' },
};

interface Signed {
  readonly body: Uint8Array;
  readonly method: string;
  readonly path: string;
  readonly timestamp: string;
  readonly signature: string;
}

const sign = (
  options: {
    body?: Uint8Array;
    secrets?: readonly string[];
    timestamp?: string;
    method?: string;
    path?: string;
  } = {},
): Signed => {
  const body = options.body ?? utf8(JSON.stringify(envelope));
  const timestamp = options.timestamp ?? TIMESTAMP;
  const method = options.method ?? 'POST';
  const path = options.path ?? PATH;
  const signature = signatureHeader({
    secrets: (options.secrets ?? [NEW_SECRET]).map(secretBytes),
    timestamp,
    method,
    path,
    body,
  });
  return { body, method, path, timestamp, signature };
};

const inputOf = (signed: Signed, overrides: Partial<VerifyWebhookInput> = {}): VerifyWebhookInput => ({
  body: signed.body,
  method: signed.method,
  path: signed.path,
  headers: {
    'content-type': 'application/json',
    'x-signature': signed.signature,
    'x-timestamp': signed.timestamp,
    'x-event-id': EVENT_ID,
  },
  secrets: [NEW_SECRET],
  now: NOW,
  ...overrides,
});

/** The failure code of a refused input, or undefined when it verifies. */
const failureOf = (input: VerifyWebhookInput): VerificationFailure | undefined =>
  verificationFailureOf(() => verifyWebhook(input));

const expectFailure = (input: VerifyWebhookInput, code: VerificationFailure) => {
  expect(() => verifyWebhook(input)).toThrow(WebhookVerificationError);
  expect(failureOf(input)).toBe(code);
};

describe('verifyWebhook: the published vectors (docs/webhook-signature-vectors.json)', () => {
  it('has vectors to check', () => {
    expect(vectors.length).toBeGreaterThanOrEqual(7);
  });

  it.each(vectors.map((vector) => [vector.name, vector] as const))('%s', (_name, vector) => {
    const secrets = vector.secrets ?? [vector.secret as string];
    const eventId =
      vector.body === '' ? EVENT_ID : (JSON.parse(vector.body) as { event_id: string }).event_id;
    const input = (configured: readonly string[]): VerifyWebhookInput => ({
      body: utf8(vector.body),
      method: vector.method,
      path: vector.path,
      headers: {
        'X-Signature': vector.expected_signature,
        'X-Timestamp': vector.timestamp,
        'X-Event-Id': eventId,
      },
      secrets: configured,
      now: new Date(vector.timestamp),
    });
    // A receiver holding all the vector's secrets, or any one of them, accepts the signature.
    for (const configured of [secrets, ...secrets.map((secret) => [secret])]) {
      if (vector.body === '') {
        // The signature checks out; an empty body is simply not an envelope.
        expect(failureOf(input(configured))).toBe('malformed_body');
        continue;
      }
      const received = verifyWebhook(input(configured));
      expect(received).toEqual(JSON.parse(vector.body));
      // The same body given as a string (taken as UTF-8) verifies too.
      expect(verifyWebhook({ ...input(configured), body: vector.body })).toEqual(received);
    }
    expect(failureOf(input([WRONG_SECRET]))).toBe('signature_mismatch');
  });
});

describe('verifyWebhook: accepted requests', () => {
  it('returns the envelope, extra fields included', () => {
    const body = utf8(JSON.stringify({ ...envelope, added_later: { any: 'thing' } }));
    expect(verifyWebhook(inputOf(sign({ body })))).toEqual({ ...envelope, added_later: { any: 'thing' } });
  });

  it('reads header names in any case and array values', () => {
    const signed = sign();
    const input = inputOf(signed, {
      headers: {
        'X-SIGNATURE': [signed.signature],
        'x-TimeStamp': [signed.timestamp, signed.timestamp],
        'X-Event-ID': EVENT_ID,
        other: undefined,
      },
    });
    expect(verifyWebhook(input).event_id).toBe(EVENT_ID);
  });

  it('reads several X-Signature values as one list and ignores other schemes and junk entries', () => {
    const signed = sign();
    const headers = {
      'x-signature': ['v2=whatever', `v1=not-base64 ${signed.signature}`, 'v1='],
      'x-timestamp': signed.timestamp,
      'x-event-id': EVENT_ID,
    };
    expect(verifyWebhook(inputOf(signed, { headers })).event_id).toBe(EVENT_ID);
  });

  it('accepts a body with a byte-order mark and non-ASCII text', () => {
    const text = JSON.stringify({ ...envelope, data: { title: 'Café crème – 12,30 € · 日本 · 🎉' } });
    const body = Uint8Array.from([0xef, 0xbb, 0xbf, ...utf8(text)]);
    expect(verifyWebhook(inputOf(sign({ body }))).data).toEqual({
      title: 'Café crème – 12,30 € · 日本 · 🎉',
    });
  });

  it('honours a shorter tolerance', () => {
    const late = new Date(NOW.getTime() + 61_000);
    expect(failureOf(inputOf(sign(), { now: late, toleranceSeconds: 60 }))).toBe('timestamp_out_of_window');
    expect(failureOf(inputOf(sign(), { now: late, toleranceSeconds: 61 }))).toBeUndefined();
  });
});

describe('verifyWebhook: one test per failure code', () => {
  it.each(['x-signature', 'x-timestamp', 'x-event-id'])('missing_header: no %s', (name) => {
    const input = inputOf(sign());
    const headers = { ...input.headers };
    delete headers[name];
    expectFailure({ ...input, headers }, 'missing_header');
    expectFailure({ ...input, headers: { ...input.headers, [name]: '' } }, 'missing_header');
    expectFailure({ ...input, headers: { ...input.headers, [name]: [] } }, 'missing_header');
  });

  it.each([
    ['a timestamp in epoch seconds', { 'x-timestamp': '1793534405' }],
    ['a timestamp without milliseconds', { 'x-timestamp': '2026-11-01T12:00:05Z' }],
    ['a timestamp with an offset', { 'x-timestamp': '2026-11-01T13:00:05.000+01:00' }],
    ['an impossible date', { 'x-timestamp': '2026-02-30T12:00:05.000Z' }],
    ['two different timestamps', { 'x-timestamp': [TIMESTAMP, '2026-11-01T12:00:06.000Z'] }],
    ['two different event ids', { 'x-event-id': [EVENT_ID, 'evt_other'] }],
    ['an event id that is too long', { 'x-event-id': 'e'.repeat(MAX_EVENT_ID_LENGTH + 1) }],
    [
      'a signature of another scheme only',
      { 'x-signature': 'v2=e4eb1/cwIlr9Y5KOSPDBVej32byFsloICu9fm4hWbxk=' },
    ],
    ['a signature that is not base64', { 'x-signature': 'v1=***' }],
    ['a signature of the wrong length', { 'x-signature': 'v1=AAAA' }],
    [
      'a non-canonical signature spelling',
      { 'x-signature': 'v1=e4eb1/cwIlr9Y5KOSPDBVej32byFsloICu9fm4hWbxl=' },
    ],
  ])('malformed_header: %s', (_case, headers) => {
    const input = inputOf(sign());
    expectFailure({ ...input, headers: { ...input.headers, ...headers } }, 'malformed_header');
  });

  it('malformed_header: the canonical spelling of a signature is required (no stray bits)', () => {
    const signed = sign();
    const value = signed.signature.slice(3);
    const last = value.at(-2) as string;
    // Flip one of the two low bits the decoder ignores: the same bytes, another spelling.
    const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
    const twin = alphabet[alphabet.indexOf(last) ^ 1] as string;
    const malleated = `v1=${value.slice(0, -2)}${twin}=`;
    expect(Buffer.from(malleated.slice(3), 'base64')).toEqual(Buffer.from(value, 'base64'));
    expectFailure(inputOf({ ...signed, signature: malleated }), 'malformed_header');
  });

  it('timestamp_out_of_window: too old and too far ahead', () => {
    const signed = sign();
    expectFailure(inputOf(signed, { now: new Date(NOW.getTime() + 301_000) }), 'timestamp_out_of_window');
    expectFailure(inputOf(signed, { now: new Date(NOW.getTime() - 301_000) }), 'timestamp_out_of_window');
  });

  it('signature_mismatch: a wrong secret', () => {
    expectFailure(inputOf(sign({ secrets: [WRONG_SECRET] })), 'signature_mismatch');
  });

  it.each([
    ['not JSON', '{"event_id":'],
    ['an empty body', ''],
    ['a JSON array', '[]'],
    ['JSON null', 'null'],
    ['no attempt', JSON.stringify({ ...envelope, attempt: undefined })],
    ['attempt 0', JSON.stringify({ ...envelope, attempt: 0 })],
    ['attempt as a string', JSON.stringify({ ...envelope, attempt: '1' })],
    ['no type', JSON.stringify({ ...envelope, type: undefined })],
    ['an empty version', JSON.stringify({ ...envelope, version: '' })],
    ['ts not ISO with ms', JSON.stringify({ ...envelope, ts: '2026-11-01 12:00' })],
    ['event_id a number', JSON.stringify({ ...envelope, event_id: 7 })],
    ['data an array', JSON.stringify({ ...envelope, data: [] })],
    ['pricelist_version a string', JSON.stringify({ ...envelope, pricelist_version: '42' })],
    ['fx_version a number', JSON.stringify({ ...envelope, fx_version: 7 })],
  ])('malformed_body: %s', (_case, text) => {
    expectFailure(inputOf(sign({ body: utf8(text) })), 'malformed_body');
  });

  it('malformed_body: bytes that are not UTF-8', () => {
    const body = Uint8Array.from([...utf8('{"event_id":"'), 0xff, ...utf8('"}')]);
    expectFailure(inputOf(sign({ body })), 'malformed_body');
  });

  it('malformed_body: a string body with a lone surrogate (its UTF-8 bytes are not the string)', () => {
    // JSON.stringify would escape it: put the raw code unit in the text.
    const text = JSON.stringify({ ...envelope, data: { note: 'X' } }).replace('"X"', '"\ud800"');
    expect(text.isWellFormed()).toBe(false);
    const signed = sign({ body: utf8(text) });
    expectFailure(inputOf(signed, { body: text }), 'malformed_body');
  });

  it('event_id_mismatch: X-Event-Id names another event', () => {
    const input = inputOf(sign());
    expectFailure(
      { ...input, headers: { ...input.headers, 'x-event-id': 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7D' } },
      'event_id_mismatch',
    );
  });

  it('checks in the documented order: window before signature, signature before body', () => {
    const stale = new Date(NOW.getTime() + 400_000);
    expect(failureOf(inputOf(sign({ secrets: [WRONG_SECRET] }), { now: stale }))).toBe(
      'timestamp_out_of_window',
    );
    expect(failureOf(inputOf(sign({ secrets: [WRONG_SECRET], body: utf8('nope') })))).toBe(
      'signature_mismatch',
    );
  });

  it('never puts header values, secrets or the body in the message', () => {
    const signed = sign({ secrets: [WRONG_SECRET] });
    try {
      verifyWebhook(inputOf(signed));
      expect.unreachable();
    } catch (error) {
      const text = `${(error as Error).message} ${(error as Error).stack}`;
      for (const secret of [signed.signature.slice(3), NEW_SECRET, WRONG_SECRET, EVENT_ID, TIMESTAMP]) {
        expect(text).not.toContain(secret);
      }
      expect((error as Error).name).toBe('WebhookVerificationError');
    }
  });
});

describe('verifyWebhook: Standard Webhooks requests (C33), signed by the standardwebhooks library', () => {
  const body = JSON.stringify(envelope);
  const seconds = Math.floor(NOW.getTime() / 1000);
  /** Headers as the published library signs them (an implementation independent of the service's). */
  const standard = (
    secrets: readonly string[] = [NEW_SECRET],
    options: { id?: string; at?: Date; signed?: string } = {},
  ): Record<string, string> => {
    const id = options.id ?? EVENT_ID;
    const at = options.at ?? NOW;
    return {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
      'webhook-signature': secrets
        .map((secret) => new Webhook(secret).sign(id, at, options.signed ?? body))
        .join(' '),
    };
  };
  const input = (headers: Record<string, string>, overrides: Partial<VerifyWebhookInput> = {}) =>
    ({ body, method: 'POST', path: PATH, headers, secrets: [NEW_SECRET], now: NOW, ...overrides }) as const;

  it('accepts them, and during a rotation by either secret alone', () => {
    expect(verifyWebhook(input(standard()))).toEqual(envelope);
    const rotating = standard([NEW_SECRET, WRONG_SECRET]);
    expect(verifyWebhook(input(rotating)).event_id).toBe(EVENT_ID);
    expect(verifyWebhook(input(rotating, { secrets: [WRONG_SECRET] })).event_id).toBe(EVENT_ID);
  });

  it('agrees with the service’s own signer, which the library verifies', () => {
    const headers = signedRequestHeaders(
      { algorithm: 'hmac-sha256', secrets: [secretBytes(NEW_SECRET)] },
      'standard-webhooks',
      {
        id: EVENT_ID,
        at: NOW,
        body: utf8(body),
        path: '/',
      },
    );
    expect(headers['webhook-signature']).toBe(standard()['webhook-signature']);
    // The library checks the timestamp against its own clock: signed now, it verifies.
    const now = signedRequestHeaders(
      { algorithm: 'hmac-sha256', secrets: [secretBytes(NEW_SECRET)] },
      'standard-webhooks',
      {
        id: EVENT_ID,
        at: new Date(),
        body: utf8(body),
        path: '/',
      },
    );
    expect(new Webhook(NEW_SECRET).verify(body, { ...now })).toEqual(envelope);
  });

  it('refuses them with the same codes as the native scheme', () => {
    expectFailure(input(standard(), { secrets: [WRONG_SECRET] }), 'signature_mismatch');
    expectFailure(
      input(standard(), { body: body.replace('"attempt":2', '"attempt":3') }),
      'signature_mismatch',
    );
    expectFailure(
      input(standard([NEW_SECRET], { at: new Date(NOW.getTime() - 301_000) })),
      'timestamp_out_of_window',
    );
    expectFailure(
      input(standard([NEW_SECRET], { at: new Date(NOW.getTime() + 301_000) })),
      'timestamp_out_of_window',
    );
    expectFailure(input({ ...standard(), 'webhook-timestamp': `${seconds}.5` }), 'malformed_header');
    expectFailure(input({ ...standard(), 'webhook-signature': 'v1a,AAAA' }), 'malformed_header');
    const { 'webhook-id': _id, ...withoutId } = standard();
    expectFailure(input(withoutId), 'missing_header');
    // Signed for another event id than the envelope's.
    expectFailure(
      input(standard([NEW_SECRET], { id: 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7D' })),
      'event_id_mismatch',
    );
    expectFailure(
      input(standard([NEW_SECRET], { signed: 'not json' }), { body: 'not json' }),
      'malformed_body',
    );
  });

  it('takes a request carrying both schemes as a native one', () => {
    const native = sign();
    const both = {
      ...standard(),
      'x-signature': native.signature,
      'x-timestamp': native.timestamp,
      'x-event-id': EVENT_ID,
    };
    expect(verifyWebhook(input(both, { body: native.body })).event_id).toBe(EVENT_ID);
    expectFailure(input({ ...both, 'x-signature': 'v1=AAAA' }, { body: native.body }), 'malformed_header');
  });
});

describe('Standard Webhooks vectors (docs/webhook-signature-vectors.json)', () => {
  const document = JSON.parse(
    readFileSync(new URL('../../../docs/webhook-signature-vectors.json', import.meta.url), 'utf8'),
  ) as {
    standard_webhooks: {
      vectors: {
        name: string;
        secret?: string;
        secrets?: string[];
        webhook_id: string;
        webhook_timestamp: string;
        body: string;
        signed_content: string;
        expected_signature: string;
      }[];
    };
  };
  const standardVectors = document.standard_webhooks.vectors;

  it('cover every body of the native vectors but the path one, a rotation included', () => {
    expect(standardVectors.length).toBe(vectors.length - 1);
    expect(standardVectors.some((vector) => (vector.secrets ?? []).length === 2)).toBe(true);
  });

  it.each(standardVectors.map((vector) => [vector.name, vector] as const))(
    '%s: HMAC-SHA-256 over id.timestamp.body, computed here from the specification, matches',
    (_name, vector) => {
      const secrets = vector.secrets ?? [vector.secret as string];
      expect(vector.signed_content).toBe(`${vector.webhook_id}.${vector.webhook_timestamp}.${vector.body}`);
      const expected = secrets
        .map((secret) => {
          const key = Buffer.from(secret.slice('whsec_'.length), 'base64');
          return `v1,${createHmac('sha256', key).update(vector.signed_content, 'utf8').digest('base64')}`;
        })
        .join(' ');
      expect(vector.expected_signature).toBe(expected);
      // The published library and the kit's check accept it at its own time, by each secret alone.
      const headers = {
        'webhook-id': vector.webhook_id,
        'webhook-timestamp': vector.webhook_timestamp,
        'webhook-signature': vector.expected_signature,
      };
      vi.useFakeTimers({ now: new Date(Number(vector.webhook_timestamp) * 1000), toFake: ['Date'] });
      try {
        for (const secret of secrets) {
          // The library refuses an empty payload before it looks at the signature.
          if (vector.body.length > 0) expect(new Webhook(secret).verify(vector.body, headers)).toBeTruthy();
          expect(
            verifyStandardSignature({
              header: vector.expected_signature,
              secrets: [secretBytes(secret)],
              id: vector.webhook_id,
              timestamp: vector.webhook_timestamp,
              body: utf8(vector.body),
            }),
          ).toBe(true);
        }
      } finally {
        vi.useRealTimers();
      }
    },
  );
});

describe('verifyWebhook: configuration errors are not verification failures', () => {
  it('throws InvalidSecretError for a secret that is not whsec_ + base64 of 32 bytes', () => {
    expect(() => verifyWebhook(inputOf(sign(), { secrets: ['not-a-secret'] }))).toThrow(InvalidSecretError);
    expect(() => verifyWebhook(inputOf(sign(), { secrets: ['whsec_AAAA'] }))).toThrow(InvalidSecretError);
  });

  it('throws RangeError for no secret or a tolerance outside 1..300 s', () => {
    expect(() => verifyWebhook(inputOf(sign(), { secrets: [] }))).toThrow(RangeError);
    expect(() => verifyWebhook(inputOf(sign(), { toleranceSeconds: 301 }))).toThrow(RangeError);
    expect(() => verifyWebhook(inputOf(sign(), { toleranceSeconds: 0 }))).toThrow(RangeError);
    expect(() => verifyWebhook(inputOf(sign(), { toleranceSeconds: Number.NaN }))).toThrow(RangeError);
  });
});

describe('parseReceivedEnvelope', () => {
  it('accepts the minimum and keeps unknown fields', () => {
    const minimum = { event_id: 'e', type: 't', version: 'v', ts: '2026-11-01T12:00:00.000Z', attempt: 1 };
    expect(parseReceivedEnvelope(minimum)).toBe(minimum);
    expect(parseReceivedEnvelope({ ...minimum, x: 1 })).toEqual({ ...minimum, x: 1 });
  });

  it('refuses what is not an object', () => {
    for (const value of [null, 1, 'x', [], undefined]) expect(parseReceivedEnvelope(value)).toBeUndefined();
  });
});

// ---------------------------------------------------------------------------------------------------------------
// Properties (10 000 runs each).

/** Any envelope body: the fixed fields plus random data. */
const bodyArb = fc
  .record({
    attempt: fc.integer({ min: 1, max: 50 }),
    data: fc.dictionary(fc.string({ maxLength: 8 }), fc.oneof(fc.string({ maxLength: 40 }), fc.integer())),
  })
  .map(({ attempt, data }) => utf8(JSON.stringify({ ...envelope, attempt, data })));

const pathArb = fc
  .stringMatching(/^\/[A-Za-z0-9/_.~%-]{0,40}(\?[A-Za-z0-9=&%_.-]{0,30})?$/)
  .filter((path) => path.length > 0);

/** A single-position change to a string: another printable ASCII character at one index. */
const changeChar = (text: string, index: number, replacement: number): string => {
  const at = index % text.length;
  const original = text.charCodeAt(at);
  const code = 0x20 + ((original - 0x20 + 1 + (replacement % 94)) % 95);
  return `${text.slice(0, at)}${String.fromCharCode(code)}${text.slice(at + 1)}`;
};

describe('verifyWebhook: properties (10 000 runs each)', () => {
  it('changing any single byte of the body is rejected', () => {
    fc.assert(
      fc.property(bodyArb, fc.nat(), fc.integer({ min: 1, max: 255 }), (body, index, delta) => {
        const signed = sign({ body });
        expect(failureOf(inputOf(signed))).toBeUndefined();
        const tampered = Uint8Array.from(body);
        const at = index % body.length;
        tampered[at] = ((tampered[at] as number) + delta) % 256;
        expect(failureOf(inputOf(signed, { body: tampered }))).toBe('signature_mismatch');
      }),
      RUNS,
    );
  });

  it('changing any single character of the path is rejected', () => {
    fc.assert(
      fc.property(pathArb, fc.nat(), fc.nat(), (path, index, replacement) => {
        const signed = sign({ path });
        expect(failureOf(inputOf(signed))).toBeUndefined();
        const changed = changeChar(path, index, replacement);
        expect(changed).not.toBe(path);
        expect(failureOf(inputOf(signed, { path: changed }))).toBe('signature_mismatch');
      }),
      RUNS,
    );
  });

  it('changing any single character of the method is rejected', () => {
    fc.assert(
      fc.property(
        fc.constantFrom('POST', 'PUT', 'PATCH', 'DELETE', 'GET'),
        fc.nat(),
        fc.nat(),
        (method, index, replacement) => {
          const signed = sign({ method });
          expect(failureOf(inputOf(signed))).toBeUndefined();
          const changed = changeChar(method, index, replacement);
          expect(changed).not.toBe(method);
          expect(failureOf(inputOf(signed, { method: changed }))).toBe('signature_mismatch');
        },
      ),
      RUNS,
    );
  });

  it('changing any single character of X-Timestamp is rejected', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: -299_999, max: 299_999 }),
        fc.nat(),
        fc.nat(),
        (offsetMs, index, replacement) => {
          const timestamp = new Date(NOW.getTime() + offsetMs).toISOString();
          const signed = sign({ timestamp });
          expect(failureOf(inputOf(signed))).toBeUndefined();
          const changed = changeChar(timestamp, index, replacement);
          expect(changed).not.toBe(timestamp);
          expect(failureOf(inputOf({ ...signed, timestamp: changed }))).toMatch(
            /^(malformed_header|timestamp_out_of_window|signature_mismatch)$/,
          );
        },
      ),
      RUNS,
    );
  });

  it('changing any single character of X-Signature is rejected', () => {
    fc.assert(
      fc.property(bodyArb, fc.nat(), fc.nat(), (body, index, replacement) => {
        const signed = sign({ body });
        const changed = changeChar(signed.signature, index, replacement);
        expect(changed).not.toBe(signed.signature);
        expect(failureOf(inputOf({ ...signed, signature: changed }))).toMatch(
          /^(missing_header|malformed_header|signature_mismatch)$/,
        );
      }),
      RUNS,
    );
  });

  it('accepts a timestamp up to 300 s off either way and rejects one more than 300 s off', () => {
    const signed = sign();
    for (const seconds of [-299, -300, 0, 299, 300]) {
      expect(failureOf(inputOf(signed, { now: new Date(NOW.getTime() + seconds * 1000) }))).toBeUndefined();
    }
    for (const seconds of [-301, 301]) {
      expect(failureOf(inputOf(signed, { now: new Date(NOW.getTime() + seconds * 1000) }))).toBe(
        'timestamp_out_of_window',
      );
    }
    const limitMs = TIMESTAMP_TOLERANCE_SECONDS * 1000;
    fc.assert(
      fc.property(fc.integer({ min: -limitMs, max: limitMs }), (offsetMs) => {
        expect(failureOf(inputOf(signed, { now: new Date(NOW.getTime() + offsetMs) }))).toBeUndefined();
      }),
      RUNS,
    );
    fc.assert(
      fc.property(fc.integer({ min: limitMs + 1, max: 10 * 86_400_000 }), fc.boolean(), (offsetMs, ahead) => {
        const now = new Date(NOW.getTime() + (ahead ? offsetMs : -offsetMs));
        expect(failureOf(inputOf(signed, { now }))).toBe('timestamp_out_of_window');
      }),
      RUNS,
    );
  });

  it('rotation: old and new secrets both accepted while both configured; a wrong or retired secret rejected', () => {
    const secretArb = fc
      .uint8Array({ minLength: 32, maxLength: 32 })
      .map((bytes) => `whsec_${Buffer.from(bytes).toString('base64')}`);
    fc.assert(
      fc.property(
        fc.uniqueArray(secretArb, { minLength: 3, maxLength: 3 }),
        bodyArb,
        ([fresh, old, wrong], body) => {
          const during = [fresh as string, old as string];
          // The sender signs with both during the rotation, or with either alone.
          for (const signedWith of [during, [fresh as string], [old as string]]) {
            expect(
              failureOf(inputOf(sign({ body, secrets: signedWith }), { secrets: during })),
            ).toBeUndefined();
          }
          expect(failureOf(inputOf(sign({ body, secrets: [wrong as string] }), { secrets: during }))).toBe(
            'signature_mismatch',
          );
          // After the rotation the old secret is retired.
          expect(
            failureOf(inputOf(sign({ body, secrets: [old as string] }), { secrets: [fresh as string] })),
          ).toBe('signature_mismatch');
          expect(
            failureOf(inputOf(sign({ body, secrets: during }), { secrets: [fresh as string] })),
          ).toBeUndefined();
        },
      ),
      RUNS,
    );
  });
});
