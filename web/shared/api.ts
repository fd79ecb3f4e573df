/**
 * The pages' one way to the API: same origin, the signed-in credential as `Authorization: Bearer`, an
 * `Idempotency-Key` on every POST, and every answer parsed with the API's own zod schema (the OpenAPI document is
 * generated from the same schemas), so a page never shows a shape the API does not promise.
 */
import type * as z from 'zod';

export interface Credential {
  /** `operator`: a token of ADMIN_TOKENS (C27); `partner`: an endpoint's partner key. */
  readonly kind: 'operator' | 'partner';
  readonly token: string;
}

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
    : `?${new URLSearchParams(entries.map(([k, v]) => [k, String(v)])).toString()}`;
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
    const headers: Record<string, string> = { authorization: `Bearer ${credential.token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (method === 'POST') headers['idempotency-key'] = crypto.randomUUID();
    const response = await fetcher(`${path}${queryString(query)}`, {
      method,
      headers,
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : {};
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
