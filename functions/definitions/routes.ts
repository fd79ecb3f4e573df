/**
 * The HTTP route table. The CDK API creates exactly these resources and methods; the local gateway matches
 * requests against the same list; the `api` function's router dispatches on `operation`.
 */
import type { FunctionId } from './functions';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/**
 * `none`: open (health). `api_key`: catalog callers (`x-api-key`, API Gateway usage plan in AWS).
 * `admin`: operators (IAM SigV4 in AWS; `Authorization: Bearer <ADMIN_TOKEN>` locally).
 * `partner`: a partner's own key (`Authorization: Bearer <partner key>`, issued with its endpoint), checked by
 * the function itself: the gateway lets the request through.
 */
export type RouteAuth = 'none' | 'api_key' | 'admin' | 'partner';

export interface RouteDefinition {
  readonly method: HttpMethod;
  /** API Gateway resource path; `{name}` segments are path parameters. */
  readonly path: string;
  readonly function: FunctionId;
  readonly operation: string;
  readonly auth: RouteAuth;
  readonly summary: string;
}

export const ROUTES = [
  {
    method: 'GET',
    path: '/health',
    function: 'api',
    operation: 'health',
    auth: 'none',
    summary: 'Health of the service and its components.',
  },
  {
    method: 'GET',
    path: '/catalog/prices',
    function: 'catalog',
    operation: 'getPrice',
    auth: 'api_key',
    summary: 'Display price of one SKU in a currency and region, with its versions and tax breakdown.',
  },
  {
    method: 'GET',
    path: '/catalog/limits',
    function: 'catalog',
    operation: 'getLimits',
    auth: 'api_key',
    summary: 'Maximum winnings in the catalog currency and their equivalent, fixed by fx_version (rule 15).',
  },
  {
    method: 'POST',
    path: '/pricing/quote',
    function: 'checkout',
    operation: 'quote',
    auth: 'api_key',
    summary:
      'Price a basket with a rate lock and a signature; the quote can be committed until the lock ends.',
  },
  {
    method: 'POST',
    path: '/pricing/commit',
    function: 'checkout',
    operation: 'commit',
    auth: 'api_key',
    summary: 'Commit a quote into a KMS-signed receipt pinning its three versions; one quote, one receipt.',
  },
  {
    method: 'POST',
    path: '/pricing/refund',
    function: 'checkout',
    operation: 'refund',
    auth: 'api_key',
    summary: "A return or chargeback recalculated with the receipt's stored versions.",
  },
  {
    method: 'GET',
    path: '/receipts/{receipt_id}',
    function: 'checkout',
    operation: 'getReceipt',
    auth: 'api_key',
    summary: 'A receipt with its status and refunds.',
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
    summary:
      'Validate a whole catalog document and open a change request for it (published after two approvals).',
  },
  {
    method: 'GET',
    path: '/admin/catalog/export',
    function: 'admin',
    operation: 'exportCatalog',
    auth: 'admin',
    summary: 'The catalog in force (or of a revision) in the import format.',
  },
  {
    method: 'POST',
    path: '/admin/change-requests',
    function: 'admin',
    operation: 'createChangeRequest',
    auth: 'admin',
    summary:
      'Request a change of catalog data: validated, diffed against what is in force, guardrails checked.',
  },
  {
    method: 'GET',
    path: '/admin/change-requests',
    function: 'admin',
    operation: 'listChangeRequests',
    auth: 'admin',
    summary: 'Change requests, newest first (paginated; filter by status).',
  },
  {
    method: 'GET',
    path: '/admin/change-requests/{cr_id}',
    function: 'admin',
    operation: 'getChangeRequest',
    auth: 'admin',
    summary: 'One change request with its diff, guardrails, approvals, publication and release.',
  },
  {
    method: 'POST',
    path: '/admin/change-requests/{cr_id}/approve',
    function: 'admin',
    operation: 'approveChangeRequest',
    auth: 'admin',
    summary: 'Approve (not the author); the second distinct approval publishes the change.',
  },
  {
    method: 'POST',
    path: '/admin/change-requests/{cr_id}/reject',
    function: 'admin',
    operation: 'rejectChangeRequest',
    auth: 'admin',
    summary: 'Reject a pending change request with a comment; it never publishes.',
  },
  {
    method: 'GET',
    path: '/audit/releases/{cr_id}',
    function: 'admin',
    operation: 'getRelease',
    auth: 'admin',
    summary: 'The DSSE-signed release of a published change request.',
  },
  {
    method: 'GET',
    path: '/audit/journal/head',
    function: 'admin',
    operation: 'getJournalHead',
    auth: 'admin',
    summary: 'The latest signed tree head of the audit journal.',
  },
  {
    method: 'GET',
    path: '/audit/journal/heads',
    function: 'admin',
    operation: 'listJournalHeads',
    auth: 'admin',
    summary: 'Signed tree heads, oldest first (paginated).',
  },
  {
    method: 'GET',
    path: '/audit/journal/entries/{index}',
    function: 'admin',
    operation: 'getJournalEntry',
    auth: 'admin',
    summary: 'One journal entry with its inclusion proof against a signed tree head.',
  },
  {
    method: 'GET',
    path: '/audit/journal/consistency',
    function: 'admin',
    operation: 'getJournalConsistency',
    auth: 'admin',
    summary: 'Consistency proof between two signed tree heads.',
  },
  {
    method: 'GET',
    path: '/audit/journal/export',
    function: 'admin',
    operation: 'exportJournal',
    auth: 'admin',
    summary: 'Every entry and signed head, for offline verification (npm run verify-journal).',
  },
  {
    method: 'POST',
    path: '/admin/cache/invalidate',
    function: 'admin',
    operation: 'invalidateCache',
    auth: 'admin',
    summary:
      'Invalidate cached prices by tag (sku, category, pricelist_version) on every instance within a second.',
  },
  {
    method: 'POST',
    path: '/admin/cache/warm',
    function: 'admin',
    operation: 'warmCache',
    auth: 'admin',
    summary: 'Precompute cached prices for categories, currencies and regions before a campaign.',
  },
  {
    method: 'GET',
    path: '/admin/slo',
    function: 'admin',
    operation: 'getServiceObjectives',
    auth: 'admin',
    summary:
      'Service-level objectives (rule 18, Limits): target, measured value, samples and status of each.',
  },
  {
    method: 'POST',
    path: '/webhooks/endpoints',
    function: 'webhooks',
    operation: 'createEndpoint',
    auth: 'admin',
    summary: 'Register a partner endpoint; its signing secret is returned once.',
  },
  {
    method: 'GET',
    path: '/webhooks/endpoints',
    function: 'webhooks',
    operation: 'listEndpoints',
    auth: 'admin',
    summary: 'List endpoints (paginated).',
  },
  {
    method: 'GET',
    path: '/webhooks/endpoints/{endpoint_id}',
    function: 'webhooks',
    operation: 'getEndpoint',
    auth: 'admin',
    summary: 'One endpoint (never its secret).',
  },
  {
    method: 'PATCH',
    path: '/webhooks/endpoints/{endpoint_id}',
    function: 'webhooks',
    operation: 'updateEndpoint',
    auth: 'admin',
    summary: 'Change an endpoint: URL, topics, description, pinned version, enabled or disabled.',
  },
  {
    method: 'DELETE',
    path: '/webhooks/endpoints/{endpoint_id}',
    function: 'webhooks',
    operation: 'deleteEndpoint',
    auth: 'admin',
    summary: 'Delete an endpoint; its pending deliveries stop.',
  },
  {
    method: 'POST',
    path: '/webhooks/endpoints/{endpoint_id}/rotate-secret',
    function: 'webhooks',
    operation: 'rotateEndpointSecret',
    auth: 'admin',
    summary: 'A new signing secret; the old one is still sent beside it for 24 hours.',
  },
  {
    method: 'POST',
    path: '/webhooks/events',
    function: 'webhooks',
    operation: 'publishEvent',
    auth: 'admin',
    summary: 'Publish an event of another producer (payloads carry identifiers only).',
  },
  {
    method: 'GET',
    path: '/webhooks/events',
    function: 'webhooks',
    operation: 'listEvents',
    auth: 'admin',
    summary: 'Events by time window, endpoint and delivery status (paginated).',
  },
  {
    method: 'GET',
    path: '/webhooks/events/{event_id}',
    function: 'webhooks',
    operation: 'showEvent',
    auth: 'admin',
    summary: 'An event as first sent and every delivery attempt per endpoint.',
  },
  {
    method: 'POST',
    path: '/webhooks/replay',
    function: 'webhooks',
    operation: 'replay',
    auth: 'admin',
    summary: 'Deliver events again by id list or time window (same event_id, next attempt).',
  },
  {
    method: 'GET',
    path: '/webhooks/replays/{replay_id}',
    function: 'webhooks',
    operation: 'showReplay',
    auth: 'admin',
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
    method: 'GET',
    path: '/changelog',
    function: 'api',
    operation: 'getChangelog',
    auth: 'none',
    summary: 'Machine-readable changelog of the envelope versions and event types.',
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
