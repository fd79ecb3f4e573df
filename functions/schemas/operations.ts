/**
 * What each operation of the HTTP APIs takes and answers, keyed by the `operation` of its route
 * (`definitions/routes.ts`). The OpenAPI document (`openapi.ts`) is generated from this registry and the route
 * table; a route whose operation is missing here makes the generation fail.
 */
import type { z } from 'zod';
import { invalidateCacheRequestSchema, warmCacheRequestSchema } from '../handlers/operations/catalog';
import { exportQuerySchema, priceQuerySchema } from './catalog-api';
import { catalogDocumentSchema } from './catalog-document';
import {
  commitRequestSchema,
  limitsQuerySchema,
  quoteRequestSchema,
  receiptPathSchema,
  refundRequestSchema,
} from './checkout';
import {
  cacheInvalidateResponseSchema,
  cacheWarmResponseSchema,
  healthResponseSchema,
  importResultSchema,
  jwksResponseSchema,
  limitsResponseSchema,
  openApiDocumentSchema,
  priceResponseSchema,
  quoteResponseSchema,
  receiptResponseSchema,
  refundResponseSchema,
} from './responses';

/** The cache bodies are defined beside their handlers; re-exported so every operation's schemas are here. */
export { invalidateCacheRequestSchema, warmCacheRequestSchema };

export interface ResponseHeader {
  readonly description: string;
  /** The values it takes, when it is an enumeration. */
  readonly values?: readonly string[];
}

export interface OperationResponse {
  readonly status: number;
  readonly schema: z.ZodType;
  readonly description: string;
  /** Headers particular to this answer (`X-Trace-Id`, `Cache-Control` etc. are added by the generator). */
  readonly headers?: Readonly<Record<string, ResponseHeader>>;
}

export interface OperationSchemas {
  readonly summary: string;
  readonly description?: string;
  readonly query?: z.ZodObject;
  readonly path?: z.ZodObject;
  readonly body?: z.ZodType;
  /** The success response. */
  readonly response: OperationResponse;
  /** Other non-error answers with their own body (health's 503). */
  readonly otherResponses?: readonly OperationResponse[];
  /** Error statuses (C6 body); those implied by the route's auth and method are added by the generator. */
  readonly errors: readonly number[];
  /** Takes `Idempotency-Key` (C8); every POST does. */
  readonly idempotent?: boolean;
  /** Answers with `Cache-Control` allowing shared caches. */
  readonly cacheable?: boolean;
  /** A realistic request body, shown in the document and checked against `body` by the tests. */
  readonly example?: unknown;
}

/** Descriptions of query and path parameters, by name (the query schemas are shared with the handlers). */
export const PARAMETER_DESCRIPTIONS: Readonly<Record<string, string>> = {
  sku: 'The SKU (`sku_id`).',
  currency: 'Display currency (ISO 4217 or a crypto code such as `USDT`).',
  region: 'ISO 3166 region of the buyer, e.g. `DE`.',
  pricelist: 'A price list id; the price list in force by default.',
  channel: 'Sales channel (selects FX markup rules and promotions).',
  tenant: 'Tenant (selects overrides and the basket policy).',
  buyer_type: '`consumer` (default) or `business` (reverse charge where the tax rule says so).',
  revision: 'A catalog revision; the one in force by default.',
  pricelist_version: 'With fx_version and tax_rule_version: export exactly the parts a receipt pins.',
  fx_version: 'With pricelist_version and tax_rule_version: the exchange-rate snapshot, e.g. `fx-3`.',
  tax_rule_version: 'With pricelist_version and fx_version: the tax rule version.',
  receipt_id: 'The receipt id (`rcpt_…`).',
};

const EXAMPLE_QUOTE_ID = 'q_01JQ4S6T1X5V8R2W3Y4Z5A6B7C';
const EXAMPLE_RECEIPT_ID = 'rcpt_01JQ4S6T1X5V8R2W3Y4Z5A6B7D';

export const OPERATION_SCHEMAS: Readonly<Record<string, OperationSchemas>> = {
  health: {
    summary: 'Health of the service and its components.',
    description:
      'Never cached. 200 when every component answers within 2 s, 503 with the same body otherwise.',
    response: { status: 200, schema: healthResponseSchema, description: 'Every component is up.' },
    otherResponses: [
      { status: 503, schema: healthResponseSchema, description: 'At least one component is down.' },
    ],
    errors: [500],
  },
  getPrice: {
    summary: 'Display price of one SKU in a currency and region.',
    description:
      'One unit priced through the whole engine (promotions, taxes and fees that apply to it alone), with the ' +
      'versions that produced it. May be served stale-while-revalidate (C18): 300 s for stable currencies, ' +
      '30 s for volatile ones.',
    query: priceQuerySchema,
    response: {
      status: 200,
      schema: priceResponseSchema,
      description: 'The price.',
      headers: {
        'X-Cache': {
          description: 'Which cache tier answered (C18).',
          values: ['hit-local', 'hit-shared', 'miss'],
        },
      },
    },
    errors: [400, 404, 422, 503],
    cacheable: true,
  },
  getLimits: {
    summary: 'Maximum winnings in a currency and region.',
    description: 'Kept in the catalog currency; the equivalent is fixed by `fx_version` (rule 15).',
    query: limitsQuerySchema,
    response: { status: 200, schema: limitsResponseSchema, description: 'The limit and its equivalent.' },
    errors: [400, 404, 422, 503],
  },
  importCatalog: {
    summary: 'Validate a whole catalog document and publish it as new versions, all or nothing.',
    description:
      'Parts that did not change keep their version. A concurrent publication answers 409 ' +
      '`request_in_progress`; retry after `Retry-After`.',
    body: catalogDocumentSchema,
    response: { status: 201, schema: importResultSchema, description: 'Published (or unchanged).' },
    errors: [400, 409, 413, 422, 503],
    idempotent: true,
  },
  exportCatalog: {
    summary: 'The catalog in force, of a revision, or of the versions a receipt pins, in the import format.',
    query: exportQuerySchema,
    response: {
      status: 200,
      schema: catalogDocumentSchema,
      description: 'The catalog document.',
      headers: {
        'X-Catalog-Revision': {
          description: 'The catalog revision exported (not for an export by versions).',
        },
        'X-Catalog-Versions': {
          description: 'pricelist_version,fx_version,tax_rule_version of the exported parts.',
        },
      },
    },
    errors: [400, 404, 503],
  },
  invalidateCache: {
    summary: 'Invalidate cached prices by tag (`sku`, `category`, `pricelist_version`).',
    description:
      "Moves the tag's epoch: every function instance stops serving the matching entries within a second " +
      '(C18). A `pricelist_version` value is a positive integer.',
    body: invalidateCacheRequestSchema,
    response: { status: 200, schema: cacheInvalidateResponseSchema, description: 'Invalidated.' },
    errors: [400, 503],
    idempotent: true,
    example: { tag: 'category', value: 'games' },
  },
  warmCache: {
    summary: 'Precompute prices of categories for currencies and regions (before a campaign).',
    body: warmCacheRequestSchema,
    response: { status: 200, schema: cacheWarmResponseSchema, description: 'Warmed.' },
    errors: [400, 503],
    idempotent: true,
    example: { categories: ['games'], currencies: ['EUR', 'USD'], regions: ['DE', 'US'] },
  },
  quote: {
    summary: 'Quote a basket: a signed price locked to its versions for `lock_ttl` seconds.',
    description:
      'Order of calculation: base price, discounts, taxes, fees, rounding. Always priced from fresh catalog ' +
      'data. At most 100 lines and 10 000 per line (C22).',
    body: quoteRequestSchema,
    response: { status: 201, schema: quoteResponseSchema, description: 'The signed quote.' },
    errors: [400, 404, 422, 503],
    idempotent: true,
    example: {
      items: [
        { sku_id: 'sku-game-1', quantity: 2 },
        { sku_id: 'sku-bundle-7', quantity: 1 },
      ],
      region: 'DE',
      currency: 'EUR',
      buyer_type: 'consumer',
      lock_ttl: 900,
    },
  },
  commit: {
    summary: 'Commit a quote into a signed receipt.',
    description:
      'One quote gives one receipt, ever: committing it again answers the same receipt. An expired lock ' +
      'answers 409 `quote_expired` with a fresh quote to confirm in `requote`.',
    body: commitRequestSchema,
    response: { status: 201, schema: receiptResponseSchema, description: 'The signed receipt.' },
    errors: [400, 404, 409, 422, 503],
    idempotent: true,
    example: { quote_id: EXAMPLE_QUOTE_ID, signature: 'v1=3q2+7w==' },
  },
  refund: {
    summary: 'Refund lines of a receipt (return or chargeback) with the versions stored in the receipt.',
    description: "The refund fee is taken from the catalog on the refund's date (rule 13).",
    body: refundRequestSchema,
    response: { status: 201, schema: refundResponseSchema, description: 'The refund.' },
    errors: [400, 404, 422, 503],
    idempotent: true,
    example: {
      receipt_id: EXAMPLE_RECEIPT_ID,
      kind: 'return',
      lines: [{ sku_id: 'sku-game-1', quantity: 1 }],
    },
  },
  getReceipt: {
    summary: 'A receipt with its refunds, hash and signature.',
    path: receiptPathSchema,
    response: { status: 200, schema: receiptResponseSchema, description: 'The receipt.' },
    errors: [400, 404, 503],
  },
  getKeys: {
    summary: 'Public keys that verify receipt signatures (JWKS; `kid` = `key_id`).',
    description: 'Retired keys stay listed so old receipts remain verifiable offline.',
    response: { status: 200, schema: jwksResponseSchema, description: 'The key set.' },
    errors: [503],
  },
  getOpenApi: {
    summary: 'This OpenAPI 3.1 document.',
    response: { status: 200, schema: openApiDocumentSchema, description: 'The OpenAPI document.' },
    errors: [],
    cacheable: true,
  },
};
