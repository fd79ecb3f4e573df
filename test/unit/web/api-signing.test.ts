import { Sha256 } from '@aws-crypto/sha256-js';
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { authenticatedHeaders } from '../../../web/shared/api';

/**
 * The console's SigV4 in AWS (aws4fetch, WebCrypto) against the AWS SDK's own signer: the request the page sends to
 * the site's origin must carry the signature API Gateway computes for the API's host and stage path.
 */
const credential = {
  kind: 'aws' as const,
  accessKeyId: 'ASIAEXAMPLEEXAMPLE00',
  secretAccessKey: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY',
  sessionToken: 'IQoJb3JpZ2luX2VjEXAMPLE//token==',
  region: 'eu-west-1',
  apiOrigin: 'https://abc123defg.execute-api.eu-west-1.amazonaws.com/prod/',
};

describe('operator calls signed in the browser (SigV4, execute-api)', () => {
  it.each([
    ['GET', '/admin/change-requests?status=pending_approval&limit=50', undefined],
    [
      'POST',
      '/admin/change-requests/cr_01JD8ZK4Q7000000000000000Z/approve',
      '{"comment":"ok","acknowledge":[]}',
    ],
  ])('%s %s: the same signature as the AWS SDK for the API host and stage', async (method, target, body) => {
    const headers: Record<string, string> = body
      ? { 'content-type': 'application/json', 'idempotency-key': 'k-1' }
      : {};
    const signed = await authenticatedHeaders(
      credential,
      { method, path: target, headers, ...(body ? { body } : {}) },
      '20261127T001500Z',
    );
    expect(signed).not.toHaveProperty('host');
    expect(signed['x-amz-security-token']).toBe(credential.sessionToken);

    const [path, query = ''] = target.split('?');
    const sdk = await new SignatureV4({
      service: 'execute-api',
      region: credential.region,
      credentials: credential,
      sha256: Sha256,
      // API Gateway needs no x-amz-content-sha256 header (aws4fetch sends none); the signature covers the body anyway.
      applyChecksum: false,
    }).sign(
      {
        method,
        protocol: 'https:',
        hostname: 'abc123defg.execute-api.eu-west-1.amazonaws.com',
        path: `/prod${path}`,
        query: Object.fromEntries(new URLSearchParams(query)),
        headers: { ...headers, host: 'abc123defg.execute-api.eu-west-1.amazonaws.com' },
        ...(body ? { body } : {}),
      },
      // aws4fetch leaves content-type out of the signed headers; SignedHeaders tells API Gateway which were signed.
      { signingDate: new Date('2026-11-27T00:15:00Z'), unsignableHeaders: new Set(['content-type']) },
    );
    const signature = (value: string | undefined) => /Signature=([0-9a-f]{64})/.exec(value ?? '')?.[1];
    expect(signature(signed.authorization)).toMatch(/^[0-9a-f]{64}$/);
    expect(signature(signed.authorization)).toBe(signature(sdk.headers.authorization));
    expect(signed.authorization).toContain('/eu-west-1/execute-api/aws4_request');
  });

  it('sends a token as a bearer, unchanged', async () => {
    expect(
      await authenticatedHeaders(
        { kind: 'partner', token: 'pk_x' },
        { method: 'GET', path: '/partner/endpoint', headers: {} },
      ),
    ).toEqual({ authorization: 'Bearer pk_x' });
  });
});
