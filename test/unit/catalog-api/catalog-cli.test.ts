import { describe, expect, it } from 'vitest';
import { type CliIo, describeFailure, isDeployed, parseArgs, run, UsageError } from '../../../bin/catalog';

interface Recorded {
  readonly url: string;
  readonly init: RequestInit;
}

const fakeIo = (
  options: {
    env?: Record<string, string>;
    files?: Record<string, string>;
    respond?: (url: string, init: RequestInit) => Response;
  } = {},
) => {
  const requests: Recorded[] = [];
  const written = new Map<string, string>();
  const out: string[] = [];
  const err: string[] = [];
  const files = options.files ?? {};
  const io: CliIo = {
    env: options.env ?? {},
    cwd: '/work',
    fetch: async (url, init) => {
      requests.push({ url, init });
      return (options.respond ?? (() => Response.json({ ok: true })))(url, init);
    },
    readFile: async (file) => {
      const content = files[file];
      if (content === undefined) throw new Error(`ENOENT: ${file}`);
      return content;
    },
    writeFile: async (file, content) => {
      written.set(file, content);
    },
    stdout: (text) => out.push(text),
    stderr: (text) => err.push(text),
  };
  return { io, requests, written, stdout: () => out.join(''), stderr: () => err.join('') };
};

describe('catalog CLI arguments', () => {
  it('parses import and export with their options', () => {
    expect(parseArgs(['import', 'catalog/demo.json'])).toEqual({ kind: 'import', file: 'catalog/demo.json' });
    expect(parseArgs(['export'])).toEqual({ kind: 'export' });
    expect(parseArgs(['export', '--revision', '3', '--out', 'x.json'])).toEqual({
      kind: 'export',
      revision: 3,
      out: 'x.json',
    });
    expect(parseArgs(['export', '--revision=12', '--out=a=b.json'])).toEqual({
      kind: 'export',
      revision: 12,
      out: 'a=b.json',
    });
    expect(parseArgs([])).toEqual({ kind: 'help' });
    expect(parseArgs(['--help'])).toEqual({ kind: 'help' });
  });

  it('takes --sigv4 anywhere on the line', () => {
    expect(parseArgs(['import', 'a.json', '--sigv4'])).toEqual({
      kind: 'import',
      file: 'a.json',
      sigv4: true,
    });
    expect(parseArgs(['--sigv4', 'export', '--revision', '2'])).toEqual({
      kind: 'export',
      revision: 2,
      sigv4: true,
    });
  });

  it.each([
    [['import'], 'import needs a file'],
    [['import', 'a.json', 'b.json'], 'unexpected arguments: b.json'],
    [['export', '--revision', '0'], '--revision must be a positive integer'],
    [['export', '--revision'], '--revision needs a value'],
    [['export', '--out', '--revision', '2'], '--out needs a value'],
    [['export', '--format', 'yaml'], 'unknown option --format'],
    [['publish'], 'unknown command publish'],
    [['import', 'a.json', '--sigv4', 'b.json'], 'unexpected arguments: b.json'],
  ])('refuses %j', (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(UsageError);
    expect(() => parseArgs(argv)).toThrow(message);
  });

  it('tells a deployed API from the local stack', () => {
    expect(isDeployed(new URL('http://127.0.0.1:3000'), false)).toBe(false);
    expect(isDeployed(new URL('http://localhost:3000'), false)).toBe(false);
    expect(isDeployed(new URL('https://abc.execute-api.eu-west-1.amazonaws.com/prod'), true)).toBe(true);
    expect(isDeployed(new URL('https://api.example.com'), false)).toBe(true);
    expect(isDeployed(new URL('http://pricing.internal:3000'), true)).toBe(false);
  });
});

describe('catalog CLI runs', () => {
  it('imports a file with the admin token from the data directory and prints the result', async () => {
    const fake = fakeIo({
      env: { DATA_DIR: '/data' },
      files: {
        '/data/credentials.json': JSON.stringify({ api_key: 'k', admin_token: 'adm_local_secret' }),
        '/work/doc.json': '{"settings":{}}',
      },
      respond: () => Response.json({ revision: 2, changed: ['fx'] }, { status: 201 }),
    });
    expect(await run(['import', 'doc.json'], fake.io)).toBe(0);
    const [request] = fake.requests;
    expect(request?.url).toBe('http://127.0.0.1:3000/admin/catalog/import');
    expect(request?.init.method).toBe('POST');
    expect(request?.init.body).toBe('{"settings":{}}');
    const headers = request?.init.headers as Record<string, string>;
    expect(headers.Authorization).toBe('Bearer adm_local_secret');
    expect(headers['Content-Type']).toBe('application/json');
    expect(headers['Idempotency-Key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(fake.stdout())).toEqual({ revision: 2, changed: ['fx'] });
  });

  it('prints every problem path of a 400 and exits 1', async () => {
    const fake = fakeIo({
      env: { ADMIN_TOKEN: 'adm_given_token_123', API_URL: 'http://localhost:4000/' },
      files: { '/work/doc.json': '{}' },
      respond: () =>
        Response.json(
          {
            error: 'invalid_request',
            error_description: '$.settings: Required; …',
            trace_id: 'trc_1',
            problems: [
              { path: '$.settings', message: 'Required' },
              { path: '$.pricelists[0].items[1].sku_id', message: 'unknown product' },
            ],
          },
          { status: 400 },
        ),
    });
    expect(await run(['import', 'doc.json'], fake.io)).toBe(1);
    expect(fake.requests[0]?.url).toBe('http://localhost:4000/admin/catalog/import');
    expect((fake.requests[0]?.init.headers as Record<string, string> | undefined)?.Authorization).toBe(
      'Bearer adm_given_token_123',
    );
    expect(fake.stderr()).toBe(
      [
        'error 400 invalid_request: $.settings: Required; …',
        '2 problems:',
        '  $.settings: Required',
        '  $.pricelists[0].items[1].sku_id: unknown product',
        'trace id: trc_1',
        '',
      ].join('\n'),
    );
    expect(fake.stdout()).toBe('');
  });

  it('exports a revision to a file and prints where it went', async () => {
    const fake = fakeIo({
      env: { ADMIN_TOKEN: 'adm_given_token_123' },
      respond: () => Response.json({ settings: {} }, { status: 200, headers: { 'X-Catalog-Revision': '3' } }),
    });
    expect(await run(['export', '--revision', '3', '--out', 'out/catalog.json'], fake.io)).toBe(0);
    expect(fake.requests[0]?.url).toBe('http://127.0.0.1:3000/admin/catalog/export?revision=3');
    expect(fake.requests[0]?.init.method).toBe('GET');
    expect(fake.written.get('/work/out/catalog.json')).toBe('{\n  "settings": {}\n}\n');
    expect(JSON.parse(fake.stdout())).toEqual({ revision: 3, out: 'out/catalog.json' });
  });

  it('prints the export on stdout without --out', async () => {
    const fake = fakeIo({
      env: { ADMIN_TOKEN: 'adm_given_token_123' },
      respond: () => Response.json({ a: 1 }),
    });
    expect(await run(['export'], fake.io)).toBe(0);
    expect(JSON.parse(fake.stdout())).toEqual({ a: 1 });
  });

  it('says admin routes of a deployed API need SigV4 (--sigv4), and sends nothing', async () => {
    const fake = fakeIo({ env: { API_URL: 'https://abc.execute-api.eu-west-1.amazonaws.com/prod' } });
    expect(await run(['export'], fake.io)).toBe(1);
    expect(fake.stderr()).toContain('need IAM (SigV4) signed requests. Give --sigv4 (or set API_AUTH=sigv4)');
    expect(fake.requests).toHaveLength(0);
  });

  it('signs the requests of a deployed API with SigV4 when --sigv4 is given', async () => {
    const fake = fakeIo({
      env: { API_URL: 'https://abc.execute-api.eu-west-1.amazonaws.com/prod' },
      files: { '/work/doc.json': '{"settings":{}}' },
      respond: () => Response.json({ revision: 4, changed: [] }, { status: 201 }),
    });
    const options = {
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      now: () => new Date('2026-11-02T10:20:30.000Z'),
    };
    expect(await run(['import', 'doc.json', '--sigv4'], fake.io, options)).toBe(0);
    const [request] = fake.requests;
    expect(request?.url).toBe('https://abc.execute-api.eu-west-1.amazonaws.com/prod/admin/catalog/import');
    const headers = request?.init.headers as Record<string, string>;
    expect(headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20261102\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=.*host.*, Signature=[0-9a-f]{64}$/,
    );
    expect(headers['x-amz-date']).toBe('20261102T102030Z');
    expect(headers.Authorization).toBeUndefined();
    expect(headers['Idempotency-Key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(fake.stdout())).toEqual({ revision: 4, changed: [] });
  });

  it.each([
    [['import', 'missing.json'], { ADMIN_TOKEN: 'adm_given_token_123' }, 'cannot read missing.json as JSON'],
    [['export'], {}, 'no ADMIN_TOKEN and no readable /work/.local/data/credentials.json'],
    [['export'], { API_URL: 'not a url' }, 'API_URL is not a URL'],
    [['bogus'], {}, 'unknown command bogus'],
  ])('fails clearly for %j', async (argv, env, message) => {
    const fake = fakeIo({ env });
    expect(await run(argv, fake.io)).toBe(1);
    expect(fake.stderr()).toContain(message);
    expect(fake.requests).toHaveLength(0);
  });

  it('reports a failure that is not a C6 body, and a network error', async () => {
    const text = fakeIo({
      env: { ADMIN_TOKEN: 'adm_given_token_123' },
      respond: () => new Response('Bad Gateway', { status: 502 }),
    });
    expect(await run(['export'], text.io)).toBe(1);
    expect(text.stderr()).toBe('error 502: Bad Gateway\n');
    const down = fakeIo({
      env: { ADMIN_TOKEN: 'adm_given_token_123' },
      respond: () => {
        throw new TypeError('fetch failed');
      },
    });
    expect(await run(['export'], down.io)).toBe(1);
    expect(down.stderr()).toBe('cannot reach http://127.0.0.1:3000: fetch failed\n');
  });

  it('prints the usage for help', async () => {
    const fake = fakeIo();
    expect(await run(['help'], fake.io)).toBe(0);
    expect(fake.stdout()).toContain('npm run catalog -- import <file.json>');
  });

  it('describes a 404 with its trace id', () => {
    expect(
      describeFailure(404, { error: 'not_found', error_description: 'no catalog revision 9', trace_id: 't' }),
    ).toBe('error 404 not_found: no catalog revision 9\ntrace id: t\n');
  });
});
