import { Agent, type IncomingHttpHeaders, request } from 'node:http';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../functions/composition/local/stack';
import {
  MAX_REQUEST_BODY_BYTES,
  matchRoute,
  ROUTES,
  type RouteAuth,
  type RouteDefinition,
} from '../../functions/definitions';
import { CALLER_SCOPES, OPERATOR_ROLES } from '../../functions/domain/access/principals';
import { ERROR_STATUS } from '../../functions/handlers/middleware/errors';
import { OPERATION_SCHEMAS, type OperationSchemas } from '../../functions/schemas/operations';
import { TEST_REVIEWERS } from '../support/change-requests';
import { demoCatalogWithoutRatePolicy, startDemoStack } from '../support/demo-stack';
import { volume } from '../support/volume';

const demo = demoCatalogWithoutRatePolicy();
/** A caller key with every scope (the fuzz is about input, not authorization: docs/security.md has its tests). */
const API_KEY = 'key_fuzz_0123456789abcdef';
const STOREFRONT_KEY = 'key_fuzz_store_0123456789abcdef';
/** An operator holding every role, for the same reason. */
const ADMIN_TOKEN = 'adm_fuzz_0123456789abcdef';

/**
 * Runs per route and kind of hostile input: 300 with `CI=true`, 100 in a local `npm test` (`FUZZ_RUNS` overrides);
 * the oversized bodies get their own, much smaller, count.
 */
const RUNS = volume('FUZZ_RUNS', { local: 100, ci: 300 });
const LARGE_BODY_RUNS = 8;

let stack: LocalStack;
let origin: URL;
const agent = new Agent({ keepAlive: true, maxSockets: 32 });

// ---------------------------------------------------------------------------------------------------------
// HTTP
// ---------------------------------------------------------------------------------------------------------

interface Reply {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

interface RawRequest {
  readonly method: string;
  /** The request target exactly as sent (path and query, not normalised). */
  readonly target: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | Buffer;
  /** A fresh connection (for bodies the gateway refuses half-way). */
  readonly fresh?: boolean;
}

/** node:http rather than fetch: fetch normalises the target (`..`, `%2e`), which is what is being fuzzed. */
const send = (raw: RawRequest): Promise<Reply> =>
  new Promise((resolve, reject) => {
    let answered = false;
    const outgoing = request(
      {
        host: origin.hostname,
        port: origin.port,
        method: raw.method,
        path: raw.target,
        headers: {
          ...(raw.body === undefined ? {} : { 'content-length': String(Buffer.byteLength(raw.body)) }),
          ...raw.headers,
        },
        agent: raw.fresh ? false : agent,
      },
      (response) => {
        answered = true;
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            text: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    // A refused oversized body may reset the connection after the answer arrived; only earlier errors count.
    outgoing.on('error', (error) => {
      if (!answered) reject(error);
    });
    outgoing.end(raw.body);
  });

/** The partner key of an endpoint registered before the run (partner routes). */
let partnerKey = '';

const credentials = (auth: RouteAuth): Record<string, string> => {
  if (auth === 'api_key') return { 'x-api-key': API_KEY };
  if (auth === 'admin') return { authorization: `Bearer ${ADMIN_TOKEN}` };
  if (auth === 'partner') return { authorization: `Bearer ${partnerKey}` };
  return {};
};

const preview = (value: string | Buffer | undefined, max = 300): string => {
  if (value === undefined) return '(no body)';
  const text = typeof value === 'string' ? value : `<${value.length} bytes> ${value.toString('base64')}`;
  return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
};

const describeExchange = (raw: RawRequest, reply: Reply): string =>
  `${raw.method} ${preview(raw.target, 200)} headers=${JSON.stringify(raw.headers ?? {})} body=${preview(
    raw.body,
  )}\n→ ${reply.status} content-type=${String(reply.headers['content-type'])} x-trace-id=${String(
    reply.headers['x-trace-id'],
  )} body=${preview(reply.text, 500)}`;

// ---------------------------------------------------------------------------------------------------------
// C6
// ---------------------------------------------------------------------------------------------------------

const isErrorCode = (code: unknown): code is keyof typeof ERROR_STATUS =>
  typeof code === 'string' && Object.hasOwn(ERROR_STATUS, code);

/** What only a leaked stack trace, SDK or driver message would put in a description. */
const LEAKS: readonly RegExp[] = [
  /\bat \S*[/\\]/,
  /\(\/[^)]*:\d+:\d+\)/,
  /Error:/,
  /node_modules/,
  /DynamoDB/,
  // Word-bounded: ULIDs in an echoed id may contain the letters A, W, S in a row.
  /\bAWS\b/,
];

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Throws unless the answer is a C6 error: JSON `{ error, error_description, trace_id }`, matching headers. */
const expectC6 = (raw: RawRequest, reply: Reply): Record<string, unknown> => {
  const context = describeExchange(raw, reply);
  expect(reply.headers['content-type'] ?? '', `Content-Type is JSON\n${context}`).toMatch(
    /^application\/json/,
  );
  let body: unknown;
  try {
    body = JSON.parse(reply.text);
  } catch {
    throw new Error(`the error body is not JSON\n${context}`);
  }
  if (!isObject(body)) throw new Error(`the error body is not an object\n${context}`);
  expect(isErrorCode(body.error), `a known error code\n${context}`).toBe(true);
  if (isErrorCode(body.error)) {
    expect(ERROR_STATUS[body.error], `the status of the code\n${context}`).toBe(reply.status);
  }
  expect(typeof body.error_description, `error_description is a string\n${context}`).toBe('string');
  const description = String(body.error_description);
  expect(description.length, `error_description is not empty\n${context}`).toBeGreaterThan(0);
  for (const leak of LEAKS) {
    expect(leak.test(description), `error_description leaks internals (${leak})\n${context}`).toBe(false);
  }
  expect(typeof body.trace_id, `trace_id is a string\n${context}`).toBe('string');
  expect(reply.headers['x-trace-id'], `trace_id equals X-Trace-Id\n${context}`).toBe(body.trace_id);
  return body;
};

/** Never 5xx; any 4xx is C6; the status is one of `allowed`. */
const expectAnswer = (raw: RawRequest, reply: Reply, allowed: (status: number) => boolean): void => {
  const context = describeExchange(raw, reply);
  expect(reply.status, `never a 5xx\n${context}`).toBeLessThan(500);
  if (reply.status >= 400) expectC6(raw, reply);
  expect(allowed(reply.status), `unexpected status ${reply.status}\n${context}`).toBe(true);
};

const is2xx = (status: number) => status >= 200 && status < 300;
const isRefusal = (status: number) => status >= 400 && status < 500;
/** What a clearly invalid request may get. */
const isInvalidRefusal = (status: number) => [400, 404, 413, 415, 422].includes(status);

// ---------------------------------------------------------------------------------------------------------
// Routes and what they take
// ---------------------------------------------------------------------------------------------------------

const schemasOf = (route: RouteDefinition): OperationSchemas => {
  const schemas = OPERATION_SCHEMAS[route.operation];
  if (!schemas) throw new Error(`no schemas for ${route.operation}`);
  return schemas;
};

const pathParameterNames = (route: RouteDefinition): string[] =>
  [...route.path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] ?? '');

type Schema = NonNullable<OperationSchemas['body']>;

const accepts = (schema: Schema, value: unknown): boolean => schema.safeParse(value).success;

const SKUS = demo.pricelists[0]?.items.map((item) => item.sku_id) ?? [];
const SKU = SKUS[0] ?? 'GAME-STARFALL-PS5';

/** One valid quote of the demo catalog (DE, EUR). */
const VALID_QUOTE = {
  items: [
    { sku_id: SKU, quantity: 1 },
    { sku_id: SKUS[1] ?? SKU, quantity: 2 },
  ],
  region: 'DE',
  currency: 'EUR',
  buyer_type: 'consumer',
} as const;

/** Valid-looking queries to mutate, per operation; an operation not listed starts from nothing. */
const QUERY_BASES: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  getPrice: { sku: SKU, currency: 'EUR', region: 'DE' },
  getLimits: { currency: 'EUR', region: 'DE' },
  getCatalogHistory: { sku: SKU, limit: '5' },
};

/** Valid bodies to mutate, per operation: the operation's example, the demo catalog for an import. */
const bodyBaseOf = (route: RouteDefinition): unknown => {
  if (route.operation === 'quote') return VALID_QUOTE;
  if (route.operation === 'importCatalog') return demo;
  return schemasOf(route).example ?? {};
};

// ---------------------------------------------------------------------------------------------------------
// Hostile values
// ---------------------------------------------------------------------------------------------------------

const LONG_ASCII = 'x'.repeat(10_000);
const LONG_UNICODE = 'ü€😀'.repeat(2_500);

/** Percent sequences that are not valid percent-encoding (or not valid UTF-8 once decoded). */
const BAD_PERCENT = [
  '%',
  '%%',
  '%G1',
  '%zz',
  '%E0%A4',
  '%C3',
  '%ED%A0%80',
  '%FF',
  '%u0041',
  '%0',
  '%%41',
  '%C0%AF',
];

const hostileString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    '-1',
    '0',
    '-0',
    '1.5',
    '10001',
    'NaN',
    'Infinity',
    '-Infinity',
    '1e308',
    '-1e308',
    '1e999',
    '99999999999999999999999',
    '9007199254740993',
    '0x10',
    'null',
    'undefined',
    'true',
    '[]',
    '{}',
    'eur',
    'usd',
    'Eur',
    'ZZZ',
    'XXX',
    'ABCDEF',
    'RUB',
    'ZZ',
    'zz',
    'de',
    'DEU',
    'GAME-DOES-NOT-EXIST',
    '../../etc/passwd',
    '<script>alert(1)</script>',
    "' OR '1'='1",
    '$' + '{jndi:ldap://x}',
    '\u0000',
    '\r\n',
    'ü',
    '😀',
    '١٢٣',
    '\uFEFF',
  ),
  fc.string({ unit: 'grapheme', maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.integer().map(String),
  fc.double().map(String),
  fc.bigInt().map(String),
  fc.constantFrom(LONG_ASCII, LONG_UNICODE),
);

const hostileNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -1, -0.5, 1.5, 10_001, 1e308, -1e308, 2 ** 53 + 2, Number.MAX_VALUE, Number.MIN_VALUE),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
);

const hostileJson: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(null, true, false, [], {}, [null], { $gt: '' }, { __proto__: { admin: true } }),
  hostileNumber,
  hostileString,
  fc.jsonValue({ maxDepth: 3 }),
  fc.array(hostileString, { maxLength: 5 }),
);

/** Names every plain object inherits: a query parameter may be called that too. */
const PROTOTYPE_NAMES: readonly string[] = [
  '__proto__',
  'constructor',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  'propertyIsEnumerable',
  'toLocaleString',
  '__defineGetter__',
  '__lookupSetter__',
];

const unknownKey = fc.oneof(
  fc.constantFrom(
    'unknown',
    'extra',
    'constructor',
    'prototype',
    'toString',
    '',
    ' ',
    'ITEMS',
    'é',
    LONG_ASCII,
  ),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 20 }),
);

// ---------------------------------------------------------------------------------------------------------
// Query strings
// ---------------------------------------------------------------------------------------------------------

/** An already encoded query component: properly encoded hostile text or broken percent sequences. */
const encodedComponent: fc.Arbitrary<string> = fc.oneof(
  hostileString.filter((value) => value.length < 5_000 || value === LONG_ASCII).map(encodeURIComponent),
  fc.constantFrom(...BAD_PERCENT),
  fc
    .tuple(fc.string({ maxLength: 8 }), fc.constantFrom(...BAD_PERCENT))
    .map(([text, bad]) => `${encodeURIComponent(text)}${bad}`),
);

interface QueryCase {
  readonly query: string;
}

const queryArb = (route: RouteDefinition): fc.Arbitrary<QueryCase> => {
  const schema = schemasOf(route).query;
  const base = QUERY_BASES[route.operation] ?? {};
  const names = [...new Set([...Object.keys(schema?.shape ?? {}), ...Object.keys(base)])];
  const name = fc.oneof(
    ...(names.length > 0 ? [fc.constantFrom(...names)] : []),
    unknownKey.map(encodeURIComponent),
    fc.constantFrom('sku[]', 'currency[0]', 'a.b', ...BAD_PERCENT),
    ...(PROTOTYPE_NAMES.length > 0 ? [fc.constantFrom(...PROTOTYPE_NAMES)] : []),
  );
  return fc
    .record({
      kept: fc.subarray(Object.keys(base)),
      fuzzed: fc.array(fc.tuple(name, encodedComponent), { minLength: 1, maxLength: 5 }),
    })
    .map(({ kept, fuzzed }) => {
      // At most one 10 000-character component per request: node's request line limit is 16 KiB.
      let longUsed = false;
      const capped = (component: string): string => {
        if (component.length <= 1_000) return component;
        if (longUsed) return 'x';
        longUsed = true;
        return component;
      };
      const pairs = [
        ...kept.map((key) => `${encodeURIComponent(key)}=${encodeURIComponent(base[key] ?? '')}`),
        ...fuzzed.map(([key, value]) => `${capped(key)}=${capped(value)}`),
      ];
      return { query: pairs.join('&') };
    });
};

/** The query parameters the handler will see, as API Gateway delivers them (last value wins, own keys). */
const parametersOf = (target: string): Record<string, string> =>
  Object.fromEntries(new URL(target, 'http://localhost').searchParams);

// ---------------------------------------------------------------------------------------------------------
// Path parameters
// ---------------------------------------------------------------------------------------------------------

const CROCKFORD = /^[0-9A-HJKMNP-TV-Z]{26}$/;

const segmentArb: fc.Arbitrary<string> = fc.oneof(
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).map(encodeURIComponent),
  fc.stringMatching(CROCKFORD).map((id) => `rcpt_${id}`),
  fc.stringMatching(CROCKFORD).map((id) => `q_${id}`),
  fc.stringMatching(CROCKFORD).map((id) => `rcpt_${id.toLowerCase()}`),
  fc.constantFrom(
    '..',
    '.',
    '%2e%2e',
    '%2E%2E%2F%2E%2E%2Fkeys',
    '..%2f..%2fadmin%2fcatalog%2fexport',
    '..%5C..%5Cwindows',
    '%2F',
    '%00',
    'rcpt_',
    `rcpt_${'0'.repeat(25)}`,
    `rcpt_${'0'.repeat(27)}`,
    `rcpt_${'I'.repeat(26)}`,
    '../../keys',
    '../admin/catalog/export',
    'a/b',
    '%252e%252e',
    LONG_ASCII,
    `rcpt_${'Z'.repeat(9_000)}`,
    encodeURIComponent('ü'.repeat(2_000)),
  ),
  fc.constantFrom(...BAD_PERCENT),
);

// ---------------------------------------------------------------------------------------------------------
// Bodies
// ---------------------------------------------------------------------------------------------------------

interface BodyCase {
  readonly label: string;
  readonly body: string | Buffer;
  readonly contentType: string;
  /** The body is schema-valid by construction but refers to nothing that exists (unknown SKU, quote…). */
  readonly domainInvalid?: boolean;
}

const json = (label: string, value: unknown): BodyCase => ({
  label,
  body: JSON.stringify(value),
  contentType: 'application/json',
});

type Path = readonly (string | number)[];

/** Every path to a value of a JSON tree (capped, the demo catalog is large). */
const pathsOf = (value: unknown, prefix: Path = [], out: Path[] = []): Path[] => {
  if (out.length > 2_000) return out;
  out.push(prefix);
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) pathsOf(item, [...prefix, index], out);
  } else if (isObject(value))
    for (const [key, item] of Object.entries(value)) pathsOf(item, [...prefix, key], out);
  return out;
};

const clone = <T>(value: T): T => structuredClone(value);

/** `value` with the node at `at` replaced (`replace`), removed (`remove`) or given an extra key (`extra`). */
const mutate = (
  root: unknown,
  at: Path,
  mutation:
    | { kind: 'replace'; value: unknown }
    | { kind: 'remove' }
    | { kind: 'extra'; key: string; value: unknown },
): unknown => {
  if (at.length === 0) {
    if (mutation.kind === 'replace') return mutation.value;
    if (mutation.kind === 'extra' && isObject(root)) return { ...root, [mutation.key]: mutation.value };
    return mutation.kind === 'remove' ? undefined : root;
  }
  const copy = clone(root);
  let parent: unknown = copy;
  for (const segment of at.slice(0, -1)) parent = (parent as Record<string | number, unknown>)[segment];
  const last = at[at.length - 1] as string | number;
  const container = parent as Record<string | number, unknown>;
  if (mutation.kind === 'replace') container[last] = mutation.value;
  else if (mutation.kind === 'remove') {
    if (Array.isArray(container) && typeof last === 'number') container.splice(last, 1);
    else delete container[last];
  } else {
    const target = container[last];
    if (isObject(target)) target[mutation.key] = mutation.value;
    else container[last] = { [mutation.key]: mutation.value };
  }
  return copy;
};

const MALFORMED_JSON = [
  '{',
  '}',
  '{"items":',
  '{"a":}',
  "{'items':[]}",
  '{"items":[],}',
  '{items:[]}',
  'undefined',
  'NaN',
  '{"quantity":NaN}',
  '{"quantity":Infinity}',
  '{"quantity":-Infinity}',
  '{"quantity":0x10}',
  '\uFEFF{}',
  '{"a":"\\uD800"}',
  '{"a":"\\x41"}',
  '[1,2',
  '"unterminated',
  '// comment\n{}',
  '{"a":1}{"b":2}',
  '\u0000',
  ' ',
  'null null',
];

/** Raw JSON texts a serializer never produces: numbers beyond a double, duplicate keys. */
const rawNumberBodies = (base: unknown): BodyCase[] => {
  const text = JSON.stringify(base);
  return ['1e999', '-1e999', '1e308', '1E+308', '123456789012345678901234567890', '-0', '1.0000000000000001']
    .map((number) => text.replace(/"quantity":\d+/, `"quantity":${number}`))
    .concat([text.replace(/^\{/, '{"items":1,'), text.replace(/\}$/, ',"region":"de"}')])
    .filter((variant) => variant !== text)
    .map((body) => ({ label: 'raw number / duplicate key', body, contentType: 'application/json' }));
};

const deepBody = fc
  .record({ depth: fc.integer({ min: 100, max: 40_000 }), kind: fc.constantFrom('object', 'array', 'mixed') })
  .map(({ depth, kind }): BodyCase => {
    const open = kind === 'object' ? '{"a":' : kind === 'array' ? '[' : '{"items":[';
    const close = kind === 'object' ? '}' : kind === 'array' ? ']' : ']}';
    return {
      label: `nested ${kind} ×${depth}`,
      body: `${open.repeat(depth)}1${close.repeat(depth)}`,
      contentType: 'application/json',
    };
  });

const binaryBody = fc
  .record({
    bytes: fc.uint8Array({ minLength: 1, maxLength: 4_096 }),
    contentType: fc.constantFrom(
      'application/octet-stream',
      'image/png',
      'multipart/form-data; boundary=xyz',
      'application/x-www-form-urlencoded',
      'text/plain',
      'application/xml',
      'application/json; charset=latin1',
      'application/json',
    ),
  })
  .map(({ bytes, contentType }): BodyCase => ({ label: 'binary', body: Buffer.from(bytes), contentType }));

/** Bodies that break the shape of the whole request. */
const shapelessBody: fc.Arbitrary<BodyCase> = fc.oneof(
  fc
    .constantFrom(...MALFORMED_JSON)
    .map((body): BodyCase => ({ label: 'malformed', body, contentType: 'application/json' })),
  fc
    .jsonValue()
    .map((value) => JSON.stringify(value).slice(0, -1))
    .filter((text) => {
      try {
        JSON.parse(text);
        return false;
      } catch {
        return true;
      }
    })
    .map((body): BodyCase => ({ label: 'truncated', body, contentType: 'application/json' })),
  fc
    .oneof(
      fc.array(hostileJson, { maxLength: 5 }),
      hostileNumber,
      hostileString,
      fc.constantFrom<unknown>(null, true, false),
    )
    .map((value) => json('not an object', value)),
  fc.dictionary(unknownKey, hostileJson, { maxKeys: 6 }).map((value) => json('random object', value)),
  deepBody,
  binaryBody,
  fc.constant<BodyCase>({ label: 'empty', body: '', contentType: 'application/json' }),
);

/** A valid base with one field made hostile, removed, or an unknown field added. */
const mutatedBody = (base: unknown): fc.Arbitrary<BodyCase> => {
  const paths = pathsOf(base);
  return fc
    .record({
      at: fc.constantFrom(...paths),
      mutation: fc.oneof(
        hostileJson.map((value) => ({ kind: 'replace' as const, value })),
        fc.constant({ kind: 'remove' as const }),
        fc.record({ kind: fc.constant('extra' as const), key: unknownKey, value: hostileJson }),
      ),
    })
    .map(({ at, mutation }) =>
      json(`mutated ${at.join('.')} (${mutation.kind})`, mutate(base, at, mutation)),
    );
};

const lines = (count: number, quantity: unknown = 1) =>
  Array.from({ length: count }, (_, index) => ({ sku_id: SKUS[index % SKUS.length] ?? SKU, quantity }));

/** The basket limits of C22 and the quantity rules, on an otherwise valid quote (or refund). */
const basketLimitBody = (base: Record<string, unknown>, key: 'items' | 'lines'): fc.Arbitrary<BodyCase> =>
  fc.oneof(
    fc
      .constantFrom<unknown>(0, -1, 10_001, 1.5, 1e308, -1e308, '1', 'NaN', null, true, [1], { n: 1 })
      .map((quantity) =>
        json(`quantity ${JSON.stringify(quantity)}`, { ...base, [key]: lines(1, quantity) }),
      ),
    fc
      .integer({ min: 101, max: 150 })
      .map((count) => json(`${count} lines`, { ...base, [key]: lines(count) })),
    fc.constant(json('no lines', { ...base, [key]: [] })),
    fc
      .constantFrom('eur', 'Eur', 'E', 'EURO12', '', 'usd')
      .map((currency) => json(`currency ${currency}`, { ...base, currency })),
    fc
      .constantFrom('de', 'D', 'DEU', '**', '')
      .map((region) => json(`region ${region}`, { ...base, region })),
  );

const quoteId = fc.stringMatching(CROCKFORD).map((id) => `q_${id}`);
const receiptId = fc.stringMatching(CROCKFORD).map((id) => `rcpt_${id}`);
const signature = fc.base64String({ minLength: 4, maxLength: 88 }).map((text) => `v1=${text}`);
const unknownSku = fc.stringMatching(/^[A-Za-z0-9_.:-]{1,40}$/).map((id) => `NOPE-${id}`.slice(0, 128));

/**
 * Schema-valid bodies that refer to nothing that exists (so they must be refused, and store nothing):
 * unknown SKUs, currencies and regions, currencies a region does not offer; quotes and receipts that were
 * never issued. Only for operations where such a body exists.
 */
const domainInvalidBody = (route: RouteDefinition): fc.Arbitrary<BodyCase> | undefined => {
  const mark = (label: string, value: unknown): BodyCase => ({ ...json(label, value), domainInvalid: true });
  if (route.operation === 'quote') {
    return fc.oneof(
      fc
        .array(fc.record({ sku_id: unknownSku, quantity: fc.integer({ min: 1, max: 10_000 }) }), {
          minLength: 1,
          maxLength: 5,
        })
        .map((items) => mark('unknown SKUs', { ...VALID_QUOTE, items })),
      fc
        .constantFrom('ZZZ', 'XXX', 'ABCDE', 'RUB', 'JPY', 'USDT', 'ETH', 'XAU', 'AAAAA')
        .map((currency) => mark(`currency ${currency} in DE`, { ...VALID_QUOTE, currency })),
      fc
        .constantFrom('ZZ', 'XX', 'AQ', 'RU')
        .map((region) => mark(`region ${region}`, { ...VALID_QUOTE, region })),
    );
  }
  if (route.operation === 'commit') {
    return fc.record({ quote_id: quoteId, signature }).map((body) => mark('a quote never issued', body));
  }
  if (route.operation === 'refund') {
    return fc
      .record({
        receipt_id: receiptId,
        kind: fc.constantFrom('return', 'chargeback'),
        lines: fc.array(
          fc.record({ sku_id: fc.constantFrom(...SKUS), quantity: fc.integer({ min: 1, max: 10_000 }) }),
          {
            minLength: 1,
            maxLength: 3,
          },
        ),
      })
      .map((body) => mark('a receipt never issued', body));
  }
  return undefined;
};

const bodyArb = (route: RouteDefinition): fc.Arbitrary<BodyCase> => {
  const base = bodyBaseOf(route);
  const arbitraries: fc.Arbitrary<BodyCase>[] = [shapelessBody, mutatedBody(base), mutatedBody(base)];
  if (isObject(base)) {
    const raws = rawNumberBodies(base);
    if (raws.length > 0) arbitraries.push(fc.constantFrom(...raws));
    if (Array.isArray(base.items)) arbitraries.push(basketLimitBody(base, 'items'));
    if (Array.isArray(base.lines)) arbitraries.push(basketLimitBody(base, 'lines'));
  }
  const domain = domainInvalidBody(route);
  if (domain) arbitraries.push(domain, domain);
  return fc.oneof(...arbitraries);
};

// ---------------------------------------------------------------------------------------------------------
// The idempotency keys of the fuzzed POSTs
// ---------------------------------------------------------------------------------------------------------

/** Used again at the end with a valid quote: a refused request must not have claimed it. */
const REUSED_KEY = 'fuzz-reused-key-0001';
const idempotencyKey = fc.oneof(
  fc.uuid().map((uuid) => `fuzz-${uuid}`),
  fc.constantFrom(REUSED_KEY, 'fuzz-shared-a', 'fuzz-shared-b'),
);
let reusedKeyUsedOnQuote = 0;

// ---------------------------------------------------------------------------------------------------------
// State
// ---------------------------------------------------------------------------------------------------------

const catalogRevision = async (): Promise<string> => {
  const raw: RawRequest = {
    method: 'GET',
    target: '/admin/catalog/export',
    headers: credentials('admin'),
  };
  const reply = await send(raw);
  expect(reply.status, describeExchange(raw, reply)).toBe(200);
  return String(reply.headers['x-catalog-revision']);
};

const itemsOf = async (table: 'quotes' | 'receipts' | 'idempotency'): Promise<Record<string, unknown>[]> => {
  const result = await stack.clients.documents.send(
    new ScanCommand({ TableName: stack.resources.tableNames[table], ConsistentRead: true }),
  );
  return (result.Items ?? []) as Record<string, unknown>[];
};

let revisionBefore = '';
const runCounts: Record<string, number> = {};
const count = (label: string) => {
  runCounts[label] = (runCounts[label] ?? 0) + 1;
};

beforeAll(async () => {
  stack = await startDemoStack({
    apiKey: STOREFRONT_KEY,
    adminToken: ADMIN_TOKEN,
    callerKeys: [{ key: API_KEY, tenant: 'demo', scopes: CALLER_SCOPES }],
    admins: [{ name: 'admin', token: ADMIN_TOKEN, roles: OPERATOR_ROLES }, ...TEST_REVIEWERS],
  });
  origin = new URL(stack.url);
  revisionBefore = await catalogRevision();
  const registered = await send({
    method: 'POST',
    target: '/webhooks/endpoints',
    headers: { ...credentials('admin'), 'content-type': 'application/json' },
    body: JSON.stringify({ url: 'http://127.0.0.1:9/webhooks/v1', tenant: 'fuzz-partner' }),
  });
  expect(registered.status).toBe(201);
  partnerKey = String((JSON.parse(registered.text) as { partner_key: string }).partner_key);
}, 120_000);

afterAll(async () => {
  agent.destroy();
  await stack?.stop();
  console.info(`fuzz requests sent per property: ${JSON.stringify(runCounts)}`);
});

// ---------------------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------------------

const concretePath = (route: RouteDefinition, segment?: string): string =>
  route.path.replace(/\{[^}]+\}/g, segment ?? 'x');

describe('hostile requests on every route (local stack, demo catalog)', () => {
  it('walks a route table whose operations all have schemas', () => {
    expect(ROUTES.length).toBeGreaterThan(0);
    for (const route of ROUTES) expect(OPERATION_SCHEMAS[route.operation], route.operation).toBeDefined();
  });

  for (const route of ROUTES) {
    const schemas = OPERATION_SCHEMAS[route.operation];
    if (!schemas) continue;
    const params = pathParameterNames(route);
    const label = `${route.method} ${route.path}`;
    const hasInput = Boolean(schemas.query ?? schemas.body ?? schemas.path) || params.length > 0;
    const successStatuses = [schemas.response.status, ...(schemas.otherResponses ?? []).map((r) => r.status)];

    if (!hasInput) {
      it(`${label}: takes no input, so any query string gets its usual answer`, async () => {
        await fc.assert(
          fc.asyncProperty(queryArb(route), async ({ query }) => {
            count(`${label} query`);
            const raw: RawRequest = {
              method: route.method,
              target: `${route.path}?${query}`,
              headers: credentials(route.auth),
            };
            const reply = await send(raw);
            expectAnswer(raw, reply, (status) => successStatuses.includes(status));
          }),
          { numRuns: route.operation === 'health' ? 50 : RUNS },
        );
      });
      continue;
    }

    if (schemas.query) {
      const query = schemas.query;
      it(`${label}: hostile query strings are refused in the C6 shape, never 5xx`, async () => {
        await fc.assert(
          fc.asyncProperty(queryArb(route), async ({ query: text }) => {
            count(`${label} query`);
            const target = `${concretePath(route)}?${text}`;
            const raw: RawRequest = { method: route.method, target, headers: credentials(route.auth) };
            const reply = await send(raw);
            const valid = accepts(query, parametersOf(target));
            expectAnswer(
              raw,
              reply,
              valid ? (status) => is2xx(status) || isRefusal(status) : (s) => s === 400,
            );
          }),
          { numRuns: RUNS },
        );
      });
    }

    if (params.length > 0) {
      it(`${label}: hostile path parameters are refused in the C6 shape, never 5xx`, async () => {
        await fc.assert(
          fc.asyncProperty(segmentArb, async (segment) => {
            count(`${label} path`);
            const target = concretePath(route, segment);
            const raw: RawRequest = { method: route.method, target, headers: credentials(route.auth) };
            const reply = await send(raw);
            const pathname = new URL(target, 'http://localhost').pathname;
            const { match } = matchRoute(route.method, pathname);
            if (match?.route.path !== route.path) {
              // The target normalises to another route (or none): whatever it answers, never a 5xx.
              expectAnswer(raw, reply, (status) => status < 500);
              return;
            }
            const valid = schemas.path ? accepts(schemas.path, match.pathParameters) : true;
            expectAnswer(raw, reply, valid ? (status) => is2xx(status) || status === 404 : (s) => s === 400);
          }),
          { numRuns: RUNS },
        );
      });
    }

    if (schemas.body) {
      const body = schemas.body;
      it(`${label}: hostile bodies are refused in the C6 shape, never 5xx`, async () => {
        await fc.assert(
          fc.asyncProperty(bodyArb(route), idempotencyKey, async (sample, key) => {
            let parsed: unknown;
            let isJson = typeof sample.body === 'string' && sample.body.length > 0;
            try {
              parsed = isJson ? JSON.parse(String(sample.body)) : undefined;
            } catch {
              isJson = false;
            }
            // A route whose body fields are all optional takes an empty or absent body as `{}` (POST …/rotate with
            // no options).
            if ((sample.body === '' || sample.body === undefined) && accepts(body, {})) {
              isJson = true;
              parsed = {};
            }
            // A generated body the schema happens to accept could succeed and write: only the domain-invalid
            // ones (built to refer to nothing) are sent when schema-valid.
            const schemaValid = isJson && accepts(body, parsed);
            fc.pre(!schemaValid || sample.domainInvalid === true);
            count(`${label} body`);
            if (route.operation === 'quote' && key === REUSED_KEY) reusedKeyUsedOnQuote += 1;
            const raw: RawRequest = {
              method: route.method,
              target: concretePath(route),
              headers: {
                ...credentials(route.auth),
                'content-type': sample.contentType,
                'idempotency-key': key,
              },
              body: sample.body,
            };
            const reply = await send(raw);
            expectAnswer(
              raw,
              reply,
              schemaValid ? (s) => [400, 404, 409, 422].includes(s) : isInvalidRefusal,
            );
            if (!schemaValid && reply.status !== 413 && reply.status !== 415) {
              expect(reply.status, `a schema-invalid body is a 400\n${describeExchange(raw, reply)}`).toBe(
                400,
              );
            }
          }),
          { numRuns: RUNS, maxSkipsPerRun: 1_000 },
        );
      });

      it(`${label}: bodies over 256 KiB answer 413 payload_too_large`, async () => {
        await fc.assert(
          fc.asyncProperty(
            fc.constantFrom(256 * 1024 + 1, 300_000, 1024 * 1024),
            fc.constantFrom('json-string', 'json-array', 'garbage'),
            idempotencyKey,
            async (size, shape, key) => {
              count(`${label} large body`);
              const payload =
                shape === 'json-string'
                  ? JSON.stringify({ padding: 'x'.repeat(size) })
                  : shape === 'json-array'
                    ? `[${'1,'.repeat(Math.ceil(size / 2))}1]`
                    : Buffer.alloc(size, 0xab);
              const raw: RawRequest = {
                method: route.method,
                target: concretePath(route),
                headers: {
                  ...credentials(route.auth),
                  'content-type': shape === 'garbage' ? 'application/octet-stream' : 'application/json',
                  'idempotency-key': key,
                },
                body: payload,
                fresh: true,
              };
              const reply = await send(raw);
              expectAnswer(raw, reply, (status) => status === 413);
              expect(expectC6(raw, reply).error).toBe('payload_too_large');
            },
          ),
          { numRuns: LARGE_BODY_RUNS },
        );
      });

      it(`${label}: malformed Idempotency-Key headers are refused in the C6 shape`, async () => {
        for (const key of ['x'.repeat(256), ' leading', 'trailing ', '\t', 'caf\u00e9']) {
          const raw: RawRequest = {
            method: route.method,
            target: concretePath(route),
            headers: {
              ...credentials(route.auth),
              'content-type': 'application/json',
              'idempotency-key': key,
            },
            body: '{"not":"valid"}',
          };
          const reply = await send(raw);
          expectAnswer(raw, reply, (status) => status === 400);
        }
      });
    }
  }
});

describe('query parameters named like Object.prototype members, on every route', () => {
  for (const route of ROUTES) {
    it(`${route.method} ${route.path}: never a 5xx`, async () => {
      const bodySchema = OPERATION_SCHEMAS[route.operation]?.body;
      for (const name of PROTOTYPE_NAMES) {
        const raw: RawRequest = {
          method: route.method,
          target: `${concretePath(route)}?${name}=1`,
          headers: {
            ...credentials(route.auth),
            'content-type': 'application/json',
            'idempotency-key': 'fuzz-proto',
          },
          // `{}`, unless it is a whole valid request of the route (its fields all optional): then a body it refuses,
          // so this probe writes nothing.
          ...(route.method === 'POST' ? { body: bodySchema && accepts(bodySchema, {}) ? '[]' : '{}' } : {}),
        };
        const reply = await send(raw);
        expectAnswer(raw, reply, (status) => status < 500);
      }
    });
  }
});

describe('a 10 000-character unicode query value (percent-encoded, ~50 KB target)', () => {
  for (const route of ROUTES.filter((candidate) => OPERATION_SCHEMAS[candidate.operation]?.query)) {
    it(`${route.method} ${route.path}: refused in the C6 shape`, async () => {
      const raw: RawRequest = {
        method: route.method,
        target: `${concretePath(route)}?sku=${encodeURIComponent(LONG_UNICODE)}`,
        headers: credentials(route.auth),
      };
      const reply = await send(raw);
      // Over the HTTP parser's header limit (16 KiB): 431 request_header_fields_too_large, in the C6 shape.
      expectAnswer(raw, reply, (status) => status === 431);
    });
  }
});

// ---------------------------------------------------------------------------------------------------------
// Oversized numbers (bounded decimal input)
// ---------------------------------------------------------------------------------------------------------

/** Where the digits go in a body template (a JSON string's content, or a JSON number). */
const DIGITS = '<<DIGITS>>';

/** Every way a number can be too big: a huge integer part, a huge fraction, and as many digits as the body limit lets through. */
type Oversize = 'integer part' | 'fraction' | 'body-limit digits';
const OVERSIZES: readonly Oversize[] = ['integer part', 'fraction', 'body-limit digits'];

/** `template` with `DIGITS` replaced by a number of kind `size`; the body-limit one fills the body to just under 256 KiB. */
const oversized = (template: string, size: Oversize): string => {
  const digits =
    size === 'integer part'
      ? `1${'0'.repeat(40)}`
      : size === 'fraction'
        ? `0.${'1'.repeat(40)}`
        : `9${'8'.repeat(MAX_REQUEST_BODY_BYTES - Buffer.byteLength(template) + DIGITS.length - 2)}`;
  const body = template.replace(DIGITS, digits);
  expect(Buffer.byteLength(body)).toBeLessThanOrEqual(MAX_REQUEST_BODY_BYTES);
  return body;
};

interface OversizedCase {
  readonly label: string;
  readonly method: 'POST';
  readonly target: string;
  readonly auth: RouteAuth;
  /** A JSON body with `DIGITS` where the number goes. */
  readonly template: string;
  /** The path the 400 must name, as the error mapping renders it. */
  readonly path: string;
}

/** `value` with the node at `at` replaced by `DIGITS` as a JSON string (`quoted`) or a raw JSON number. */
const templateOf = (value: unknown, at: Path, quoted: boolean): string => {
  const marker = '__oversized_marker__';
  const text = JSON.stringify(mutate(value, at, { kind: 'replace', value: marker }));
  return text.replace(`"${marker}"`, quoted ? `"${DIGITS}"` : DIGITS);
};

const renderedPath = (at: Path): string =>
  at.reduce<string>(
    (text, segment) => (typeof segment === 'number' ? `${text}[${segment}]` : `${text}.${segment}`),
    '$',
  );

/** A failed union (an override's `price_or_markup`) names its own path, not the field inside it. */
const reportedPath = (at: Path): string => {
  const union = at.indexOf('price_or_markup');
  return renderedPath(union >= 0 ? at.slice(0, union + 1) : at);
};

/** One path per decimal field of the demo catalog (its first occurrence; product attributes are free text). */
const catalogDecimalPaths = (): Path[] => {
  const seen = new Set<string>();
  return pathsOf(demo).filter((at) => {
    let node: unknown = demo;
    for (const segment of at) node = (node as Record<string | number, unknown>)[segment];
    if (typeof node !== 'string' || !/^-?(0|[1-9]\d*)(\.\d+)?$/.test(node) || at.includes('attributes'))
      return false;
    const field = at.filter((segment) => typeof segment === 'string').join('.');
    if (seen.has(field)) return false;
    seen.add(field);
    return true;
  });
};

const VALID_REFUND = {
  receipt_id: 'rcpt_01JQ4S6T1X5V8R2W3Y4Z5A6B7D',
  kind: 'return',
  lines: [{ sku_id: SKU, quantity: 1 }],
} as const;

/** A change request takes `effective_from` beside its payload, not in it. */
const { effective_from: _effectiveFrom, ...DEMO_PAYLOAD } = demo;

const QUOTE_WITH_FEE = { ...VALID_QUOTE, checkout_fees: [{ kind: 'service', amount: '1.50' }] };

const oversizedCases = (): OversizedCase[] => {
  const post = (
    label: string,
    target: string,
    auth: RouteAuth,
    value: unknown,
    at: Path,
    quoted: boolean,
    reported: (at: Path) => string = renderedPath,
  ): OversizedCase => ({
    label,
    method: 'POST',
    target,
    auth,
    template: templateOf(value, at, quoted),
    path: reported(at),
  });
  const catalog = catalogDecimalPaths();
  return [
    post(
      'quote: a checkout fee',
      '/pricing/quote',
      'api_key',
      QUOTE_WITH_FEE,
      ['checkout_fees', 0, 'amount'],
      true,
    ),
    post(
      'quote: a quantity (JSON number)',
      '/pricing/quote',
      'api_key',
      VALID_QUOTE,
      ['items', 1, 'quantity'],
      false,
    ),
    post(
      'quote: lock_ttl (JSON number)',
      '/pricing/quote',
      'api_key',
      { ...VALID_QUOTE, lock_ttl: 900 },
      ['lock_ttl'],
      false,
    ),
    post(
      'commit: quote_id',
      '/pricing/commit',
      'api_key',
      { quote_id: `q_${'0'.repeat(26)}`, signature: 'v1=AAAA' },
      ['quote_id'],
      true,
    ),
    post(
      'refund: a quantity (JSON number)',
      '/pricing/refund',
      'api_key',
      VALID_REFUND,
      ['lines', 0, 'quantity'],
      false,
    ),
    post('refund: receipt_id', '/pricing/refund', 'api_key', VALID_REFUND, ['receipt_id'], true),
    ...catalog.map((at) =>
      post(`catalog import: ${at.join('.')}`, '/admin/catalog/import', 'admin', demo, at, true, reportedPath),
    ),
    // The payload of a change request is validated as the document it proposes: paths are the document's.
    ...catalog.map((at) =>
      post(
        `change request: ${at.join('.')}`,
        '/admin/change-requests',
        'admin',
        { kind: 'catalog', payload: DEMO_PAYLOAD, note: 'fuzz' },
        ['payload', ...at],
        true,
        (full) => reportedPath(full.slice(1)),
      ),
    ),
  ];
};

describe('oversized numbers are a 400 naming the field, never a 5xx (bounded decimal input)', () => {
  const cases = oversizedCases();

  it('covers every decimal section of the catalog', () => {
    const sections = new Set(catalogDecimalPaths().map((at) => at[0]));
    for (const section of [
      'pricelists',
      'fx_rates',
      'tax_rules',
      'overrides',
      'promotions',
      'fees',
      'limits',
    ])
      expect(sections, section).toContain(section);
  });

  for (const [index, sample] of cases.entries()) {
    it(`${sample.label}: ${OVERSIZES.join(', ')}`, async () => {
      for (const size of OVERSIZES) {
        count('oversized body');
        const raw: RawRequest = {
          method: sample.method,
          target: sample.target,
          headers: {
            ...credentials(sample.auth),
            'content-type': 'application/json',
            'idempotency-key': `fuzz-oversized-${index}-${size.replaceAll(' ', '-')}`,
          },
          body: oversized(sample.template, size),
        };
        const reply = await send(raw);
        expectAnswer(raw, reply, (status) => status === 400);
        const body = expectC6(raw, reply);
        const context = describeExchange(raw, reply);
        expect(body.error, context).toBe('invalid_request');
        expect(String(body.error_description), context).toContain(`${sample.path}: `);
        // The answer quotes none of the digits back.
        expect(reply.text.length, context).toBeLessThan(4_000);
      }
    });
  }

  it('a 1 MB digit string is over the body limit: 413 payload_too_large, before anything is parsed', async () => {
    const raw: RawRequest = {
      method: 'POST',
      target: '/pricing/quote',
      headers: {
        ...credentials('api_key'),
        'content-type': 'application/json',
        'idempotency-key': 'fuzz-1mb',
      },
      body: templateOf(QUOTE_WITH_FEE, ['checkout_fees', 0, 'amount'], true).replace(
        DIGITS,
        '9'.repeat(1024 * 1024),
      ),
      fresh: true,
    };
    const reply = await send(raw);
    expectAnswer(raw, reply, (status) => status === 413);
    expect(expectC6(raw, reply).error).toBe('payload_too_large');
  });

  it('price query parameters: oversized numbers in any of them are a 400 naming the parameter', async () => {
    const base = QUERY_BASES.getPrice ?? {};
    const names = Object.keys(OPERATION_SCHEMAS.getPrice?.query?.shape ?? {});
    expect(names).toContain('sku');
    // Query values stay under the HTTP parser's 16 KiB request line: 10 000 digits is the largest here.
    // Over any identifier's 128 characters too (a shorter run of digits is a valid SKU, tenant or channel id).
    const values = [`1${'0'.repeat(200)}`, `0.${'1'.repeat(200)}`, `-${'9'.repeat(200)}`, '9'.repeat(10_000)];
    for (const name of names) {
      for (const value of values) {
        count('oversized query');
        const query = new URLSearchParams({ ...base, [name]: value });
        const raw: RawRequest = {
          method: 'GET',
          target: `/catalog/prices?${query.toString()}`,
          headers: credentials('api_key'),
        };
        const reply = await send(raw);
        expectAnswer(raw, reply, (status) => status === 400);
        const body = expectC6(raw, reply);
        expect(body.error).toBe('invalid_request');
        expect(String(body.error_description), describeExchange(raw, reply)).toContain(`query.${name}: `);
      }
    }
  });
});

describe('authentication on every route (C7)', () => {
  const wrongSecret = fc.oneof(
    fc.string({
      unit: fc.integer({ min: 0x21, max: 0x7e }).map((code) => String.fromCharCode(code)),
      maxLength: 64,
    }),
    fc.constantFrom(
      API_KEY.toUpperCase(),
      `${API_KEY} `,
      API_KEY.slice(0, -1),
      ADMIN_TOKEN,
      `${ADMIN_TOKEN}x`,
    ),
  );

  for (const route of ROUTES.filter((candidate) => candidate.auth !== 'none')) {
    const label = `${route.method} ${route.path}`;
    const target = concretePath(route, 'rcpt_01JQ4S6T1X5V8R2W3Y4Z5A6B7D');
    const body = route.method === 'POST' ? '{}' : undefined;
    const exchange = async (headers: Record<string, string>) => {
      const raw: RawRequest = {
        method: route.method,
        target,
        headers: { 'content-type': 'application/json', 'idempotency-key': 'fuzz-auth', ...headers },
        ...(body === undefined ? {} : { body }),
      };
      return { raw, reply: await send(raw) };
    };

    it(`${label}: no credentials → 401`, async () => {
      const { raw, reply } = await exchange({});
      expectAnswer(raw, reply, (status) => status === 401);
      expect(expectC6(raw, reply).error).toBe('unauthorized');
    });

    it(`${label}: wrong credentials → 401`, async () => {
      await fc.assert(
        fc.asyncProperty(wrongSecret, async (secret) => {
          fc.pre(
            secret.trim() !==
              (route.auth === 'admin' ? ADMIN_TOKEN : route.auth === 'partner' ? partnerKey : API_KEY),
          );
          count(`${label} auth`);
          const headers: Record<string, string> =
            route.auth === 'api_key' ? { 'x-api-key': secret } : { authorization: `Bearer ${secret}` };
          const { raw, reply } = await exchange(headers);
          expectAnswer(raw, reply, (status) => status === 401);
          expect(expectC6(raw, reply).error).toBe('unauthorized');
        }),
        { numRuns: 50 },
      );
    });

    if (route.auth === 'admin') {
      it(`${label}: the catalog API key → 403`, async () => {
        const { raw, reply } = await exchange({ 'x-api-key': API_KEY });
        expectAnswer(raw, reply, (status) => status === 403);
        expect(expectC6(raw, reply).error).toBe('forbidden');
        const basic = await exchange({ 'x-api-key': API_KEY, authorization: `Basic ${ADMIN_TOKEN}` });
        expectAnswer(basic.raw, basic.reply, (status) => status === 401 || status === 403);
      });
    }
  }
});

describe('refused requests write nothing (C8)', () => {
  it('left the catalog, quotes, receipts and idempotency records untouched', async () => {
    expect(await catalogRevision()).toBe(revisionBefore);
    expect(await itemsOf('quotes')).toEqual([]);
    expect(await itemsOf('receipts')).toEqual([]);
    expect(await itemsOf('idempotency')).toEqual([]);
  });

  it('a key used only by refused requests still works with a valid body', async () => {
    expect(reusedKeyUsedOnQuote, 'the fuzz sent refused quotes with the reused key').toBeGreaterThan(0);
    const raw: RawRequest = {
      method: 'POST',
      target: '/pricing/quote',
      headers: {
        ...credentials('api_key'),
        'content-type': 'application/json',
        'idempotency-key': REUSED_KEY,
      },
      body: JSON.stringify(VALID_QUOTE),
    };
    const reply = await send(raw);
    expect(reply.status, describeExchange(raw, reply)).toBe(201);
    expect(reply.headers['idempotent-replayed']).toBeUndefined();
    const replay = await send(raw);
    expect(replay.status, describeExchange(raw, replay)).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(JSON.parse(replay.text)).toEqual(JSON.parse(reply.text));
  });
});
