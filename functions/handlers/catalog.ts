import { awsDependencies } from '../composition/aws';
import type { ServiceDependencies } from '../composition/dependencies';
import { CatalogReader } from '../usecases/catalog/reader';
import { lazyHandler } from './lazy';
import { createHttpApi, type HttpHandler } from './middleware/http';
import {
  getLimitsOperation,
  getPriceOperation,
  priceCacheFor,
  priceMatrixOperation,
} from './operations/catalog';

/** The `catalog` function: storefront reads. One reader (and its caches) per function instance. */
export const createCatalogHandler = (deps: ServiceDependencies): HttpHandler => {
  const reader = new CatalogReader(deps.catalogRepository, deps.clock);
  const logger = deps.createLogger('catalog');
  return createHttpApi({
    functionId: 'catalog',
    // Operators read a SKU's prices across regions and currencies (GET /admin/catalog/prices).
    operatorRoles: deps.operatorRoles,
    logger,
    metrics: deps.metrics.recorder('catalog'),
    operations: {
      getPrice: getPriceOperation(reader, deps.clock, priceCacheFor(deps, logger)),
      getLimits: getLimitsOperation(reader, deps.clock),
      priceMatrix: priceMatrixOperation(reader, deps.clock),
    },
  });
};

export const handler = lazyHandler(() => createCatalogHandler(awsDependencies('catalog')));
