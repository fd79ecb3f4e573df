/**
 * Outbound authentication of deliveries (C34 `auth`): what an endpoint may ask the service to present besides the
 * signature — static headers (an API key the partner's gateway checks) or an OAuth 2.0 access token obtained with
 * the client-credentials grant (RFC 6749 §4.4) from the partner's token URL. Pure: names, checks, the token
 * request's form and the token response's reading; the HTTP and the cache are the use case's.
 */

/** Headers the service sets itself (or HTTP owns): an endpoint's static headers may not name them. */
export const RESERVED_HEADER_NAMES: ReadonlySet<string> = new Set([
  'content-type',
  'content-length',
  'host',
  'user-agent',
  'connection',
  'keep-alive',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'expect',
  'x-event-id',
  'x-timestamp',
  'x-signature',
  'x-signature-key-id',
  'x-attempt',
  'x-webhook-producer',
  'webhook-id',
  'webhook-timestamp',
  'webhook-signature',
]);

/** An HTTP token (RFC 9110 §5.6.2), at most 64 characters. */
export const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,64}$/;
/** Visible ASCII and spaces, no line breaks, not starting or ending with a space; at most 1 024 characters. */
export const HEADER_VALUE = /^[\x21-\x7e](?:[\x20-\x7e]{0,1022}[\x21-\x7e])?$/;

/** Why a static header name is refused, or undefined when it may be used. */
export const headerNameProblem = (name: string): string | undefined => {
  if (!HEADER_NAME.test(name)) return 'not an HTTP header name';
  const lower = name.toLowerCase();
  if (RESERVED_HEADER_NAMES.has(lower) || lower.startsWith('proxy-'))
    return 'set by the service itself; choose another name';
  return undefined;
};

export interface OAuth2ClientCredentials {
  readonly token_url: string;
  readonly client_id: string;
  readonly client_secret: string;
  readonly scope?: string;
}

/** What an endpoint's deliveries present, as stored (encrypted). */
export type OutboundAuth =
  | { readonly headers: Readonly<Record<string, string>> }
  | { readonly oauth2: OAuth2ClientCredentials };

/** What the API shows of it: never a header value or the client secret. */
export type OutboundAuthSummary =
  | { readonly headers: readonly string[] }
  | { readonly oauth2: { readonly token_url: string; readonly client_id: string; readonly scope?: string } };

export const summaryOf = (auth: OutboundAuth): OutboundAuthSummary =>
  'headers' in auth
    ? { headers: Object.keys(auth.headers).sort() }
    : {
        oauth2: {
          token_url: auth.oauth2.token_url,
          client_id: auth.oauth2.client_id,
          ...(auth.oauth2.scope !== undefined ? { scope: auth.oauth2.scope } : {}),
        },
      };

/**
 * The token request (RFC 6749 §4.4.2): a form body, the client authenticated with HTTP Basic
 * (`client_secret_basic`, §2.3.1: each part form-urlencoded first).
 */
export const tokenRequestOf = (
  credentials: OAuth2ClientCredentials,
): { readonly headers: Record<string, string>; readonly body: string } => {
  const form = new URLSearchParams({ grant_type: 'client_credentials' });
  if (credentials.scope !== undefined) form.set('scope', credentials.scope);
  const basic = Buffer.from(
    `${encodeURIComponent(credentials.client_id)}:${encodeURIComponent(credentials.client_secret)}`,
    'utf8',
  ).toString('base64');
  return {
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Accept: 'application/json',
      Authorization: `Basic ${basic}`,
    },
    body: form.toString(),
  };
};

/** An access token as a header carries it: visible ASCII without spaces (RFC 6750 b64token and JWTs), ≤ 8 KiB. */
const ACCESS_TOKEN = /^[\x21-\x7e]{1,8192}$/;

/** Longest token response read. */
export const TOKEN_RESPONSE_MAX_BYTES = 16_384;
/** A token is used until this long before it expires; one without `expires_in` is kept this long. */
export const TOKEN_EXPIRY_MARGIN_SECONDS = 30;
export const TOKEN_DEFAULT_LIFETIME_SECONDS = 300;

export type TokenResponse =
  | { readonly ok: true; readonly accessToken: string; readonly expiresInSeconds: number }
  | { readonly ok: false; readonly reason: string };

/** Reads a token endpoint's answer (RFC 6749 §5.1): 200, JSON, `access_token`, `token_type` Bearer. */
export const readTokenResponse = (status: number, body: string | undefined): TokenResponse => {
  if (status !== 200) return { ok: false, reason: `token endpoint answered ${status}` };
  let parsed: unknown;
  try {
    parsed = JSON.parse(body ?? '');
  } catch {
    return { ok: false, reason: 'token response is not JSON' };
  }
  if (typeof parsed !== 'object' || parsed === null)
    return { ok: false, reason: 'token response is not an object' };
  const fields = parsed as Record<string, unknown>;
  const token = fields.access_token;
  if (typeof token !== 'string' || !ACCESS_TOKEN.test(token))
    return { ok: false, reason: 'token response has no usable access_token' };
  if (typeof fields.token_type !== 'string' || fields.token_type.toLowerCase() !== 'bearer')
    return { ok: false, reason: 'token_type is not Bearer' };
  const expiresIn =
    typeof fields.expires_in === 'number' && Number.isFinite(fields.expires_in) && fields.expires_in > 0
      ? fields.expires_in
      : TOKEN_DEFAULT_LIFETIME_SECONDS;
  return { ok: true, accessToken: token, expiresInSeconds: expiresIn };
};
