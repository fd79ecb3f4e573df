import { awsDependencies } from '../composition/aws';
import type { ServiceDependencies } from '../composition/dependencies';
import { lazyHandler } from './lazy';
import { createHttpApi, type HttpHandler } from './middleware/http';
import { keysOperation } from './operations/checkout';
import { healthOperation, livenessOperation } from './operations/health';
import { openApiOperation } from './operations/openapi';
import {
  asyncApiOperation,
  changelogOperation,
  eventTypesOperation,
  webhookJwksOperation,
} from './operations/webhooks';

/** The `api` function: system routes. Route groups added later get functions of their own. */
export const createApiHandler = (deps: ServiceDependencies): HttpHandler =>
  createHttpApi({
    functionId: 'api',
    operatorRoles: deps.operatorRoles,
    logger: deps.createLogger('api'),
    metrics: deps.metrics.recorder('api'),
    operations: {
      health: livenessOperation(),
      deepHealth: healthOperation(deps.healthProbes),
      getKeys: keysOperation(deps.receiptSigner, deps.retiredReceiptKeys),
      getOpenApi: openApiOperation(),
      getChangelog: changelogOperation(),
      getEventTypes: eventTypesOperation(),
      getWebhookJwks: webhookJwksOperation({ clock: deps.clock, senderKeys: deps.webhooks.senderKeys }),
      getAsyncApi: asyncApiOperation(),
    },
  });

export const handler = lazyHandler(() => createApiHandler(awsDependencies('api')));
