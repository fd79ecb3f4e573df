import { type Agent, type OutgoingHttpHeaders, request } from 'node:http';

/** One answer of the stack, as the benchmarks' load generators read it. */
export interface Answer {
  /** HTTP status, 0 for a transport error or timeout. */
  readonly status: number;
  readonly body: string;
  readonly cache: string | undefined;
  readonly traceId: string | undefined;
}

/** The first value of a header. */
export const header = (value: string | string[] | undefined): string | undefined =>
  Array.isArray(value) ? value[0] : value;

/**
 * Sends one request and resolves once the whole body has been read; never rejects (a transport error or a
 * request with no answer within `timeoutMs` resolves with status 0 and the error as its body).
 */
export const send = (
  agent: Agent,
  url: URL,
  method: 'GET' | 'POST',
  headers: OutgoingHttpHeaders,
  body?: string,
  timeoutMs?: number,
): Promise<Answer> =>
  new Promise((resolve) => {
    const failed = (error: unknown) =>
      resolve({ status: 0, body: String(error), cache: undefined, traceId: undefined });
    const req = request(url, { agent, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', failed);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          cache: header(res.headers['x-cache']),
          traceId: header(res.headers['x-trace-id']),
        }),
      );
    });
    if (timeoutMs !== undefined) {
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer in ${timeoutMs} ms`)));
    }
    req.on('error', failed);
    req.end(body);
  });
