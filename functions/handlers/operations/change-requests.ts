import type { APIGatewayProxyEvent } from 'aws-lambda';
import * as z from 'zod';
import { type CatalogFiles, FileTooLargeError, FileUnreadableError } from '../../ports/catalog-files';
import { importByUploadSchema } from '../../schemas/catalog-api';
import {
  approveChangeRequestSchema,
  changeRequestPathSchema,
  createChangeRequestSchema,
  listChangeRequestsQuerySchema,
  rejectChangeRequestSchema,
} from '../../schemas/change-requests';
import { readUpload } from '../../usecases/catalog/files';
import {
  approveChangeRequest,
  type ChangeRequestDependencies,
  createChangeRequest,
  getChangeRequest,
  listChangeRequests,
  rejectChangeRequest,
  releaseOf,
} from '../../usecases/change-requests/change-requests';
import { HttpError } from '../middleware/errors';
import type { HttpResult, Operation } from '../middleware/http';
import { exactlyOnce } from '../middleware/idempotency';
import { operatorOf } from '../middleware/principal';
import { invalidBody, parseJsonBody, parseWith } from '../middleware/validation';

/** The answer of a change-request write: the record (with its diff when created) under `statusCode`. */
const answered =
  (statusCode: number) =>
  (body: object): HttpResult => ({ statusCode, body });

const pathOf = (event: APIGatewayProxyEvent) =>
  parseWith(changeRequestPathSchema, event.pathParameters ?? {}, 'path');

/**
 * `POST /admin/change-requests`: 201 with the request, its diff and guardrail findings. A `patch` carries
 * `operations` instead of a payload (C30).
 */
export const createChangeRequestOperation =
  (deps: ChangeRequestDependencies): Operation =>
  async (request) => {
    const { event } = request;
    const body = parseJsonBody(createChangeRequestSchema, event.body, event.isBase64Encoded);
    const created = await createChangeRequest(
      deps,
      {
        kind: body.kind,
        // A patch's operations are its payload: the release's content_sha256 covers them.
        payload: body.kind === 'patch' ? { operations: body.operations } : body.payload,
        ...(body.effective_from ? { effective_from: body.effective_from } : {}),
        ...(body.note ? { note: body.note } : {}),
      },
      operatorOf(request.principal).identity,
      exactlyOnce(request, answered(201)),
    );
    return answered(201)(created);
  };

/**
 * The document uploaded under `upload_id` (`POST /admin/catalog/uploads`), with the request's `effective_from`
 * if it gives one. A missing upload or one that is not a JSON object is a 400 naming `upload_id`; one past the
 * size limit a 413.
 */
const uploadedDocument = async (
  files: CatalogFiles,
  body: Record<string, unknown>,
): Promise<Record<string, unknown>> => {
  const { upload_id, effective_from } = parseWith(importByUploadSchema, body);
  let uploaded: unknown;
  try {
    uploaded = await readUpload(files, upload_id);
  } catch (error) {
    if (error instanceof FileTooLargeError) throw new HttpError('payload_too_large', error.message);
    if (error instanceof FileUnreadableError)
      throw invalidBody('upload_id', `the uploaded file cannot be read: ${error.message}`);
    throw error;
  }
  if (uploaded === undefined)
    throw invalidBody('upload_id', 'nothing was uploaded under this id (or its upload expired)');
  if (typeof uploaded !== 'object' || uploaded === null || Array.isArray(uploaded))
    throw invalidBody('upload_id', 'the uploaded file is not a catalog document (a JSON object)');
  return { ...(uploaded as Record<string, unknown>), ...(effective_from ? { effective_from } : {}) };
};

/**
 * `POST /admin/catalog/import`: a whole catalog document becomes a change request of kind `catalog` (C23) —
 * nothing is published until two other operators approve it. The document may carry `effective_from`.
 */
export const importCatalogOperation =
  (deps: ChangeRequestDependencies, files: CatalogFiles): Operation =>
  async (request) => {
    const { event } = request;
    const body = parseJsonBody(z.record(z.string(), z.unknown()), event.body, event.isBase64Encoded);
    const document = 'upload_id' in body ? await uploadedDocument(files, body) : body;
    const { effective_from: effectiveFrom, ...payload } = document;
    const { effective_from } = parseWith(
      z.strictObject({ effective_from: createChangeRequestSchema.shape.effective_from }),
      { effective_from: effectiveFrom },
    );
    const created = await createChangeRequest(
      deps,
      { kind: 'catalog', payload, ...(effective_from ? { effective_from } : {}), note: 'catalog import' },
      operatorOf(request.principal).identity,
      exactlyOnce(request, answered(202)),
    );
    return answered(202)(created);
  };

export const listChangeRequestsOperation =
  (deps: Pick<ChangeRequestDependencies, 'store'>): Operation =>
  async ({ event }) => {
    const query = parseWith(listChangeRequestsQuerySchema, event.queryStringParameters ?? {}, 'query');
    const page = await listChangeRequests(deps.store, {
      limit: query.limit,
      ...(query.status ? { status: query.status } : {}),
      ...(query.cursor ? { cursor: query.cursor } : {}),
    });
    return {
      statusCode: 200,
      body: { items: page.items, ...(page.next_cursor ? { cursor: page.next_cursor } : {}) },
    };
  };

export const getChangeRequestOperation =
  (deps: Pick<ChangeRequestDependencies, 'store'>): Operation =>
  async ({ event }) => ({ statusCode: 200, body: await getChangeRequest(deps.store, pathOf(event).cr_id) });

/** `POST /admin/change-requests/{cr_id}/approve`: the second distinct approval publishes. */
export const approveChangeRequestOperation =
  (deps: (traceId: string) => ChangeRequestDependencies): Operation =>
  async (request) => {
    const { event, traceId } = request;
    const operator = operatorOf(request.principal);
    const { cr_id } = pathOf(event);
    const body = parseJsonBody(approveChangeRequestSchema, event.body || '{}', event.isBase64Encoded);
    const record = await approveChangeRequest(
      deps(traceId),
      cr_id,
      {
        by: operator.identity,
        ...(operator.machine ? { machine: true } : {}),
        ...(body.comment ? { comment: body.comment } : {}),
        ...(body.acknowledge ? { acknowledge: body.acknowledge } : {}),
      },
      exactlyOnce(request, answered(200)),
    );
    return answered(200)(record);
  };

export const rejectChangeRequestOperation =
  (deps: ChangeRequestDependencies): Operation =>
  async (request) => {
    const { event } = request;
    const { cr_id } = pathOf(event);
    const body = parseJsonBody(rejectChangeRequestSchema, event.body, event.isBase64Encoded);
    const record = await rejectChangeRequest(
      deps,
      cr_id,
      { by: operatorOf(request.principal).identity, comment: body.comment },
      exactlyOnce(request, answered(200)),
    );
    return answered(200)(record);
  };

/** `GET /audit/releases/{cr_id}`: the DSSE envelope of a published change. */
export const getReleaseOperation =
  (deps: Pick<ChangeRequestDependencies, 'store'>): Operation =>
  async ({ event }) => ({ statusCode: 200, body: await releaseOf(deps.store, pathOf(event).cr_id) });
