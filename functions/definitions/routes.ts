/**
 * The HTTP route table. The CDK API creates exactly these resources and methods; the local gateway matches
 * requests against the same list; the `api` function's router dispatches on `operation`.
 */
import type { CallerScope, OperatorRole } from '../domain/access/principals';
import type { FunctionId } from './functions';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * `none`: open (health). `api_key`: catalog callers (`x-api-key`: a tenant's caller key, C26, resolved by the
 * caller-key authorizer — a Lambda REQUEST authorizer in AWS, the same code in the local gateway).
 * `admin`: operators (IAM SigV4 in AWS; `Authorization: Bearer <token>` of `ADMIN_TOKENS` locally, C27).
 * `partner`: a partner's own key (`Authorization: Bearer <partner key>`, issued with its endpoint), checked by
 * the function itself: the gateway lets the request through.
 */
export type RouteAuth = 'none' | 'api_key' | 'admin' | 'partner';

/** The roles of every read-only operator route: any operator may read, the auditor only reads. */
const OPERATOR_READ: readonly OperatorRole[] = ['author', 'approver', 'endpoint_admin', 'auditor'];

export interface RouteDefinition {
  readonly method: HttpMethod;
  /** API Gateway resource path; `{name}` segments are path parameters. */
  readonly path: string;
  readonly function: FunctionId;
  readonly operation: string;
  readonly auth: RouteAuth;
  /** `api_key` routes: the key needs one of these scopes (the authorization matrix, docs/security.md). */
  readonly scopes?: readonly CallerScope[];
  /** `admin` routes: the operator needs one of these roles. */
  readonly roles?: readonly OperatorRole[];
  readonly summary: string;
}

export const ROUTES = [
  {
    method: 'GET',
    path: '/health',
    function: 'api',
    operation: 'health',
    auth: 'none',
    summary: 'Liveness: the service answers (no component is called; operators use GET /admin/health).',
  },
  {
    method: 'GET',
    path: '/catalog/prices',
    function: 'catalog',
    operation: 'getPrice',
    auth: 'api_key',
    scopes: ['prices:read'],
    summary: 'Display price of one SKU in a currency and region, with its versions and tax breakdown.',
  },
  {
    method: 'GET',
    path: '/admin/catalog/prices',
    function: 'catalog',
    operation: 'priceMatrix',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary:
      "A SKU's price in every region and currency the catalog displays, with the explanation on request.",
  },
  {
    method: 'GET',
    path: '/catalog/limits',
    function: 'catalog',
    operation: 'getLimits',
    auth: 'api_key',
    scopes: ['prices:read'],
    summary: 'Maximum winnings in the catalog currency and their equivalent, fixed by fx_version (rule 15).',
  },
  {
    method: 'POST',
    path: '/pricing/quote',
    function: 'checkout',
    operation: 'quote',
    auth: 'api_key',
    scopes: ['quotes:write'],
    summary:
      'Price a basket with a rate lock and a signature; the quote can be committed until the lock ends.',
  },
  {
    method: 'POST',
    path: '/pricing/commit',
    function: 'checkout',
    operation: 'commit',
    auth: 'api_key',
    scopes: ['quotes:write'],
    summary: 'Commit a quote into a KMS-signed receipt pinning its three versions; one quote, one receipt.',
  },
  {
    method: 'POST',
    path: '/pricing/refund',
    function: 'checkout',
    operation: 'refund',
    auth: 'api_key',
    scopes: ['refunds:write', 'chargebacks:write'],
    summary: "A return or chargeback recalculated with the receipt's stored versions.",
  },
  {
    method: 'GET',
    path: '/receipts/{receipt_id}',
    function: 'checkout',
    operation: 'getReceipt',
    auth: 'api_key',
    scopes: ['receipts:read'],
    summary: 'A receipt with its status and refunds.',
  },
  {
    method: 'GET',
    path: '/admin/receipts/{receipt_id}',
    function: 'checkout',
    operation: 'operatorReceipt',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary: "A receipt of any tenant with its refunds (support, the console's receipt view).",
  },
  {
    method: 'GET',
    path: '/openapi.json',
    function: 'api',
    operation: 'getOpenApi',
    auth: 'none',
    summary: 'This OpenAPI 3.1 document.',
  },
  {
    method: 'GET',
    path: '/keys',
    function: 'api',
    operation: 'getKeys',
    auth: 'none',
    summary: 'Public keys (JWKS) that verify receipts offline; retired keys stay listed.',
  },
  {
    method: 'POST',
    path: '/admin/catalog/import',
    function: 'admin',
    operation: 'importCatalog',
    auth: 'admin',
    roles: ['author'],
    summary:
      'Validate a whole catalog document and open a change request for it (published after two approvals).',
  },
  {
    method: 'POST',
    path: '/admin/catalog/uploads',
    function: 'admin',
    operation: 'createCatalogUpload',
    auth: 'admin',
    roles: ['author'],
    summary:
      'A link to upload a catalog document too large for a request body (gzip or JSON, one PUT), imported by its upload_id.',
  },
  {
    method: 'GET',
    path: '/admin/catalog/export',
    function: 'admin',
    operation: 'exportCatalog',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary:
      'The catalog in force (or of a revision) in the import format; past 5 MB (or with delivery=link), a 303 to a download link.',
  },
  {
    method: 'GET',
    path: '/catalog/history',
    function: 'admin',
    operation: 'getCatalogHistory',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary:
      "Each version in which a SKU's price item (or a pair's rate) changed, newest first, with its change request.",
  },
  {
    method: 'POST',
    path: '/admin/change-requests',
    function: 'admin',
    operation: 'createChangeRequest',
    auth: 'admin',
    roles: ['author'],
    summary:
      'Request a change of catalog data: validated, diffed against what is in force, guardrails checked.',
  },
  {
    method: 'GET',
    path: '/admin/change-requests',
    function: 'admin',
    operation: 'listChangeRequests',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary: 'Change requests, newest first (paginated; filter by status).',
  },
  {
    method: 'GET',
    path: '/admin/change-requests/{cr_id}',
    function: 'admin',
    operation: 'getChangeRequest',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary: 'One change request with its diff, guardrails, approvals, publication and release.',
  },
  {
    method: 'POST',
    path: '/admin/change-requests/{cr_id}/approve',
    function: 'admin',
    operation: 'approveChangeRequest',
    auth: 'admin',
    roles: ['approver'],
    summary: 'Approve (not the author); the second distinct approval publishes the change.',
  },
  {
    method: 'POST',
    path: '/admin/change-requests/{cr_id}/reject',
    function: 'admin',
    operation: 'rejectChangeRequest',
    auth: 'admin',
    roles: ['approver'],
    summary: 'Reject a pending change request with a comment; it never publishes.',
  },
  {
    method: 'GET',
    path: '/audit/releases/{cr_id}',
    function: 'admin',
    operation: 'getRelease',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary: 'The DSSE-signed release of a published change request.',
  },
  {
    method: 'GET',
    path: '/audit/journal/head',
    function: 'admin',
    operation: 'getJournalHead',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary: 'The latest signed tree head of the audit journal.',
  },
  {
    method: 'GET',
    path: '/audit/journal/heads',
    function: 'admin',
    operation: 'listJournalHeads',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary: 'Signed tree heads, oldest first (paginated).',
  },
  {
    method: 'GET',
    path: '/audit/journal/entries/{index}',
    function: 'admin',
    operation: 'getJournalEntry',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary: 'One journal entry with its inclusion proof against a signed tree head.',
  },
  {
    method: 'GET',
    path: '/audit/journal/consistency',
    function: 'admin',
    operation: 'getJournalConsistency',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary: 'Consistency proof between two signed tree heads.',
  },
  {
    method: 'GET',
    path: '/audit/journal/export',
    function: 'admin',
    operation: 'exportJournal',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary: 'Every entry and signed head, for offline verification (npm run verify-journal).',
  },
  {
    method: 'POST',
    path: '/admin/cache/invalidate',
    function: 'admin',
    operation: 'invalidateCache',
    auth: 'admin',
    roles: ['author'],
    summary:
      'Invalidate cached prices by tag (sku, category, pricelist_version) on every instance within a second.',
  },
  {
    method: 'POST',
    path: '/admin/cache/warm',
    function: 'admin',
    operation: 'warmCache',
    auth: 'admin',
    roles: ['author'],
    summary: 'Precompute cached prices for categories, currencies and regions before a campaign.',
  },
  {
    method: 'GET',
    path: '/admin/me',
    function: 'admin',
    operation: 'whoAmI',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary: 'The signed-in operator: identity and roles (what the console offers follows them).',
  },
  {
    method: 'GET',
    path: '/admin/slo',
    function: 'admin',
    operation: 'getServiceObjectives',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary:
      'Service-level objectives (rule 18, Limits): target, measured value, samples and status of each.',
  },
  {
    method: 'POST',
    path: '/webhooks/endpoints',
    function: 'webhooks',
    operation: 'createEndpoint',
    auth: 'admin',
    roles: ['endpoint_admin'],
    summary: 'Register a partner endpoint; its signing secret is returned once.',
  },
  {
    method: 'GET',
    path: '/webhooks/endpoints',
    function: 'webhooks',
    operation: 'listEndpoints',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary: 'List endpoints (paginated).',
  },
  {
    method: 'GET',
    path: '/webhooks/endpoints/{endpoint_id}',
    function: 'webhooks',
    operation: 'getEndpoint',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary: 'One endpoint (never its secret).',
  },
  {
    method: 'PATCH',
    path: '/webhooks/endpoints/{endpoint_id}',
    function: 'webhooks',
    operation: 'updateEndpoint',
    auth: 'admin',
    roles: ['endpoint_admin'],
    summary: 'Change an endpoint: URL, topics, description, pinned version, enabled or disabled.',
  },
  {
    method: 'DELETE',
    path: '/webhooks/endpoints/{endpoint_id}',
    function: 'webhooks',
    operation: 'deleteEndpoint',
    auth: 'admin',
    roles: ['endpoint_admin'],
    summary: 'Delete an endpoint; its pending deliveries stop.',
  },
  {
    method: 'POST',
    path: '/webhooks/endpoints/{endpoint_id}/rotate-secret',
    function: 'webhooks',
    operation: 'rotateEndpointSecret',
    auth: 'admin',
    roles: ['endpoint_admin'],
    summary: 'A new signing secret; the old one is still sent beside it for 24 hours.',
  },
  {
    method: 'GET',
    path: '/webhooks/endpoints/{endpoint_id}/stats',
    function: 'webhooks',
    operation: 'endpointStats',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary:
      "An endpoint's success rate, latency p50/p95 and attempts by status class over 1 h, 24 h or 7 d.",
  },
  {
    method: 'POST',
    path: '/webhooks/endpoints/{endpoint_id}/recover',
    function: 'webhooks',
    operation: 'recoverEndpoint',
    auth: 'admin',
    roles: ['endpoint_admin'],
    summary: 'Deliver again what the endpoint missed in a window (skipped, dead, stopped), with progress.',
  },
  {
    method: 'POST',
    path: '/webhooks/endpoints/{endpoint_id}/test',
    function: 'webhooks',
    operation: 'sendTestEvent',
    auth: 'admin',
    roles: ['endpoint_admin'],
    summary: 'Send the endpoint a signed example of an event type, marked test, recorded in its history.',
  },
  {
    method: 'POST',
    path: '/webhooks/events',
    function: 'webhooks',
    operation: 'publishEvent',
    auth: 'admin',
    roles: ['endpoint_admin'],
    summary: 'Publish an event of another producer (payloads carry identifiers only).',
  },
  {
    method: 'GET',
    path: '/webhooks/events',
    function: 'webhooks',
    operation: 'listEvents',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary: 'Events by time window, endpoint and delivery status (paginated).',
  },
  {
    method: 'GET',
    path: '/webhooks/events/{event_id}',
    function: 'webhooks',
    operation: 'showEvent',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary: 'An event as first sent and every delivery attempt per endpoint.',
  },
  {
    method: 'POST',
    path: '/webhooks/events/{event_id}/expunge',
    function: 'webhooks',
    operation: 'expungeEvent',
    auth: 'admin',
    roles: ['endpoint_admin'],
    summary: "Remove an event's body for good; its attempts and the fact of expunction stay.",
  },
  {
    method: 'POST',
    path: '/webhooks/replay',
    function: 'webhooks',
    operation: 'replay',
    auth: 'admin',
    roles: ['endpoint_admin'],
    summary: 'Deliver events again by id list or time window (same event_id, next attempt).',
  },
  {
    method: 'GET',
    path: '/webhooks/replays/{replay_id}',
    function: 'webhooks',
    operation: 'showReplay',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary: 'Progress of a replay.',
  },
  {
    method: 'GET',
    path: '/partner/events',
    function: 'webhooks',
    operation: 'partnerEvents',
    auth: 'partner',
    summary: "A partner's own events in a time window, as its endpoint receives them (resync).",
  },
  {
    method: 'GET',
    path: '/partner/endpoint',
    function: 'webhooks',
    operation: 'partnerEndpoint',
    auth: 'partner',
    summary:
      "The partner's own endpoint (the partner portal): URL or destination, topics, filters, limits, status.",
  },
  {
    method: 'GET',
    path: '/partner/endpoint/stats',
    function: 'webhooks',
    operation: 'partnerEndpointStats',
    auth: 'partner',
    summary: "The partner's endpoint health: success rate, latency and counts by status class over a window.",
  },
  {
    method: 'POST',
    path: '/partner/endpoint/rotate-secret',
    function: 'webhooks',
    operation: 'partnerRotateSecret',
    auth: 'partner',
    summary:
      "A new signing secret for the partner's endpoint, shown once; the old one is still sent for the overlap.",
  },
  {
    method: 'POST',
    path: '/partner/endpoint/test',
    function: 'webhooks',
    operation: 'partnerTestEvent',
    auth: 'partner',
    summary: "A signed example event of a type, sent to the partner's endpoint only.",
  },
  {
    method: 'GET',
    path: '/partner/deliveries',
    function: 'webhooks',
    operation: 'partnerDeliveries',
    auth: 'partner',
    summary: "The partner's own deliveries in a window, by status: each event with its delivery's status.",
  },
  {
    method: 'GET',
    path: '/partner/deliveries/{event_id}',
    function: 'webhooks',
    operation: 'partnerDelivery',
    auth: 'partner',
    summary: "One of the partner's events: its envelope and its own delivery's attempts.",
  },
  {
    method: 'POST',
    path: '/partner/replay',
    function: 'webhooks',
    operation: 'partnerReplay',
    auth: 'partner',
    summary: "Deliver the partner's own events again, by id list or window (its endpoint only).",
  },
  {
    method: 'POST',
    path: '/partner/recover',
    function: 'webhooks',
    operation: 'partnerRecover',
    auth: 'partner',
    summary:
      'Re-deliver what the partner missed in a window (skipped, dead or stopped), as a background replay.',
  },
  {
    method: 'GET',
    path: '/partner/replays/{replay_id}',
    function: 'webhooks',
    operation: 'partnerReplayProgress',
    auth: 'partner',
    summary: "Progress of one of the partner's replays or recoveries.",
  },
  {
    method: 'GET',
    path: '/catalog/snapshot',
    function: 'webhooks',
    operation: 'catalogSnapshot',
    auth: 'partner',
    summary: 'The catalog in force at a time, with its versions (resync).',
  },
  {
    method: 'POST',
    path: '/partner/confirmations',
    function: 'webhooks',
    operation: 'confirmEvent',
    auth: 'partner',
    summary: 'Confirm what the partner did with an event it received; the outcome is recorded once.',
  },
  {
    method: 'POST',
    path: '/webhooks/endpoints/{endpoint_id}/rotate-partner-key',
    function: 'webhooks',
    operation: 'rotatePartnerKey',
    auth: 'admin',
    roles: ['endpoint_admin'],
    summary:
      "A new partner key for the endpoint's partner routes, shown once; the old one works for `overlap_hours`.",
  },
  {
    method: 'POST',
    path: '/admin/api-keys',
    function: 'admin',
    operation: 'createApiKey',
    auth: 'admin',
    roles: ['endpoint_admin'],
    summary:
      'Issue a caller key to one tenant with scopes (and optionally channels and customer groups); the key is shown once.',
  },
  {
    method: 'GET',
    path: '/admin/api-keys',
    function: 'admin',
    operation: 'listApiKeys',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary: 'Caller keys (never their secrets), optionally of one tenant.',
  },
  {
    method: 'DELETE',
    path: '/admin/api-keys/{key_id}',
    function: 'admin',
    operation: 'revokeApiKey',
    auth: 'admin',
    roles: ['endpoint_admin'],
    summary: 'Revoke a caller key: refused from then on (within the authorizer cache time).',
  },
  {
    method: 'POST',
    path: '/admin/api-keys/{key_id}/rotate',
    function: 'admin',
    operation: 'rotateApiKey',
    auth: 'admin',
    roles: ['endpoint_admin'],
    summary:
      'A new secret for a caller key; the old one works for `overlap_hours` (0: at once, an emergency).',
  },
  {
    method: 'GET',
    path: '/admin/health',
    function: 'api',
    operation: 'deepHealth',
    auth: 'admin',
    roles: OPERATOR_READ,
    summary: 'Health of every component (tables, queues, keys), for operators; cached a few seconds.',
  },
  {
    method: 'GET',
    path: '/changelog',
    function: 'api',
    operation: 'getChangelog',
    auth: 'none',
    summary: 'Machine-readable changelog of the envelope versions and event types.',
  },
  {
    method: 'GET',
    path: '/webhooks/event-types',
    function: 'api',
    operation: 'getEventTypes',
    auth: 'none',
    summary: 'The event-type catalog: each type with the JSON Schema of its data, an example and its dates.',
  },
  {
    method: 'GET',
    path: '/webhooks/jwks.json',
    function: 'api',
    operation: 'getWebhookJwks',
    auth: 'none',
    summary: 'Public keys (JWKS) of the Ed25519 webhook signatures, by kid (X-Signature-Key-Id).',
  },
  {
    method: 'POST',
    path: '/webhooks/signing-keys/rotate',
    function: 'webhooks',
    operation: 'rotateSigningKey',
    auth: 'admin',
    roles: ['endpoint_admin'],
    summary: 'Add the next Ed25519 webhook signing key: published at once, signing from its activation.',
  },
  {
    method: 'GET',
    path: '/asyncapi.json',
    function: 'api',
    operation: 'getAsyncApi',
    auth: 'none',
    summary: 'The AsyncAPI 3.0 document of the webhooks (channels, messages, headers, security).',
  },
] as const satisfies readonly RouteDefinition[];

export type OperationId = (typeof ROUTES)[number]['operation'];

export interface RouteMatch {
  readonly route: RouteDefinition;
  readonly pathParameters: Record<string, string>;
}

const safeDecode = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
};

const segmentsOf = (path: string): string[] => path.split('/').filter((segment) => segment.length > 0);

/** Match a concrete request path against the route table; static segments win over parameters. */
export const matchRoute = (
  method: string,
  path: string,
  routes: readonly RouteDefinition[] = ROUTES,
): { match?: RouteMatch; pathExists: boolean } => {
  const requestSegments = segmentsOf(path);
  let pathExists = false;
  let best: { match: RouteMatch; staticSegments: number } | undefined;
  for (const route of routes) {
    const routeSegments = segmentsOf(route.path);
    if (routeSegments.length !== requestSegments.length) continue;
    const pathParameters: Record<string, string> = {};
    let staticSegments = 0;
    let matches = true;
    routeSegments.forEach((segment, index) => {
      const actual = requestSegments[index] ?? '';
      if (segment.startsWith('{') && segment.endsWith('}')) {
        const decoded = safeDecode(actual);
        if (decoded === undefined) matches = false;
        else pathParameters[segment.slice(1, -1)] = decoded;
      } else if (segment === actual) {
        staticSegments += 1;
      } else {
        matches = false;
      }
    });
    if (!matches) continue;
    pathExists = true;
    if (route.method !== method.toUpperCase()) continue;
    if (!best || staticSegments > best.staticSegments) {
      best = { match: { route, pathParameters }, staticSegments };
    }
  }
  return best ? { match: best.match, pathExists } : { pathExists };
};

export const routeKey = (method: string, resourcePath: string): string =>
  `${method.toUpperCase()} ${resourcePath}`;
