import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { FunctionId } from '../definitions';
import { createAdminHandler } from '../handlers/admin';
import { createApiHandler } from '../handlers/api';
import { type AuthorizerHandler, createAuthorizerHandler } from '../handlers/authorizer';
import { createCatalogHandler } from '../handlers/catalog';
import { createCheckoutHandler } from '../handlers/checkout';
import { createDeliverHandler, type QueueHandler } from '../handlers/deliver';
import { createExporterHandler, type ExporterHandler } from '../handlers/exporter';
import { createFanoutHandler, type StreamHandler } from '../handlers/fanout';
import { createRatesHandler, type RatesHandler } from '../handlers/rates';
import { createReplayHandler, type ReplayHandler } from '../handlers/replay';
import { createSweeperHandler, type SweeperHandler } from '../handlers/sweeper';
import { createWebhooksHandler } from '../handlers/webhooks';
import type { ServiceDependencies } from './dependencies';

type HttpFunction = (event: APIGatewayProxyEvent, context: Context) => Promise<APIGatewayProxyResult>;

/**
 * The factory behind each function's Lambda entry point (`FUNCTIONS[id].entry` exports `handler`, built by the
 * same factory from the AWS composition root). The local stack builds its instances from here.
 */
export const FUNCTION_FACTORIES = {
  authorizer: (deps: ServiceDependencies): AuthorizerHandler => createAuthorizerHandler(deps),
  api: (deps: ServiceDependencies): HttpFunction => createApiHandler(deps),
  catalog: (deps: ServiceDependencies): HttpFunction => createCatalogHandler(deps),
  checkout: (deps: ServiceDependencies): HttpFunction => createCheckoutHandler(deps),
  admin: (deps: ServiceDependencies): HttpFunction => createAdminHandler(deps),
  webhooks: (deps: ServiceDependencies): HttpFunction => createWebhooksHandler(deps),
  fanout: (deps: ServiceDependencies): StreamHandler => createFanoutHandler(deps),
  deliver: (deps: ServiceDependencies): QueueHandler => createDeliverHandler(deps),
  sweeper: (deps: ServiceDependencies): SweeperHandler => createSweeperHandler(deps),
  replay: (deps: ServiceDependencies): ReplayHandler => createReplayHandler(deps),
  rates: (deps: ServiceDependencies): RatesHandler => createRatesHandler(deps),
  exporter: (deps: ServiceDependencies): ExporterHandler => createExporterHandler(deps),
} as const satisfies Record<FunctionId, (deps: ServiceDependencies) => unknown>;
