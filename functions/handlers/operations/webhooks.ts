import type { CatalogRepository } from '../../ports/catalog';
import { CHANGELOG } from '../../schemas/changelog';
import {
  catalogSnapshotQuerySchema,
  createEndpointSchema,
  endpointPathSchema,
  eventPathSchema,
  listEndpointsQuerySchema,
  listEventsQuerySchema,
  partnerEventsQuerySchema,
  publishEventSchema,
  replayPathSchema,
  replayRequestSchema,
  updateEndpointSchema,
} from '../../schemas/webhooks';
import type { CatalogReader } from '../../usecases/catalog/reader';
import type { WebhookContext } from '../../usecases/webhooks/context';
import {
  createEndpoint,
  deleteEndpoint,
  getEndpoint,
  listEndpoints,
  rotateSecret,
  updateEndpoint,
} from '../../usecases/webhooks/endpoints';
import { NO_VERSIONS, publishEvent, type VersionsInForce } from '../../usecases/webhooks/events';
import { listEvents, showEvent } from '../../usecases/webhooks/history';
import { authenticatePartner, catalogSnapshot, partnerEvents } from '../../usecases/webhooks/partner';
import { replayDeliveries, replayProgress } from '../../usecases/webhooks/replay';
import type { Operation } from '../middleware/http';
import { parseJsonBody, parseWith } from '../middleware/validation';

const pathOf = (event: { pathParameters: Record<string, string | undefined> | null }) =>
  event.pathParameters ?? {};

export const createEndpointOperation =
  (ctx: WebhookContext): Operation =>
  async ({ event }) => {
    const body = parseJsonBody(createEndpointSchema, event.body, event.isBase64Encoded);
    const created = await createEndpoint(ctx, body);
    return {
      statusCode: 201,
      headers: { Location: `/webhooks/endpoints/${created.endpoint_id}` },
      body: created,
    };
  };

export const listEndpointsOperation =
  (ctx: WebhookContext): Operation =>
  async ({ event }) => {
    const query = parseWith(listEndpointsQuerySchema, event.queryStringParameters ?? {}, 'query');
    return { statusCode: 200, body: await listEndpoints(ctx, query.limit ?? 50, query.cursor) };
  };

export const getEndpointOperation =
  (ctx: WebhookContext): Operation =>
  async ({ event }) => {
    const { endpoint_id } = parseWith(endpointPathSchema, pathOf(event), 'path');
    return { statusCode: 200, body: await getEndpoint(ctx, endpoint_id) };
  };

export const updateEndpointOperation =
  (ctx: WebhookContext): Operation =>
  async ({ event }) => {
    const { endpoint_id } = parseWith(endpointPathSchema, pathOf(event), 'path');
    const body = parseJsonBody(updateEndpointSchema, event.body, event.isBase64Encoded);
    return { statusCode: 200, body: await updateEndpoint(ctx, endpoint_id, body) };
  };

export const deleteEndpointOperation =
  (ctx: WebhookContext): Operation =>
  async ({ event }) => {
    const { endpoint_id } = parseWith(endpointPathSchema, pathOf(event), 'path');
    await deleteEndpoint(ctx, endpoint_id);
    return { statusCode: 204 };
  };

export const rotateSecretOperation =
  (ctx: WebhookContext): Operation =>
  async ({ event }) => {
    const { endpoint_id } = parseWith(endpointPathSchema, pathOf(event), 'path');
    return { statusCode: 200, body: await rotateSecret(ctx, endpoint_id) };
  };

/** `POST /webhooks/events`: 202, delivery follows through the outbox. */
export const publishEventOperation =
  (ctx: WebhookContext, versionsInForce: () => Promise<VersionsInForce>): Operation =>
  async ({ event, traceId }) => {
    const body = parseJsonBody(publishEventSchema, event.body, event.isBase64Encoded);
    const versions = await versionsInForce().catch(() => NO_VERSIONS);
    const item = await publishEvent(ctx, body, traceId, versions);
    return {
      statusCode: 202,
      headers: { Location: `/webhooks/events/${item.event_id}` },
      body: { event_id: item.event_id },
    };
  };

export const listEventsOperation =
  (ctx: WebhookContext): Operation =>
  async ({ event }) => {
    const query = parseWith(listEventsQuerySchema, event.queryStringParameters ?? {}, 'query');
    return { statusCode: 200, body: await listEvents(ctx, query) };
  };

export const showEventOperation =
  (ctx: WebhookContext): Operation =>
  async ({ event }) => {
    const { event_id } = parseWith(eventPathSchema, pathOf(event), 'path');
    return { statusCode: 200, body: await showEvent(ctx, event_id) };
  };

export const replayOperation =
  (ctx: WebhookContext): Operation =>
  async ({ event }) => {
    const body = parseJsonBody(replayRequestSchema, event.body, event.isBase64Encoded);
    const accepted = await replayDeliveries(ctx, body);
    return {
      statusCode: 202,
      headers: { Location: `/webhooks/replays/${accepted.replay_id}` },
      body: accepted,
    };
  };

export const showReplayOperation =
  (ctx: WebhookContext): Operation =>
  async ({ event }) => {
    const { replay_id } = parseWith(replayPathSchema, pathOf(event), 'path');
    return { statusCode: 200, body: await replayProgress(ctx, replay_id) };
  };

const authorizationOf = (
  headers: Readonly<Record<string, string | undefined>> | null,
): string | undefined => {
  for (const [name, value] of Object.entries(headers ?? {}))
    if (name.toLowerCase() === 'authorization') return value;
  return undefined;
};

/** `GET /partner/events` (partner key). */
export const partnerEventsOperation =
  (ctx: WebhookContext): Operation =>
  async ({ event }) => {
    const endpoint = await authenticatePartner(ctx, authorizationOf(event.headers));
    const query = parseWith(partnerEventsQuerySchema, event.queryStringParameters ?? {}, 'query');
    return { statusCode: 200, body: await partnerEvents(ctx, endpoint, query) };
  };

/** `GET /catalog/snapshot?as_of=` (partner key). */
export const catalogSnapshotOperation =
  (ctx: WebhookContext, reader: CatalogReader, repository: CatalogRepository): Operation =>
  async ({ event }) => {
    await authenticatePartner(ctx, authorizationOf(event.headers));
    const query = parseWith(catalogSnapshotQuerySchema, event.queryStringParameters ?? {}, 'query');
    return { statusCode: 200, body: await catalogSnapshot(reader, repository, new Date(query.as_of)) };
  };

/** `GET /changelog` (C24). */
export const changelogOperation = (): Operation => async () => ({
  statusCode: 200,
  headers: { 'Cache-Control': 'public, max-age=300' },
  body: CHANGELOG,
});
