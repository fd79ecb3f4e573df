import { buildOpenApi, type JsonObject } from '../../schemas/openapi';
import type { Operation } from '../middleware/http';

/** Browsers and CDNs may keep the document for five minutes; it only changes with a deployment. */
export const OPENAPI_CACHE_SECONDS = 300;

/**
 * A document that only changes with a deployment (`GET /openapi.json`, `/asyncapi.json`, `/webhooks/event-types`,
 * `/changelog`): built on first use, kept for the life of the function instance, cacheable for five minutes.
 */
export const documentOperation = <T>(build: () => T): Operation => {
  let document: T | undefined;
  return async () => {
    document ??= build();
    return {
      statusCode: 200,
      headers: { 'Cache-Control': `public, max-age=${OPENAPI_CACHE_SECONDS}` },
      body: document,
    };
  };
};

/** `GET /openapi.json`: the OpenAPI 3.1 document of the deployed route table. */
export const openApiOperation = (build: () => JsonObject = buildOpenApi): Operation =>
  documentOperation(build);
