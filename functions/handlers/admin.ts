import { awsDependencies } from '../composition/aws';
import type { ServiceDependencies } from '../composition/dependencies';
import { CatalogReader } from '../usecases/catalog/reader';
import { lazyHandler } from './lazy';
import { createHttpApi, type HttpHandler } from './middleware/http';
import { idempotent } from './middleware/idempotency';
import {
  exportCatalogOperation,
  importCatalogOperation,
  invalidateCacheOperation,
  priceCacheFor,
  warmCacheOperation,
} from './operations/catalog';

/** The `admin` function: operator routes (IAM in AWS, the admin token locally). */
export const createAdminHandler = (deps: ServiceDependencies): HttpHandler => {
  const reader = new CatalogReader(deps.catalogRepository, deps.clock);
  const logger = deps.createLogger('admin');
  const priceCache = priceCacheFor(deps, logger);
  // C8: every POST honours Idempotency-Key.
  const idempotency = { dynamoDb: deps.dynamoDb, tableName: deps.tableNames.idempotency };
  return createHttpApi({
    functionId: 'admin',
    logger,
    operations: {
      importCatalog: idempotent(importCatalogOperation(deps.catalogRepository, deps.clock), idempotency),
      exportCatalog: exportCatalogOperation(deps.catalogRepository, reader),
      invalidateCache: idempotent(invalidateCacheOperation(priceCache), idempotency),
      warmCache: idempotent(warmCacheOperation(reader, priceCache, deps.clock), idempotency),
    },
  });
};

export const handler = lazyHandler(() => createAdminHandler(awsDependencies()));
