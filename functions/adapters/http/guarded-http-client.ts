import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import {
  type ClientRequest,
  request as httpRequest,
  type IncomingMessage,
  type RequestOptions,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { rootCertificates } from 'node:tls';
import type {
  ClientCertificate,
  WebhookHttpClient,
  WebhookNetworkError,
  WebhookRequest,
  WebhookResponse,
} from '../../ports/webhook-http';
import { isParsedAddressAllowed, parseAllowedCidrs } from './egress-address';

export { EgressPolicyError, isAddressAllowed } from './egress-address';

/** Where webhook deliveries may go (C17). */
export interface EgressPolicy {
  /** Plain http allowed (local stack only); otherwise only https URLs, anything else → scheme_not_allowed without connecting. */
  readonly allowHttp: boolean;
  /** CIDRs that may be reached although not public unicast (e.g. ['127.0.0.0/8', '::1/128'] for the local stack). Empty by default. */
  readonly allowedCidrs: readonly string[];
  /** CA certificates (PEM) trusted besides the public roots (`WEBHOOK_CA_CERTS`: a local TLS receiver's CA). */
  readonly trustedCaCertificates?: string;
}

/** DNS resolution: every address the name resolves to. */
export type Resolver = (hostname: string) => Promise<readonly { address: string; family: 4 | 6 }[]>;

export interface GuardedHttpClientOptions {
  readonly policy: EgressPolicy;
  /** DNS resolution; default node:dns lookup with { all: true }. Tests inject stub resolvers. */
  readonly resolve?: Resolver;
  /** A client certificate for mTLS (PEM strings) presented to every receiver; a request's own one wins. */
  readonly clientCertificate?: ClientCertificate;
  /**
   * Extra CA certificates (PEM) trusted for https besides the public roots (`policy.trustedCaCertificates` when
   * not given), e.g. a local TLS receiver's CA. Verification is never turned off.
   */
  readonly ca?: string;
}

/** Bytes of the response body read at most: enough for 256 characters of UTF-8, then the socket is destroyed. */
export const RESPONSE_BODY_READ_MAX_BYTES = 1024;

/** Length of `excerpt` at most, in UTF-16 code units (a surrogate pair is never split). */
export const RESPONSE_EXCERPT_MAX_CHARS = 256;

/** The resolved or literal destination address is not allowed by the egress policy. */
export class EgressRefusedError extends Error {
  readonly code = 'EEGRESSREFUSED';
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'EgressRefusedError';
  }
}

/** The resolver failed or returned no usable address. */
export class DnsResolutionError extends Error {
  readonly code: string;
  constructor(message: string, options?: ErrorOptions & { readonly code?: string }) {
    super(message, options);
    this.name = 'DnsResolutionError';
    this.code = options?.code ?? 'ENOTFOUND';
  }
}

/** The system resolver: `dns.lookup` with `{ all: true }`, answers in the resolver's order. */
export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, order: 'verbatim' }, (error, addresses) => {
      if (error) reject(error);
      else
        resolve(addresses.map((entry) => ({ address: entry.address, family: entry.family === 6 ? 6 : 4 })));
    });
  });

/** Headers the client owns: framing and hop-by-hop headers are never taken from the caller. */
const CLIENT_OWNED_HEADERS = new Set([
  'connection',
  'content-length',
  'expect',
  'keep-alive',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

const RESET_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE']);
const DNS_CODES = new Set(['ENOTFOUND', 'EAI_AGAIN', 'EAI_FAIL', 'EAI_NODATA', 'EAI_NONAME', 'ENODATA']);
const TIMEOUT_CODES = new Set(['ETIMEDOUT', 'ERR_SOCKET_CONNECTION_TIMEOUT']);
/** OpenSSL certificate verification results as Node reports them in `error.code`. */
const TLS_VERIFY_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'HOSTNAME_MISMATCH',
  'INVALID_CA',
  'INVALID_PURPOSE',
  'PATH_LENGTH_EXCEEDED',
  'EPROTO',
]);

const MESSAGES: Readonly<Record<WebhookNetworkError, string>> = {
  timeout: 'attempt timed out',
  connection_reset: 'connection reset by the receiver',
  connection_refused: 'connection refused',
  dns_failure: 'host name could not be resolved',
  address_not_allowed: 'destination address is not allowed by the egress policy',
  scheme_not_allowed: 'URL scheme is not allowed by the egress policy',
  tls_error: 'TLS handshake or certificate verification failed',
  other: 'request failed',
};

const errorCode = (error: unknown): string | undefined => {
  if (typeof error !== 'object' || error === null || !('code' in error)) return undefined;
  return typeof error.code === 'string' ? error.code : undefined;
};

/** What kind of network error a Node or SDK error is, by its code (`other` when none says more). */
export const networkErrorKindOf = (error: unknown): WebhookNetworkError => {
  if (error instanceof EgressRefusedError) return 'address_not_allowed';
  if (error instanceof DnsResolutionError) return 'dns_failure';
  const code = errorCode(error);
  if (code === undefined) return 'other';
  if (RESET_CODES.has(code)) return 'connection_reset';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (DNS_CODES.has(code)) return 'dns_failure';
  if (TIMEOUT_CODES.has(code)) return 'timeout';
  if (
    TLS_VERIFY_CODES.has(code) ||
    /^(ERR_TLS_|ERR_SSL_|CERT_|UNABLE_TO_)/.test(code) ||
    (error instanceof Error && 'library' in error && error.library === 'SSL routines')
  ) {
    return 'tls_error';
  }
  return 'other';
};

/** The detail appended to the fixed message: an error code only (never a URL, header or body). */
const describe = (kind: WebhookNetworkError, error: unknown): string => {
  const code = errorCode(error);
  const safeCode = code !== undefined && /^[A-Z0-9_]{1,64}$/.test(code) ? code : undefined;
  return safeCode === undefined || safeCode === 'EEGRESSREFUSED'
    ? MESSAGES[kind]
    : `${MESSAGES[kind]} (${safeCode})`;
};

/** Bidi controls and line/paragraph separators: harmless bytes, but they rewrite how a log line reads. */
const UNSAFE_FORMAT_CHARACTERS = new Set([
  0x200e, 0x200f, 0x2028, 0x2029, 0x202a, 0x202b, 0x202c, 0x202d, 0x202e,
]);

/** Whitespace controls (tab, LF, VT, FF, CR) → space; other C0, DEL, C1, bidi controls → U+FFFD. */
const safeCharacter = (character: string): string => {
  const codePoint = character.codePointAt(0) ?? 0;
  if (codePoint >= 0x09 && codePoint <= 0x0d) return ' ';
  if (
    codePoint < 0x20 ||
    (codePoint >= 0x7f && codePoint <= 0x9f) ||
    (codePoint >= 0x2066 && codePoint <= 0x2069) ||
    UNSAFE_FORMAT_CHARACTERS.has(codePoint)
  ) {
    return '\uFFFD';
  }
  return character;
};

/**
 * The first ≤ `RESPONSE_EXCERPT_MAX_CHARS` characters of the body: UTF-8 (invalid bytes → U+FFFD; a sequence
 * cut by the read limit is dropped), whitespace controls → space, other controls and bidi/separators → U+FFFD.
 */
const excerptOf = (bytes: Uint8Array, complete: boolean): string => {
  const decoder = new TextDecoder('utf-8', { fatal: false, ignoreBOM: false });
  const text = decoder.decode(bytes, { stream: !complete });
  let excerpt = '';
  for (const character of text) {
    if (excerpt.length + character.length > RESPONSE_EXCERPT_MAX_CHARS) break;
    excerpt += safeCharacter(character);
  }
  return excerpt;
};

/** Response headers by lower-case name, first value of each. */
const firstHeaderValues = (rawHeaders: readonly string[]): Record<string, string> => {
  const headers = new Map<string, string>();
  for (let index = 0; index + 1 < rawHeaders.length; index += 2) {
    const name = (rawHeaders[index] as string).toLowerCase();
    if (!headers.has(name)) headers.set(name, rawHeaders[index + 1] as string);
  }
  return Object.fromEntries(headers);
};

const outgoingHeaders = (headers: Readonly<Record<string, string>>, contentLength: number) => {
  const result = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    if (!CLIENT_OWNED_HEADERS.has(name.toLowerCase())) result.set(name, value);
  }
  result.set('Content-Length', String(contentLength));
  return Object.fromEntries(result);
};

/**
 * The socket's DNS lookup: resolves with `resolve`, refuses the connection (`EgressRefusedError`) when ANY
 * answer is not allowed, and hands Node exactly the checked addresses, so the address connected to is the
 * address checked, even if the name resolves differently a moment later (DNS rebinding).
 */
const guardedLookup =
  (resolve: Resolver, isAllowed: (address: string) => boolean): LookupFunction =>
  (hostname: string, options: LookupOptions, callback) => {
    Promise.resolve()
      .then(() => resolve(hostname))
      .then(
        (answers) => {
          const addresses: LookupAddress[] = answers.map((answer) => ({
            address: answer.address,
            family: isIP(answer.address),
          }));
          if (addresses.length === 0) {
            callback(new DnsResolutionError('host name resolved to no address'), '');
            return;
          }
          if (!addresses.every((entry) => entry.family !== 0 && isAllowed(entry.address))) {
            callback(new EgressRefusedError('a resolved address is not allowed by the egress policy'), '');
            return;
          }
          const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
          const usable = addresses.filter((entry) =>
            family !== 4 && family !== 6 ? true : entry.family === family,
          );
          const first = usable[0];
          if (first === undefined) {
            callback(new DnsResolutionError('host name has no address of the requested family'), '');
          } else if (options.all === true) {
            callback(null, usable);
          } else {
            callback(null, first.address, first.family);
          }
        },
        (error: unknown) => {
          callback(
            new DnsResolutionError('host name could not be resolved', {
              cause: error,
              code: errorCode(error),
            }),
            '',
          );
        },
      )
      // Only reached if Node's callback itself throws; the attempt's timeout still settles the request.
      .catch(() => undefined);
  };

type Attempt =
  | { readonly ok: true; readonly url: URL }
  | { readonly ok: false; readonly error: WebhookNetworkError; readonly message: string };

const checkUrl = (rawUrl: string, policy: EgressPolicy, isAllowed: (address: string) => boolean): Attempt => {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return { ok: false, error: 'other', message: 'URL is not a valid absolute URL' };
  }
  if (url.protocol !== 'https:' && !(policy.allowHttp && url.protocol === 'http:')) {
    return { ok: false, error: 'scheme_not_allowed', message: MESSAGES.scheme_not_allowed };
  }
  if (url.username !== '' || url.password !== '') {
    return { ok: false, error: 'other', message: 'URL must not carry userinfo' };
  }
  // WHATWG parsing has already turned decimal, octal, hex and short IPv4 forms into dotted-quad decimal.
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  if (host === '') return { ok: false, error: 'other', message: 'URL has no host' };
  if (isIP(host) !== 0 && !isAllowed(host)) {
    return { ok: false, error: 'address_not_allowed', message: MESSAGES.address_not_allowed };
  }
  return { ok: true, url };
};

/**
 * The webhook HTTP client with the SSRF guard of C17.
 *
 * - Only `https` (and `http` when `policy.allowHttp`); any other scheme → `scheme_not_allowed`, and a URL with
 *   userinfo → `other`, both without connecting. Any port is allowed.
 * - IP-literal hosts (after WHATWG normalisation, brackets stripped) are checked before connecting; host names
 *   are checked inside the socket's `lookup`, at connect time, against every resolved address (see
 *   `isAddressAllowed`); one address not allowed refuses the attempt.
 * - No connection reuse: `agent: false` and the socket is destroyed once the excerpt is read, so a kept-alive
 *   socket can never carry a request to another (unchecked) address. No proxy is used.
 * - Redirects are never followed: a 3xx is a response like any other.
 * - `timeoutMs` bounds the whole attempt; the socket is destroyed when it expires (→ `timeout`).
 * - At most `RESPONSE_BODY_READ_MAX_BYTES` of the body are read. A body cut off by the receiver after the
 *   headers is a network error (`connection_reset`), not a response.
 *
 * Throws `EgressPolicyError` at creation when an allow-list entry is not a CIDR; `post` never throws.
 */
/** What every request of one client shares. */
interface Transport {
  readonly lookup: LookupFunction;
  readonly ca: readonly string[] | undefined;
  readonly clientCertificate: ClientCertificate | undefined;
}

const openRequest = (url: URL, request: WebhookRequest, transport: Transport): ClientRequest => {
  const body = Buffer.from(request.body.buffer, request.body.byteOffset, request.body.byteLength);
  const requestOptions: RequestOptions = {
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
    port: url.port === '' ? undefined : Number(url.port),
    path: `${url.pathname}${url.search}`,
    headers: outgoingHeaders(request.headers, body.byteLength),
    agent: false,
    lookup: transport.lookup,
    setHost: true,
    insecureHTTPParser: false,
  };
  // The request's own certificate (the endpoint's mTLS) wins over the client's; never sent over plain http.
  const clientCertificate = request.clientCertificate ?? transport.clientCertificate;
  const clientRequest =
    url.protocol === 'https:'
      ? httpsRequest({
          ...requestOptions,
          ...verifiedTls(transport),
          ...(clientCertificate === undefined
            ? {}
            : { cert: clientCertificate.cert, key: clientCertificate.key }),
        })
      : httpRequest(requestOptions);
  clientRequest.end(body);
  return clientRequest;
};

/** One attempt to an already checked URL; settles exactly once and always destroys what it opened. */
const runAttempt = (
  url: URL,
  request: WebhookRequest,
  transport: Transport,
  elapsedMs: () => number,
): Promise<WebhookResponse> =>
  new Promise<WebhookResponse>((settlePromise) => {
    let settled = false;
    let clientRequest: ClientRequest | undefined;
    let response: IncomingMessage | undefined;

    const settle = (outcome: WebhookResponse): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      response?.destroy();
      clientRequest?.destroy();
      settlePromise(outcome);
    };
    const fail = (error: WebhookNetworkError, message: string): void =>
      settle({ kind: 'network_error', error, message, durationMs: elapsedMs() });
    const failWith = (error: unknown): void => {
      const kind = networkErrorKindOf(error);
      fail(kind, describe(kind, error));
    };
    const onResponse = (incoming: IncomingMessage): void => {
      response = incoming;
      const status = incoming.statusCode ?? 0;
      const headers = firstHeaderValues(incoming.rawHeaders);
      const chunks: Buffer[] = [];
      let receivedBytes = 0;
      const limit = request.responseBodyBytes ?? RESPONSE_BODY_READ_MAX_BYTES;
      const complete = (bodyEnded: boolean): void => {
        const bytes = Buffer.concat(chunks);
        settle({
          kind: 'response',
          status,
          headers,
          excerpt: excerptOf(bytes, bodyEnded),
          durationMs: elapsedMs(),
          ...(request.responseBodyBytes === undefined
            ? {}
            : { body: { text: bytes.toString('utf8'), complete: bodyEnded } }),
        });
      };
      incoming.on('data', (chunk: Buffer) => {
        // One byte past the limit tells a body of exactly `limit` bytes from a longer one.
        const taken = chunk.subarray(0, limit + 1 - receivedBytes);
        chunks.push(taken);
        receivedBytes += taken.byteLength;
        if (receivedBytes > limit) {
          chunks.splice(0, chunks.length, Buffer.concat(chunks).subarray(0, limit));
          complete(false);
        }
      });
      incoming.on('end', () => complete(true));
      incoming.on('error', failWith);
      // Closed before `end` without an error event: the body was cut off.
      incoming.on('close', () => fail('connection_reset', MESSAGES.connection_reset));
    };

    const timer = setTimeout(() => fail('timeout', MESSAGES.timeout), request.timeoutMs);
    try {
      clientRequest = openRequest(url, request, transport);
    } catch {
      // Node refuses e.g. a header name or value with forbidden characters before anything is sent.
      fail('other', 'request could not be sent (invalid header or option)');
      return;
    }
    clientRequest.on('error', failWith);
    clientRequest.on('response', onResponse);
    clientRequest.on('upgrade', (upgraded, socket) => {
      socket.destroy();
      settle({
        kind: 'response',
        status: upgraded.statusCode ?? 0,
        headers: firstHeaderValues(upgraded.rawHeaders),
        excerpt: '',
        durationMs: elapsedMs(),
      });
    });
  });

/**
 * The webhook HTTP client with the SSRF guard of C17.
 *
 * - Only `https` (and `http` when `policy.allowHttp`); any other scheme → `scheme_not_allowed`, and a URL with
 *   userinfo → `other`, both without connecting. Any port is allowed.
 * - IP-literal hosts (after WHATWG normalisation, brackets stripped) are checked before connecting; host names
 *   are checked inside the socket's `lookup`, at connect time, against every resolved address (see
 *   `isAddressAllowed`); one address not allowed refuses the attempt.
 * - No connection reuse: `agent: false` and the socket is destroyed once the excerpt is read, so a kept-alive
 *   socket can never carry a request to another (unchecked) address. No proxy is used.
 * - Redirects are never followed: a 3xx is a response like any other.
 * - `timeoutMs` bounds the whole attempt; the socket is destroyed when it expires (→ `timeout`).
 * - At most `RESPONSE_BODY_READ_MAX_BYTES` of the body are read. A body cut off by the receiver after the
 *   headers is a network error (`connection_reset`), not a response.
 * - The receiver's certificate is always verified (the public roots, plus `policy.trustedCaCertificates`); a
 *   request's `clientCertificate` (an endpoint's mTLS) is presented in the handshake. A receiver that refuses
 *   it fails the attempt with `tls_error`, or `connection_reset` when (TLS 1.3) its alert loses the race
 *   against the reset of the request already written.
 *
 * Throws `EgressPolicyError` at creation when an allow-list entry is not a CIDR; `post` never throws.
 */
/** TLS as every guarded request speaks it: the peer's certificate verified, TLS 1.2 or later, the extra CA. */
const verifiedTls = (transport: Transport) => ({
  rejectUnauthorized: true,
  minVersion: 'TLSv1.2' as const,
  ...(transport.ca === undefined ? {} : { ca: [...transport.ca] }),
});

/**
 * What every guarded request shares: the allow-list of an egress policy, and the transport that checks every
 * resolved address at connect time and trusts the public roots plus the extra CA. Throws `EgressPolicyError`
 * when an allow-list entry is not a CIDR.
 */
const guardedTransport = (
  options: Pick<GuardedHttpClientOptions, 'policy' | 'resolve' | 'ca'>,
  clientCertificate: ClientCertificate | undefined,
): { readonly isAllowed: (address: string) => boolean; readonly transport: Transport } => {
  const allowedRanges = parseAllowedCidrs(options.policy.allowedCidrs);
  const isAllowed = (address: string): boolean => isParsedAddressAllowed(address, allowedRanges);
  const extraCa = options.ca ?? options.policy.trustedCaCertificates;
  return {
    isAllowed,
    transport: {
      lookup: guardedLookup(options.resolve ?? systemResolver, isAllowed),
      ca: extraCa === undefined ? undefined : [...rootCertificates, extraCa],
      clientCertificate,
    },
  };
};

export const createGuardedHttpClient = (options: GuardedHttpClientOptions): WebhookHttpClient => {
  const { policy } = options;
  const { isAllowed, transport } = guardedTransport(options, options.clientCertificate);

  return {
    post: async (request) => {
      const startedAtMs = performance.now();
      const elapsedMs = (): number => Math.round(performance.now() - startedAtMs);
      const refuse = (error: WebhookNetworkError, message: string): WebhookResponse => ({
        kind: 'network_error',
        error,
        message,
        durationMs: elapsedMs(),
      });
      try {
        if (!Number.isFinite(request.timeoutMs) || request.timeoutMs <= 0) {
          return refuse('other', 'timeoutMs must be a positive number');
        }
        const checked = checkUrl(request.url, policy, isAllowed);
        if (!checked.ok) return refuse(checked.error, checked.message);
        return await runAttempt(checked.url, request, transport, elapsedMs);
      } catch {
        return refuse('other', 'request could not be sent');
      }
    },
  };
};

// ---------------------------------------------------------------------------------------------------------
// Guarded GET: the same egress guard for requests whose answer the caller reads (FX rate sources).

/** Default bound on a guarded GET, headers and body (the caller's `signal` usually ends it sooner). */
export const GUARDED_FETCH_DEFAULT_TIMEOUT_MS = 30_000;

export interface GuardedFetchOptions {
  readonly policy: EgressPolicy;
  /** DNS resolution; default node:dns lookup with { all: true }. Tests inject stub resolvers. */
  readonly resolve?: Resolver;
  /** Extra CA certificates (PEM) trusted besides the public roots (default `policy.trustedCaCertificates`). */
  readonly ca?: string;
  /** Bound on the whole exchange, body included. Default `GUARDED_FETCH_DEFAULT_TIMEOUT_MS`. */
  readonly timeoutMs?: number;
}

/** `fetch`'s shape as the guarded GET offers it: a URL string and the usual init (GET or HEAD only). */
export type GuardedFetch = (input: string, init?: RequestInit) => Promise<Response>;

/**
 * A guarded GET got no HTTP response. `kind` says why (the webhook client's vocabulary: `address_not_allowed`,
 * `scheme_not_allowed`, `dns_failure`, `timeout`, …); the message is fixed text plus an error code, never a URL,
 * a header or a body.
 */
export class GuardedFetchError extends Error {
  readonly code: string | undefined;
  constructor(
    readonly kind: WebhookNetworkError,
    message: string,
    code?: string,
  ) {
    super(message);
    this.name = kind === 'timeout' ? 'TimeoutError' : 'GuardedFetchError';
    this.code = code;
  }
}

const guardedFetchError = (error: unknown): GuardedFetchError => {
  if (error instanceof GuardedFetchError) return error;
  const kind = networkErrorKindOf(error);
  const code = errorCode(error);
  return new GuardedFetchError(
    kind,
    describe(kind, error),
    code !== undefined && /^[A-Z0-9_]{1,64}$/.test(code) ? code : undefined,
  );
};

/** The caller's headers as a plain record, without the client's own (framing, hop-by-hop, `Host`). */
const fetchHeaders = (headers: RequestInit['headers']): Record<string, string> => {
  const result: Record<string, string> = {};
  let parsed: Headers;
  try {
    parsed = new Headers(headers);
  } catch {
    // `Headers` echoes the offending value in its message: never pass it on.
    throw new GuardedFetchError('other', 'request could not be sent (invalid header)');
  }
  for (const [name, value] of parsed) {
    if (!CLIENT_OWNED_HEADERS.has(name) && name !== 'host') result[name] = value;
  }
  return result;
};

/** The reason an aborted signal carries (a `TimeoutError` or `AbortError` DOMException, as `fetch` rejects with). */
const abortReasonOf = (signal: AbortSignal): unknown =>
  signal.reason ?? new DOMException('This operation was aborted', 'AbortError');

/** Statuses whose response has no body (`Response` refuses one). */
const NULL_BODY_STATUSES = new Set([101, 103, 204, 205, 304]);

/** One guarded GET to an already checked URL: resolves with the response once its headers are in. */
const runGuardedGet = (
  url: URL,
  method: 'GET' | 'HEAD',
  headers: Record<string, string>,
  signal: AbortSignal,
  transport: Transport,
): Promise<Response> =>
  new Promise<Response>((resolvePromise, rejectPromise) => {
    let settled = false;
    let clientRequest: ClientRequest | undefined;
    let incoming: IncomingMessage | undefined;
    const finish = (): void => {
      signal.removeEventListener('abort', onAbort);
      incoming?.destroy();
      clientRequest?.destroy();
    };
    const reject = (error: unknown): void => {
      finish();
      if (settled) return;
      settled = true;
      rejectPromise(error);
    };
    // Until the body is read to its end: aborting destroys the socket and errors the body (or the promise).
    function onAbort(): void {
      const reason = abortReasonOf(signal);
      if (incoming && settled) incoming.destroy(reason instanceof Error ? reason : new Error('aborted'));
      else reject(reason);
      clientRequest?.destroy();
    }
    signal.addEventListener('abort', onAbort, { once: true });

    const onResponse = (response: IncomingMessage): void => {
      incoming = response;
      const status = response.statusCode ?? 0;
      if (status < 200 || status > 599) {
        reject(new GuardedFetchError('other', `unexpected HTTP status ${status}`));
        return;
      }
      const responseHeaders = new Headers();
      const raw = response.rawHeaders;
      for (let index = 0; index + 1 < raw.length; index += 2) {
        try {
          responseHeaders.append(raw[index] as string, raw[index + 1] as string);
        } catch {
          // A header `Headers` will not hold is left out (Node's parser already refused malformed ones).
        }
      }
      if (method === 'HEAD' || NULL_BODY_STATUSES.has(status)) {
        settled = true;
        finish();
        resolvePromise(new Response(null, { status, headers: responseHeaders }));
        return;
      }
      let done = false;
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          response.on('data', (chunk: Buffer) => {
            if (done) return;
            controller.enqueue(new Uint8Array(chunk.buffer, chunk.byteOffset, chunk.byteLength));
            if ((controller.desiredSize ?? 0) <= 0) response.pause();
          });
          response.on('end', () => {
            if (done) return;
            done = true;
            finish();
            controller.close();
          });
          const fail = (error: unknown): void => {
            if (done) return;
            done = true;
            finish();
            controller.error(signal.aborted ? abortReasonOf(signal) : guardedFetchError(error));
          };
          response.on('error', fail);
          // Closed before `end` without an error: the body was cut off.
          response.on('close', () => fail(Object.assign(new Error('cut off'), { code: 'ECONNRESET' })));
        },
        pull() {
          response.resume();
        },
        cancel() {
          done = true;
          finish();
        },
      });
      settled = true;
      resolvePromise(new Response(body, { status, headers: responseHeaders }));
    };

    try {
      const requestOptions: RequestOptions = {
        method,
        protocol: url.protocol,
        hostname: url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname,
        port: url.port === '' ? undefined : Number(url.port),
        path: `${url.pathname}${url.search}`,
        headers,
        agent: false,
        lookup: transport.lookup,
        setHost: true,
        insecureHTTPParser: false,
      };
      clientRequest =
        url.protocol === 'https:'
          ? httpsRequest({ ...requestOptions, ...verifiedTls(transport) })
          : httpRequest(requestOptions);
    } catch {
      // Node refuses e.g. a header name or value with forbidden characters before anything is sent.
      reject(new GuardedFetchError('other', 'request could not be sent (invalid header or option)'));
      return;
    }
    clientRequest.on('error', (error) =>
      reject(signal.aborted ? abortReasonOf(signal) : guardedFetchError(error)),
    );
    clientRequest.on('response', onResponse);
    clientRequest.on('upgrade', (_upgraded, socket) => {
      socket.destroy();
      reject(new GuardedFetchError('other', 'the server switched protocols'));
    });
    clientRequest.end();
  });

/**
 * A `fetch` for GETs behind the egress guard of webhook deliveries (C17), for callers that read the answer
 * (FX rate sources):
 *
 * - the same checks before connecting: `https` only (`http` when `policy.allowHttp`), no userinfo, IP literals
 *   checked; host names checked at connect time against every resolved address (DNS rebinding);
 * - no redirects, whatever `init.redirect` says: a 3xx is returned as a response; no proxy; no connection
 *   reuse (`agent: false`, the socket is closed once the body is read or the response dropped);
 * - GET and HEAD only, no request body; framing, hop-by-hop and `Host` headers are the client's;
 * - `timeoutMs` and the caller's `signal` bound the whole exchange: aborting destroys the socket and errors
 *   the body stream (with the signal's reason, as `fetch` does);
 * - the body is streamed to the caller, who bounds its size (cancelling the body closes the socket).
 *
 * Rejects with `GuardedFetchError` (fixed messages: never the URL, a header or the body) or the signal's
 * reason. Throws `EgressPolicyError` at creation when an allow-list entry is not a CIDR.
 */
export const createGuardedFetch = (options: GuardedFetchOptions): GuardedFetch => {
  const { policy } = options;
  // Rate sources present no client certificate.
  const { isAllowed, transport } = guardedTransport(options, undefined);
  const timeoutMs = options.timeoutMs ?? GUARDED_FETCH_DEFAULT_TIMEOUT_MS;
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0)
    throw new RangeError('timeoutMs must be a positive number');

  return async (input, init = {}) => {
    const method = (init.method ?? 'GET').toUpperCase();
    if (method !== 'GET' && method !== 'HEAD')
      throw new GuardedFetchError('other', 'only GET and HEAD requests are sent');
    if (init.body !== undefined && init.body !== null)
      throw new GuardedFetchError('other', 'a GET carries no body');
    const headers = fetchHeaders(init.headers);
    const checked = checkUrl(input, policy, isAllowed);
    if (!checked.ok) throw new GuardedFetchError(checked.error, checked.message);
    const own = AbortSignal.timeout(timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, own]) : own;
    if (signal.aborted) throw abortReasonOf(signal);
    return runGuardedGet(checked.url, method, headers, signal, transport);
  };
};
