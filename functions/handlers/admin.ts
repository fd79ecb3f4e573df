import { awsDependencies } from '../composition/aws';
import { changeRequestDependencies } from '../composition/change-requests';
import type { ServiceDependencies } from '../composition/dependencies';
import { responseSealer } from '../composition/webhooks';
import { CatalogReader } from '../usecases/catalog/reader';
import { lazyHandler } from './lazy';
import { createHttpApi, type HttpHandler } from './middleware/http';
import { idempotent } from './middleware/idempotency';
import {
  createApiKeyOperation,
  listApiKeysOperation,
  revokeApiKeyOperation,
  rotateApiKeyOperation,
} from './operations/api-keys';
import { journalOperations } from './operations/audit';
import {
  createCatalogUploadOperation,
  exportCatalogOperation,
  invalidateCacheOperation,
  priceCacheFor,
  warmCacheOperation,
} from './operations/catalog';
import {
  approveChangeRequestOperation,
  createChangeRequestOperation,
  getChangeRequestOperation,
  getReleaseOperation,
  importCatalogOperation,
  listChangeRequestsOperation,
  rejectChangeRequestOperation,
} from './operations/change-requests';
import { catalogHistoryOperation } from './operations/history';
import { getServiceObjectivesOperation } from './operations/objectives';
import { whoAmIOperation } from './operations/operators';

/** The `admin` function: operator routes (IAM in AWS, the admin tokens locally): catalog changes, cache, audit. */
export const createAdminHandler = (deps: ServiceDependencies): HttpHandler => {
  const reader = new CatalogReader(deps.catalogRepository, deps.clock);
  const logger = deps.createLogger('admin');
  const priceCache = priceCacheFor(deps, logger);
  // C8: every POST honours Idempotency-Key.
  const idempotency = deps.idempotency;
  const changes = changeRequestDependencies(deps);
  const apiKeys = { store: deps.apiKeys, clock: deps.clock, usagePlan: deps.callerUsagePlan };
  // Answers that carry a caller key's secret are stored encrypted, never in clear.
  const sealed = { ...idempotency, sealer: responseSealer(deps.secretsCipher) };
  return createHttpApi({
    functionId: 'admin',
    operatorRoles: deps.operatorRoles,
    logger,
    metrics: deps.metrics.recorder('admin'),
    operations: {
      whoAmI: whoAmIOperation,
      importCatalog: idempotent(importCatalogOperation(changes, deps.catalogFiles), idempotency),
      // The answer carries a pre-signed upload URL: stored sealed, like a caller key's secret.
      createCatalogUpload: idempotent(createCatalogUploadOperation(deps.catalogFiles), sealed),
      createChangeRequest: idempotent(createChangeRequestOperation(changes), idempotency),
      listChangeRequests: listChangeRequestsOperation(changes),
      getChangeRequest: getChangeRequestOperation(changes),
      approveChangeRequest: idempotent(
        approveChangeRequestOperation((traceId) => changeRequestDependencies(deps, traceId)),
        idempotency,
      ),
      rejectChangeRequest: idempotent(rejectChangeRequestOperation(changes), idempotency),
      getRelease: getReleaseOperation(changes),
      ...journalOperations(deps.journal),
      exportCatalog: exportCatalogOperation(deps.catalogRepository, reader, deps.catalogFiles, deps.clock),
      getCatalogHistory: catalogHistoryOperation({
        repository: deps.catalogRepository,
        changeRequests: deps.changeRequests,
      }),
      invalidateCache: idempotent(invalidateCacheOperation(priceCache), idempotency),
      warmCache: idempotent(warmCacheOperation(reader, priceCache, deps.clock), idempotency),
      createApiKey: idempotent(createApiKeyOperation(apiKeys), sealed),
      listApiKeys: listApiKeysOperation(apiKeys),
      revokeApiKey: revokeApiKeyOperation(apiKeys),
      rotateApiKey: idempotent(rotateApiKeyOperation(apiKeys), sealed),
      getServiceObjectives: getServiceObjectivesOperation({
        figures: deps.metrics.figures,
        queue: deps.queue,
        rateState: deps.rates.state,
        catalog: deps.catalogRepository,
      }),
    },
  });
};

export const handler = lazyHandler(() => createAdminHandler(awsDependencies('admin')));
