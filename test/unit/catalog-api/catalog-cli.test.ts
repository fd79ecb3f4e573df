import { describe, expect, it } from 'vitest';
import {
  type CliIo,
  describeFailure,
  isDeployed,
  parseArgs,
  run,
  USAGE,
  UsageError,
} from '../../../bin/catalog';

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

const CR = 'cr_01JD5Z3V8Q9W2X4Y6Z7A8B9C0D';
const TOKENS = {
  api_key: 'key_local_xxxxxxxxxxxxxxxx',
  admin_token: 'adm_local_admin_token_1',
  admin_tokens: { alice: 'adm_local_alice_token_1', bob: 'adm_local_bob_token_12' },
};
/** The local stack's data directory with the operators' tokens, as `DATA_DIR=/data`. */
const CREDENTIALS = { '/data/credentials.json': JSON.stringify(TOKENS) };

/** A change request as the API answers it. */
const changeRequest = (overrides: Record<string, unknown> = {}) => ({
  cr_id: CR,
  kind: 'catalog',
  status: 'pending_approval',
  author: 'admin',
  note: 'catalog import',
  created_at: '2026-11-02T10:00:00.000Z',
  updated_at: '2026-11-02T10:00:00.000Z',
  payload_sha256: 'sha256:ab',
  approvals: [],
  guardrails: [
    {
      code: 'tax_rate_change',
      path: '$.tax_rules[0].rates.standard[0]',
      message: 'tax rate DE standard vat 0.19 -> 0.2',
    },
    {
      code: 'price_move',
      path: '$.pricelists[0].items[0]',
      message: 'price moves 300.00 % (more than 25 %)',
    },
  ],
  summary: {
    sections_changed: ['pricelists', 'tax_rules'],
    prices_added: 1,
    prices_removed: 0,
    prices_changed: 2,
    tax_rates_changed: 1,
    fx_rates_changed: 0,
  },
  diff: { sections_changed: ['pricelists', 'tax_rules'] },
  version: 1,
  ...overrides,
});

const bearerOf = (request: Recorded | undefined): string | undefined =>
  (request?.init.headers as Record<string, string> | undefined)?.Authorization;

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
    [['import', '--effective-from', 'x'], 'unknown option --effective-from for import'],
    [['request'], 'request needs a kind and a payload file'],
    [['request', 'pricelist'], 'request needs a kind and a payload file'],
    [['request', 'prices', 'p.json'], 'request: unknown kind prices (kinds: catalog, pricelist, tax_rules,'],
    [['request', 'catalog', 'p.json', 'q.json'], 'unexpected arguments: q.json'],
    [
      ['request', 'catalog', 'p.json', '--effective-from', '2026-12-01T00:00'],
      'is not an ISO 8601 date or time',
    ],
    [['request', 'catalog', 'p.json', '--effective-from', 'tomorrow'], '--effective-from: tomorrow is not'],
    [['request', 'catalog', 'p.json', '--note', '  '], '--note must not be empty'],
    [
      ['list', '--status', 'open'],
      '--status must be one of pending_approval, approved, published, rejected, stale',
    ],
    [['change-requests', '--limit', '0'], '--limit must be an integer from 1 to 200'],
    [['change-requests', '--limit', '201'], '--limit must be an integer from 1 to 200'],
    [['change-requests', '--cursor='], '--cursor must not be empty'],
    [['change-requests', 'pending'], 'unexpected arguments: pending'],
    [['show'], 'show needs a change request id (cr_…)'],
    [['show', 'cr_123'], 'cr_123 is not a change request id'],
    [['show', 'cr_01jd5z3v8q9w2x4y6z7a8b9c0d'], 'is not a change request id'],
    [['show', 'cr_01JD5Z3V8Q9W2X4Y6Z7A8B9C0I'], 'is not a change request id'],
    [['show', CR, CR], `unexpected arguments: ${CR}`],
    [['approve', CR, '--acknowledge', 'price_move,oops'], '--acknowledge: unknown guardrail codes oops'],
    [['approve', CR, '--acknowledge', ','], '--acknowledge needs guardrail codes'],
    [['approve', CR, '--comment', 'a', '--comment', 'b'], '--comment is given twice'],
    [['approve', CR, '--comment', 'x'.repeat(2001)], '--comment is longer than 2000 characters'],
    [['approve', CR, '--note', 'x'], 'unknown option --note for approve'],
    [['reject', CR], 'reject needs --comment (why the change is rejected)'],
    [['reject', CR, '--comment='], '--comment must not be empty'],
    [['release'], 'release needs a change request id'],
    [['approve', CR, '--as'], '--as needs an operator name'],
    [['approve', CR, '--as', '--sigv4'], '--as needs an operator name'],
    [['approve', CR, '--as', 'alice', '--as', 'bob'], '--as is given twice'],
    [['approve', CR, '--as', 'al ice'], '--as: al ice is not an operator name'],
    [['approve', CR, '--as', 'alice', '--sigv4'], 'with --sigv4 the operator is the IAM principal'],
  ])('refuses %j', (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(UsageError);
    expect(() => parseArgs(argv)).toThrow(message);
  });

  it('parses the change request commands', () => {
    expect(
      parseArgs([
        'request',
        'pricelist',
        'prices.json',
        '--effective-from',
        '2026-12-01T01:00:00+01:00',
        '--note=  spring prices ',
      ]),
    ).toEqual({
      kind: 'request',
      change: 'pricelist',
      file: 'prices.json',
      effectiveFrom: '2026-12-01T00:00:00.000Z',
      note: 'spring prices',
    });
    expect(parseArgs(['request', 'fx_rates', 'fx.json', '--effective-from', '2026-12-01'])).toEqual({
      kind: 'request',
      change: 'fx_rates',
      file: 'fx.json',
      effectiveFrom: '2026-12-01T00:00:00.000Z',
    });
    expect(parseArgs(['change-requests'])).toEqual({ kind: 'change-requests' });
    expect(parseArgs(['list', '--status', 'published', '--limit=5', '--cursor', 'abc='])).toEqual({
      kind: 'change-requests',
      status: 'published',
      limit: 5,
      cursor: 'abc=',
    });
    expect(parseArgs(['show', CR])).toEqual({ kind: 'show', crId: CR });
    expect(
      parseArgs([
        'approve',
        CR,
        '--comment',
        'agreed',
        '--acknowledge',
        'tax_rate_change, price_move,price_move',
      ]),
    ).toEqual({
      kind: 'approve',
      crId: CR,
      comment: 'agreed',
      acknowledge: ['price_move', 'tax_rate_change'],
    });
    expect(parseArgs(['approve', CR])).toEqual({ kind: 'approve', crId: CR });
    expect(parseArgs(['reject', CR, '--comment', 'not agreed'])).toEqual({
      kind: 'reject',
      crId: CR,
      comment: 'not agreed',
    });
    expect(parseArgs(['release', CR, '--out', 'release.json'])).toEqual({
      kind: 'release',
      crId: CR,
      out: 'release.json',
    });
  });

  it('takes --as <name> anywhere on the line', () => {
    expect(parseArgs(['approve', CR, '--as', 'alice'])).toEqual({ kind: 'approve', crId: CR, as: 'alice' });
    expect(parseArgs(['--as=bob', 'reject', CR, '--comment', 'no'])).toEqual({
      kind: 'reject',
      crId: CR,
      comment: 'no',
      as: 'bob',
    });
    expect(parseArgs(['--as', 'alice', 'help'])).toEqual({ kind: 'help' });
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
  it('imports a file as a change request: the JSON on stdout, a summary with the next steps on stderr', async () => {
    const fake = fakeIo({
      env: { DATA_DIR: '/data' },
      files: { ...CREDENTIALS, '/work/doc.json': '{"settings":{}}' },
      respond: () => Response.json(changeRequest(), { status: 202 }),
    });
    expect(await run(['import', 'doc.json'], fake.io)).toBe(0);
    const [request] = fake.requests;
    expect(request?.url).toBe('http://127.0.0.1:3000/admin/catalog/import');
    expect(request?.init.method).toBe('POST');
    expect(request?.init.body).toBe('{"settings":{}}');
    const headers = request?.init.headers as Record<string, string>;
    expect(headers.Authorization).toBe('Bearer adm_local_admin_token_1');
    expect(headers['Content-Type']).toBe('application/json');
    expect(headers['Idempotency-Key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(fake.stdout())).toEqual(changeRequest());
    expect(fake.stderr()).toBe(
      [
        `change request ${CR} (catalog): pending_approval, by admin (catalog import)`,
        '  changes: pricelists, tax_rules; prices +1 -0 ~2; tax rates 1, FX rates 0 changed',
        '  guardrails (2, each approver acknowledges them):',
        '    tax_rate_change at $.tax_rules[0].rates.standard[0]: tax rate DE standard vat 0.19 -> 0.2',
        '    price_move at $.pricelists[0].items[0]: price moves 300.00 % (more than 25 %)',
        '  approvals: 0 of 2',
        `next: npm run catalog -- approve ${CR} --as alice --acknowledge price_move,tax_rate_change`,
        `  then npm run catalog -- approve ${CR} --as bob --acknowledge price_move,tax_rate_change`,
        `  or: npm run catalog -- reject ${CR} --comment "why"`,
        '',
      ].join('\n'),
    );
  });

  it('suggests approvers without --acknowledge when no guardrail trips, never the author', async () => {
    const fake = fakeIo({
      env: { DATA_DIR: '/data' },
      files: { ...CREDENTIALS, '/work/doc.json': '{}' },
      respond: () =>
        Response.json(
          changeRequest({ author: 'alice', guardrails: [], effective_from: '2026-12-01T00:00:00.000Z' }),
          {
            status: 202,
          },
        ),
    });
    expect(await run(['import', 'doc.json', '--as', 'alice'], fake.io)).toBe(0);
    expect(bearerOf(fake.requests[0])).toBe('Bearer adm_local_alice_token_1');
    expect(fake.stderr()).toContain('  effective from 2026-12-01T00:00:00.000Z\n');
    expect(fake.stderr()).toContain('  guardrails: none\n');
    expect(fake.stderr()).toContain(
      `next: npm run catalog -- approve ${CR} --as bob\n  then npm run catalog -- approve ${CR} --as admin\n`,
    );
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
      respond: () =>
        Response.json(changeRequest({ author: 'arn:aws:iam::1:user/ann', guardrails: [] }), { status: 202 }),
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
    expect(JSON.parse(fake.stdout())).toMatchObject({ cr_id: CR, author: 'arn:aws:iam::1:user/ann' });
    expect(fake.stderr()).toContain(
      `next: 2 IAM principals other than the author approve: npm run catalog -- approve ${CR} --sigv4\n` +
        `  or: npm run catalog -- reject ${CR} --comment "why" --sigv4\n`,
    );
  });

  it.each([
    [['import', 'missing.json'], { ADMIN_TOKEN: 'adm_given_token_123' }, 'cannot read missing.json as JSON'],
    [['export'], {}, 'no ADMIN_TOKEN and no readable /work/.local/data/credentials.json'],
    [['export'], { API_URL: 'not a url' }, 'API_URL is not a URL'],
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

  it('refuses an unknown command with the usage and exit 2, sending nothing', async () => {
    const fake = fakeIo();
    expect(await run(['bogus'], fake.io)).toBe(2);
    expect(fake.stderr()).toBe(`unknown command bogus\n${USAGE}\n`);
    expect(fake.requests).toHaveLength(0);
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

describe('catalog CLI change requests', () => {
  it('requests a change of one kind with its payload, effective time and note', async () => {
    const fake = fakeIo({
      env: { ADMIN_TOKEN: 'adm_given_token_123' },
      files: { '/work/fx.json': '{"fx_rates":{"rates":[]}}' },
      respond: () =>
        Response.json(changeRequest({ kind: 'fx_rates', guardrails: [], note: 'ECB' }), { status: 201 }),
    });
    const argv = [
      'request',
      'fx_rates',
      'fx.json',
      '--effective-from',
      '2026-12-01T00:00:00Z',
      '--note',
      'ECB',
    ];
    expect(await run(argv, fake.io)).toBe(0);
    const [request] = fake.requests;
    expect(request?.url).toBe('http://127.0.0.1:3000/admin/change-requests');
    expect(request?.init.method).toBe('POST');
    expect(JSON.parse(String(request?.init.body))).toEqual({
      kind: 'fx_rates',
      payload: { fx_rates: { rates: [] } },
      effective_from: '2026-12-01T00:00:00.000Z',
      note: 'ECB',
    });
    expect(bearerOf(request)).toBe('Bearer adm_given_token_123');
    expect(JSON.parse(fake.stdout())).toMatchObject({ cr_id: CR, kind: 'fx_rates' });
    // No credentials file to read the operators from: the local stack's default reviewers.
    expect(fake.stderr()).toContain(`change request ${CR} (fx_rates): pending_approval, by admin (ECB)\n`);
    expect(fake.stderr()).toContain(`next: npm run catalog -- approve ${CR} --as alice\n`);
  });

  it('opens a patch with its operations: `patch <file>` is `request patch <file>`', async () => {
    const operations = [{ op: 'remove', path: '/promotions/PROMO-A' }];
    for (const [argv, file] of [
      [['patch', 'ops.json', '--note', 'end promo'], JSON.stringify(operations)],
      [['request', 'patch', 'ops.json', '--note', 'end promo'], JSON.stringify({ operations })],
    ] as const) {
      const fake = fakeIo({
        env: { ADMIN_TOKEN: 'adm_given_token_123' },
        files: { '/work/ops.json': file },
        respond: () => Response.json(changeRequest({ kind: 'patch', guardrails: [] }), { status: 201 }),
      });
      expect(await run([...argv], fake.io)).toBe(0);
      expect(JSON.parse(String(fake.requests[0]?.init.body))).toEqual({
        kind: 'patch',
        operations,
        note: 'end promo',
      });
    }
    expect(() => parseArgs(['patch'])).toThrow('patch needs an operations file');
  });

  it('says when a payload file cannot be read, and sends nothing', async () => {
    const fake = fakeIo({ env: { ADMIN_TOKEN: 'adm_given_token_123' }, files: { '/work/bad.json': '{' } });
    expect(await run(['request', 'catalog', 'bad.json'], fake.io)).toBe(1);
    expect(fake.stderr()).toMatch(/^cannot read bad\.json as JSON: /);
    expect(fake.requests).toHaveLength(0);
  });

  it('lists change requests with their filters: the page on stdout, one line each and the next page on stderr', async () => {
    const published = changeRequest({
      status: 'published',
      approvals: [
        { by: 'alice', at: '2026-11-02T10:05:00.000Z', acknowledged: [] },
        { by: 'bob', at: '2026-11-02T10:06:00.000Z', acknowledged: [] },
      ],
    });
    const fake = fakeIo({
      env: { ADMIN_TOKEN: 'adm_given_token_123' },
      respond: () => Response.json({ items: [published], cursor: 'next+page' }),
    });
    expect(await run(['list', '--status', 'published', '--limit', '1'], fake.io)).toBe(0);
    expect(fake.requests[0]?.url).toBe(
      'http://127.0.0.1:3000/admin/change-requests?status=published&limit=1',
    );
    expect(fake.requests[0]?.init.method).toBe('GET');
    expect(JSON.parse(fake.stdout())).toEqual({ items: [published], cursor: 'next+page' });
    expect(fake.stderr()).toBe(
      `${CR}\tcatalog\tpublished\tby admin\t2/2 approvals\t2026-11-02T10:00:00.000Z\n` +
        'more: npm run catalog -- change-requests --status published --limit 1 --cursor next+page\n',
    );

    const empty = fakeIo({
      env: { ADMIN_TOKEN: 'adm_given_token_123' },
      respond: () => Response.json({ items: [] }),
    });
    expect(await run(['change-requests', '--cursor', 'a/b c'], empty.io)).toBe(0);
    expect(empty.requests[0]?.url).toBe('http://127.0.0.1:3000/admin/change-requests?cursor=a%2Fb%20c');
    expect(empty.stderr()).toBe('no change requests\n');
  });

  it('shows one change request', async () => {
    const fake = fakeIo({
      env: { ADMIN_TOKEN: 'adm_given_token_123' },
      respond: () =>
        Response.json(
          changeRequest({
            status: 'rejected',
            rejection: { by: 'bob', at: '2026-11-02T11:00:00.000Z', comment: 'not agreed' },
          }),
        ),
    });
    expect(await run(['show', CR], fake.io)).toBe(0);
    expect(fake.requests[0]?.url).toBe(`http://127.0.0.1:3000/admin/change-requests/${CR}`);
    expect(fake.requests[0]?.init.method).toBe('GET');
    expect(JSON.parse(fake.stdout())).toMatchObject({ cr_id: CR, status: 'rejected' });
    expect(fake.stderr()).toContain('\nrejected by bob: not agreed\n');
    expect(fake.stderr()).not.toContain('next:');
  });

  it('approves as alice, then as bob: the second approval publishes', async () => {
    const first = fakeIo({
      env: { DATA_DIR: '/data', ADMIN_TOKEN: 'adm_given_token_123' },
      files: CREDENTIALS,
      respond: () =>
        Response.json(
          changeRequest({
            approvals: [
              {
                by: 'alice',
                at: '2026-11-02T10:05:00.000Z',
                acknowledged: ['price_move', 'tax_rate_change'],
              },
            ],
          }),
        ),
    });
    const argv = [
      'approve',
      CR,
      '--as',
      'alice',
      '--comment',
      'agreed',
      '--acknowledge',
      'price_move,tax_rate_change',
    ];
    expect(await run(argv, first.io)).toBe(0);
    const [request] = first.requests;
    expect(request?.url).toBe(`http://127.0.0.1:3000/admin/change-requests/${CR}/approve`);
    expect(request?.init.method).toBe('POST');
    expect(JSON.parse(String(request?.init.body))).toEqual({
      comment: 'agreed',
      acknowledge: ['price_move', 'tax_rate_change'],
    });
    // --as wins over ADMIN_TOKEN.
    expect(bearerOf(request)).toBe('Bearer adm_local_alice_token_1');
    expect(first.stderr()).toContain('  approvals: 1 of 2 (alice)\n');
    expect(first.stderr()).toContain(
      `next: npm run catalog -- approve ${CR} --as bob --acknowledge price_move,tax_rate_change\n`,
    );

    const second = fakeIo({
      env: { DATA_DIR: '/data', ADMIN_AS: 'bob' },
      files: CREDENTIALS,
      respond: () =>
        Response.json(
          changeRequest({
            status: 'published',
            approvals: [
              { by: 'alice', at: '2026-11-02T10:05:00.000Z', acknowledged: [] },
              { by: 'bob', at: '2026-11-02T10:06:00.000Z', acknowledged: [] },
            ],
            publication: {
              revision: 7,
              versions: { pricelist_version: 4, fx_version: 'fx-2', tax_rule_version: 3 },
              effective_from: '2026-11-02T10:06:00.000Z',
              published_at: '2026-11-02T10:06:00.000Z',
            },
          }),
        ),
    });
    expect(await run(['approve', CR, '--acknowledge', 'price_move,tax_rate_change'], second.io)).toBe(0);
    expect(bearerOf(second.requests[0])).toBe('Bearer adm_local_bob_token_12');
    expect(second.stderr()).toContain(
      [
        '  approvals: 2 of 2 (alice, bob)',
        'published: revision 7 (pricelist_version 4, fx_version fx-2, tax_rule_version 3), in force from ' +
          '2026-11-02T10:06:00.000Z',
        `  release: npm run catalog -- release ${CR} --out release.json`,
        '',
      ].join('\n'),
    );
  });

  it('sends an empty approval body without options', async () => {
    const fake = fakeIo({
      env: { ADMIN_TOKEN: 'adm_given_token_123' },
      respond: () => Response.json(changeRequest({ status: 'stale', stale_reason: 'tax changed since' })),
    });
    expect(await run(['approve', CR], fake.io)).toBe(0);
    expect(fake.requests[0]?.init.body).toBe('{}');
    expect(fake.stderr()).toContain(
      '\nstale: tax changed since; request the change again against what is in force\n',
    );
  });

  it('rejects with a comment', async () => {
    const fake = fakeIo({
      env: { DATA_DIR: '/data' },
      files: CREDENTIALS,
      respond: () =>
        Response.json(
          changeRequest({
            status: 'rejected',
            rejection: { by: 'alice', at: '2026-11-02T11:00:00.000Z', comment: 'wrong currency' },
          }),
        ),
    });
    expect(await run(['reject', CR, '--comment', ' wrong currency ', '--as', 'alice'], fake.io)).toBe(0);
    expect(fake.requests[0]?.url).toBe(`http://127.0.0.1:3000/admin/change-requests/${CR}/reject`);
    expect(fake.requests[0]?.init.body).toBe('{"comment":"wrong currency"}');
    expect(bearerOf(fake.requests[0])).toBe('Bearer adm_local_alice_token_1');
    expect(fake.stderr()).toContain('\nrejected by alice: wrong currency\n');
  });

  it('prints the signed release, or writes it to --out', async () => {
    const envelope = {
      payloadType: 'application/vnd.pricing.release+json',
      payload: 'eyJjcl9pZCI6ImNyIn0=',
      signatures: [{ keyid: 'k1', sig: 'c2ln' }],
    };
    const printed = fakeIo({
      env: { ADMIN_TOKEN: 'adm_given_token_123' },
      respond: () => Response.json(envelope),
    });
    expect(await run(['release', CR], printed.io)).toBe(0);
    expect(printed.requests[0]?.url).toBe(`http://127.0.0.1:3000/audit/releases/${CR}`);
    expect(printed.requests[0]?.init.method).toBe('GET');
    expect(JSON.parse(printed.stdout())).toEqual(envelope);
    expect(printed.stderr()).toBe('');

    const written = fakeIo({
      env: { ADMIN_TOKEN: 'adm_given_token_123' },
      respond: () => Response.json(envelope),
    });
    expect(await run(['release', CR, '--out', 'out/release.json'], written.io)).toBe(0);
    expect(JSON.parse(written.written.get('/work/out/release.json') ?? '')).toEqual(envelope);
    expect(JSON.parse(written.stdout())).toEqual({ cr_id: CR, out: 'out/release.json' });
  });

  it('lists the new commands and --as in the usage', () => {
    for (const line of [
      'npm run catalog -- request <kind> <payload.json> [--effective-from ISO] [--note text]',
      'npm run catalog -- change-requests [--status S] [--limit N] [--cursor C]      (alias: list)',
      'npm run catalog -- show <cr_id>',
      'npm run catalog -- approve <cr_id> [--comment text] [--acknowledge code,code]',
      'npm run catalog -- reject <cr_id> --comment text',
      'npm run catalog -- release <cr_id> [--out file.json]',
      '--as <name>  act as another local operator',
      'ADMIN_AS     like --as (--as wins)',
    ]) {
      expect(USAGE).toContain(line);
    }
  });
});

describe('catalog CLI operators (--as)', () => {
  it('acts as admin with ADMIN_TOKEN when set, as the local stack does', async () => {
    const fake = fakeIo({
      env: { DATA_DIR: '/data', ADMIN_TOKEN: 'adm_given_token_123' },
      files: CREDENTIALS,
      respond: () => Response.json(changeRequest()),
    });
    expect(await run(['show', CR, '--as', 'admin'], fake.io)).toBe(0);
    expect(bearerOf(fake.requests[0])).toBe('Bearer adm_given_token_123');
  });

  it('takes the operators of ADMIN_TOKENS when the stack runs with it', async () => {
    const fake = fakeIo({
      env: { ADMIN_TOKENS: 'carol:adm_carol_token_123,dave:adm_dave_token_1234' },
      respond: () => Response.json(changeRequest({ guardrails: [] })),
    });
    expect(await run(['show', CR, '--as', 'carol'], fake.io)).toBe(0);
    expect(bearerOf(fake.requests[0])).toBe('Bearer adm_carol_token_123');
    expect(fake.stderr()).toContain(
      `next: npm run catalog -- approve ${CR} --as carol\n  then npm run catalog -- approve ${CR} --as dave\n`,
    );
  });

  it.each([
    [
      ['show', CR, '--as', 'carol'],
      { DATA_DIR: '/data' },
      'unknown operator "carol": the local operators are admin, alice, bob (admin_tokens in /data/credentials.json)',
    ],
    [
      ['show', CR],
      { DATA_DIR: '/data', ADMIN_AS: 'mallory' },
      'unknown operator "mallory": the local operators are admin, alice, bob',
    ],
    [
      ['show', CR, '--as', 'alice'],
      { DATA_DIR: '/elsewhere' },
      "acting as alice needs the local stack's /elsewhere/credentials.json (no readable file)",
    ],
  ])('refuses an operator it has no token for: %j %j', async (argv, env, message) => {
    const fake = fakeIo({ env, files: CREDENTIALS });
    expect(await run(argv, fake.io)).toBe(1);
    expect(fake.stderr().split('\n')).toHaveLength(2);
    expect(fake.stderr()).toContain(message);
    expect(fake.stderr()).not.toContain('usage:');
    expect(fake.requests).toHaveLength(0);
  });

  it.each([
    [['show', CR, '--as', 'alice', '--sigv4'], {}, 'with --sigv4 the operator is the IAM principal'],
    [
      ['show', CR, '--as', 'alice'],
      { API_AUTH: 'sigv4', AWS_REGION: 'eu-west-1' },
      'with SigV4 the operator is',
    ],
    [
      ['show', CR, '--as', 'alice'],
      { API_URL: 'https://abc.execute-api.eu-west-1.amazonaws.com/prod' },
      'https://abc.execute-api.eu-west-1.amazonaws.com/prod is a deployed API: the operator is the IAM principal',
    ],
    [['show', CR, '--sigv4'], { ADMIN_AS: 'bob', AWS_REGION: 'eu-west-1' }, '--as bob (--as / ADMIN_AS)'],
  ])('refuses --as with SigV4 or a deployed API as a usage error: %j %j', async (argv, env, message) => {
    const fake = fakeIo({ env: { DATA_DIR: '/data', ...env }, files: CREDENTIALS });
    expect(await run(argv, fake.io, { credentials: { accessKeyId: 'AKID', secretAccessKey: 's' } })).toBe(2);
    expect(fake.stderr()).toContain(message);
    expect(fake.stderr()).toContain('usage: npm run catalog --');
    expect(fake.requests).toHaveLength(0);
  });
});

describe('catalog CLI refusals of a change request', () => {
  const refusing = (status: number, body: Record<string, unknown>, env: Record<string, string> = {}) =>
    fakeIo({
      env: { DATA_DIR: '/data', ...env },
      files: CREDENTIALS,
      respond: () => Response.json({ trace_id: 'trc_9', ...body }, { status }),
    });

  it('prints a 403 of the author approving with its description and a hint', async () => {
    const fake = refusing(403, {
      error: 'forbidden',
      error_description: 'the author of a change request cannot approve it',
    });
    expect(await run(['approve', CR, '--acknowledge', 'price_move'], fake.io)).toBe(1);
    expect(fake.stderr()).toBe(
      [
        'error 403 forbidden: the author of a change request cannot approve it',
        'trace id: trc_9',
        'hint: the author cannot approve their own change: approve as another operator (--as <name>)',
        '',
      ].join('\n'),
    );
    expect(fake.stdout()).toBe('');
  });

  it('prints a 422 with the missing acknowledgements and the command that acknowledges them', async () => {
    const fake = refusing(422, {
      error: 'invalid_state',
      error_description: 'this change trips guardrails that each approver must acknowledge: tax_rate_change',
      details: { missing_acknowledgements: ['tax_rate_change'] },
    });
    expect(await run(['approve', CR, '--as', 'alice', '--acknowledge', 'price_move'], fake.io)).toBe(1);
    expect(fake.stderr()).toBe(
      [
        'error 422 invalid_state: this change trips guardrails that each approver must acknowledge: tax_rate_change',
        'details: {"missing_acknowledgements":["tax_rate_change"]}',
        'trace id: trc_9',
        `hint: acknowledge them: npm run catalog -- approve ${CR} --as alice --acknowledge price_move,tax_rate_change`,
        '',
      ].join('\n'),
    );
  });

  it('prints a 409 of a decided change request with its description and how to look at it', async () => {
    const fake = refusing(409, {
      error: 'conflict',
      error_description: 'the change request is published, not pending_approval',
    });
    expect(await run(['reject', CR, '--comment', 'too late', '--as', 'bob'], fake.io)).toBe(1);
    expect(fake.stderr()).toBe(
      [
        'error 409 conflict: the change request is published, not pending_approval',
        'trace id: trc_9',
        `hint: the change request is no longer pending: npm run catalog -- show ${CR}`,
        '',
      ].join('\n'),
    );
  });

  it('prints a 404 without a hint', async () => {
    const fake = refusing(404, { error: 'not_found', error_description: `no change request ${CR}` });
    expect(await run(['show', CR], fake.io)).toBe(1);
    expect(fake.stderr()).toBe(`error 404 not_found: no change request ${CR}\ntrace id: trc_9\n`);
  });
});
