import { readFileSync } from 'node:fs';
import path from 'node:path';
import {
  type ConfiguredCallerKey,
  type LocalStack,
  startLocalStack,
} from '../../functions/composition/local/stack';
import type { FunctionId } from '../../functions/definitions';
import type { RetryPolicy } from '../../functions/domain/webhooks/retry-policy';
import type { Clock } from '../../functions/ports/clock';
import type { CatalogDocument } from '../../functions/schemas/catalog-document';
import { type TestOperator, testAdmins } from './change-requests';

/** The demo catalog `npm start` publishes. */
export const demoCatalog = (): CatalogDocument =>
  JSON.parse(
    readFileSync(path.resolve(import.meta.dirname, '../../catalog/demo-catalog.json'), 'utf8'),
  ) as CatalogDocument;

/** The demo catalog without its rate policy: rates stay as published (nothing ticks, nothing goes stale). */
export const demoCatalogWithoutRatePolicy = (): CatalogDocument => {
  const { rate_policy: _policy, ...document } = demoCatalog();
  return document;
};

/** A wanted quantity moved onto the product's quantity rules (min, max, increment), which a quote enforces. */
export const allowedQuantity = (document: CatalogDocument, sku: string, wanted: number): number => {
  const rules = document.products.find((product) => product.sku_id === sku)?.quantity_rules;
  const increment = rules?.increment ?? 1;
  const onGrid = Math.max(rules?.min ?? 1, Math.ceil(wanted / increment) * increment);
  return Math.min(rules?.max ?? onGrid, onGrid);
};

/**
 * An in-memory local stack with the demo catalog published (without its rate policy unless asked: tests that
 * are not about FX ingestion want rates that neither move nor go stale), for tests that drive it over HTTP. These tests send
 * hundreds of requests a second from one key, so the rate limit is lifted (the limit has tests of its own).
 */
export const startDemoStack = (credentials: {
  readonly apiKey: string;
  readonly adminToken: string;
  /** The demo tenant's payment-provider key (chargebacks). */
  readonly chargebackKey?: string;
  /** Keys of other tenants or narrower scopes. */
  readonly callerKeys?: readonly ConfiguredCallerKey[];
  /** Operators (default: `admin` and the two reviewers of `testAdmins`). */
  readonly admins?: readonly TestOperator[];
  /** The authorizer's cache of resolved keys (default 30 s, as API Gateway's). */
  readonly callerKeyCacheSeconds?: number;
  readonly clock?: Clock;
  /** Publish the demo catalog with its rate policy (FX ingestion ticks, rates can go stale). */
  readonly ratePolicy?: boolean;
  readonly environment?: Readonly<Record<string, string>>;
  readonly ratesIntervalMs?: number;
  readonly streamPollIntervalMs?: number;
  /** How often the exporter's scheduled run looks for closed days without a manifest. */
  readonly exportIntervalMs?: number;
  /** Run the functions from these bundles (`LOCAL_BUNDLES=1`). */
  readonly bundles?: Readonly<Record<FunctionId, string>>;
  /** A shorter retry policy than production's (dead deliveries within seconds). */
  readonly webhookPolicy?: RetryPolicy;
}): Promise<LocalStack> =>
  startLocalStack({
    port: 0,
    apiKey: credentials.apiKey,
    adminToken: credentials.adminToken,
    ...(credentials.chargebackKey ? { chargebackKey: credentials.chargebackKey } : {}),
    ...(credentials.callerKeys ? { callerKeys: credentials.callerKeys } : {}),
    admins: credentials.admins ?? testAdmins(credentials.adminToken),
    ...(credentials.callerKeyCacheSeconds === undefined
      ? {}
      : { callerKeyCacheSeconds: credentials.callerKeyCacheSeconds }),
    logLevel: 'SILENT',
    ...(credentials.clock ? { clock: credentials.clock } : {}),
    seedCatalog: credentials.ratePolicy ? demoCatalog() : demoCatalogWithoutRatePolicy(),
    ...(credentials.environment ? { environment: credentials.environment } : {}),
    ...(credentials.ratesIntervalMs ? { ratesIntervalMs: credentials.ratesIntervalMs } : {}),
    ...(credentials.streamPollIntervalMs ? { streamPollIntervalMs: credentials.streamPollIntervalMs } : {}),
    ...(credentials.exportIntervalMs ? { exportIntervalMs: credentials.exportIntervalMs } : {}),
    rateLimit: { requestsPerSecond: 100_000, burst: 100_000 },
    ...(credentials.bundles ? { bundles: credentials.bundles } : {}),
    ...(credentials.webhookPolicy ? { webhooks: { policy: credentials.webhookPolicy } } : {}),
  });
