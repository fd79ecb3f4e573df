import { awsDependencies } from '../composition/aws';
import type { ServiceDependencies } from '../composition/dependencies';
import { responseSealer, webhookContext } from '../composition/webhooks';
import { CatalogReader } from '../usecases/catalog/reader';
import { partVersionNames } from '../usecases/catalog/release';
import { lazyHandler } from './lazy';
import { createHttpApi, type HttpHandler } from './middleware/http';
import { idempotent } from './middleware/idempotency';
import {
  catalogSnapshotOperation,
  confirmEventOperation,
  createEndpointOperation,
  deleteEndpointOperation,
  endpointStatsOperation,
  expungeEventOperation,
  getEndpointOperation,
  listEndpointsOperation,
  listEventsOperation,
  partnerDeliveriesOperation,
  partnerDeliveryOperation,
  partnerEndpointOperation,
  partnerEndpointStatsOperation,
  partnerEventsOperation,
  partnerRecoverOperation,
  partnerReplayOperation,
  partnerReplayProgressOperation,
  partnerRotateSecretOperation,
  partnerTestEventOperation,
  publishEventOperation,
  recoverEndpointOperation,
  replayOperation,
  rotatePartnerKeyOperation,
  rotateSecretOperation,
  rotateSigningKeyOperation,
  showEventOperation,
  showReplayOperation,
  testEventOperation,
  updateEndpointOperation,
} from './operations/webhooks';

/**
 * The `webhooks` function: endpoints, producers' events, history and replay (admin routes, C7); the partner
 * routes (resync, callbacks) authenticated with the partner key.
 */
export const createWebhooksHandler = (deps: ServiceDependencies): HttpHandler => {
  const logger = deps.createLogger('webhooks');
  const ctx = webhookContext(deps, logger);
  const reader = new CatalogReader(deps.catalogRepository, deps.clock);
  const versionsInForce = async () => partVersionNames((await reader.current()).publication.versions);
  // C8: every POST honours Idempotency-Key. The answers that carry a secret are stored encrypted with the
  // secrets key, so the idempotency table never holds a secret in clear.
  const idempotency = deps.idempotency;
  const sealed = { ...idempotency, sealer: responseSealer(deps.secretsCipher) };
  return createHttpApi({
    functionId: 'webhooks',
    operatorRoles: deps.operatorRoles,
    logger,
    metrics: deps.metrics.recorder('webhooks'),
    operations: {
      createEndpoint: idempotent(createEndpointOperation(ctx), sealed),
      listEndpoints: listEndpointsOperation(ctx),
      getEndpoint: getEndpointOperation(ctx),
      endpointStats: endpointStatsOperation(ctx),
      updateEndpoint: updateEndpointOperation(ctx),
      deleteEndpoint: deleteEndpointOperation(ctx),
      rotateEndpointSecret: idempotent(rotateSecretOperation(ctx), sealed),
      rotatePartnerKey: idempotent(rotatePartnerKeyOperation(ctx), sealed),
      rotateSigningKey: idempotent(rotateSigningKeyOperation(ctx), idempotency),
      sendTestEvent: idempotent(testEventOperation(ctx), idempotency),
      recoverEndpoint: idempotent(recoverEndpointOperation(ctx), idempotency),
      publishEvent: idempotent(publishEventOperation(ctx, versionsInForce), idempotency),
      listEvents: listEventsOperation(ctx),
      showEvent: showEventOperation(ctx),
      expungeEvent: idempotent(expungeEventOperation(ctx), idempotency),
      replay: idempotent(replayOperation(ctx), idempotency),
      showReplay: showReplayOperation(ctx),
      partnerEvents: partnerEventsOperation(ctx),
      partnerEndpoint: partnerEndpointOperation(ctx),
      partnerEndpointStats: partnerEndpointStatsOperation(ctx),
      partnerRotateSecret: idempotent(partnerRotateSecretOperation(ctx), sealed),
      partnerTestEvent: idempotent(partnerTestEventOperation(ctx), idempotency),
      partnerDeliveries: partnerDeliveriesOperation(ctx),
      partnerDelivery: partnerDeliveryOperation(ctx),
      partnerReplay: idempotent(partnerReplayOperation(ctx), idempotency),
      partnerRecover: idempotent(partnerRecoverOperation(ctx), idempotency),
      partnerReplayProgress: partnerReplayProgressOperation(ctx),
      catalogSnapshot: catalogSnapshotOperation(ctx, reader, deps.catalogRepository),
      // Partner callbacks: the Idempotency-Key is required; DPoP proofs for endpoints with a DPoP key, their
      // `jti`s remembered in the idempotency table (items `dpop-jti#…`, its TTL attribute `expiration`).
      confirmEvent: confirmEventOperation(ctx, {
        dpop: deps.webhooks.dpopVerifier,
        dpopReplays: deps.webhooks.dpopReplays,
        idempotency,
        onDpopRefused: (fields) =>
          logger.info('request refused', { error_code: 'unauthorized', status: 401, dpop: fields }),
      }),
    },
  });
};

export const handler = lazyHandler(() => createWebhooksHandler(awsDependencies('webhooks')));
