/**
 * The OpenAPI 3.1 document of the HTTP APIs, generated from the route table (`definitions/routes.ts`) and the
 * zod schemas of each operation (`operations.ts`). `bin/openapi.ts` writes it to `docs/openapi.json`;
 * `GET /openapi.json` serves it. Output is deterministic (keys sorted), so the committed file changes only when a
 * route or a schema does.
 */
import * as z from 'zod';
import { ROUTES, type RouteAuth, type RouteDefinition } from '../definitions/routes';
import { ERROR_STATUS, type ErrorCode } from '../handlers/middleware/errors';
import { apiKeyResponseSchema, apiKeyWithSecretResponseSchema } from './api-keys';
import { journalEntrySchema, signedTreeHeadSchema } from './audit';
import { catalogDocumentSchema } from './catalog-document';
import { changeRequestResponseSchema } from './change-requests';
import { commitRequestSchema, quoteRequestSchema, refundRequestSchema } from './checkout';
import {
  invalidateCacheRequestSchema,
  OPERATION_SCHEMAS,
  type OperationResponse,
  type OperationSchemas,
  PARAMETER_DESCRIPTIONS,
  warmCacheRequestSchema,
} from './operations';
import {
  appliedPromotionSchema,
  bundleShareSchema,
  cacheInvalidateResponseSchema,
  cacheWarmResponseSchema,
  computedTotalsSchema,
  decimalAmount,
  errorResponseSchema,
  feeLineSchema,
  healthResponseSchema,
  jwksResponseSchema,
  limitsResponseSchema,
  moneySchema,
  openApiDocumentSchema,
  pricedLineSchema,
  priceResponseSchema,
  problemSchema,
  quoteResponseSchema,
  receiptRefundSchema,
  receiptResponseSchema,
  refundResponseSchema,
  settlementSchema,
  taxLineSchema,
  thresholdOutcomeSchema,
  versionsSchema,
} from './responses';
import {
  attemptResponseSchema,
  endpointResponseSchema,
  endpointStatsResponseSchema,
  endpointWithSecretResponseSchema,
  eventHistoryResponseSchema,
  eventsPageResponseSchema,
  recoverRequestSchema,
  recoveryAcceptedResponseSchema,
  replayAcceptedResponseSchema,
  replayProgressResponseSchema,
  rotationSchema,
  testEventRequestSchema,
  testEventResponseSchema,
} from './webhooks';

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

export const OPENAPI_VERSION = '3.1.0';
/** Version of the API description; bump it when a route or a schema changes. */
export const API_VERSION = '0.1.0';
export const API_TITLE = 'Multi-currency catalog and pricing API';

const API_DESCRIPTION = [
  'Prices, basket quotes, commits into signed receipts, refunds, and catalog administration.',
  '',
  '- Money, rates and percentages are decimal **strings**, never JSON numbers (C1).',
  '- Errors: `{ "error", "error_description", "trace_id" }` with the `X-Trace-Id` header (C6).',
  '- Every `POST` takes `Idempotency-Key` (C8).',
  '- New response fields may be added at any time: ignore fields you do not know (C24).',
].join('\n');

const SCHEMA_REF_PREFIX = '#/components/schemas/';
const JSON_MEDIA_TYPE = 'application/json';

/** Shared schemas, by component name. Operation bodies not listed get `<Operation>Request`/`Response`. */
const NAMED_SCHEMAS: readonly (readonly [string, z.ZodType])[] = [
  ['DecimalString', decimalAmount],
  ['Money', moneySchema],
  ['Versions', versionsSchema],
  ['Problem', problemSchema],
  ['Error', errorResponseSchema],
  ['TaxLine', taxLineSchema],
  ['FeeLine', feeLineSchema],
  ['AppliedPromotion', appliedPromotionSchema],
  ['BundleShare', bundleShareSchema],
  ['PricedLine', pricedLineSchema],
  ['ThresholdOutcome', thresholdOutcomeSchema],
  ['ComputedTotals', computedTotalsSchema],
  ['Settlement', settlementSchema],
  ['ReceiptRefund', receiptRefundSchema],
  ['Health', healthResponseSchema],
  ['Price', priceResponseSchema],
  ['CatalogDocument', catalogDocumentSchema],
  ['ChangeRequest', changeRequestResponseSchema],
  ['SignedTreeHead', signedTreeHeadSchema],
  ['JournalEntry', journalEntrySchema],
  ['QuoteRequest', quoteRequestSchema],
  ['Quote', quoteResponseSchema],
  ['CommitRequest', commitRequestSchema],
  ['Receipt', receiptResponseSchema],
  ['RefundRequest', refundRequestSchema],
  ['Refund', refundResponseSchema],
  ['Jwks', jwksResponseSchema],
  ['Limits', limitsResponseSchema],
  ['Endpoint', endpointResponseSchema],
  ['EndpointWithSecret', endpointWithSecretResponseSchema],
  ['Rotation', rotationSchema],
  ['ApiKey', apiKeyResponseSchema],
  ['ApiKeyWithSecret', apiKeyWithSecretResponseSchema],
  ['DeliveryAttempt', attemptResponseSchema],
  // Shared by the operators' routes and the partner portal's: one name whatever the order of the operations.
  ['EndpointStats', endpointStatsResponseSchema],
  ['TestEventRequest', testEventRequestSchema],
  ['TestEventSent', testEventResponseSchema],
  ['EventsPage', eventsPageResponseSchema],
  ['EventHistory', eventHistoryResponseSchema],
  ['ReplayAccepted', replayAcceptedResponseSchema],
  ['RecoverRequest', recoverRequestSchema],
  ['RecoveryAccepted', recoveryAcceptedResponseSchema],
  ['ReplayProgress', replayProgressResponseSchema],
  ['InvalidateCacheRequest', invalidateCacheRequestSchema],
  ['InvalidateCacheResult', cacheInvalidateResponseSchema],
  ['WarmCacheRequest', warmCacheRequestSchema],
  ['WarmCacheResult', cacheWarmResponseSchema],
  ['OpenApiDocument', openApiDocumentSchema],
];

const SECURITY_SCHEMES: JsonObject = {
  apiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
    description:
      'Catalog callers (C26): a caller key issued by operators (`POST /admin/api-keys`) to one tenant, with ' +
      'scopes (`prices:read`, `quotes:write`, `receipts:read`, `refunds:write`, `chargebacks:write`). The ' +
      "tenant is the key's, never the body's. Each route lists the scopes of which it needs one. Throttled per " +
      'key (100 req/s, burst 200).',
  },
  adminBearer: {
    type: 'http',
    scheme: 'bearer',
    description:
      'Admin and ops routes on the local stack: `Authorization: Bearer <token>` of an operator of ' +
      '`ADMIN_TOKENS` (C27). Each route lists the operator roles of which it needs one.',
  },
  adminSigV4: {
    type: 'apiKey',
    in: 'header',
    name: 'Authorization',
    description:
      'Admin and ops routes in AWS: IAM authorization, requests signed with AWS Signature Version 4 (C7), by a ' +
      "session of one of the stack's operator roles (C27). Each route lists the roles of which it needs one.",
    'x-amazon-apigateway-authtype': 'awsSigv4',
  },
  partnerKey: {
    type: 'http',
    scheme: 'bearer',
    description:
      'Partner routes (resync): `Authorization: Bearer <partner key>`, the `partner_key` returned once when the ' +
      "partner's endpoint was registered. It reads that endpoint's own events only.",
  },
};

/** A route's security requirement, with the scopes or roles it needs (role names, as OpenAPI 3.1 allows). */
const securityOf = (route: RouteDefinition): JsonValue[] => {
  const byAuth: Readonly<Record<RouteAuth, () => JsonValue[]>> = {
    none: () => [],
    api_key: () => [{ apiKey: [...(route.scopes ?? [])] }],
    admin: (): JsonValue[] => {
      const roles: JsonValue[] = [...(route.roles ?? [])];
      return [{ adminBearer: roles }, { adminSigV4: roles }];
    },
    partner: () => [{ partnerKey: [] }],
  };
  return byAuth[route.auth]();
};

const HEADERS: JsonObject = {
  TraceId: {
    description: "The trace id of the request (the caller's `X-Trace-Id` when well formed); also `trace_id`.",
    schema: { type: 'string' },
  },
  RetryAfter: {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 0 },
  },
  CacheControl: {
    description: 'Shared caches may keep the answer (storefront reads: stale-while-revalidate, C18).',
    schema: { type: 'string' },
  },
  IdempotentReplayed: {
    description:
      '`true` when this is the stored answer to an earlier request with the same `Idempotency-Key`.',
    schema: { type: 'string', enum: ['true'] },
  },
};

const PARAMETERS: JsonObject = {
  IdempotencyKey: {
    name: 'Idempotency-Key',
    in: 'header',
    required: false,
    description:
      'C8: the same key with the same body answers the stored response (with `Idempotent-Replayed: true`); ' +
      'the same key with another body answers 422 `idempotency_key_reused`; a concurrent duplicate answers ' +
      '409 `request_in_progress`. Kept at least 24 h. C25: an effect and its stored response are one write, so ' +
      'a retry after a lost connection or a crash gets the original response, never a second effect.',
    // The pattern of `handlers/middleware/idempotency.ts`: 1–255 printable ASCII, no space at either end.
    schema: { type: 'string', pattern: '^[\\x21-\\x7E](?:[\\x20-\\x7E]{0,253}[\\x21-\\x7E])?$' },
  },
  TraceId: {
    name: 'X-Trace-Id',
    in: 'header',
    required: false,
    description: 'A trace id to use for this request; a fresh one is made when absent or malformed.',
    schema: { type: 'string', pattern: '^[A-Za-z0-9_.:-]{8,128}$' },
  },
};

const CODE_MEANINGS: Readonly<Record<ErrorCode, string>> = {
  invalid_request: 'the request is malformed or fails validation; `problems` lists each problem and its path',
  unauthorized: 'credentials are missing or invalid',
  forbidden: 'the credentials do not allow this',
  not_found: 'nothing with that id',
  method_not_allowed: 'the path exists but not with this method',
  request_header_fields_too_large: 'the request line and headers exceed the server limit',
  quote_expired: 'the rate lock expired; `requote` holds a fresh quote to confirm',
  conflict: 'the resource is not in the state this action needs (e.g. a change request already decided)',
  request_in_progress: 'the same request is being processed (or a concurrent publication won); retry later',
  payload_too_large: 'the body is above 256 KiB',
  unsupported_media_type: 'the body is not `application/json`',
  idempotency_key_reused: 'the `Idempotency-Key` was used with another body',
  currency_not_available:
    'the currency cannot be used: its rate is past its maximum age (quotes, `reason` `stale_rate`), or no rate ' +
    'reaches it (limits); `rule` and `reasons` name why',
  price_not_available:
    'no price for this request: `reasons` lists every reason that applies (`{ code, detail, sku_id? }`: ' +
    'region not served, currency not offered or blocked, no rate, unknown or unsellable SKU, no price list in force…)',
  quantity_not_allowed:
    "a line's quantity breaks its product's `quantity_rules` (min, max, increment): `violations` names every such " +
    'line (`{ line, sku_id, quantity, rule, limit, detail }`) with the nearest allowed quantities',
  invalid_signature: 'the quote signature does not verify',
  invalid_state: 'the resource is not in a state that allows this (e.g. not sellable, already refunded)',
  personal_data_not_allowed: 'the payload carries personal or card data',
  rate_limited: 'more than 100 requests/s (burst 200) for this API key',
  internal_error: 'an unexpected error; retry later',
  bad_gateway: 'an upstream answered badly',
  unavailable: 'a dependency is unavailable; retry later',
  gateway_timeout: 'an upstream did not answer in time',
};

const RETRY_AFTER_STATUSES: ReadonlySet<number> = new Set([409, 429, 500, 503]);

const ref = (name: string): JsonObject => ({ $ref: `${SCHEMA_REF_PREFIX}${name}` });

/** A JSON value, checked: `undefined`, functions and non-finite numbers are refused, naming where. */
const toJson = (value: unknown, where: string): JsonValue => {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return value;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`OpenAPI: non-finite number at ${where}`);
    return value;
  }
  if (Array.isArray(value)) return value.map((item, index) => toJson(item, `${where}[${index}]`));
  if (typeof value === 'object') {
    const result: JsonObject = {};
    for (const key of Object.keys(value).sort()) {
      result[key] = toJson((value as Record<string, unknown>)[key], `${where}.${key}`);
    }
    return result;
  }
  throw new Error(`OpenAPI: ${typeof value} at ${where}`);
};

const asObject = (value: JsonValue | undefined, where: string): JsonObject => {
  if (value === null || value === undefined || typeof value !== 'object' || Array.isArray(value)) {
    throw new Error(`OpenAPI: expected an object at ${where}`);
  }
  return value;
};

/** JSON Schema of one zod schema as used inside the document (no `$schema`/`$id` of its own). */
const stripSchemaHeader = (schema: JsonObject): JsonObject => {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
};

const capitalize = (text: string): string => `${text.charAt(0).toUpperCase()}${text.slice(1)}`;

interface ComponentNames {
  readonly byName: ReadonlyMap<string, z.ZodType>;
  readonly bySchema: ReadonlyMap<z.ZodType, string>;
}

const componentNames = (operations: readonly [string, OperationSchemas][]): ComponentNames => {
  const byName = new Map<string, z.ZodType>();
  const bySchema = new Map<z.ZodType, string>();
  const name = (schema: z.ZodType, wanted: string): void => {
    if (bySchema.has(schema)) return;
    if (byName.has(wanted)) throw new Error(`OpenAPI: two schemas named ${wanted}`);
    byName.set(wanted, schema);
    bySchema.set(schema, wanted);
  };
  for (const [wanted, schema] of NAMED_SCHEMAS) name(schema, wanted);
  for (const [operation, entry] of operations) {
    if (entry.body) name(entry.body, `${capitalize(operation)}Request`);
    if (entry.response.schema) name(entry.response.schema, `${capitalize(operation)}Response`);
    for (const other of entry.otherResponses ?? []) {
      if (other.schema) name(other.schema, `${capitalize(operation)}${other.status}Response`);
    }
  }
  return { byName, bySchema };
};

/** Every named schema as a component; references between them become `$ref`s. */
const componentSchemas = (names: ComponentNames): JsonObject => {
  const registry = z.registry<{ id: string }>();
  for (const [name, schema] of names.byName) registry.add(schema, { id: name });
  const emitted = z.toJSONSchema(registry, {
    target: 'draft-2020-12',
    io: 'input',
    unrepresentable: 'throw',
    uri: (id) => `${SCHEMA_REF_PREFIX}${id}`,
  });
  const schemas = asObject(toJson(emitted.schemas, 'components.schemas'), 'components.schemas');
  const result: JsonObject = {};
  for (const [name, schema] of Object.entries(schemas)) {
    result[name] = stripSchemaHeader(asObject(schema, `components.schemas.${name}`));
  }
  return result;
};

const schemaRef = (names: ComponentNames, schema: z.ZodType): JsonObject => {
  const name = names.bySchema.get(schema);
  if (!name) throw new Error('OpenAPI: an operation schema has no component name');
  return ref(name);
};

const pathParameterNames = (path: string): string[] =>
  [...path.matchAll(/\{([^}]+)\}/g)].map((match) => match[1] ?? '');

const PARAMETER_TYPES: ReadonlySet<JsonValue | undefined> = new Set([
  'string',
  'integer',
  'number',
  'boolean',
]);

/** Query or path parameters of one zod object (input side: what the caller sends). */
const parametersOf = (schema: z.ZodObject, location: 'query' | 'path', where: string): JsonObject[] => {
  const json = asObject(
    toJson(z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', unrepresentable: 'throw' }), where),
    where,
  );
  const properties = asObject(json.properties ?? {}, `${where}.properties`);
  const required = new Set(Array.isArray(json.required) ? json.required : []);
  return Object.entries(properties).map(([name, value]) => {
    const { description, ...property } = asObject(value, `${where}.${name}`);
    const text = typeof description === 'string' ? description : PARAMETER_DESCRIPTIONS[name];
    if (!text) throw new Error(`OpenAPI: parameter ${name} of ${where} has no description`);
    if (!PARAMETER_TYPES.has(property.type)) {
      throw new Error(`OpenAPI: parameter ${name} of ${where} is not a scalar`);
    }
    return {
      name,
      in: location,
      required: location === 'path' || required.has(name),
      description: text,
      schema: property,
    };
  });
};

const impliedErrors = (route: RouteDefinition, entry: OperationSchemas): number[] => {
  const statuses = [500];
  if (route.auth !== 'none') statuses.push(401, 403);
  if (route.auth === 'api_key') statuses.push(429);
  if (entry.query || entry.path || entry.body) statuses.push(400);
  if (route.method === 'POST') statuses.push(409, 413, 415, 422);
  return statuses;
};

const errorDescription = (status: number, route: RouteDefinition): string => {
  const codes = (Object.keys(ERROR_STATUS) as ErrorCode[]).filter(
    (code) => ERROR_STATUS[code] === status && (route.method === 'POST' || code !== 'idempotency_key_reused'),
  );
  if (codes.length === 0) throw new Error(`OpenAPI: no C6 error code has status ${status}`);
  return codes.map((code) => `\`${code}\`: ${CODE_MEANINGS[code]}.`).join(' ');
};

const headerRef = (name: string): JsonObject => ({ $ref: `#/components/headers/${name}` });

const successResponse = (
  names: ComponentNames,
  response: OperationResponse,
  entry: OperationSchemas,
): JsonObject => {
  const headers: JsonObject = { 'X-Trace-Id': headerRef('TraceId') };
  if (entry.cacheable) headers['Cache-Control'] = headerRef('CacheControl');
  if (entry.idempotent) headers['Idempotent-Replayed'] = headerRef('IdempotentReplayed');
  if (RETRY_AFTER_STATUSES.has(response.status)) headers['Retry-After'] = headerRef('RetryAfter');
  for (const [name, header] of Object.entries(response.headers ?? {})) {
    headers[name] = {
      description: header.description,
      schema: header.values ? { type: 'string', enum: [...header.values] } : { type: 'string' },
    };
  }
  return {
    description: response.description,
    headers,
    ...(response.schema
      ? { content: { [JSON_MEDIA_TYPE]: { schema: schemaRef(names, response.schema) } } }
      : {}),
  };
};

const errorResponse = (status: number, route: RouteDefinition): JsonObject => {
  const headers: JsonObject = { 'X-Trace-Id': headerRef('TraceId') };
  if (RETRY_AFTER_STATUSES.has(status)) headers['Retry-After'] = headerRef('RetryAfter');
  return {
    description: errorDescription(status, route),
    headers,
    content: { [JSON_MEDIA_TYPE]: { schema: ref('Error') } },
  };
};

const tagOf = (path: string): string => {
  const first = path.split('/').find((segment) => segment.length > 0) ?? 'service';
  return first.replace(/\.json$/, '');
};

const operationObject = (
  names: ComponentNames,
  route: RouteDefinition,
  entry: OperationSchemas,
): JsonObject => {
  const where = `${route.method} ${route.path}`;
  const declared = pathParameterNames(route.path);
  const pathParameters = entry.path ? parametersOf(entry.path, 'path', `${where} path`) : [];
  const described = pathParameters.map((parameter) => String(parameter.name));
  if ([...declared].sort().join(',') !== [...described].sort().join(',')) {
    throw new Error(
      `OpenAPI: ${where} has path parameters [${declared.join(', ')}] but operation ${route.operation} ` +
        `describes [${described.join(', ')}]`,
    );
  }
  const parameters: JsonValue[] = [
    ...pathParameters,
    ...(entry.query ? parametersOf(entry.query, 'query', `${where} query`) : []),
    { $ref: '#/components/parameters/TraceId' },
  ];
  if (route.method === 'POST' || entry.idempotent) {
    parameters.push({ $ref: '#/components/parameters/IdempotencyKey' });
  }

  const responses: JsonObject = {
    [String(entry.response.status)]: successResponse(names, entry.response, entry),
  };
  for (const other of entry.otherResponses ?? []) {
    responses[String(other.status)] = successResponse(names, other, entry);
  }
  const errors = [...new Set([...entry.errors, ...impliedErrors(route, entry)])].sort((a, b) => a - b);
  for (const status of errors) {
    if (responses[String(status)]) continue;
    responses[String(status)] = errorResponse(status, route);
  }

  const operation: JsonObject = {
    operationId: route.operation,
    summary: route.summary,
    tags: [tagOf(route.path)],
    parameters,
    responses,
    security: securityOf(route),
  };
  if (entry.description) operation.description = entry.description;
  if (entry.body) {
    const media: JsonObject = { schema: schemaRef(names, entry.body) };
    if (entry.example !== undefined) media.example = toJson(entry.example, `${where} example`);
    operation.requestBody = { required: true, content: { [JSON_MEDIA_TYPE]: media } };
  }
  return operation;
};

/**
 * The OpenAPI 3.1 document for `routes`. Throws when a route's operation has no entry in `operations`, when two
 * routes share a method and path, or when a path parameter is not described.
 */
export const buildOpenApi = (
  routes: readonly RouteDefinition[] = ROUTES,
  operations: Readonly<Record<string, OperationSchemas>> = OPERATION_SCHEMAS,
): JsonObject => {
  const missing = routes.filter((route) => !Object.hasOwn(operations, route.operation));
  if (missing.length > 0) {
    throw new Error(
      `OpenAPI: no schemas for operation(s) ${missing
        .map((route) => `${route.operation} (${route.method} ${route.path})`)
        .join(', ')}; add them to OPERATION_SCHEMAS in functions/schemas/operations.ts`,
    );
  }
  const used = [...new Set(routes.map((route) => route.operation))].map(
    (operation): [string, OperationSchemas] => [operation, operations[operation] as OperationSchemas],
  );
  const names = componentNames(used);

  const paths: Record<string, JsonObject> = {};
  for (const route of routes) {
    const entry = operations[route.operation] as OperationSchemas;
    const item = paths[route.path] ?? {};
    const method = route.method.toLowerCase();
    if (item[method]) throw new Error(`OpenAPI: two routes for ${route.method} ${route.path}`);
    item[method] = operationObject(names, route, entry);
    paths[route.path] = item;
  }

  const document = {
    openapi: OPENAPI_VERSION,
    info: { title: API_TITLE, version: API_VERSION, description: API_DESCRIPTION },
    servers: [{ url: '/' }],
    paths,
    components: {
      schemas: componentSchemas(names),
      securitySchemes: SECURITY_SCHEMES,
      headers: HEADERS,
      parameters: PARAMETERS,
    },
  };
  return asObject(toJson(document, '$'), '$');
};

/** The committed form: 2-space JSON, keys sorted, trailing newline. */
export const renderOpenApi = (document: JsonObject = buildOpenApi()): string =>
  `${JSON.stringify(document, null, 2)}\n`;
