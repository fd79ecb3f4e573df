/**
 * Client certificates of endpoints (mTLS): what registration accepts and refuses (400 `invalid_request` naming
 * the field, never quoting the key), what is stored (the key only encrypted with the data key) and shown (a
 * summary, never the key nor the PEM), replacing and removing it, and what a delivery presents.
 */
import { createPrivateKey, generateKeyPairSync, randomBytes, X509Certificate } from 'node:crypto';
import type { APIGatewayProxyResult } from 'aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { LocalDataCipher } from '../../../functions/adapters/local/local-signing';
import type { RouteDefinition } from '../../../functions/definitions';
import { createHttpApi, type HttpHandler } from '../../../functions/handlers/middleware/http';
import {
  createEndpointOperation,
  getEndpointOperation,
  updateEndpointOperation,
} from '../../../functions/handlers/operations/webhooks';
import type { EndpointRecord } from '../../../functions/ports/webhooks';
import { endpointResponseSchema } from '../../../functions/schemas/webhooks';
import { createLogger } from '../../../functions/shared/logger';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookContext } from '../../../functions/usecases/webhooks/context';
import {
  clientCertificateOf,
  EndpointValidationError,
  validateClientCertificate,
} from '../../../functions/usecases/webhooks/mtls';
import {
  createTestCa,
  encryptedKeyPem,
  type IssuedCertificate,
  privateKeyPem,
  type TestCa,
} from '../../support/test-pki';
import { lambdaContext, proxyEvent } from '../support/lambda';

const NOW = new Date('2026-11-22T12:00:00.000Z');
const DAY_MS = 86_400_000;

let ca: TestCa;
let intermediate: TestCa;
let client: IssuedCertificate;

beforeAll(async () => {
  ca = await createTestCa({ notBefore: new Date(NOW.getTime() - 10 * DAY_MS) });
  intermediate = await ca.issueIntermediate({
    commonName: 'Partner Issuing CA',
    notBefore: new Date(NOW.getTime() - 5 * DAY_MS),
    notAfter: new Date(NOW.getTime() + 300 * DAY_MS),
  });
  client = await intermediate.issueClient({
    commonName: 'pricing-webhooks',
    notBefore: new Date(NOW.getTime() - DAY_MS),
    notAfter: new Date(NOW.getTime() + 90 * DAY_MS),
  });
});

const chainOf = (...certificates: IssuedCertificate[]): string =>
  certificates.map((certificate) => certificate.certPem).join('\n');

/** The refusal of `input`, as { path, message }. */
const refusal = (input: { client_certificate: string; client_key: string }, now = NOW) => {
  try {
    validateClientCertificate(input, now);
  } catch (error) {
    if (error instanceof EndpointValidationError) return error.problems[0];
    throw error;
  }
  throw new Error('accepted');
};

/** The base64 body of a PEM, the part that must never appear in an answer or an error. */
const pemBody = (pem: string): string =>
  pem
    .split('\n')
    .filter((line) => line.length > 0 && !line.startsWith('-----'))
    .join('');

describe('validateClientCertificate', () => {
  it('accepts a chain (leaf first) with its key, and summarises the leaf', () => {
    const validated = validateClientCertificate(
      { client_certificate: chainOf(client, intermediate), client_key: client.keyPem },
      NOW,
    );
    const leaf = new X509Certificate(client.certPem);
    expect(validated.summary).toEqual({
      certificate_sha256: leaf.fingerprint256.replaceAll(':', '').toLowerCase(),
      subject: 'CN=pricing-webhooks',
      issuer: 'CN=Partner Issuing CA',
      not_before: leaf.validFromDate.toISOString(),
      not_after: leaf.validToDate.toISOString(),
    });
    expect(validated.chainPem.match(/BEGIN CERTIFICATE/g)).toHaveLength(2);
    expect(
      createPrivateKey({ key: Buffer.from(validated.keyDer), format: 'der', type: 'pkcs8' })
        .asymmetricKeyType,
    ).toBe('ec');
  });

  it.each(['ec-p384', 'rsa-2048', 'ed25519'] as const)('accepts a %s key', async (algorithm) => {
    const leaf = await intermediate.issueClient({ commonName: algorithm, algorithm });
    expect(
      validateClientCertificate(
        { client_certificate: chainOf(leaf, intermediate), client_key: leaf.keyPem },
        new Date(),
      ).summary.subject,
    ).toBe(`CN=${algorithm}`);
  });

  it('accepts a SEC 1 EC key, alone or after its parameters block', () => {
    const ec = createPrivateKey(client.keyPem);
    expect(ec.asymmetricKeyType).toBe('ec');
    const sec1 = ec.export({ type: 'sec1', format: 'pem' }).toString();
    const withParameters = `-----BEGIN EC PARAMETERS-----\nBggqhkjOPQMBBw==\n-----END EC PARAMETERS-----\n${sec1}`;
    for (const key of [sec1, withParameters]) {
      expect(
        validateClientCertificate({ client_certificate: client.certPem, client_key: key }, NOW).summary
          .subject,
      ).toBe('CN=pricing-webhooks');
    }
  });

  it('refuses an expired certificate and one not valid yet, on client_certificate', async () => {
    const expired = await intermediate.issueClient({
      commonName: 'expired',
      notBefore: new Date(NOW.getTime() - 60 * DAY_MS),
      notAfter: new Date(NOW.getTime() - DAY_MS),
    });
    expect(refusal({ client_certificate: expired.certPem, client_key: expired.keyPem })).toEqual({
      path: '$.mtls.client_certificate',
      message: expect.stringContaining('expired'),
    });
    const future = await intermediate.issueClient({
      commonName: 'future',
      notBefore: new Date(NOW.getTime() + DAY_MS),
      notAfter: new Date(NOW.getTime() + 60 * DAY_MS),
    });
    expect(refusal({ client_certificate: future.certPem, client_key: future.keyPem })).toEqual({
      path: '$.mtls.client_certificate',
      message: expect.stringContaining('not valid before'),
    });
  });

  it('refuses a key that does not match the certificate, on client_key', async () => {
    expect(
      refusal({ client_certificate: client.certPem, client_key: await privateKeyPem('ec-p256') }),
    ).toEqual({
      path: '$.mtls.client_key',
      message: expect.stringContaining('does not match'),
    });
  });

  it('refuses an encrypted key without trying to read it', () => {
    const encrypted = encryptedKeyPem(client.keyPem);
    expect(encrypted).toContain('ENCRYPTED PRIVATE KEY');
    expect(refusal({ client_certificate: client.certPem, client_key: encrypted })).toEqual({
      path: '$.mtls.client_key',
      message: expect.stringContaining('encrypted'),
    });
    const legacy = createPrivateKey(client.keyPem)
      .export({ type: 'sec1', format: 'pem', cipher: 'aes-256-cbc', passphrase: 'secret' })
      .toString();
    expect(legacy).toContain('Proc-Type: 4,ENCRYPTED');
    expect(refusal({ client_certificate: client.certPem, client_key: legacy })?.path).toBe(
      '$.mtls.client_key',
    );
  });

  it('refuses unsupported keys: a short RSA key, an X25519 key', () => {
    const rsa1024 = generateKeyPairSync('rsa', { modulusLength: 1024 })
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    expect(refusal({ client_certificate: client.certPem, client_key: rsa1024 })).toEqual({
      path: '$.mtls.client_key',
      message: expect.stringContaining('2048 to 4096 bits'),
    });
    const x25519 = generateKeyPairSync('x25519')
      .privateKey.export({ type: 'pkcs8', format: 'pem' })
      .toString();
    expect(refusal({ client_certificate: client.certPem, client_key: x25519 })).toEqual({
      path: '$.mtls.client_key',
      message: expect.stringContaining('unsupported key type'),
    });
  });

  it('refuses garbage in either field', () => {
    const garbage = [
      'not a pem',
      '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----',
      `${client.certPem}\ntrailing text`,
      `-----BEGIN CERTIFICATE-----\n${randomBytes(300).toString('base64')}\n-----END CERTIFICATE-----`,
    ];
    for (const text of garbage) {
      expect(refusal({ client_certificate: text, client_key: client.keyPem })?.path).toBe(
        '$.mtls.client_certificate',
      );
    }
    const badKeys = [
      'not a pem',
      `-----BEGIN PRIVATE KEY-----\n${randomBytes(120).toString('base64')}\n-----END PRIVATE KEY-----`,
      `${client.keyPem}${client.keyPem}`,
      client.certPem,
      `-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA\n-----END OPENSSH PRIVATE KEY-----`,
    ];
    for (const text of badKeys) {
      expect(refusal({ client_certificate: client.certPem, client_key: text })?.path).toBe(
        '$.mtls.client_key',
      );
    }
  });

  it('refuses a key pasted into client_certificate, a chain out of order, a server-only certificate', async () => {
    expect(
      refusal({ client_certificate: `${client.certPem}\n${client.keyPem}`, client_key: client.keyPem }),
    ).toEqual({
      path: '$.mtls.client_certificate',
      message: expect.stringContaining('certificates only'),
    });
    expect(refusal({ client_certificate: chainOf(intermediate, client), client_key: client.keyPem })).toEqual(
      {
        path: '$.mtls.client_certificate',
        message: expect.stringContaining('leaf first'),
      },
    );
    const server = await intermediate.issueServer({ commonName: 'server-only' });
    expect(refusal({ client_certificate: server.certPem, client_key: server.keyPem }, new Date())).toEqual({
      path: '$.mtls.client_certificate',
      message: expect.stringContaining('client authentication'),
    });
  });

  it('never quotes the key or the certificate in a refusal', async () => {
    const other = await privateKeyPem('ec-p256');
    const problems = [
      refusal({ client_certificate: client.certPem, client_key: other }),
      refusal({ client_certificate: client.certPem, client_key: encryptedKeyPem(other) }),
      refusal({ client_certificate: `${client.certPem}x`, client_key: client.keyPem }),
    ];
    for (const problem of problems) {
      const text = JSON.stringify(problem);
      expect(text).not.toContain(pemBody(other).slice(0, 24));
      expect(text).not.toContain(pemBody(client.keyPem).slice(0, 24));
      expect(text).not.toContain(pemBody(client.certPem).slice(0, 24));
    }
  });
});

// ---------------------------------------------------------------------------------------------------------
// Through the HTTP operations, on in-memory endpoints with the local data cipher.

const ROUTES: readonly RouteDefinition[] = [
  {
    method: 'POST',
    path: '/webhooks/endpoints',
    function: 'webhooks',
    operation: 'createEndpoint',
    auth: 'none',
    summary: '',
  },
  {
    method: 'GET',
    path: '/webhooks/endpoints/{endpoint_id}',
    function: 'webhooks',
    operation: 'getEndpoint',
    auth: 'none',
    summary: '',
  },
  {
    method: 'PATCH',
    path: '/webhooks/endpoints/{endpoint_id}',
    function: 'webhooks',
    operation: 'updateEndpoint',
    auth: 'none',
    summary: '',
  },
];

const endpointWorld = () => {
  const endpoints = new Map<string, EndpointRecord>();
  const ctx = {
    clock: { now: () => NOW },
    cipher: new LocalDataCipher(randomBytes(32)),
    randomBytes: (size: number) => randomBytes(size),
    settings: DEFAULT_WEBHOOK_SETTINGS,
    endpoints: {
      create: async (record: EndpointRecord) => {
        endpoints.set(record.endpoint_id, record);
      },
      get: async (id: string) => endpoints.get(id),
      update: async (id: string, changes: Partial<EndpointRecord>) => {
        const current = endpoints.get(id);
        if (!current) return undefined;
        const next = { ...current, ...changes } as EndpointRecord;
        for (const [field, value] of Object.entries(changes)) {
          if (value === undefined) delete (next as unknown as Record<string, unknown>)[field];
        }
        endpoints.set(id, next);
        return next;
      },
    },
  } as unknown as WebhookContext;
  const api: HttpHandler = createHttpApi({
    functionId: 'webhooks',
    logger: createLogger({ logLevel: 'SILENT' }),
    routes: ROUTES,
    operations: {
      createEndpoint: createEndpointOperation(ctx),
      getEndpoint: getEndpointOperation(ctx),
      updateEndpoint: updateEndpointOperation(ctx),
    },
  });
  const call = (
    method: string,
    resource: string,
    id?: string,
    body?: unknown,
  ): Promise<APIGatewayProxyResult> =>
    api(
      proxyEvent({
        method,
        resource,
        path: id ? resource.replace('{endpoint_id}', id) : resource,
        pathParameters: id ? { endpoint_id: id } : null,
        headers: { 'content-type': 'application/json' },
        body: body === undefined ? null : JSON.stringify(body),
      }),
      lambdaContext(),
    );
  return { ctx, endpoints, call };
};

describe('endpoints with a client certificate (HTTP)', () => {
  it('stores the key encrypted, shows a summary only, and presents the certificate to deliveries', async () => {
    const { ctx, endpoints, call } = endpointWorld();
    const mtls = { client_certificate: chainOf(client, intermediate), client_key: client.keyPem };
    const created = await call('POST', '/webhooks/endpoints', undefined, {
      url: 'https://partner.example/wh',
      mtls,
    });
    expect(created.statusCode).toBe(201);
    const body = JSON.parse(created.body) as Record<string, unknown>;
    expect(body.mtls).toEqual({
      certificate_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      subject: 'CN=pricing-webhooks',
      issuer: 'CN=Partner Issuing CA',
      not_before: expect.any(String),
      not_after: expect.any(String),
    });
    expect(endpointResponseSchema.safeParse(body).success).toBe(true);
    const id = body.endpoint_id as string;
    const shown = await call('GET', '/webhooks/endpoints/{endpoint_id}', id);
    expect(JSON.parse(shown.body).mtls).toEqual(body.mtls);
    for (const answer of [created.body, shown.body]) {
      expect(answer).not.toContain('PRIVATE KEY');
      expect(answer).not.toContain('BEGIN CERTIFICATE');
      expect(answer).not.toContain(pemBody(client.keyPem).slice(0, 24));
      expect(answer).not.toContain('key_ciphertext');
    }

    // Stored: the chain, and the key only as ciphertext.
    const stored = endpoints.get(id)?.mtls;
    expect(stored?.certificate_chain).toContain('BEGIN CERTIFICATE');
    expect(JSON.stringify(stored)).not.toContain(pemBody(client.keyPem).slice(0, 24));
    expect(stored?.key_ciphertext).toMatch(/^local:v1:/);

    // A delivery presents the chain and the decrypted key.
    const presented = await clientCertificateOf(ctx, endpoints.get(id) as EndpointRecord);
    expect(presented?.cert).toBe(stored?.certificate_chain);
    expect(new X509Certificate(client.certPem).checkPrivateKey(createPrivateKey(presented?.key ?? ''))).toBe(
      true,
    );
  });

  it('answers 400 invalid_request naming the field, and never echoes the key', async () => {
    const { call } = endpointWorld();
    const other = await privateKeyPem('ec-p256');
    const mismatch = await call('POST', '/webhooks/endpoints', undefined, {
      url: 'https://partner.example/wh',
      mtls: { client_certificate: client.certPem, client_key: other },
    });
    expect(mismatch.statusCode).toBe(400);
    const error = JSON.parse(mismatch.body) as Record<string, unknown>;
    expect(error).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringContaining('$.mtls.client_key'),
    });
    expect(mismatch.body).not.toContain(pemBody(other).slice(0, 24));
    const encrypted = await call('POST', '/webhooks/endpoints', undefined, {
      url: 'https://partner.example/wh',
      mtls: { client_certificate: client.certPem, client_key: encryptedKeyPem(client.keyPem) },
    });
    expect(encrypted.statusCode).toBe(400);
    expect(JSON.parse(encrypted.body).error_description).toContain('$.mtls.client_key');
    const missing = await call('POST', '/webhooks/endpoints', undefined, {
      url: 'https://partner.example/wh',
      mtls: { client_certificate: client.certPem },
    });
    expect(missing.statusCode).toBe(400);
    expect(JSON.parse(missing.body).error_description).toContain('$.mtls.client_key');
  });

  it('replaces the certificate with PATCH, and removes it with mtls: null', async () => {
    const { endpoints, call } = endpointWorld();
    const created = JSON.parse(
      (await call('POST', '/webhooks/endpoints', undefined, { url: 'https://partner.example/wh' })).body,
    ) as Record<string, unknown>;
    const id = created.endpoint_id as string;
    expect(created.mtls).toBeUndefined();
    const renewed = await intermediate.issueClient({
      commonName: 'pricing-webhooks-2027',
      notBefore: new Date(NOW.getTime() - DAY_MS),
      notAfter: new Date(NOW.getTime() + 400 * DAY_MS),
    });
    const patched = await call('PATCH', '/webhooks/endpoints/{endpoint_id}', id, {
      mtls: { client_certificate: chainOf(renewed, intermediate), client_key: renewed.keyPem },
    });
    expect(patched.statusCode).toBe(200);
    expect(JSON.parse(patched.body).mtls.subject).toBe('CN=pricing-webhooks-2027');
    expect(patched.body).not.toContain('PRIVATE KEY');

    const expired = await intermediate.issueClient({
      commonName: 'old',
      notBefore: new Date(NOW.getTime() - 90 * DAY_MS),
      notAfter: new Date(NOW.getTime() - DAY_MS),
    });
    const refused = await call('PATCH', '/webhooks/endpoints/{endpoint_id}', id, {
      mtls: { client_certificate: expired.certPem, client_key: expired.keyPem },
    });
    expect(refused.statusCode).toBe(400);
    expect(JSON.parse(refused.body).error_description).toContain('$.mtls.client_certificate');
    expect(endpoints.get(id)?.mtls?.subject).toBe('CN=pricing-webhooks-2027');

    const removed = await call('PATCH', '/webhooks/endpoints/{endpoint_id}', id, { mtls: null });
    expect(removed.statusCode).toBe(200);
    expect(JSON.parse(removed.body).mtls).toBeUndefined();
    expect(endpoints.get(id)?.mtls).toBeUndefined();
  });
});
