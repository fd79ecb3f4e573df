/**
 * What each operation of the HTTP APIs takes and answers, keyed by the `operation` of its route
 * (`definitions/routes.ts`). The OpenAPI document (`openapi.ts`) is generated from this registry and the route
 * table; a route whose operation is missing here makes the generation fail.
 */
import type { z } from 'zod';
import { invalidateCacheRequestSchema, warmCacheRequestSchema } from '../handlers/operations/catalog';
import {
  apiKeyPathSchema,
  apiKeyResponseSchema,
  apiKeysPageResponseSchema,
  apiKeyWithSecretResponseSchema,
  createApiKeySchema,
  listApiKeysQuerySchema,
  rotateApiKeySchema,
} from './api-keys';
import {
  journalConsistencyQuerySchema,
  journalConsistencyResponseSchema,
  journalEntryPathSchema,
  journalEntryQuerySchema,
  journalEntryResponseSchema,
  journalExportQuerySchema,
  journalExportResponseSchema,
  journalHeadsPageResponseSchema,
  journalHeadsQuerySchema,
  signedTreeHeadSchema,
} from './audit';
import {
  catalogUploadResponseSchema,
  createUploadRequestSchema,
  exportLinkResponseSchema,
  exportQuerySchema,
  importByUploadSchema,
  priceMatrixQuerySchema,
  priceQuerySchema,
} from './catalog-api';
import { catalogDocumentSchema } from './catalog-document';
import { catalogHistoryQuerySchema, catalogHistoryResponseSchema } from './catalog-history';
import {
  approveChangeRequestSchema,
  changeRequestPathSchema,
  changeRequestResponseSchema,
  changeRequestsPageResponseSchema,
  createChangeRequestSchema,
  listChangeRequestsQuerySchema,
  rejectChangeRequestSchema,
  releaseResponseSchema,
} from './change-requests';
import {
  commitRequestSchema,
  limitsQuerySchema,
  quoteRequestSchema,
  receiptPathSchema,
  refundRequestSchema,
} from './checkout';
import { asyncApiDocumentSchema, eventTypesResponseSchema } from './event-types';
import {
  cacheInvalidateResponseSchema,
  cacheWarmResponseSchema,
  healthResponseSchema,
  jwksResponseSchema,
  limitsResponseSchema,
  livenessResponseSchema,
  openApiDocumentSchema,
  operatorIdentityResponseSchema,
  priceMatrixResponseSchema,
  priceResponseSchema,
  quoteResponseSchema,
  receiptResponseSchema,
  refundResponseSchema,
  serviceObjectivesResponseSchema,
} from './responses';
import {
  catalogSnapshotQuerySchema,
  catalogSnapshotResponseSchema,
  changelogResponseSchema,
  confirmationResponseSchema,
  confirmEventSchema,
  createEndpointSchema,
  endpointPathSchema,
  endpointResponseSchema,
  endpointStatsQuerySchema,
  endpointStatsResponseSchema,
  endpointsPageResponseSchema,
  endpointWithSecretResponseSchema,
  eventAcceptedResponseSchema,
  eventExpungedResponseSchema,
  eventHistoryResponseSchema,
  eventPathSchema,
  eventsPageResponseSchema,
  listEndpointsQuerySchema,
  listEventsQuerySchema,
  partnerDeliveriesQuerySchema,
  partnerEventsQuerySchema,
  partnerEventsResponseSchema,
  partnerKeyResponseSchema,
  partnerReplayRequestSchema,
  partnerRotationSchema,
  publishEventSchema,
  recoverRequestSchema,
  recoveryAcceptedResponseSchema,
  replayAcceptedResponseSchema,
  replayPathSchema,
  replayProgressResponseSchema,
  replayRequestSchema,
  rotatedSigningKeyResponseSchema,
  rotateSigningKeySchema,
  rotationSchema,
  testEventRequestSchema,
  testEventResponseSchema,
  updateEndpointSchema,
  webhookJwksResponseSchema,
} from './webhooks';

/** The cache bodies are defined beside their handlers; re-exported so every operation's schemas are here. */
export { invalidateCacheRequestSchema, warmCacheRequestSchema };

export interface ResponseHeader {
  readonly description: string;
  /** The values it takes, when it is an enumeration. */
  readonly values?: readonly string[];
}

export interface OperationResponse {
  readonly status: number;
  /** The body; absent for an answer without one (204). */
  readonly schema?: z.ZodType;
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
  window: 'The period: `1h` (default), `24h` or `7d`.',
  currency: 'Display currency (ISO 4217 or a crypto code such as `USDT`).',
  region: 'ISO 3166 region of the buyer, e.g. `DE`.',
  pricelist: 'A price list id; the price list in force by default.',
  channel: 'Sales channel (selects FX markup rules and promotions).',
  tenant: 'Tenant (selects overrides and the basket policy).',
  buyer_type: '`consumer` (default) or `business` (reverse charge where the tax rule says so).',
  revision: 'A catalog revision; the one in force by default.',
  pricelist_version: 'With fx_version and tax_rule_version: export exactly the parts a receipt pins.',
  delivery:
    '`link`: always a 303 to a download link of the gzip document; `inline` (default): in the body up to 5 MB, ' +
    'a link past that.',
  fx_version: 'With pricelist_version and tax_rule_version: the exchange-rate snapshot, e.g. `fx-3`.',
  tax_rule_version: 'With pricelist_version and fx_version: the tax rule version.',
  receipt_id: 'The receipt id (`rcpt_…`).',
  endpoint_id: 'The endpoint id (`ep_…`).',
  event_id: 'The event id (`evt_…`).',
  replay_id: 'The replay id (`rpl_…`).',
  as_of: 'The instant (ISO 8601 UTC with ms) whose catalog is wanted.',
  status:
    'Deliveries: `pending`, `delivered`, `retrying`, `stopped` or `dead`. Change requests: `pending_approval`, ' +
    '`approved`, `published`, `rejected` or `stale`.',
  cr_id: 'The change request id (`cr_…`).',
  from: 'Start of the time window (ISO 8601 UTC with ms), on the event `ts`; default 24 h before `to`.',
  to: 'End of the time window (ISO 8601 UTC with ms); default now.',
  limit: 'Page size (1–200, default 50).',
  cursor: 'The `cursor` of the previous page.',
};

const EXAMPLE_QUOTE_ID = 'q_01JQ4S6T1X5V8R2W3Y4Z5A6B7C';
const EXAMPLE_RECEIPT_ID = 'rcpt_01JQ4S6T1X5V8R2W3Y4Z5A6B7D';

/** What the operators' and the partner's recoveries answer, and their example window. */
const RECOVERY_STARTED = {
  status: 202,
  schema: recoveryAcceptedResponseSchema,
  description: 'The recovery was started.',
} as const;
const RECOVERY_WINDOW_EXAMPLE = { since: '2026-11-20T00:00:00.000Z', until: '2026-11-25T00:00:00.000Z' };

export const OPERATION_SCHEMAS: Readonly<Record<string, OperationSchemas>> = {
  health: {
    summary: 'Liveness of the service.',
    description:
      'Public and shallow: no component is called (a public route must not make the service spend calls on ' +
      'its dependencies, nor tell which is down). Operators read `GET /admin/health`.',
    response: { status: 200, schema: livenessResponseSchema, description: 'The service answers.' },
    errors: [500],
  },
  deepHealth: {
    summary: 'Health of every component, for operators.',
    description:
      'Each component (tables, queues, buckets, the local twins) is probed, with 2 s each; one report serves ' +
      'every request for 5 s. 200 when every component answers, 503 with the same body otherwise.',
    response: { status: 200, schema: healthResponseSchema, description: 'Every component is up.' },
    otherResponses: [
      { status: 503, schema: healthResponseSchema, description: 'At least one component is down.' },
    ],
    errors: [500],
  },
  createApiKey: {
    summary: 'Issue a caller key (C26).',
    description:
      'A key for one tenant with scopes (`prices:read`, `quotes:write`, `receipts:read`, `refunds:write`, ' +
      '`chargebacks:write`), optionally limited to channels, with the customer groups its requests may name ' +
      '(`customer_groups`, C29; none by default). The secret (`key`, `mck_…`) is in this answer ' +
      'only and stored as its SHA-256; a replayed answer (same Idempotency-Key) is stored encrypted. Calls ' +
      "with the key act for its tenant: a body or query naming another tenant is refused (403), another tenant's " +
      'quotes and receipts are not found (404). A storefront key never holds `chargebacks:write`: give that ' +
      "to the payment provider's key.",
    body: createApiKeySchema,
    response: {
      status: 201,
      schema: apiKeyWithSecretResponseSchema,
      description: 'The key and its secret.',
    },
    errors: [400, 413],
    idempotent: true,
    example: {
      tenant: 'retail-partner-nordic',
      scopes: ['prices:read', 'quotes:write'],
      customer_groups: ['b2b-gold'],
    },
  },
  listApiKeys: {
    summary: 'Caller keys, newest first (never their secrets).',
    query: listApiKeysQuerySchema,
    response: { status: 200, schema: apiKeysPageResponseSchema, description: 'A page of keys.' },
    errors: [400],
  },
  revokeApiKey: {
    summary: 'Revoke a caller key.',
    description:
      'Every secret of the key stops working within the authorizer cache time (30 s). Revoking a revoked key ' +
      'answers the same record.',
    path: apiKeyPathSchema,
    response: { status: 200, schema: apiKeyResponseSchema, description: 'The revoked key.' },
    errors: [400, 404],
  },
  rotateApiKey: {
    summary: 'A new secret for a caller key.',
    description:
      'The new secret is in this answer only. The current one keeps working for `overlap_hours` (default 24, ' +
      'at most 168); `0` ends it at once (a leaked key). A secret older than the current one stops now.',
    path: apiKeyPathSchema,
    body: rotateApiKeySchema,
    response: {
      status: 200,
      schema: apiKeyWithSecretResponseSchema,
      description: 'The key and its new secret.',
    },
    errors: [400, 404, 409, 413, 422],
    idempotent: true,
    example: { overlap_hours: 24 },
  },
  rotatePartnerKey: {
    summary: "Rotate the endpoint's partner key.",
    description:
      'The new partner key (`pk_…`) is in this answer only. The previous one works for `overlap_hours` (default ' +
      '24, at most 168; `0`: it stops now). A disabled or deleted endpoint has no working partner key.',
    path: endpointPathSchema,
    body: rotationSchema,
    response: { status: 200, schema: partnerKeyResponseSchema, description: 'The endpoint and its new key.' },
    errors: [400, 404, 409, 413],
    idempotent: true,
    example: { overlap_hours: 24 },
  },
  getPrice: {
    summary: 'Display price of one SKU in a currency and region.',
    description:
      'One unit priced through the whole engine (promotions, taxes and fees that apply to it alone), with the ' +
      'versions that produced it. May be served stale-while-revalidate (C18): 300 s for stable currencies, ' +
      '30 s for volatile ones. `unit_price` and `display_price` are rounded once from the exact value in the ' +
      "display rule's `rounding_mode`, as a quote line shows them (C19). `customer_groups` (comma-separated, at " +
      'most 10): the lowest price any of the buyer’s groups gives (C29); groups the catalog does not target ' +
      'change nothing; each must be one of the caller key’s `customer_groups` (403 otherwise). `explain=true` adds `explain`, every step of the calculation (C28); such an answer is ' +
      'computed fresh, bypasses the price cache and is not cacheable (`Cache-Control: no-store`, `X-Cache: ' +
      'bypass`). No price: 422 `price_not_available` with every reason in `reasons`.',
    query: priceQuerySchema,
    response: {
      status: 200,
      schema: priceResponseSchema,
      description: 'The price.',
      headers: {
        'X-Cache': {
          description: 'Which cache tier answered (C18); `bypass`: an explained price, computed fresh.',
          values: ['hit-local', 'hit-shared', 'miss', 'bypass'],
        },
      },
    },
    errors: [400, 404, 422, 503],
    cacheable: true,
  },
  priceMatrix: {
    summary: "A SKU's prices across regions and currencies (operators).",
    description:
      'One unit of the SKU priced as `GET /catalog/prices` prices it, in every region and currency the catalog ' +
      "displays (each display rule's currency whitelist): a price per cell, or why there is none (the storefront's " +
      "422). `explain=true` adds each price's explanation (C28); `tenant` prices a tenant the catalog prices apart.",
    query: priceMatrixQuerySchema,
    response: { status: 200, schema: priceMatrixResponseSchema, description: 'The prices.' },
    errors: [400, 404, 503],
  },
  getLimits: {
    summary: 'Maximum winnings in a currency and region.',
    description: 'Kept in the catalog currency; the equivalent is fixed by `fx_version` (rule 15).',
    query: limitsQuerySchema,
    response: { status: 200, schema: limitsResponseSchema, description: 'The limit and its equivalent.' },
    errors: [400, 404, 422, 503],
  },
  importCatalog: {
    summary: 'Validate a whole catalog document and open a change request of kind `catalog` for it (C23).',
    description:
      'Nothing is published yet: the answer is the change request (`pending_approval`) with its diff against ' +
      'what is in force and its guardrail findings. Two operators other than the author approve it at ' +
      '`POST /admin/change-requests/{cr_id}/approve`; the second approval publishes it. The document may carry ' +
      '`effective_from`. A document larger than a request body (256 KB) is uploaded first ' +
      '(`POST /admin/catalog/uploads`) and imported by its `upload_id` (with an optional `effective_from`); a ' +
      'missing or unreadable upload is a 400 naming `upload_id`, one past 32 MB (stored or decompressed) a 413.',
    body: catalogDocumentSchema.or(importByUploadSchema),
    response: { status: 202, schema: changeRequestResponseSchema, description: 'Change request opened.' },
    errors: [400, 413, 503],
    idempotent: true,
  },
  createChangeRequest: {
    summary: 'Request a change of catalog data (C23).',
    description:
      'The payload is in the import format: a whole document for `catalog`, else only the sections of its ' +
      'kind, applied to what is in force. A `patch` (C30) carries `operations` instead: `set` or `remove` of ' +
      'single entries named by id (a refused operation is a 400 naming its index and path); at publication ' +
      'they are applied again to what is in force then, and the request is `stale` if another publication ' +
      'changed an entry they name. Validated whole (a 400 lists every problem with its path), diffed ' +
      '(prices per SKU and currency with the move in percent) and checked against guardrails (a price below ' +
      '`min_price`, a price or rate move beyond the configured maximum, a tax rate change), which each approver ' +
      'must acknowledge.',
    body: createChangeRequestSchema,
    response: { status: 201, schema: changeRequestResponseSchema, description: 'Change request opened.' },
    errors: [400, 413, 503],
    idempotent: true,
    example: {
      kind: 'promotions',
      payload: { promotions: [] },
      effective_from: '2026-12-01T00:00:00.000Z',
      note: 'End every promotion on 1 December',
    },
  },
  listChangeRequests: {
    summary: 'Change requests, newest first.',
    query: listChangeRequestsQuerySchema,
    response: {
      status: 200,
      schema: changeRequestsPageResponseSchema,
      description: 'A page of change requests.',
    },
    errors: [400, 503],
  },
  getChangeRequest: {
    summary: 'One change request with its diff.',
    path: changeRequestPathSchema,
    response: { status: 200, schema: changeRequestResponseSchema, description: 'The change request.' },
    errors: [400, 404, 503],
  },
  approveChangeRequest: {
    summary: 'Approve a change request; the second distinct approver publishes it.',
    description:
      'The author cannot approve (403). The same approver twice counts once. Guardrails the change trips must ' +
      'be listed in `acknowledge` (else 422 `invalid_state` naming them). A decided request answers 409 ' +
      '`conflict`. On the second approval the change is three-way merged onto what is in force, published as ' +
      'new versions with its catalog events, signed (DSSE) and journaled; a change that conflicts with a ' +
      'publication made since is marked `stale` and never publishes.',
    path: changeRequestPathSchema,
    body: approveChangeRequestSchema,
    response: { status: 200, schema: changeRequestResponseSchema, description: 'The change request now.' },
    errors: [400, 403, 404, 409, 422, 503],
    idempotent: true,
    example: { comment: 'Checked against the supplier list', acknowledge: ['price_move'] },
  },
  rejectChangeRequest: {
    summary: 'Reject a pending change request with a comment.',
    path: changeRequestPathSchema,
    body: rejectChangeRequestSchema,
    response: { status: 200, schema: changeRequestResponseSchema, description: 'The change request now.' },
    errors: [400, 404, 409, 503],
    idempotent: true,
    example: { comment: 'Prices for GB are not agreed yet' },
  },
  getRelease: {
    summary: 'The DSSE-signed release of a published change request.',
    description:
      'Payload type `application/vnd.pricing.release+json`; the payload is the JCS of `{ cr_id, kind, versions, ' +
      'content_sha256, author, approvers, effective_from }`; the signature is ECDSA P-256 over the DSSE PAE, ' +
      'verifiable with `GET /keys` (`npm run verify-release`).',
    path: changeRequestPathSchema,
    response: { status: 200, schema: releaseResponseSchema, description: 'The DSSE envelope.' },
    errors: [400, 404, 503],
  },
  getJournalHead: {
    summary: 'The latest signed tree head of the audit journal.',
    description:
      'Every release, automatic rate publication and protection decision is an entry of a write-once journal ' +
      '(RFC 9162 Merkle tree). A signed head closes each slice (every `JOURNAL_SLICE_SIZE` entries or every ' +
      '`JOURNAL_SLICE_SECONDS`); its DSSE envelope verifies with `GET /keys`.',
    response: { status: 200, schema: signedTreeHeadSchema, description: 'The latest signed head.' },
    errors: [404, 503],
  },
  listJournalHeads: {
    summary: 'Signed tree heads in tree size order.',
    query: journalHeadsQuerySchema,
    response: { status: 200, schema: journalHeadsPageResponseSchema, description: 'A page of heads.' },
    errors: [400, 503],
  },
  getJournalEntry: {
    summary: 'One journal entry with its inclusion proof.',
    description:
      'Proved against the latest signed head, or the signed head of `tree_size`. An entry no signed head covers ' +
      'yet answers 409 `conflict` with `index` and `sealed_size`: it becomes provable when its slice closes.',
    path: journalEntryPathSchema,
    query: journalEntryQuerySchema,
    response: { status: 200, schema: journalEntryResponseSchema, description: 'The entry and its proof.' },
    errors: [400, 404, 409, 503],
  },
  getJournalConsistency: {
    summary: 'Consistency proof between two signed tree heads.',
    query: journalConsistencyQuerySchema,
    response: {
      status: 200,
      schema: journalConsistencyResponseSchema,
      description: 'Both heads and the proof.',
    },
    errors: [400, 404, 503],
  },
  exportJournal: {
    summary:
      'Every sealed entry and every signed head, by page (at most 2 000 entries each) pinned to the head of the first, for `npm run verify-journal`.',
    query: journalExportQuerySchema,
    response: {
      status: 200,
      schema: journalExportResponseSchema,
      description: 'One page of the journal export.',
    },
    errors: [400, 503],
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
    otherResponses: [
      {
        status: 303,
        schema: exportLinkResponseSchema,
        description:
          'The document is larger than 5 MB (or `delivery=link` was asked): stored once as gzip JSON, its ' +
          'pre-signed download URL in `Location` and in the body, valid 15 minutes. Follow it without credentials.',
        headers: { Location: { description: 'The pre-signed download URL.' } },
      },
    ],
    errors: [400, 404, 503],
  },
  createCatalogUpload: {
    summary: 'A link to upload a catalog document too large for a request body (above 256 KB).',
    description:
      'PUT the document (plain JSON or gzip) to `url` before `expires_at`, then import it with ' +
      '`POST /admin/catalog/import` and `{ "upload_id": … }`. Uploads are kept a day. `npm run catalog -- import ' +
      '<file>` does all three for a file larger than a request body. The size is signed into the link: S3 ' +
      'refuses a body of any other length.',
    body: createUploadRequestSchema,
    example: { bytes: 7_340_032 },
    response: {
      status: 201,
      schema: catalogUploadResponseSchema,
      description: 'Where and how to upload, valid 15 minutes.',
    },
    errors: [400, 503],
    idempotent: true,
  },
  getCatalogHistory: {
    summary: "The versions in which a SKU's price item, or a pair's rate, changed (C30).",
    description:
      'Give exactly one of `sku` and `pair`. One entry per part version that changed the entry (a SKU has one ' +
      'per price list; `pricelist` and `currency` narrow them), newest first: the value in that version (null ' +
      'when removed), `pricelist_version` or `fx_version`, the publication (`revision`, `effective_from`), the ' +
      'change request (`cr_id`, author, approvers with their time) and the release (`GET /audit/releases/{cr_id}`, ' +
      'its journal entry). An automatic rate tick has no change request; its record is the journal entry ' +
      '`fx-publication:<fx_version>`. A page holds at most `limit` entries (possibly fewer, with a `cursor`, for ' +
      'versions published before the history index existed).',
    query: catalogHistoryQuerySchema,
    response: {
      status: 200,
      schema: catalogHistoryResponseSchema,
      description: 'A page of the history, newest first.',
    },
    errors: [400, 503],
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
  whoAmI: {
    summary: 'The signed-in operator.',
    description:
      'The identity four-eyes counts (C27) and its roles; `machine` principals never approve. The console offers ' +
      'only what these roles may do.',
    response: { status: 200, schema: operatorIdentityResponseSchema, description: 'The operator.' },
    errors: [],
  },
  getServiceObjectives: {
    summary: 'Service-level objectives: target, measured value, samples and status of each.',
    description:
      'The objectives of rule 18 and "Limits": committed total = quoted total, commits inside the rate lock, ' +
      'signed receipts with their versions, p95 latency of price reads and quotes, webhook first-attempt ' +
      'success and latency to 2xx, the delivery DLQ depth, open FX breakers, and availability. Window figures ' +
      'come from CloudWatch (last 24 h) in AWS and from the in-process counters locally; the DLQ depth and the ' +
      'breakers are read live. Each has the same alarm in CloudWatch.',
    response: {
      status: 200,
      schema: serviceObjectivesResponseSchema,
      description: 'Every objective with its status.',
    },
    errors: [503],
  },
  quote: {
    summary: 'Quote a basket: a signed price locked to its versions for `lock_ttl` seconds.',
    description:
      'Order of calculation: base price, discounts, taxes, fees, rounding. Always priced from fresh catalog ' +
      'data. At most 100 lines and 10 000 per line (C22). `customer_groups` (at most 10) gives the buyer the ' +
      'lowest price any of its groups gives (C29) and is recorded in the quote’s basket; each must be one of ' +
      'the caller key’s `customer_groups` (403 otherwise). `"explain": true` adds ' +
      '`explain`, every step per line and for the basket (C28), beside the signed quote: it is neither signed ' +
      'nor stored. No price: 422 `price_not_available` with every reason in `reasons`. A quantity its ' +
      "product's `quantity_rules` refuse (min, max, increment): 422 `quantity_not_allowed` naming every such line.",
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
    description:
      "The refund fee is taken from the catalog on the refund's date (rule 13). The `Idempotency-Key` is " +
      '**required** (400 without it): a retry with it gets the same refund, never a second one.',
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
  operatorReceipt: {
    summary: 'A receipt of any tenant (operators).',
    description:
      'As `GET /receipts/{receipt_id}` without the tenant bound: support and the console read any receipt with its ' +
      'refunds; it verifies against `GET /keys` like any other (the signature covers the receipt as issued: without ' +
      '`refunds`, with `status` `issued`).',
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
  createEndpoint: {
    summary: 'Register a partner endpoint (C12, C24).',
    description:
      'Events are POSTed to `<url>/<topic>`. The signing secret (`whsec_…`) is in this answer only; it is stored ' +
      'encrypted. `topics` empty or absent: every topic. `version` pins the envelope version (default: latest). ' +
      'A replayed answer (same Idempotency-Key) carries the same secret; it is stored encrypted. `dpop_jwk` (a ' +
      "public EC P-256 or Ed25519 JWK; a private key is refused) makes the partner's callbacks " +
      '(`POST /partner/confirmations`) need a DPoP proof made with that key.',
    body: createEndpointSchema,
    response: {
      status: 201,
      schema: endpointWithSecretResponseSchema,
      description: 'The endpoint and its secret.',
    },
    errors: [400, 413],
    idempotent: true,
    example: {
      url: 'https://partner.example/webhooks/v1',
      topics: ['catalog', 'payout'],
      description: 'ERP',
    },
  },
  listEndpoints: {
    summary: 'List endpoints.',
    query: listEndpointsQuerySchema,
    response: { status: 200, schema: endpointsPageResponseSchema, description: 'A page of endpoints.' },
    errors: [400],
  },
  getEndpoint: {
    summary: 'One endpoint (never its secret).',
    path: endpointPathSchema,
    response: { status: 200, schema: endpointResponseSchema, description: 'The endpoint.' },
    errors: [400, 404],
  },
  updateEndpoint: {
    summary: 'Change an endpoint.',
    description:
      'Setting `status` to `enabled` re-enables an endpoint disabled by a 410 answer. `dpop_jwk` sets the DPoP ' +
      'key of the partner\'s callbacks; `"dpop_jwk": null` removes it (callbacks then need no proof).',
    path: endpointPathSchema,
    body: updateEndpointSchema,
    response: { status: 200, schema: endpointResponseSchema, description: 'The endpoint as changed.' },
    errors: [400, 404, 413],
    example: { topics: ['catalog'] },
  },
  deleteEndpoint: {
    summary: 'Delete an endpoint; its pending deliveries stop with reason `endpoint_deleted`.',
    path: endpointPathSchema,
    response: { status: 204, description: 'Deleted (no body).' },
    errors: [400, 404],
  },
  rotateEndpointSecret: {
    summary: 'Rotate the signing secret.',
    description:
      'The new secret is in this answer only. For `overlap_hours` (default 24, at most 168) both signatures are ' +
      'sent (space-separated in `X-Signature`), then only the new one. `overlap_hours: 0` is the emergency form ' +
      'for a leaked secret: every old secret stops at once. The rotation is conditional on the endpoint as read ' +
      '(a concurrent change retries). A replayed answer (same Idempotency-Key) carries the same secret.',
    path: endpointPathSchema,
    body: rotationSchema,
    response: {
      status: 200,
      schema: endpointWithSecretResponseSchema,
      description: 'The endpoint and its new secret.',
    },
    errors: [400, 404, 413],
    idempotent: true,
  },
  expungeEvent: {
    summary: "Expunge an event's body.",
    description:
      "Removes the event's `data` for good (a data-protection request, a payload sent by mistake). The envelope's " +
      'identifiers, the fan-out and every attempt stay, with `expunged_at` and `expunged_by` in the history; ' +
      'deliveries still to be made stop with `event_expunged`, and no replay sends it again. Expunging again ' +
      'answers the first record; an event whose body expired already answers `body: "expired"`.',
    path: eventPathSchema,
    response: { status: 200, schema: eventExpungedResponseSchema, description: 'The body is gone.' },
    errors: [400, 404],
    idempotent: true,
  },
  endpointStats: {
    summary: "An endpoint's delivery figures.",
    description:
      'Over the last hour (`window=1h`, the default), day (`24h`) or week (`7d`): HTTP attempts, the share that got ' +
      'a 2xx, latency p50 and p95 (the upper bounds of the buckets 50, 100, 250, 500 ms, 1, 2.5, 5, 10, 30 s that ' +
      'hold them) and attempts by status class (`network`: no HTTP answer). Counted per 5-minute slot as the ' +
      'attempts are made, so the window is read as the slots it overlaps; replays and recoveries count too.',
    path: endpointPathSchema,
    query: endpointStatsQuerySchema,
    response: { status: 200, schema: endpointStatsResponseSchema, description: 'The figures.' },
    errors: [400, 404],
  },
  recoverEndpoint: {
    summary: 'Recover what an endpoint missed.',
    description:
      "Re-delivers the endpoint's deliveries of events produced between `since` and `until` that it missed: " +
      '`skipped` (it was disabled when they were produced), `dead` and `stopped`. It runs as a replay of its own ' +
      '(`recovery_id`; progress at `GET /webhooks/replays/{recovery_id}`), each attempt in the delivery history with ' +
      'that id. The endpoint must be enabled first (422 `invalid_state` otherwise). Only the missed deliveries ' +
      'count: a window with more than 5 000 of them is refused (400: recover it in parts), and so is one whose ' +
      'missed deliveries include events older than 7 days (422: receivers forget ids after 7 days; ' +
      '`POST /webhooks/replay` with `force` sends those). What the endpoint received in the window limits nothing.',
    path: endpointPathSchema,
    body: recoverRequestSchema,
    response: RECOVERY_STARTED,
    errors: [400, 404, 409, 413],
    idempotent: true,
    example: RECOVERY_WINDOW_EXAMPLE,
  },
  sendTestEvent: {
    summary: 'Send a test event to one endpoint.',
    description:
      "The example of `type` (a real event's shape) as a new event marked `test: true` in its envelope, sent to " +
      'this endpoint only, whatever topics, event types or filter it has: signed, retried and listed in the ' +
      'history like any delivery (`GET /webhooks/events/{event_id}` at `Location`). A receiver should verify it ' +
      'and apply nothing.',
    path: endpointPathSchema,
    body: testEventRequestSchema,
    response: { status: 202, schema: testEventResponseSchema, description: 'Sent to the delivery pipeline.' },
    errors: [400, 404, 413],
    idempotent: true,
  },
  publishEvent: {
    summary: 'Publish an event of another producer.',
    description:
      'Accepted into the outbox (202) and delivered at least once to every matching endpoint. A ' +
      '`payout.processed` payload needs `payout_id`, `status`, `amount_minor` (integer) and `currency` (ISO 4217). ' +
      'A payload with a card number or an e-mail address is refused (422 `personal_data_not_allowed`); catalog ' +
      'events come from the catalog only. A producer may give its own `event_id` (C25), which becomes the ' +
      "event's id in its envelope: publishing it again with the same content answers 200 with the existing " +
      'event (nothing is published twice), with other content 409 `conflict`.',
    body: publishEventSchema,
    response: { status: 202, schema: eventAcceptedResponseSchema, description: 'Accepted.' },
    otherResponses: [
      {
        status: 200,
        schema: eventAcceptedResponseSchema,
        description: "A repeat of a producer's `event_id`: the event published before.",
      },
    ],
    errors: [400, 413, 422],
    idempotent: true,
    example: {
      type: 'payout.processed',
      data: { payout_id: 'po_123', status: 'paid', amount_minor: 1250, currency: 'EUR' },
      producer: 'payments',
    },
  },
  listEvents: {
    summary: 'Events in a time window, by endpoint and delivery status.',
    query: listEventsQuerySchema,
    response: {
      status: 200,
      schema: eventsPageResponseSchema,
      description: 'A page of events, oldest first.',
    },
    errors: [400],
  },
  showEvent: {
    summary: 'An event as first sent and every delivery attempt per endpoint (C16).',
    description: 'After the body expires (30 days) the history stays, with `envelope: null`.',
    path: eventPathSchema,
    response: {
      status: 200,
      schema: eventHistoryResponseSchema,
      description: 'The event and its deliveries.',
    },
    errors: [400, 404],
  },
  replay: {
    summary: 'Deliver events again (C15).',
    description:
      'Exactly one of `event_ids` or `from`/`to`; optionally `endpoint_id` and `status`. Deliveries in a final ' +
      'state (`dead`, `stopped`, `delivered`) are sent again with the same `event_id` and the next `attempt`; ' +
      'pending or retrying ones are counted in `skipped` unless `"force": true` (which restarts them too, e.g. ' +
      'after the queue dead-lettered their message). Events older than 7 days need `"force": true`.',
    body: replayRequestSchema,
    response: { status: 202, schema: replayAcceptedResponseSchema, description: 'The replay was started.' },
    errors: [400, 404, 413, 422],
    idempotent: true,
    example: { from: '2026-11-22T00:00:00.000Z', to: '2026-11-22T12:00:00.000Z', status: 'dead' },
  },
  showReplay: {
    summary: 'Progress of a replay.',
    path: replayPathSchema,
    response: {
      status: 200,
      schema: replayProgressResponseSchema,
      description: 'The replay and where each delivery is.',
    },
    errors: [400, 404],
  },
  partnerEvents: {
    summary: "A partner's own events in a time window (resync).",
    description:
      'With the partner key of an endpoint: the events fanned out to that endpoint with `from ≤ ts ≤ to` ' +
      '(default: the last 24 hours), oldest first, as the endpoint receives them (`attempt` 1). Events whose ' +
      "bodies expired (30 days), and events the endpoint's filter kept from it, are left out.",
    query: partnerEventsQuerySchema,
    response: { status: 200, schema: partnerEventsResponseSchema, description: 'A page of envelopes.' },
    errors: [400],
  },
  partnerEndpoint: {
    summary: "The partner's own endpoint.",
    description:
      'With the partner key of an endpoint (the partner portal): that endpoint as operators see it — URL or ' +
      'destination, topics, event types, filter, limits, ordering, signing scheme, status — never a secret.',
    response: { status: 200, schema: endpointResponseSchema, description: 'The endpoint.' },
    errors: [],
  },
  partnerEndpointStats: {
    summary: "The partner's endpoint health.",
    description: 'As `GET /webhooks/endpoints/{endpoint_id}/stats`, for the endpoint of the partner key.',
    query: endpointStatsQuerySchema,
    response: { status: 200, schema: endpointStatsResponseSchema, description: 'The figures.' },
    errors: [400],
  },
  partnerRotateSecret: {
    summary: "Rotate the partner's signing secret.",
    description:
      'As `POST /webhooks/endpoints/{endpoint_id}/rotate-secret`, for the endpoint of the partner key: the new ' +
      'secret is in this answer only; the old one is still sent for `overlap_hours` (default 24, at least 1: ending ' +
      'the old secret at once is for operators, so a leaked partner key cannot cut the receiver off).',
    body: partnerRotationSchema,
    response: {
      status: 200,
      schema: endpointWithSecretResponseSchema,
      description: 'The endpoint and its new secret.',
    },
    errors: [400, 413],
    idempotent: true,
  },
  partnerTestEvent: {
    summary: "Send a test event to the partner's endpoint.",
    description:
      'As `POST /webhooks/endpoints/{endpoint_id}/test`: the example of the type, signed and marked `test: true`, ' +
      "to the partner key's endpoint only; its history at `GET /partner/deliveries/{event_id}`.",
    body: testEventRequestSchema,
    response: { status: 202, schema: testEventResponseSchema, description: 'Sent to the delivery pipeline.' },
    errors: [400, 413],
    idempotent: true,
    example: { type: 'catalog.PriceListUpdated' },
  },
  partnerDeliveries: {
    summary: "The partner's own deliveries in a window.",
    description:
      "Each event delivered (or being delivered) to the partner key's endpoint with `from ≤ ts ≤ to` (default: the " +
      'last 24 hours), newest last, with that delivery only; `status` keeps one status.',
    query: partnerDeliveriesQuerySchema,
    response: { status: 200, schema: eventsPageResponseSchema, description: 'A page of events.' },
    errors: [400],
  },
  partnerDelivery: {
    summary: "One of the partner's events and its attempts.",
    description:
      "The envelope and the partner's own delivery with every attempt. An event its endpoint never got is not found " +
      "(404), whether or not it exists; other endpoints' deliveries and the operators' records are never shown.",
    path: eventPathSchema,
    response: { status: 200, schema: eventHistoryResponseSchema, description: 'The event and its delivery.' },
    errors: [400, 404],
  },
  partnerReplay: {
    summary: "Deliver the partner's own events again.",
    description:
      'As `POST /webhooks/replay` restricted to the endpoint of the partner key: by `event_ids` or a `from`/`to` ' +
      "window, optionally only deliveries in one `status`. Another endpoint's events match nothing.",
    body: partnerReplayRequestSchema,
    response: { status: 202, schema: replayAcceptedResponseSchema, description: 'The replay was started.' },
    errors: [400, 413, 422],
    idempotent: true,
    example: { from: '2026-11-20T00:00:00.000Z', to: '2026-11-21T00:00:00.000Z', status: 'dead' },
  },
  partnerRecover: {
    summary: 'Recover what the partner missed.',
    description:
      'As `POST /webhooks/endpoints/{endpoint_id}/recover` for the endpoint of the partner key: what it missed between ' +
      '`since` and `until` (skipped, dead, stopped) is delivered again; progress at `GET /partner/replays/{recovery_id}`.',
    body: recoverRequestSchema,
    response: RECOVERY_STARTED,
    errors: [400, 409, 413, 422],
    idempotent: true,
    example: RECOVERY_WINDOW_EXAMPLE,
  },
  partnerReplayProgress: {
    summary: "Progress of one of the partner's replays.",
    description:
      "As `GET /webhooks/replays/{replay_id}`, for the partner's own replays and recoveries only (404 otherwise).",
    path: replayPathSchema,
    response: { status: 200, schema: replayProgressResponseSchema, description: 'Its progress.' },
    errors: [400, 404],
  },
  catalogSnapshot: {
    summary: 'The catalog in force at a time, with its versions (resync).',
    query: catalogSnapshotQuerySchema,
    response: { status: 200, schema: catalogSnapshotResponseSchema, description: 'The snapshot.' },
    errors: [400, 404],
  },
  confirmEvent: {
    summary: 'Confirm what the partner did with an event it received (partner callback).',
    description:
      'With the partner key of an endpoint, and a **required** `Idempotency-Key` (400 without it): records ' +
      "`outcome` (`accepted`, `rejected` or `failed`) and the partner's `reference` (1–200 characters, no control " +
      'characters) on the delivery of `event_id` to that endpoint, once, however often and however concurrently ' +
      'the call is retried. The same key and body answer the stored 201 (`Idempotent-Replayed: true`); the same ' +
      'key with another body 422 `idempotency_key_reused`; a second confirmation of the event with another key ' +
      '409 `conflict` with the confirmation that stands in `confirmation`. An event never delivered to the ' +
      "partner's endpoint is 404. An endpoint registered with a `dpop_jwk` needs a DPoP proof (RFC 9449) in the " +
      '`DPoP` header: `typ` `dpop+jwt`, signed with that key (`ES256` for P-256, `EdDSA`/`Ed25519` for ' +
      'Ed25519) and carrying it as `jwk`, `htm` `POST`, `htu` the URL called without query (`https://<host>' +
      '[/<stage>]/partner/confirmations`), `iat` within 60 s of the server clock, a `jti` never used before and ' +
      '`ath`, the base64url SHA-256 of the partner key it comes with; ' +
      'a refused proof is 401 with `WWW-Authenticate: DPoP error="invalid_dpop_proof"`.',
    body: confirmEventSchema,
    response: {
      status: 201,
      schema: confirmationResponseSchema,
      description: 'The confirmation as recorded.',
    },
    errors: [400, 401, 404, 409, 413, 422],
    idempotent: true,
    example: { event_id: 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7E', outcome: 'accepted', reference: 'po-123/booked' },
  },
  getChangelog: {
    summary: 'Envelope versions and event types (C24).',
    response: { status: 200, schema: changelogResponseSchema, description: 'The changelog.' },
    errors: [],
    cacheable: true,
  },
  getWebhookJwks: {
    summary: 'The Ed25519 webhook signing keys (C33), as a JWKS.',
    description:
      'Deliveries of endpoints with signing_algorithm "ed25519" carry a v1a signature and the signing key\'s id in ' +
      'X-Signature-Key-Id. A key is listed from its rotation (a day before it signs) until 7 days after the next ' +
      'one took over. Fetch again when a delivery names a kid you do not have.',
    response: { status: 200, schema: webhookJwksResponseSchema, description: 'The keys.' },
    errors: [],
    cacheable: true,
  },
  rotateSigningKey: {
    summary: 'Rotate the Ed25519 webhook signing key (C33).',
    description:
      'Adds the next key: in the JWKS at once, signing from activate_in_seconds from now (default a day). The ' +
      'key it supersedes stays in the JWKS for 7 days after that. Private keys never leave the service: they are ' +
      'stored encrypted with the secrets key.',
    body: rotateSigningKeySchema,
    response: { status: 201, schema: rotatedSigningKeyResponseSchema, description: 'The new key.' },
    errors: [400, 409, 413],
    idempotent: true,
    example: { activate_in_seconds: 86_400 },
  },
  getEventTypes: {
    summary:
      'The event-type catalog (C33): every type the service sends, with its data schema and an example.',
    response: { status: 200, schema: eventTypesResponseSchema, description: 'The catalog.' },
    errors: [],
    cacheable: true,
  },
  getAsyncApi: {
    summary: 'The AsyncAPI 3.0 document of the webhooks (C33).',
    response: { status: 200, schema: asyncApiDocumentSchema, description: 'The AsyncAPI document.' },
    errors: [],
    cacheable: true,
  },
  getOpenApi: {
    summary: 'This OpenAPI 3.1 document.',
    response: { status: 200, schema: openApiDocumentSchema, description: 'The OpenAPI document.' },
    errors: [],
    cacheable: true,
  },
};
