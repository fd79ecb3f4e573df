import type { ApiKeyRecord } from '../../ports/api-keys';
import {
  apiKeyPathSchema,
  createApiKeySchema,
  listApiKeysQuerySchema,
  rotateApiKeySchema,
} from '../../schemas/api-keys';
import {
  type ApiKeyDependencies,
  getApiKey,
  issueApiKey,
  listApiKeys,
  revokeApiKey,
  rotateApiKey,
} from '../../usecases/access/api-keys';
import type { HttpResult, Operation } from '../middleware/http';
import { exactlyOnce } from '../middleware/idempotency';
import { operatorOf } from '../middleware/principal';
import { parseJsonBody, parseWith } from '../middleware/validation';

const answered =
  (statusCode: number) =>
  (body: object): HttpResult => ({ statusCode, body });

/** `POST /admin/api-keys`: 201 with the key's secret, shown once (a replay's answer is stored sealed). */
export const createApiKeyOperation =
  (deps: ApiKeyDependencies): Operation =>
  async (request) => {
    const { event } = request;
    const body = parseJsonBody(createApiKeySchema, event.body, event.isBase64Encoded);
    const issued = await issueApiKey(
      deps,
      body,
      operatorOf(request.principal).identity,
      exactlyOnce(request, answered(201)),
    );
    return answered(201)(issued);
  };

export const listApiKeysOperation =
  (deps: ApiKeyDependencies): Operation =>
  async ({ event }) => {
    const query = parseWith(listApiKeysQuerySchema, event.queryStringParameters ?? {}, 'query');
    const page = await listApiKeys(deps, {
      limit: query.limit ?? 50,
      ...(query.tenant ? { tenant: query.tenant } : {}),
      ...(query.cursor ? { cursor: query.cursor } : {}),
    });
    return { statusCode: 200, body: { items: page.items, ...(page.cursor ? { cursor: page.cursor } : {}) } };
  };

/** `DELETE /admin/api-keys/{key_id}`: 200 with the revoked key. */
export const revokeApiKeyOperation =
  (deps: ApiKeyDependencies): Operation =>
  async ({ event, principal }) => {
    const { key_id } = parseWith(apiKeyPathSchema, event.pathParameters ?? {}, 'path');
    const revoked: ApiKeyRecord = await revokeApiKey(deps, key_id, operatorOf(principal).identity);
    return { statusCode: 200, body: revoked };
  };

/** `POST /admin/api-keys/{key_id}/rotate`: 200 with the new secret; the old one works `overlap_hours`. */
export const rotateApiKeyOperation =
  (deps: ApiKeyDependencies): Operation =>
  async (request) => {
    const { event } = request;
    const { key_id } = parseWith(apiKeyPathSchema, event.pathParameters ?? {}, 'path');
    const body = parseJsonBody(rotateApiKeySchema, event.body || '{}', event.isBase64Encoded);
    await getApiKey(deps, key_id);
    const rotated = await rotateApiKey(deps, key_id, body.overlap_hours, exactlyOnce(request, answered(200)));
    return answered(200)(rotated);
  };
