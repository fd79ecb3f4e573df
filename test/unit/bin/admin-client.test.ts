import { createHash, createHmac, randomBytes } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  AdminApiError,
  AdminClient,
  AdminConfigurationError,
  type AdminIo,
  ApiUnreachableError,
  adminToken,
  authMode,
  describeFailure,
  localOperators,
  operatorIdentity,
  regionFromHost,
  signingRegion,
  UsageError,
} from '../../../bin/admin-client';
import { closedAfterEach } from '../support/servers';

/** One request as the loopback server saw it. */
interface Captured {
  readonly method: string;
  /** Path and query exactly as sent. */
  readonly target: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

const servers = closedAfterEach();

/** A loopback API that records every request and answers what `respond` says (default 200 `{"ok":true}`). */
const startApi = async (
  respond: (request: Captured) => { status: number; body?: string } = () => ({
    status: 200,
    body: '{"ok":true}',
  }),
) => {
  const captured: Captured[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const request: Captured = {
        method: req.method ?? '',
        target: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      };
      captured.push(request);
      const answer = respond(request);
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(answer.body ?? '');
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, captured };
};

const ioWith = (env: Record<string, string>, files: Record<string, string> = {}): AdminIo => ({
  env,
  cwd: '/work',
  fetch: (url, init) => fetch(url, init),
  readFile: async (file) => {
    const content = files[file];
    if (content === undefined) throw new Error(`ENOENT: ${file}`);
    return content;
  },
});

const CREDENTIALS = {
  accessKeyId: 'AKIDEXAMPLE',
  // A fresh secret per run: a secret access key in the source fails the secret scan (`npm run secrets`).
  secretAccessKey: randomBytes(30).toString('base64'),
};
const SIGNING_DATE = new Date('2026-11-02T10:20:30.000Z');

const sha256Hex = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');
const hmac = (key: Buffer | string, text: string) => createHmac('sha256', key).update(text, 'utf8').digest();
const rfc3986 = (text: string) =>
  encodeURIComponent(text).replace(/[!'()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);

/**
 * The SigV4 signature the receiving side computes (AWS "Create a signed AWS API request") from the request as
 * it arrived: if it equals the one sent, the signer covered exactly what fetch sent.
 */
const expectedSignature = (request: Captured, secret: string, region: string): string => {
  const authorization = String(request.headers.authorization);
  const signedHeaders = /SignedHeaders=([^,]+)/.exec(authorization)?.[1]?.split(';') ?? [];
  const amzDate = String(request.headers['x-amz-date']);
  const [rawPath = '', rawQuery = ''] = request.target.split('?', 2);
  const query = rawQuery
    .split('&')
    .filter((pair) => pair.length > 0)
    .map((pair) => pair.split('=', 2).map((part) => rfc3986(decodeURIComponent(part ?? ''))))
    .sort(([a = '', x = ''], [b = '', y = '']) => (a === b ? (x < y ? -1 : 1) : a < b ? -1 : 1))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const canonicalPath = rawPath
    .split('/')
    .map((segment) => rfc3986(segment))
    .join('/');
  const canonicalRequest = [
    request.method,
    canonicalPath,
    query,
    ...signedHeaders.map((name) => `${name}:${String(request.headers[name]).trim()}`),
    '',
    signedHeaders.join(';'),
    sha256Hex(request.body),
  ].join('\n');
  const day = amzDate.slice(0, 8);
  const scope = `${day}/${region}/execute-api/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256Hex(canonicalRequest)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), 'execute-api'), 'aws4_request');
  return createHmac('sha256', key).update(stringToSign, 'utf8').digest('hex');
};

describe('admin client, local stack (bearer token)', () => {
  it('sends the admin token of the credentials file, JSON and an Idempotency-Key on POST only', async () => {
    const api = await startApi();
    const io = ioWith(
      { API_URL: `${api.url}/`, DATA_DIR: '/data' },
      { '/data/credentials.json': JSON.stringify({ api_key: 'k', admin_token: 'adm_from_file' }) },
    );
    const client = await AdminClient.connect(io, { idempotencyKey: () => 'idem-1' });
    expect(client.auth).toBe('bearer');
    const posted = await client.post('/webhooks/replay', { event_ids: ['evt_1'] });
    await client.get('/webhooks/events', { status: 'dead', limit: 5, cursor: undefined });
    expect(posted).toMatchObject({ status: 200, body: { ok: true } });
    const [post, get] = api.captured;
    expect(post).toMatchObject({
      method: 'POST',
      target: '/webhooks/replay',
      body: '{"event_ids":["evt_1"]}',
    });
    expect(post?.headers).toMatchObject({
      authorization: 'Bearer adm_from_file',
      'content-type': 'application/json',
      'idempotency-key': 'idem-1',
    });
    expect(get).toMatchObject({ method: 'GET', target: '/webhooks/events?status=dead&limit=5' });
    expect(get?.headers.authorization).toBe('Bearer adm_from_file');
    expect(get?.headers['idempotency-key']).toBeUndefined();
  });

  it('prefers ADMIN_TOKEN, and a random UUID as the Idempotency-Key', async () => {
    const api = await startApi(() => ({ status: 204 }));
    const client = await AdminClient.connect(ioWith({ API_URL: api.url, ADMIN_TOKEN: 'adm_given' }));
    expect((await client.post('/x')).body).toBeUndefined();
    expect(api.captured[0]?.headers.authorization).toBe('Bearer adm_given');
    expect(api.captured[0]?.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
  });

  it.each([
    [{}, {}, 'no ADMIN_TOKEN and no readable /work/.local/data/credentials.json'],
    [{}, { '/work/.local/data/credentials.json': '{"api_key":"k"}' }, 'has no admin_token'],
    [{ API_URL: 'not a url' }, {}, 'API_URL is not a URL'],
    [{ API_URL: 'ftp://127.0.0.1' }, {}, 'API_URL must be http(s)'],
    [{ API_URL: 'https://abc.execute-api.eu-west-1.amazonaws.com/prod' }, {}, 'Give --sigv4'],
    [{ API_AUTH: 'basic' }, {}, 'API_AUTH must be sigv4 or bearer'],
  ])('refuses to connect with %j', async (env, files, message) => {
    const connecting = AdminClient.connect(ioWith(env, files));
    await expect(connecting).rejects.toThrow(AdminConfigurationError);
    await expect(connecting).rejects.toThrow(message);
  });
});

describe('admin client, local operators (identity)', () => {
  const credentials = {
    '/data/credentials.json': JSON.stringify({
      api_key: 'key_local_xxxxxxxxxxxxxxxx',
      admin_token: 'adm_local_admin',
      admin_tokens: { alice: 'adm_local_alice', bob: 'adm_local_bob' },
    }),
  };

  it("takes an operator's own token from admin_tokens; admin is ADMIN_TOKEN when set, as in the stack", async () => {
    const io = ioWith({ DATA_DIR: '/data', ADMIN_TOKEN: 'adm_given' }, credentials);
    expect(await adminToken(io)).toBe('adm_given');
    expect(await adminToken(io, 'alice')).toBe('adm_local_alice');
    expect(await adminToken(io, 'bob')).toBe('adm_local_bob');
    expect(await adminToken(io, 'admin')).toBe('adm_given');
    expect(await adminToken(ioWith({ DATA_DIR: '/data' }, credentials), 'admin')).toBe('adm_local_admin');
  });

  it('takes the operators of ADMIN_TOKENS when set, as the local stack does', async () => {
    const io = ioWith(
      { DATA_DIR: '/data', ADMIN_TOKENS: ' carol:adm:carol:1 , dave:adm_dave,' },
      credentials,
    );
    expect(await adminToken(io, 'carol')).toBe('adm:carol:1');
    expect(await adminToken(io, 'dave')).toBe('adm_dave');
    expect(await adminToken(io, 'admin')).toBe('adm_local_admin');
    expect(await localOperators(io)).toEqual(['admin', 'carol', 'dave']);
  });

  it.each([
    [
      { DATA_DIR: '/data' },
      'carol',
      'unknown operator "carol": the local operators are admin, alice, bob (admin_tokens in /data/credentials.json)',
    ],
    [
      { DATA_DIR: '/data', ADMIN_TOKENS: 'carol:adm_carol' },
      'alice',
      'unknown operator "alice": the local operators are admin, carol (ADMIN_TOKENS)',
    ],
    [{ DATA_DIR: '/data', ADMIN_TOKENS: 'carol' }, 'carol', 'ADMIN_TOKENS must be name:token,…'],
    [{ DATA_DIR: '/data' }, 'constructor', 'unknown operator "constructor"'],
    [{ DATA_DIR: '/data' }, '../x', '"../x" is not an operator name'],
    [
      { DATA_DIR: '/nowhere' },
      'alice',
      "acting as alice needs the local stack's /nowhere/credentials.json (no readable file): start the local stack",
    ],
  ])('refuses %j as %s', async (env, identity, message) => {
    const token = adminToken(ioWith(env, credentials), identity);
    await expect(token).rejects.toThrow(AdminConfigurationError);
    await expect(token).rejects.toThrow(message);
  });

  it('says how to get reviewers from a credentials file written before them', async () => {
    const io = ioWith(
      { DATA_DIR: '/old' },
      { '/old/credentials.json': '{"api_key":"key_local_xxxxxxxxxxxxxxxx","admin_token":"adm_old"}' },
    );
    await expect(adminToken(io, 'alice')).rejects.toThrow(
      'unknown operator "alice": the local operators are admin (/old/credentials.json has no admin_tokens: ' +
        "restart the local stack to generate the reviewers' tokens)",
    );
    expect(await adminToken(io, 'admin')).toBe('adm_old');
    expect(await localOperators(io)).toEqual(['admin']);
    expect(await localOperators(ioWith({}))).toEqual(['admin', 'alice', 'bob']);
    expect(await localOperators(ioWith({ DATA_DIR: '/data' }, credentials))).toEqual([
      'admin',
      'alice',
      'bob',
    ]);
  });

  it('takes --as before ADMIN_AS', () => {
    expect(operatorIdentity('alice', { ADMIN_AS: 'bob' })).toBe('alice');
    expect(operatorIdentity(undefined, { ADMIN_AS: 'bob' })).toBe('bob');
    expect(operatorIdentity(undefined, { ADMIN_AS: '' })).toBeUndefined();
    expect(operatorIdentity(undefined, {})).toBeUndefined();
  });

  it('connects as the operator, sending its token', async () => {
    const api = await startApi();
    const client = await AdminClient.connect(
      ioWith({ API_URL: api.url, DATA_DIR: '/data', ADMIN_TOKEN: 'adm_given' }, credentials),
      { identity: 'alice' },
    );
    await client.post('/admin/change-requests/cr_x/approve', {});
    expect(api.captured[0]?.headers.authorization).toBe('Bearer adm_local_alice');
  });

  it.each([
    [{ API_AUTH: 'sigv4', AWS_REGION: 'eu-west-1' }, 'with SigV4 the operator is the IAM principal'],
    [
      { API_URL: 'https://abc.execute-api.eu-west-1.amazonaws.com/prod' },
      'is a deployed API: the operator is',
    ],
    [{ API_URL: 'https://pricing.example.com' }, 'https://pricing.example.com is a deployed API'],
  ])('refuses an identity with SigV4 or a deployed API (%j), as a usage error', async (env, message) => {
    const connecting = AdminClient.connect(ioWith({ DATA_DIR: '/data', ...env }, credentials), {
      identity: 'alice',
      credentials: CREDENTIALS,
    });
    await expect(connecting).rejects.toThrow(UsageError);
    await expect(connecting).rejects.toThrow(message);
  });
});

describe('admin client, deployed API (SigV4)', () => {
  it('signs method, path, query, host and body with execute-api credentials the server can verify', async () => {
    const api = await startApi();
    const client = await AdminClient.connect(
      ioWith({ API_URL: `${api.url}/prod`, AWS_REGION: 'eu-west-1' }),
      {
        sigv4: true,
        credentials: CREDENTIALS,
        now: () => SIGNING_DATE,
        idempotencyKey: () => 'idem-2',
      },
    );
    expect(client.auth).toBe('sigv4');
    await client.post('/webhooks/replay', {
      from: '2026-11-01T00:00:00.000Z',
      to: '2026-11-02T00:00:00.000Z',
    });
    await client.get('/webhooks/events', {
      to: '2026-11-02T00:00:00.000Z',
      cursor: "a+b/c= d'(e)",
      status: 'dead',
    });
    for (const request of api.captured) {
      const authorization = String(request.headers.authorization);
      expect(authorization).toMatch(
        /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20261102\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$/,
      );
      expect(request.headers['x-amz-date']).toBe('20261102T102030Z');
      const signed = /SignedHeaders=([^,]+)/.exec(authorization)?.[1]?.split(';');
      expect(signed).toContain('host');
      expect(signed).toContain('x-amz-date');
      expect(/Signature=([0-9a-f]{64})/.exec(authorization)?.[1]).toBe(
        expectedSignature(request, CREDENTIALS.secretAccessKey, 'eu-west-1'),
      );
    }
    expect(api.captured[0]?.target).toBe('/prod/webhooks/replay');
    expect(api.captured[0]?.headers['idempotency-key']).toBe('idem-2');
    expect(/SignedHeaders=([^,]+)/.exec(String(api.captured[0]?.headers.authorization))?.[1]).toContain(
      'idempotency-key',
    );
    expect(api.captured[1]?.target).toBe(
      '/prod/webhooks/events?to=2026-11-02T00%3A00%3A00.000Z&cursor=a%2Bb%2Fc%3D%20d%27%28e%29&status=dead',
    );
  });

  it('takes the mode from API_AUTH, sends the session token, and fails clearly without credentials', async () => {
    const api = await startApi();
    const client = await AdminClient.connect(
      ioWith({ API_URL: api.url, API_AUTH: 'SigV4', AWS_REGION: 'us-east-2' }),
      {
        credentials: async () => ({ ...CREDENTIALS, sessionToken: 'session-token-1' }),
        now: () => SIGNING_DATE,
      },
    );
    await client.get('/webhooks/endpoints');
    expect(api.captured[0]?.headers['x-amz-security-token']).toBe('session-token-1');
    expect(String(api.captured[0]?.headers.authorization)).toContain(
      '/20261102/us-east-2/execute-api/aws4_request',
    );

    const broken = await AdminClient.connect(ioWith({ API_URL: api.url, AWS_REGION: 'us-east-2' }), {
      sigv4: true,
      credentials: async () => {
        throw new Error('Could not load credentials from any providers');
      },
    });
    await expect(broken.get('/webhooks/endpoints')).rejects.toThrow(
      'cannot sign the request (SigV4): Could not load credentials from any providers',
    );
    expect(api.captured).toHaveLength(1);
  });

  it('reads the region from an execute-api host, else AWS_REGION, else AWS_DEFAULT_REGION', () => {
    expect(regionFromHost('abc123.execute-api.eu-west-1.amazonaws.com')).toBe('eu-west-1');
    expect(regionFromHost('ABC.EXECUTE-API.AP-SOUTHEAST-2.AMAZONAWS.COM')).toBe('ap-southeast-2');
    expect(regionFromHost('abc-vpce-0123.execute-api.us-gov-west-1.vpce.amazonaws.com')).toBe(
      'us-gov-west-1',
    );
    expect(regionFromHost('abc.execute-api.cn-north-1.amazonaws.com.cn')).toBe('cn-north-1');
    expect(regionFromHost('api.example.com')).toBeUndefined();
    expect(regionFromHost('abc.execute-api.amazonaws.com')).toBeUndefined();
    const host = new URL('https://abc.execute-api.eu-central-1.amazonaws.com/prod');
    expect(signingRegion(host, { AWS_REGION: 'us-east-1' })).toBe('eu-central-1');
    const custom = new URL('https://pricing.example.com');
    expect(signingRegion(custom, { AWS_REGION: 'us-east-1', AWS_DEFAULT_REGION: 'eu-west-3' })).toBe(
      'us-east-1',
    );
    expect(signingRegion(custom, { AWS_DEFAULT_REGION: 'eu-west-3' })).toBe('eu-west-3');
    expect(() => signingRegion(custom, {})).toThrow('cannot tell the AWS region of pricing.example.com');
  });

  it('chooses the mode from --sigv4 and API_AUTH', () => {
    expect(authMode({}, false)).toBe('bearer');
    expect(authMode({ API_AUTH: 'bearer' }, false)).toBe('bearer');
    expect(authMode({ API_AUTH: 'sigv4' }, false)).toBe('sigv4');
    expect(authMode({ API_AUTH: 'bearer' }, true)).toBe('sigv4');
    expect(() => authMode({ API_AUTH: 'iam' }, false)).toThrow(AdminConfigurationError);
  });
});

describe('admin client errors', () => {
  it('maps a C6 refusal to an AdminApiError with its status, code, description, trace id and problems', async () => {
    const body = {
      error: 'invalid_request',
      error_description: '$.to: a window needs both from and to',
      trace_id: 'trc_1',
      problems: [{ path: '$.to', message: 'a window needs both from and to' }, { bogus: true }],
    };
    const api = await startApi(() => ({ status: 400, body: JSON.stringify(body) }));
    const client = await AdminClient.connect(ioWith({ API_URL: api.url, ADMIN_TOKEN: 'adm' }));
    const error = await client.post('/webhooks/replay', {}).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(AdminApiError);
    const refusal = error as AdminApiError;
    expect(refusal).toMatchObject({
      status: 400,
      error: 'invalid_request',
      errorDescription: '$.to: a window needs both from and to',
      traceId: 'trc_1',
      problems: [{ path: '$.to', message: 'a window needs both from and to' }],
      body,
    });
    expect(refusal.message).toBe('error 400 invalid_request: $.to: a window needs both from and to');
    expect(refusal.describe()).toBe(
      [
        'error 400 invalid_request: $.to: a window needs both from and to',
        '1 problem:',
        '  $.to: a window needs both from and to',
        'trace id: trc_1',
        '',
      ].join('\n'),
    );
  });

  it('describes the details of a refusal, API Gateway messages and text answers', () => {
    expect(
      describeFailure(404, {
        error: 'not_found',
        error_description: 'some events are unknown or their bodies expired',
        trace_id: 't',
        missing_event_ids: ['evt_1'],
      }),
    ).toBe(
      'error 404 not_found: some events are unknown or their bodies expired\nmissing_event_ids: ["evt_1"]\ntrace id: t\n',
    );
    expect(describeFailure(403, { message: 'Missing Authentication Token' })).toBe(
      'error 403: Missing Authentication Token\n',
    );
    expect(describeFailure(502, 'Bad Gateway')).toBe('error 502: Bad Gateway\n');
    expect(describeFailure(500, undefined)).toBe('error 500\n');
  });

  it('keeps a text answer as the body, and says when the API cannot be reached', async () => {
    const api = await startApi(() => ({ status: 502, body: 'Bad Gateway' }));
    const client = await AdminClient.connect(ioWith({ API_URL: api.url, ADMIN_TOKEN: 'adm' }));
    await expect(client.get('/webhooks/events')).rejects.toMatchObject({ status: 502, body: 'Bad Gateway' });
    const down = await AdminClient.connect({
      ...ioWith({ ADMIN_TOKEN: 'adm' }),
      fetch: async () => {
        throw new TypeError('fetch failed');
      },
    });
    const error = await down.get('/webhooks/events').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ApiUnreachableError);
    expect((error as Error).message).toBe('cannot reach http://127.0.0.1:3000: fetch failed');
  });
});
