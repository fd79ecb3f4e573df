/**
 * The pages' one way to the API: same origin, the signed-in credential as `Authorization: Bearer`, an
 * `Idempotency-Key` on every POST, and every answer parsed with the API's own zod schema (the OpenAPI document is
 * generated from the same schemas), so a page never shows a shape the API does not promise.
 */
import { AwsV4Signer } from 'aws4fetch';
import type * as z from 'zod';

/** A token: an operator's of ADMIN_TOKENS (the local stack, C27), or an endpoint's partner key. */
export interface TokenCredential {
  readonly kind: 'operator' | 'partner';
  readonly token: string;
}

/**
 * An operator in AWS (C27): temporary credentials of an operator role (`aws sts assume-role … --source-identity`),
 * with which each call is signed (SigV4, `execute-api`) for the API behind the site (`api_origin` of the site's
 * `config.json`); the site's CloudFront forwards the signed request to it unchanged.
 */
export interface AwsCredential {
  readonly kind: 'aws';
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  readonly sessionToken?: string;
  readonly region: string;
  /** `https://<api id>.execute-api.<region>.amazonaws.com/<stage>`: what the signature names. */
  readonly apiOrigin: string;
}

export type Credential = TokenCredential | AwsCredential;

/**
 * The headers of a call as the credential authenticates it: `Authorization: Bearer`, or a SigV4 signature of the
 * same method, path, query and body sent to the API's own URL (host and stage), which API Gateway checks.
 */
export const authenticatedHeaders = async (
  credential: Credential,
  request: {
    readonly method: string;
    readonly path: string;
    readonly headers: Record<string, string>;
    readonly body?: string;
  },
  datetime?: string,
): Promise<Record<string, string>> => {
  if (credential.kind !== 'aws') return { ...request.headers, authorization: `Bearer ${credential.token}` };
  const signer = new AwsV4Signer({
    method: request.method,
    url: `${credential.apiOrigin.replace(/\/+$/, '')}${request.path}`,
    headers: request.headers,
    ...(request.body !== undefined ? { body: request.body } : {}),
    accessKeyId: credential.accessKeyId,
    secretAccessKey: credential.secretAccessKey,
    ...(credential.sessionToken ? { sessionToken: credential.sessionToken } : {}),
    service: 'execute-api',
    region: credential.region,
    ...(datetime ? { datetime } : {}),
  });
  const signed = await signer.sign();
  // The browser sets Host itself (CloudFront then sends the API's): every other signed header goes as signed.
  const headers: Record<string, string> = {};
  signed.headers.forEach((value, name) => {
    if (name !== 'host') headers[name] = value;
  });
  return headers;
};

/** The API's error shape (C6), as a page shows it. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly problems: readonly { readonly path: string; readonly message: string }[] = [],
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

type Query = Readonly<Record<string, string | number | boolean | undefined>>;

const queryString = (query: Query | undefined): string => {
  const entries = Object.entries(query ?? {}).filter(
    (entry): entry is [string, string | number | boolean] => entry[1] !== undefined && entry[1] !== '',
  );
  return entries.length === 0
    ? ''
    : `?${new URLSearchParams(entries.map(([k, v]): [string, string] => [k, String(v)])).toString()}`;
};

export interface Api {
  get<T>(path: string, schema: z.ZodType<T>, query?: Query): Promise<T>;
  post<T>(path: string, schema: z.ZodType<T>, body?: unknown): Promise<T>;
  patch<T>(path: string, schema: z.ZodType<T>, body: unknown): Promise<T>;
  /** The raw JSON of a GET (the receipt page verifies exactly what the API sent). */
  raw(path: string): Promise<unknown>;
}

export const createApi = (credential: Credential, fetcher: typeof fetch = fetch): Api => {
  const call = async (method: string, path: string, body?: unknown, query?: Query): Promise<unknown> => {
    const target = `${path}${queryString(query)}`;
    const text = body !== undefined ? JSON.stringify(body) : undefined;
    const plain: Record<string, string> = {};
    if (text !== undefined) plain['content-type'] = 'application/json';
    if (method === 'POST') plain['idempotency-key'] = crypto.randomUUID();
    const headers = await authenticatedHeaders(credential, {
      method,
      path: target,
      headers: plain,
      ...(text !== undefined ? { body: text } : {}),
    });
    const response = await fetcher(target, {
      method,
      headers,
      ...(text !== undefined ? { body: text } : {}),
    });
    const answer = await response.text();
    let json: unknown;
    try {
      json = answer ? JSON.parse(answer) : {};
    } catch {
      throw new ApiError(
        response.status,
        'bad_response',
        `the service answered ${response.status} without JSON`,
      );
    }
    if (!response.ok) {
      const error = json as {
        error?: string;
        error_description?: string;
        details?: { problems?: { path: string; message: string }[] };
      };
      throw new ApiError(
        response.status,
        error.error ?? 'error',
        error.error_description ?? `the service answered ${response.status}`,
        error.details?.problems ?? [],
      );
    }
    return json;
  };
  const parsed = <T>(schema: z.ZodType<T>, value: unknown): T => {
    const result = schema.safeParse(value);
    if (!result.success)
      throw new ApiError(200, 'unexpected_response', 'the answer is not in the documented shape');
    return result.data;
  };
  return {
    get: async (path, schema, query) => parsed(schema, await call('GET', path, undefined, query)),
    post: async (path, schema, body) => parsed(schema, await call('POST', path, body ?? {})),
    patch: async (path, schema, body) => parsed(schema, await call('PATCH', path, body)),
    raw: (path) => call('GET', path),
  };
};
