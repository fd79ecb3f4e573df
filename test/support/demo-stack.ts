import { readFileSync } from 'node:fs';
import path from 'node:path';
import { type LocalStack, startLocalStack } from '../../functions/adapters/local/stack';
import type { Clock } from '../../functions/ports/clock';
import type { CatalogDocument } from '../../functions/schemas/catalog-document';

/** The demo catalog `npm start` publishes. */
export const demoCatalog = (): CatalogDocument =>
  JSON.parse(
    readFileSync(path.resolve(import.meta.dirname, '../../catalog/demo-catalog.json'), 'utf8'),
  ) as CatalogDocument;

/**
 * An in-memory local stack with the demo catalog published, for tests that drive it over HTTP. These tests send
 * hundreds of requests a second from one key, so the rate limit is lifted (the limit has tests of its own).
 */
export const startDemoStack = (credentials: {
  readonly apiKey: string;
  readonly adminToken: string;
  readonly clock?: Clock;
}): Promise<LocalStack> =>
  startLocalStack({
    port: 0,
    apiKey: credentials.apiKey,
    adminToken: credentials.adminToken,
    logLevel: 'SILENT',
    ...(credentials.clock ? { clock: credentials.clock } : {}),
    seedCatalog: demoCatalog(),
    rateLimit: { requestsPerSecond: 100_000, burst: 100_000 },
  });
