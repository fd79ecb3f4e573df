import type { NetworkErrorKind } from '../domain/webhooks/retry-policy';

/** One webhook delivery attempt, as handed to the HTTP client. */
export interface WebhookRequest {
  /** Absolute URL, e.g. `https://partner.example/webhooks/v1/catalog`. */
  readonly url: string;
  /** Request headers (signature, timestamp, event id, …); hop-by-hop headers and `Content-Length` are the client's. */
  readonly headers: Readonly<Record<string, string>>;
  /** Sent as is, with `Content-Length`. */
  readonly body: Uint8Array;
  /** The whole attempt: DNS + connect + TLS + response headers + reading the excerpt. */
  readonly timeoutMs: number;
  /** A client certificate (PEM chain, leaf first) and its private key (PEM) presented in the TLS handshake (mTLS). */
  readonly clientCertificate?: ClientCertificate;
  /**
   * Read up to this many bytes of the body and return them as `body` (an OAuth token response); by default only
   * the excerpt's first KiB is read.
   */
  readonly responseBodyBytes?: number;
}

/** PEM texts; the key is a secret: never logged, never in an error message. */
export interface ClientCertificate {
  readonly cert: string;
  readonly key: string;
}

/**
 * Why an attempt got no HTTP response. `address_not_allowed`: the destination (literal or resolved) is not a
 * public unicast address nor inside the configured allow-list (C17); `scheme_not_allowed`: not `https` (or
 * `http` where the policy allows it); `other`: anything else, including a malformed URL or one with userinfo.
 */
export type WebhookNetworkError = NetworkErrorKind;

/** The outcome of one attempt: an HTTP response (any status, 3xx included) or a network error. */
export type WebhookResponse =
  | {
      readonly kind: 'response';
      readonly status: number;
      /** Lower-case names, first value of each. */
      readonly headers: Readonly<Record<string, string>>;
      /** First ≤ 256 characters of the body as UTF-8, control characters replaced. */
      readonly excerpt: string;
      readonly durationMs: number;
      /** With `responseBodyBytes`: the body as UTF-8, and whether it was read to its end within the limit. */
      readonly body?: { readonly text: string; readonly complete: boolean };
    }
  | {
      readonly kind: 'network_error';
      readonly error: WebhookNetworkError;
      /** Short; no secrets, no headers, no URL. */
      readonly message: string;
      readonly durationMs: number;
    };

/** Always POST. Never throws; never follows redirects (a 3xx is returned as a response). */
export interface WebhookHttpClient {
  post(request: WebhookRequest): Promise<WebhookResponse>;
}
