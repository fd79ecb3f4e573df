import { createHash } from 'node:crypto';
import {
  type OAuth2ClientCredentials,
  type OutboundAuth,
  readTokenResponse,
  TOKEN_EXPIRY_MARGIN_SECONDS,
  TOKEN_RESPONSE_MAX_BYTES,
  tokenRequestOf,
} from '../../domain/webhooks/outbound-auth';
import type { WebhookNetworkError, WebhookResponse } from '../../ports/webhook-http';
import type { EndpointRecord } from '../../ports/webhooks';
import { LruMap } from '../../shared/lru';
import type { WebhookContext } from './context';
import { sealedJson } from './sealed-json';

/** The endpoint's outbound authentication, sealed with the secrets key (never stored or shown in clear). */
const sealedAuth = sealedJson<OutboundAuth>('endpoint-auth', 500);

export const sealAuth = sealedAuth.seal;

const authOf = async (
  ctx: Pick<WebhookContext, 'cipher'>,
  endpoint: EndpointRecord,
): Promise<OutboundAuth | undefined> =>
  endpoint.auth_ciphertext === undefined
    ? undefined
    : sealedAuth.open(ctx, endpoint.endpoint_id, endpoint.auth_ciphertext);

/** Access tokens kept per instance at most (one per endpoint and credentials; the least recently used go first). */
const CACHED_TOKENS = 1_000;

/**
 * Access tokens per endpoint and credentials, kept until shortly before they expire (one instance's memory: a
 * new instance fetches its own; a changed credential's old token ages out of the LRU). A token refused with 401 is
 * dropped and fetched again once.
 */
export class OAuthTokenCache {
  private readonly tokens = new LruMap<{ readonly token: string; readonly expiresAtMs: number }>(
    CACHED_TOKENS,
  );
  private readonly inFlight = new Map<string, Promise<string>>();

  get(key: string, nowMs: number): string | undefined {
    const held = this.tokens.get(key);
    if (held && held.expiresAtMs > nowMs) return held.token;
    this.tokens.delete(key);
    return undefined;
  }

  set(key: string, token: string, expiresAtMs: number): void {
    this.tokens.set(key, { token, expiresAtMs });
  }

  drop(key: string): void {
    this.tokens.delete(key);
  }

  /** One fetch per key at a time: concurrent deliveries of an endpoint share it. */
  shared(key: string, fetchToken: () => Promise<string>): Promise<string> {
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = fetchToken().finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }
}

/** A token request that failed: the attempt fails as a network error (retried), naming only the reason. */
export class TokenRequestError extends Error {
  constructor(readonly reason: string) {
    super(`oauth token request failed: ${reason}`);
    this.name = 'TokenRequestError';
  }
}

const keyOf = (endpointId: string, credentials: OAuth2ClientCredentials): string =>
  `${endpointId}|${createHash('sha256')
    .update(
      JSON.stringify([
        credentials.token_url,
        credentials.client_id,
        credentials.client_secret,
        credentials.scope,
      ]),
    )
    .digest('hex')}`;

/** A token for the credentials: the cached one, or one fetched through the egress guard. */
const tokenFor = async (
  ctx: Pick<WebhookContext, 'http' | 'clock' | 'tokens'>,
  key: string,
  credentials: OAuth2ClientCredentials,
  timeoutMs: number,
): Promise<{ readonly token: string; readonly cached: boolean }> => {
  const cached = ctx.tokens.get(key, ctx.clock.now().getTime());
  if (cached) return { token: cached, cached: true };
  const token = await ctx.tokens.shared(key, async () => {
    const request = tokenRequestOf(credentials);
    const response = await ctx.http.post({
      url: credentials.token_url,
      headers: request.headers,
      body: new TextEncoder().encode(request.body),
      timeoutMs,
      responseBodyBytes: TOKEN_RESPONSE_MAX_BYTES,
    });
    if (response.kind !== 'response') throw new TokenRequestError(`${response.error}: ${response.message}`);
    if (response.body && !response.body.complete) throw new TokenRequestError('token response too large');
    const read = readTokenResponse(response.status, response.body?.text);
    if (!read.ok) throw new TokenRequestError(read.reason);
    const expiresAtMs =
      ctx.clock.now().getTime() + Math.max(0, read.expiresInSeconds - TOKEN_EXPIRY_MARGIN_SECONDS) * 1000;
    ctx.tokens.set(key, read.accessToken, expiresAtMs);
    return read.accessToken;
  });
  return { token, cached: false };
};

/**
 * Sends an attempt with the endpoint's outbound authentication (C34): its static headers, or a bearer token of
 * its OAuth 2.0 client credentials — and, when the endpoint answers 401 to a cached token, once more with a fresh
 * one. A token that cannot be had makes the attempt a network error (`other`), retried like one; the reason is
 * in the history, never a secret.
 */
export const sendWithAuth = async (
  ctx: Pick<WebhookContext, 'http' | 'clock' | 'tokens' | 'cipher'>,
  endpoint: EndpointRecord,
  send: (extraHeaders: Readonly<Record<string, string>>, timeoutMs: number) => Promise<WebhookResponse>,
  timeoutMs: number,
): Promise<WebhookResponse> => {
  const auth = await authOf(ctx, endpoint);
  if (!auth) return send({}, timeoutMs);
  if ('headers' in auth) return send(auth.headers, timeoutMs);
  const key = keyOf(endpoint.endpoint_id, auth.oauth2);
  // One deadline for the whole attempt — token request, POST, and the one retry — so it never outlasts the
  // attempt's timeout (and the claim's lease, which is sized from it).
  const started = ctx.clock.now().getTime();
  const remaining = () => started + timeoutMs - ctx.clock.now().getTime();
  const failed = (error: WebhookNetworkError, message: string): WebhookResponse => ({
    kind: 'network_error',
    error,
    message,
    durationMs: ctx.clock.now().getTime() - started,
  });
  const attemptWith = async (): Promise<{ response: WebhookResponse; cachedToken: boolean }> => {
    let token: { token: string; cached: boolean };
    try {
      token = await tokenFor(ctx, key, auth.oauth2, remaining());
    } catch (error) {
      if (!(error instanceof TokenRequestError)) throw error;
      return { response: failed('other', error.message.slice(0, 200)), cachedToken: false };
    }
    if (remaining() <= 0)
      return {
        response: failed('timeout', "the token request used the attempt's time"),
        cachedToken: token.cached,
      };
    return {
      response: await send({ Authorization: `Bearer ${token.token}` }, remaining()),
      cachedToken: token.cached,
    };
  };
  const first = await attemptWith();
  if (first.response.kind !== 'response' || first.response.status !== 401 || !first.cachedToken)
    return first.response;
  // A cached token may have been revoked or expired early: drop it and, if time is left, try once with a new one.
  ctx.tokens.drop(key);
  if (remaining() <= 0) return first.response;
  return (await attemptWith()).response;
};
