import { awsDependencies } from '../composition/aws';
import type { ServiceDependencies } from '../composition/dependencies';
import { CatalogReader } from '../usecases/catalog/reader';
import { lazyHandler } from './lazy';
import { createHttpApi, type HttpHandler } from './middleware/http';
import { idempotent } from './middleware/idempotency';
import { exportCatalogOperation, importCatalogOperation } from './operations/catalog';

/** The `admin` function: operator routes (IAM in AWS, the admin token locally). */
export const createAdminHandler = (deps: ServiceDependencies): HttpHandler => {
  const reader = new CatalogReader(deps.catalogRepository, deps.clock);
  return createHttpApi({
    functionId: 'admin',
    logger: deps.createLogger('admin'),
    operations: {
      importCatalog: idempotent(importCatalogOperation(deps.catalogRepository, deps.clock), {
        dynamoDb: deps.dynamoDb,
        tableName: deps.tableNames.idempotency,
      }),
      exportCatalog: exportCatalogOperation(deps.catalogRepository, reader),
    },
  });
};

export const handler = lazyHandler(() => createAdminHandler(awsDependencies()));
