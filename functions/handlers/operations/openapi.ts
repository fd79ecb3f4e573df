import { buildOpenApi, type JsonObject } from '../../schemas/openapi';
import type { Operation } from '../middleware/http';

/** Browsers and CDNs may keep the document for five minutes; it only changes with a deployment. */
export const OPENAPI_CACHE_SECONDS = 300;

/**
 * `GET /openapi.json`: the OpenAPI 3.1 document of the deployed route table, built on first use and kept for the
 * life of the function instance.
 */
export const openApiOperation = (build: () => JsonObject = buildOpenApi): Operation => {
  let document: JsonObject | undefined;
  return async () => {
    document ??= build();
    return {
      statusCode: 200,
      headers: { 'Cache-Control': `public, max-age=${OPENAPI_CACHE_SECONDS}` },
      body: document,
    };
  };
};
