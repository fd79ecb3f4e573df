import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROUTES, type RouteAuth, type RouteDefinition } from '../../../functions/definitions';
import { errorBody, HttpError } from '../../../functions/handlers/middleware/errors';
import { openApiOperation } from '../../../functions/handlers/operations/openapi';
import {
  buildOpenApi,
  type JsonObject,
  type JsonValue,
  OPENAPI_VERSION,
  renderOpenApi,
} from '../../../functions/schemas/openapi';
import { OPERATION_SCHEMAS } from '../../../functions/schemas/operations';
import {
  errorResponseSchema,
  quoteResponseSchema,
  receiptResponseSchema,
} from '../../../functions/schemas/responses';
import { proxyEvent } from '../support/lambda';

const OPENAPI_FILE = resolve(import.meta.dirname, '..', '..', '..', 'docs', 'openapi.json');

const route = (
  method: RouteDefinition['method'],
  path: string,
  operation: string,
  auth: RouteAuth,
): RouteDefinition => ({ method, path, function: 'api', operation, auth, summary: `${operation} summary` });

/** Every operation of the registry on the paths the service will have; ROUTES is a subset while it grows. */
const FULL_ROUTES: readonly RouteDefinition[] = [
  ...ROUTES,
  ...[
    route('GET', '/catalog/limits', 'getLimits', 'api_key'),
    route('POST', '/admin/cache/invalidate', 'invalidateCache', 'admin'),
    route('POST', '/admin/cache/warm', 'warmCache', 'admin'),
    route('POST', '/pricing/quote', 'quote', 'api_key'),
    route('POST', '/pricing/commit', 'commit', 'api_key'),
    route('POST', '/pricing/refund', 'refund', 'api_key'),
    route('GET', '/receipts/{receipt_id}', 'getReceipt', 'api_key'),
    route('GET', '/keys', 'getKeys', 'none'),
    route('GET', '/openapi.json', 'getOpenApi', 'none'),
  ].filter((extra) => !ROUTES.some((known) => known.operation === extra.operation)),
];

const isObject = (value: JsonValue | undefined): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const at = (value: JsonValue | undefined, ...keys: string[]): JsonValue | undefined =>
  keys.reduce<JsonValue | undefined>((current, key) => (isObject(current) ? current[key] : undefined), value);

const objectAt = (value: JsonValue | undefined, ...keys: string[]): JsonObject => {
  const found = at(value, ...keys);
  if (!isObject(found)) throw new Error(`no object at ${keys.join('.')}`);
  return found;
};

/** Every `$ref` in the document, with where it is. */
const refsOf = (value: unknown, where = '$'): { ref: string; where: string }[] => {
  if (Array.isArray(value)) return value.flatMap((item, index) => refsOf(item, `${where}[${index}]`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) =>
    key === '$ref' && typeof inner === 'string' ? [{ ref: inner, where }] : refsOf(inner, `${where}.${key}`),
  );
};

const resolvePointer = (document: JsonObject, pointer: string): JsonValue | undefined => {
  if (!pointer.startsWith('#/')) return undefined;
  const keys = pointer
    .slice(2)
    .split('/')
    .map((key) => key.replaceAll('~1', '/').replaceAll('~0', '~'));
  return at(document, ...keys);
};

const undefinedPaths = (value: unknown, where = '$'): string[] => {
  if (value === undefined) return [where];
  if (Array.isArray(value)) return value.flatMap((item, index) => undefinedPaths(item, `${where}[${index}]`));
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, inner]) => undefinedPaths(inner, `${where}.${key}`));
};

const operationOf = (document: JsonObject, definition: RouteDefinition): JsonObject =>
  objectAt(document, 'paths', definition.path, definition.method.toLowerCase());

/** Each route's requirement names the scopes (caller keys) or roles (operators) of which it needs one. */
const expectedSecurity = (route: RouteDefinition): JsonValue => {
  const byAuth: Readonly<Record<RouteAuth, JsonValue>> = {
    none: [],
    api_key: [{ apiKey: [...(route.scopes ?? [])] }],
    admin: [{ adminBearer: [...(route.roles ?? [])] }, { adminSigV4: [...(route.roles ?? [])] }],
    partner: [{ partnerKey: [] }],
  };
  return byAuth[route.auth];
};

describe.each([
  ['ROUTES', ROUTES],
  ['every registry operation', FULL_ROUTES],
] as const)('buildOpenApi(%s)', (_name, routes: readonly RouteDefinition[]) => {
  const document = buildOpenApi(routes);

  it('is an OpenAPI 3.1 document with info, servers and components', () => {
    expect(document.openapi).toBe(OPENAPI_VERSION);
    expect(OPENAPI_VERSION).toBe('3.1.0');
    expect(at(document, 'info', 'title')).toEqual(expect.any(String));
    expect(at(document, 'info', 'version')).toMatch(/^\d+\.\d+\.\d+$/);
    expect(document.servers).toEqual([{ url: '/' }]);
    expect(Object.keys(objectAt(document, 'components', 'securitySchemes')).sort()).toEqual([
      'adminBearer',
      'adminSigV4',
      'apiKey',
      'partnerKey',
    ]);
    expect(objectAt(document, 'components', 'securitySchemes', 'apiKey')).toMatchObject({
      type: 'apiKey',
      in: 'header',
      name: 'x-api-key',
    });
    expect(objectAt(document, 'components', 'schemas', 'Error')).toMatchObject({
      required: ['error', 'error_description', 'trace_id'],
    });
  });

  it('has exactly one operation per route, with its operationId, summary and security', () => {
    const operations = Object.values(objectAt(document, 'paths')).flatMap((item) =>
      Object.values(isObject(item) ? item : {}),
    );
    expect(operations).toHaveLength(routes.length);
    for (const definition of routes) {
      const operation = operationOf(document, definition);
      expect(operation.operationId).toBe(definition.operation);
      expect(operation.summary).toBe(definition.summary);
      expect(operation.security, definition.operation).toEqual(expectedSecurity(definition));
    }
  });

  it('gives every response a description and a JSON schema, the success one from the registry', () => {
    for (const definition of routes) {
      const operation = operationOf(document, definition);
      const responses = objectAt(operation, 'responses');
      const entry = OPERATION_SCHEMAS[definition.operation];
      expect(Object.keys(responses)).toContain(String(entry?.response.status));
      expect(Object.keys(responses)).toContain('500');
      for (const [status, response] of Object.entries(responses)) {
        const label = `${definition.operation} ${status}`;
        expect(at(response, 'description'), label).toEqual(expect.any(String));
        if (status === String(entry?.response.status) && entry?.response.schema === undefined) {
          // An answer without a body (204) documents none.
          expect(at(response, 'content'), label).toBeUndefined();
          continue;
        }
        expect(at(response, 'content', 'application/json', 'schema', '$ref'), label).toMatch(
          /^#\/components\/schemas\//,
        );
        expect(at(response, 'headers', 'X-Trace-Id'), label).toBeDefined();
        if (['429', '503'].includes(status))
          expect(at(response, 'headers', 'Retry-After'), label).toBeDefined();
        if (Number(status) >= 400 && !(definition.operation === 'deepHealth' && status === '503')) {
          expect(at(response, 'content', 'application/json', 'schema'), label).toEqual({
            $ref: '#/components/schemas/Error',
          });
        }
      }
      if (definition.auth !== 'none') expect(Object.keys(responses)).toEqual(expect.arrayContaining(['401']));
      if (definition.auth === 'api_key')
        expect(Object.keys(responses)).toEqual(expect.arrayContaining(['429']));
    }
  });

  it('takes Idempotency-Key on every POST and marks replays; JSON bodies are required', () => {
    for (const definition of routes) {
      const operation = operationOf(document, definition);
      const parameters = JSON.stringify(operation.parameters);
      const success = at(
        operation,
        'responses',
        String(OPERATION_SCHEMAS[definition.operation]?.response.status),
      );
      expect(parameters).toContain('#/components/parameters/TraceId');
      if (definition.method === 'POST') {
        expect(parameters, definition.operation).toContain('#/components/parameters/IdempotencyKey');
        expect(at(success, 'headers', 'Idempotent-Replayed'), definition.operation).toBeDefined();
        if (OPERATION_SCHEMAS[definition.operation]?.body === undefined) {
          // A POST that takes no body (rotate-secret) documents none.
          expect(operation.requestBody, `${definition.operation} takes no body`).toBeUndefined();
        } else {
          expect(at(operation, 'requestBody', 'required')).toBe(true);
          expect(at(operation, 'requestBody', 'content', 'application/json', 'schema', '$ref')).toMatch(
            /^#\/components\/schemas\//,
          );
        }
        for (const status of ['409', '413', '422']) expect(at(operation, 'responses', status)).toBeDefined();
      } else {
        expect(parameters, definition.operation).not.toContain('IdempotencyKey');
        // Only a PATCH carries a body besides POSTs.
        if (definition.method === 'PATCH') expect(at(operation, 'requestBody', 'required')).toBe(true);
        else expect(operation.requestBody, definition.operation).toBeUndefined();
      }
    }
    const getPrice = routes.find((definition) => definition.operation === 'getPrice');
    if (getPrice) {
      expect(
        at(operationOf(document, getPrice), 'responses', '200', 'headers', 'Cache-Control'),
      ).toBeDefined();
    }
  });

  it('describes query and path parameters from the zod objects', () => {
    for (const definition of routes) {
      const parameters = at(operationOf(document, definition), 'parameters');
      if (!Array.isArray(parameters)) throw new Error(`${definition.operation}: no parameters`);
      const inline = parameters.filter((parameter) => isObject(parameter) && parameter.$ref === undefined);
      for (const parameter of inline) {
        expect(parameter).toMatchObject({
          name: expect.any(String),
          in: expect.stringMatching(/^(query|path)$/),
          required: expect.any(Boolean),
          description: expect.any(String),
          schema: expect.any(Object),
        });
      }
      const names = inline.map((parameter) => `${at(parameter, 'in')}:${at(parameter, 'name')}`);
      if (definition.operation === 'getPrice') {
        expect(names).toEqual(expect.arrayContaining(['query:sku', 'query:currency', 'query:region']));
        expect(inline.find((parameter) => at(parameter, 'name') === 'sku')).toMatchObject({ required: true });
        expect(inline.find((parameter) => at(parameter, 'name') === 'pricelist')).toMatchObject({
          required: false,
        });
      }
      if (definition.operation === 'exportCatalog') {
        // The input side: `revision` is sent as a string even though the handler turns it into a number.
        expect(inline.find((parameter) => at(parameter, 'name') === 'revision')).toMatchObject({
          required: false,
          schema: { type: 'string' },
        });
      }
      if (definition.operation === 'getReceipt') {
        expect(inline).toContainEqual(
          expect.objectContaining({ name: 'receipt_id', in: 'path', required: true }),
        );
      }
    }
  });

  it('resolves every $ref and carries no undefined', () => {
    const refs = refsOf(document);
    expect(refs.length).toBeGreaterThan(0);
    const dangling = refs.filter(({ ref }) => resolvePointer(document, ref) === undefined);
    expect(dangling).toEqual([]);
    expect(undefinedPaths(document)).toEqual([]);
    expect(JSON.parse(JSON.stringify(document))).toEqual(document);
    expect(JSON.stringify(document)).not.toContain('$schema');
  });

  it('uses only patterns that compile as ECMA-262 unicode regular expressions', () => {
    const patterns: string[] = [];
    const collect = (value: unknown): void => {
      if (Array.isArray(value)) value.forEach(collect);
      else if (typeof value === 'object' && value !== null) {
        for (const [key, inner] of Object.entries(value)) {
          if (key === 'pattern' && typeof inner === 'string') patterns.push(inner);
          else collect(inner);
        }
      }
    };
    collect(document);
    expect(patterns.length).toBeGreaterThan(0);
    for (const pattern of patterns) expect(() => new RegExp(pattern, 'u'), pattern).not.toThrow();
  });

  it('is deterministic', () => {
    expect(renderOpenApi(buildOpenApi(routes))).toBe(renderOpenApi(document));
    expect(renderOpenApi(buildOpenApi([...routes].reverse()))).toBe(renderOpenApi(document));
  });
});

describe('the operation registry', () => {
  it('has an entry for every operation of ROUTES', () => {
    const missing = ROUTES.map((definition) => definition.operation).filter(
      (operation) => !Object.hasOwn(OPERATION_SCHEMAS, operation),
    );
    expect(missing).toEqual([]);
  });

  it('makes buildOpenApi throw, naming the operation, for a route it does not know', () => {
    expect(() => buildOpenApi([...ROUTES, route('GET', '/mystery', 'mysteryOperation', 'none')])).toThrow(
      /mysteryOperation \(GET \/mystery\)/,
    );
  });

  it('refuses a route whose path parameters the operation does not describe', () => {
    expect(() => buildOpenApi([route('GET', '/receipts/{id}', 'getReceipt', 'api_key')])).toThrow(
      /path parameters \[id\]/,
    );
    expect(() => buildOpenApi([route('GET', '/health/{component}', 'health', 'none')])).toThrow(
      /path parameters \[component\]/,
    );
  });

  it('refuses two routes with the same method and path', () => {
    expect(() =>
      buildOpenApi([route('GET', '/health', 'health', 'none'), route('GET', '/health', 'getKeys', 'none')]),
    ).toThrow(/two routes for GET \/health/);
  });

  it('has request examples that its body schemas accept', () => {
    const withExamples = Object.entries(OPERATION_SCHEMAS).filter(([, entry]) => entry.example !== undefined);
    expect(withExamples.map(([operation]) => operation)).toEqual(
      expect.arrayContaining(['quote', 'commit', 'refund', 'invalidateCache', 'warmCache']),
    );
    for (const [operation, entry] of withExamples) {
      expect(entry.body?.safeParse(entry.example).success, operation).toBe(true);
    }
  });

  it('rejects wrong request bodies', () => {
    const quote = OPERATION_SCHEMAS.quote?.body;
    const example = OPERATION_SCHEMAS.quote?.example;
    expect(
      quote?.safeParse({ ...(example as object), items: [{ sku_id: 'sku-1', quantity: 0 }] }).success,
    ).toBe(false);
    expect(quote?.safeParse({ ...(example as object), currency: 'euro' }).success).toBe(false);
    expect(quote?.safeParse({ ...(example as object), surprise: true }).success).toBe(false);
    expect(OPERATION_SCHEMAS.invalidateCache?.body?.safeParse({ tag: 'colour', value: 'red' }).success).toBe(
      false,
    );
    expect(
      OPERATION_SCHEMAS.warmCache?.body?.safeParse({ categories: [], currencies: ['EUR'] }).success,
    ).toBe(false);
  });
});

const realisticQuote = {
  quote_id: 'q_01JQ4S6T1X5V8R2W3Y4Z5A6B7C',
  status: 'open',
  items_priced: [
    {
      line: 0,
      sku_id: 'sku-game-1',
      quantity: 2,
      pricing_model: 'flat',
      unit_price: '19.99',
      base: '39.98',
      discount: '4.00',
      taxes: [{ name: 'vat', tax_class: 'standard', rate: '0.19', amount: '5.74', included: true }],
      tax: '5.74',
      fees: '0.00',
      total: '35.98',
      applied_promotions: [{ promo_id: 'spring', amount: '4.00' }],
    },
  ],
  subtotal: '39.98',
  discounts: '4.00',
  taxes: [{ name: 'vat', tax_class: 'standard', rate: '0.19', amount: '5.74', included: true }],
  fees: [],
  total: '35.98',
  currency: 'EUR',
  region: 'DE',
  buyer_type: 'consumer',
  fx_version: 'fx-7',
  fx_stale: false,
  pricelist_version: 3,
  tax_rule_version: 2,
  lock_ttl: 900,
  expires_at: '2026-11-01T10:15:00.000Z',
  issued_at: '2026-11-01T10:00:00.000Z',
  threshold_promotions: [],
  signature: 'v1=3q2+7w==',
};

describe('the response schemas', () => {
  it('accept a realistic quote and reject money as a JSON number or a short lock', () => {
    expect(quoteResponseSchema.safeParse(realisticQuote).success).toBe(true);
    expect(quoteResponseSchema.safeParse({ ...realisticQuote, total: 35.98 }).success).toBe(false);
    expect(quoteResponseSchema.safeParse({ ...realisticQuote, lock_ttl: 60 }).success).toBe(false);
    expect(quoteResponseSchema.safeParse({ ...realisticQuote, signature: 'hmac' }).success).toBe(false);
  });

  it('accept a realistic receipt and reject a malformed hash', () => {
    const receipt = {
      receipt_id: 'rcpt_01JQ4S6T1X5V8R2W3Y4Z5A6B7D',
      quote_id: realisticQuote.quote_id,
      status: 'issued',
      issued_at: '2026-11-01T10:01:00.000Z',
      key_id: 'receipt-key-1',
      pricelist_version: 3,
      fx_version: 'fx-7',
      tax_rule_version: 2,
      computed_totals: {
        subtotal: '39.98',
        discounts: '4.00',
        taxes: realisticQuote.taxes,
        fees: [],
        total: '35.98',
        currency: 'EUR',
      },
      breakdown: {
        items_priced: realisticQuote.items_priced,
        threshold_promotions: [],
        rounding_scope: 'line',
        minor_units: 2,
      },
      basket: {
        items: [{ sku_id: 'sku_a', quantity: 2 }],
        region: 'DE',
        currency: 'EUR',
        buyer_type: 'consumer',
      },
      settlement: {
        currency: 'EUR',
        rate: '1',
        source: 'published',
        amount: '35.98',
        market_rate: '1',
        spread: '0.00',
      },
      quoted_at: '2026-11-01T10:00:00.000Z',
      quote_signature: realisticQuote.signature,
      refunds: [],
      trace_id: 'trc_01JQ4S6T1X5V8R2W3Y4Z5A6B7E',
      hash: `sha256:${'ab'.repeat(32)}`,
      signature: 'MEUCIQDx',
    };
    expect(receiptResponseSchema.safeParse(receipt).success).toBe(true);
    expect(receiptResponseSchema.safeParse({ ...receipt, hash: 'sha256:XYZ' }).success).toBe(false);
    expect(receiptResponseSchema.safeParse({ ...receipt, status: 'open' }).success).toBe(false);
  });

  it('describe what the error middleware answers (C6)', () => {
    const body = errorBody(
      new HttpError('invalid_request', 'query.currency: required', {
        details: { problems: [{ path: 'query.currency', message: 'required' }] },
      }),
      'trc_test_1',
    );
    expect(errorResponseSchema.safeParse(body).success).toBe(true);
    expect(errorResponseSchema.safeParse({ ...body, error: 'teapot' }).success).toBe(false);
  });
});

describe('docs/openapi.json', () => {
  it('is up to date with the routes and schemas', () => {
    let committed = '';
    try {
      committed = readFileSync(OPENAPI_FILE, 'utf8');
    } catch {
      // Compared below, so the failure says what to do.
    }
    const upToDate = committed === renderOpenApi(buildOpenApi());
    expect(upToDate, 'docs/openapi.json is stale: run `npm run openapi` and commit the result').toBe(true);
  });
});

describe('openApiOperation', () => {
  it('answers 200 with the document, cacheable for five minutes, built once', async () => {
    let builds = 0;
    const operation = openApiOperation(() => {
      builds += 1;
      return buildOpenApi();
    });
    const request = {
      event: proxyEvent({ resource: '/openapi.json' }),
      route: route('GET', '/openapi.json', 'getOpenApi', 'none'),
      traceId: 'trace-openapi-1',
    };
    const first = await operation(request);
    const second = await operation(request);
    expect(first.statusCode).toBe(200);
    expect(first.headers).toEqual({ 'Cache-Control': 'public, max-age=300' });
    expect(first.body).toEqual(buildOpenApi());
    expect(second.body).toBe(first.body);
    expect(builds).toBe(1);
    expect(OPERATION_SCHEMAS.getOpenApi?.response.schema?.safeParse(first.body).success).toBe(true);
  });
});
