import type { z } from 'zod';
import { HttpError } from './errors';

export interface ValidationProblem {
  readonly path: string;
  readonly message: string;
}

/** JSON-path-like rendering of a zod issue path: `$.items[2].quantity`. */
const renderPath = (root: string, path: readonly PropertyKey[]): string =>
  path.reduce<string>(
    (rendered, segment) =>
      typeof segment === 'number' ? `${rendered}[${segment}]` : `${rendered}.${String(segment)}`,
    root,
  );

/** Parse a value with a zod schema; failures become 400 `invalid_request` listing every problem and its path. */
export const parseWith = <Schema extends z.ZodType>(
  schema: Schema,
  value: unknown,
  root: '$' | 'query' | 'path' | 'headers' = '$',
): z.infer<Schema> => {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const problems: ValidationProblem[] = result.error.issues.map((issue) => ({
    path: renderPath(root, issue.path),
    message: issue.message,
  }));
  const summary = problems
    .slice(0, 5)
    .map((problem) => `${problem.path}: ${problem.message}`)
    .join('; ');
  throw new HttpError('invalid_request', summary, { details: { problems } });
};

/** A 400 `invalid_request` with one problem at `$.<field>` of the body. */
export const invalidBody = (field: string, message: string): HttpError =>
  new HttpError('invalid_request', `$.${field}: ${message}`, {
    details: { problems: [{ path: `$.${field}`, message }] },
  });

/** Parse a JSON request body; malformed JSON is a 400, never a 500. */
export const parseJsonBody = <Schema extends z.ZodType>(
  schema: Schema,
  body: string | null,
  isBase64Encoded = false,
): z.infer<Schema> => {
  if (body === null || body.length === 0) throw new HttpError('invalid_request', 'a JSON body is required');
  const text = isBase64Encoded ? Buffer.from(body, 'base64').toString('utf8') : body;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new HttpError('invalid_request', 'the body is not valid JSON');
  }
  return parseWith(schema, value);
};
