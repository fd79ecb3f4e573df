import { describe, expect, it } from 'vitest';
import {
  headerNameProblem,
  readTokenResponse,
  summaryOf,
  TOKEN_DEFAULT_LIFETIME_SECONDS,
  tokenRequestOf,
} from '../../../../functions/domain/webhooks/outbound-auth';

describe('outbound authentication (C34)', () => {
  it('refuses header names the service sets, HTTP owns or that are not tokens', () => {
    for (const name of ['X-Signature', 'content-type', 'Webhook-Signature', 'Proxy-Authorization', 'Host'])
      expect(headerNameProblem(name), name).toMatch(/set by the service/);
    expect(headerNameProblem('X Api Key')).toBe('not an HTTP header name');
    expect(headerNameProblem('X-Api-Key')).toBeUndefined();
    expect(headerNameProblem('Authorization')).toBeUndefined();
  });

  it('asks for a token as RFC 6749 §4.4 says: a form body and the client in HTTP Basic, each part form-encoded', () => {
    const request = tokenRequestOf({
      token_url: 'https://partner.example/oauth/token',
      client_id: 'svc:pricing',
      client_secret: 'p@ss word',
      scope: 'webhooks:write read',
    });
    expect(request.headers['Content-Type']).toBe('application/x-www-form-urlencoded');
    expect(Buffer.from(String(request.headers.Authorization).slice(6), 'base64').toString()).toBe(
      'svc%3Apricing:p%40ss%20word',
    );
    expect(Object.fromEntries(new URLSearchParams(request.body))).toEqual({
      grant_type: 'client_credentials',
      scope: 'webhooks:write read',
    });
  });

  it('reads a token response, refusing what is not a usable bearer token', () => {
    expect(
      readTokenResponse(200, '{"access_token":"abc.def","token_type":"bearer","expires_in":120}'),
    ).toEqual({
      ok: true,
      accessToken: 'abc.def',
      expiresInSeconds: 120,
    });
    expect(readTokenResponse(200, '{"access_token":"abc","token_type":"Bearer"}')).toMatchObject({
      expiresInSeconds: TOKEN_DEFAULT_LIFETIME_SECONDS,
    });
    expect(readTokenResponse(401, '{}')).toEqual({ ok: false, reason: 'token endpoint answered 401' });
    expect(readTokenResponse(200, 'not json')).toMatchObject({ ok: false });
    expect(readTokenResponse(200, '{"access_token":"a b","token_type":"Bearer"}')).toMatchObject({
      ok: false,
    });
    expect(readTokenResponse(200, '{"access_token":"a\\nb","token_type":"Bearer"}')).toMatchObject({
      ok: false,
    });
    expect(readTokenResponse(200, '{"access_token":"abc","token_type":"mac"}')).toMatchObject({ ok: false });
  });

  it('shows header names and the OAuth client, never a value or the client secret', () => {
    expect(summaryOf({ headers: { 'X-B': '1', 'X-A': 'secret' } })).toEqual({ headers: ['X-A', 'X-B'] });
    const summary = summaryOf({
      oauth2: { token_url: 'https://p.example/t', client_id: 'c', client_secret: 's3cr3t' },
    });
    expect(JSON.stringify(summary)).not.toContain('s3cr3t');
  });
});
