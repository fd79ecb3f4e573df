import { describe, expect, it } from 'vitest';
import { UsageError } from '../../../bin/admin-client';
import { deadDeliveries, type OpsIo, parseArgs, run } from '../../../bin/ops';

const EVT_A = 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C';
const EVT_B = 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7D';
const EP = 'ep_01JQ4S6T1X5V8R2W3Y4Z5A6B7E';
const RPL = 'rpl_01JQ4S6T1X5V8R2W3Y4Z5A6B7F';
const SECRET = `whsec_${'A'.repeat(43)}=`;

describe('ops arguments: replay', () => {
  it('parses a replay by event ids, with endpoint, status, force and wait', () => {
    expect(parseArgs(['replay', '--event-ids', `${EVT_A}, ${EVT_B},${EVT_A}`])).toEqual({
      kind: 'replay',
      request: { event_ids: [EVT_A, EVT_B] },
      wait: false,
    });
    expect(
      parseArgs([
        'replay',
        `--event-ids=${EVT_A}`,
        '--endpoint',
        EP,
        '--status',
        'dead',
        '--force',
        '--wait',
      ]),
    ).toEqual({
      kind: 'replay',
      request: { event_ids: [EVT_A], endpoint_id: EP, status: 'dead', force: true },
      wait: true,
    });
  });

  it('parses a replay by window, normalising the times to UTC with milliseconds', () => {
    expect(
      parseArgs(['replay', '--from', '2026-11-01', '--to', '2026-11-02T10:00:00+02:00', '--status', 'dead']),
    ).toEqual({
      kind: 'replay',
      request: { from: '2026-11-01T00:00:00.000Z', to: '2026-11-02T08:00:00.000Z', status: 'dead' },
      wait: false,
    });
  });

  it('parses replay --show, with or without --wait, and --sigv4 anywhere', () => {
    expect(parseArgs(['replay', '--show', RPL])).toEqual({ kind: 'replay-show', replayId: RPL, wait: false });
    expect(parseArgs(['--sigv4', 'replay', '--show', RPL, '--wait'])).toEqual({
      kind: 'replay-show',
      replayId: RPL,
      wait: true,
      sigv4: true,
    });
  });

  it.each([
    [['replay'], 'replay needs --event-ids, a --from/--to window or --show'],
    [
      ['replay', '--event-ids', EVT_A, '--from', '2026-11-01T00:00:00Z'],
      'give either --event-ids or --from/--to, not both',
    ],
    [['replay', '--from', '2026-11-01T00:00:00Z'], 'a replay window needs both --from and --to'],
    [['replay', '--to', '2026-11-01T00:00:00Z'], 'a replay window needs both --from and --to'],
    [['replay', '--from', '2026-11-02', '--to', '2026-11-01'], '--from is after --to'],
    [['replay', '--from', 'yesterday', '--to', '2026-11-01'], '--from: yesterday is not an ISO 8601 time'],
    [['replay', '--from', '2026-13-45', '--to', '2026-11-01'], 'is not an ISO 8601 time'],
    [['replay', '--event-ids'], '--event-ids needs a value'],
    [['replay', '--event-ids', '--force'], '--event-ids needs a value'],
    [['replay', '--event-ids', ','], '--event-ids needs at least one event id'],
    [['replay', '--event-ids', 'evt a,evt/b'], '--event-ids: not event ids: evt a, evt/b'],
    [['replay', '--event-ids', EVT_A, '--event-ids', EVT_B], '--event-ids is given twice'],
    [['replay', '--event-ids', EVT_A, '--endpoint', 'ep_1'], '--endpoint: ep_1 is not an ep_ id'],
    [['replay', '--event-ids', EVT_A, '--status', 'lost'], '--status must be one of'],
    [['replay', '--event-ids', EVT_A, '--force=yes'], '--force takes no value'],
    [['replay', '--event-ids', EVT_A, '--limit', '3'], 'unknown option --limit for replay'],
    [['replay', '--event-ids', EVT_A, 'extra'], 'unexpected arguments: extra'],
    [['replay', '--show', RPL, '--force'], '--show takes no other option than --wait'],
    [['replay', '--show', 'rpl_1'], '--show: rpl_1 is not an rpl_ id'],
    [['replay', '--show'], '--show needs a value'],
  ])('refuses %j', (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(UsageError);
    expect(() => parseArgs(argv)).toThrow(message);
  });
});

describe('ops arguments: events and dlq', () => {
  it('parses events with every filter, and events show', () => {
    expect(parseArgs(['events'])).toEqual({ kind: 'events', query: {}, all: false });
    expect(
      parseArgs([
        'events',
        '--status',
        'delivered',
        '--endpoint',
        EP,
        '--from',
        '2026-11-01T00:00:00Z',
        '--to=2026-11-02T00:00:00.000Z',
        '--limit',
        '20',
        '--all',
      ]),
    ).toEqual({
      kind: 'events',
      query: {
        status: 'delivered',
        endpoint_id: EP,
        from: '2026-11-01T00:00:00.000Z',
        to: '2026-11-02T00:00:00.000Z',
        limit: 20,
      },
      all: true,
    });
    expect(parseArgs(['events', 'show', EVT_A])).toEqual({ kind: 'events-show', eventId: EVT_A });
  });

  it('parses dlq and dlq replay', () => {
    expect(parseArgs(['dlq'])).toEqual({ kind: 'dlq', window: {}, json: false });
    expect(parseArgs(['dlq', '--from', '2026-11-01', '--endpoint', EP, '--json'])).toEqual({
      kind: 'dlq',
      window: { from: '2026-11-01T00:00:00.000Z' },
      endpointId: EP,
      json: true,
    });
    expect(parseArgs(['dlq', 'replay'])).toEqual({
      kind: 'dlq-replay',
      window: {},
      force: false,
      wait: false,
    });
    expect(
      parseArgs([
        'dlq',
        'replay',
        '--from',
        '2026-11-01',
        '--to',
        '2026-11-02',
        '--endpoint',
        EP,
        '--force',
        '--wait',
      ]),
    ).toEqual({
      kind: 'dlq-replay',
      window: { from: '2026-11-01T00:00:00.000Z', to: '2026-11-02T00:00:00.000Z' },
      endpointId: EP,
      force: true,
      wait: true,
    });
  });

  it.each([
    [['events', '--limit', '0'], '--limit must be an integer from 1 to 200'],
    [['events', '--limit', '201'], '--limit must be an integer from 1 to 200'],
    [['events', '--limit', 'ten'], '--limit must be an integer from 1 to 200'],
    [['events', '--status'], '--status needs a value'],
    [['events', '--from', '2026-11-03', '--to', '2026-11-02'], '--from is after --to'],
    [['events', '--json'], 'unknown option --json for events'],
    [['events', 'list'], 'unexpected arguments: list'],
    [['events', 'show'], 'events show needs an event id'],
    [['events', 'show', 'evt/nope'], 'evt/nope is not an event id'],
    [['events', 'show', EVT_A, EVT_B], `unexpected arguments: ${EVT_B}`],
    [['events', 'show', EVT_A, '--all'], 'unknown option --all for events show'],
    [['dlq', '--status', 'dead'], 'unknown option --status for dlq'],
    [['dlq', 'replay', '--json'], 'unknown option --json for dlq replay'],
    [['dlq', 'list'], 'unexpected arguments: list'],
    [['dlq', '--endpoint', 'nope'], '--endpoint: nope is not an ep_ id'],
  ])('refuses %j', (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(UsageError);
    expect(() => parseArgs(argv)).toThrow(message);
  });
});

describe('ops arguments: subscriptions and limits (C31)', () => {
  it('sends event types, a filter and a rate limit, checked by the API schemas', () => {
    expect(
      parseArgs([
        'endpoints',
        'create',
        '--url',
        'https://partner.example/hooks',
        '--event-types',
        'payout.processed',
        '--filter',
        '{"data.currency":"EUR"}',
        '--rate-limit',
        'per_second=20,max_in_flight=5',
        '--ordering',
        'data.payout_id',
      ]),
    ).toEqual({
      kind: 'endpoints-create',
      body: {
        url: 'https://partner.example/hooks',
        event_types: ['payout.processed'],
        filter: { 'data.currency': 'EUR' },
        rate_limit: { per_second: 20, max_in_flight: 5 },
        ordering: { key: 'data.payout_id' },
      },
    });
    expect(
      parseArgs([
        'endpoints',
        'update',
        EP,
        '--filter',
        'none',
        '--rate-limit',
        'none',
        '--ordering',
        'none',
      ]),
    ).toEqual({
      kind: 'endpoints-update',
      endpointId: EP,
      body: { filter: null, rate_limit: null, ordering: null },
    });
  });

  it('sets an endpoint’s signature scheme (C33) on create and update, refusing any other name', () => {
    expect(
      parseArgs([
        'endpoints',
        'create',
        '--url',
        'https://p.example/h',
        '--signature-scheme',
        'standard-webhooks',
      ]),
    ).toEqual({
      kind: 'endpoints-create',
      body: { url: 'https://p.example/h', signature_scheme: 'standard-webhooks' },
    });
    expect(parseArgs(['endpoints', 'update', EP, '--signature-scheme', 'native'])).toEqual({
      kind: 'endpoints-update',
      endpointId: EP,
      body: { signature_scheme: 'native' },
    });
    expect(() => parseArgs(['endpoints', 'update', EP, '--signature-scheme', 'svix'])).toThrow(
      /--signature-scheme/,
    );
  });

  it('refuses a bad filter, rate limit or removal on create with a usage error naming the option', () => {
    expect(() => parseArgs(['endpoints', 'create', '--url', 'https://p.example/h', '--filter', '{'])).toThrow(
      /--filter: not JSON/,
    );
    expect(() =>
      parseArgs(['endpoints', 'create', '--url', 'https://p.example/h', '--filter', '{"data.x":{"$gtt":1}}']),
    ).toThrow(/--filter: unknown operator/);
    expect(() => parseArgs(['endpoints', 'update', EP, '--rate-limit', 'per_second=0'])).toThrow(
      /--rate-limit: .*per_second/,
    );
    expect(() => parseArgs(['endpoints', 'update', EP, '--rate-limit', 'burst=3'])).toThrow(
      /--rate-limit: burst=3 is not/,
    );
    expect(() => parseArgs(['endpoints', 'update', EP, '--ordering', 'payout_id'])).toThrow(
      /--ordering: .*"endpoint", "tenant" or "data.<field>"/,
    );
    expect(() =>
      parseArgs(['endpoints', 'create', '--url', 'https://p.example/h', '--ordering', 'none']),
    ).toThrow(/use it with endpoints update/);
    expect(() =>
      parseArgs(['endpoints', 'create', '--url', 'https://p.example/h', '--rate-limit', 'none']),
    ).toThrow(/use it with endpoints update/);
  });
});

describe('ops arguments: endpoints and the rest', () => {
  it('parses every endpoints command', () => {
    expect(parseArgs(['endpoints', 'list'])).toEqual({ kind: 'endpoints-list', all: false });
    expect(parseArgs(['endpoints', 'list', '--limit', '5', '--all'])).toEqual({
      kind: 'endpoints-list',
      limit: 5,
      all: true,
    });
    expect(parseArgs(['endpoints', 'show', EP])).toEqual({ kind: 'endpoints-show', endpointId: EP });
    expect(parseArgs(['endpoints', 'delete', EP])).toEqual({ kind: 'endpoints-delete', endpointId: EP });
    expect(parseArgs(['endpoints', 'rotate-secret', EP])).toEqual({
      kind: 'endpoints-rotate-secret',
      endpointId: EP,
    });
    expect(parseArgs(['endpoints', 'create', '--url', 'https://partner.example/hooks'])).toEqual({
      kind: 'endpoints-create',
      body: { url: 'https://partner.example/hooks' },
    });
    expect(
      parseArgs([
        'endpoints',
        'create',
        '--url=https://partner.example/hooks',
        '--topics',
        'payout, catalog',
        '--description',
        'Partner A',
        '--tenant',
        'acme',
        '--version',
        '2026-11-01',
      ]),
    ).toEqual({
      kind: 'endpoints-create',
      body: {
        url: 'https://partner.example/hooks',
        topics: ['payout', 'catalog'],
        description: 'Partner A',
        tenant: 'acme',
        version: '2026-11-01',
      },
    });
    expect(parseArgs(['endpoints', 'update', EP, '--disable'])).toEqual({
      kind: 'endpoints-update',
      endpointId: EP,
      body: { status: 'disabled' },
    });
    expect(
      parseArgs([
        'endpoints',
        'update',
        '--url',
        'http://127.0.0.1:9/x',
        EP,
        '--topics',
        'payout',
        '--description',
        '',
        '--enable',
      ]),
    ).toEqual({
      kind: 'endpoints-update',
      endpointId: EP,
      body: { url: 'http://127.0.0.1:9/x', topics: ['payout'], description: '', status: 'enabled' },
    });
  });

  it('parses help in every spelling', () => {
    for (const argv of [[], ['help'], ['--help'], ['-h'], ['endpoints', 'create', '--help']])
      expect(parseArgs(argv)).toEqual({ kind: 'help' });
  });

  it.each([
    [['endpoints'], 'endpoints needs a command'],
    [['endpoints', 'purge'], 'unknown command endpoints purge'],
    [['endpoints', 'show'], 'endpoints show needs an ep_ id'],
    [['endpoints', 'delete', 'ep_x'], 'ep_x is not an ep_ id'],
    [['endpoints', 'rotate-secret', EP, '--force'], 'unknown option --force for endpoints rotate-secret'],
    [['endpoints', 'create'], 'endpoints create needs --url'],
    [['endpoints', 'create', '--url'], '--url needs a value'],
    [['endpoints', 'create', '--url', 'partner.example'], '--url: partner.example is not a URL'],
    [['endpoints', 'create', '--url', 'ftp://partner.example'], '--url must be http(s)'],
    [
      ['endpoints', 'create', '--url', 'https://p.example', '--topics', 'Payout'],
      '--topics: not topic names',
    ],
    [
      ['endpoints', 'create', '--url', 'https://p.example', '--version', '2020-01-01'],
      '--version must be one of',
    ],
    [
      ['endpoints', 'create', '--url', 'https://p.example', '--enable'],
      'unknown option --enable for endpoints create',
    ],
    [['endpoints', 'create', '--url', 'https://p.example', 'extra'], 'unexpected arguments: extra'],
    [['endpoints', 'update', EP], 'endpoints update needs something to change'],
    [['endpoints', 'update', '--disable'], 'endpoints update needs an ep_ id'],
    [['endpoints', 'update', EP, '--enable', '--disable'], 'give --enable or --disable, not both'],
    [['endpoints', 'update', EP, '--tenant', 'acme'], 'unknown option --tenant for endpoints update'],
    [['endpoints', 'list', '--limit'], '--limit needs a value'],
    [['deploy'], 'unknown command deploy'],
  ])('refuses %j', (argv, message) => {
    expect(() => parseArgs(argv)).toThrow(UsageError);
    expect(() => parseArgs(argv)).toThrow(message);
  });
});

interface Recorded {
  readonly method: string;
  readonly url: URL;
  readonly body: unknown;
}

/** A fake API: `respond` answers each request (JSON), every request recorded; time only moves on sleep. */
const fakeApi = (
  respond: (request: Recorded, index: number) => Response,
  env: Record<string, string> = {},
) => {
  const requests: Recorded[] = [];
  const out: string[] = [];
  const err: string[] = [];
  let clock = Date.parse('2026-11-02T12:00:00.000Z');
  const sleeps: number[] = [];
  const io: OpsIo = {
    env: { ADMIN_TOKEN: 'adm_test', ...env },
    cwd: '/work',
    fetch: async (url, init) => {
      const request: Recorded = {
        method: String(init.method),
        url: new URL(url),
        body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
      };
      const index = requests.push(request) - 1;
      return respond(request, index);
    },
    readFile: async () => {
      throw new Error('no files');
    },
    writeFile: async () => undefined,
    stdout: (text) => out.push(text),
    stderr: (text) => err.push(text),
    now: () => new Date(clock),
    sleep: async (ms) => {
      sleeps.push(ms);
      clock += ms;
    },
  };
  return { io, requests, sleeps, stdout: () => out.join(''), stderr: () => err.join('') };
};

const progress = (done: boolean) => ({
  replay_id: RPL,
  matched: 1,
  enqueued: 1,
  skipped: 0,
  requested_at: '2026-11-02T12:00:00.000Z',
  request: { event_ids: [EVT_A] },
  progress: { pending: done ? 0 : 1, delivered: done ? 1 : 0, retrying: 0, stopped: 0, dead: 0 },
  done,
  deliveries: [{ event_id: EVT_A, endpoint_id: EP, status: done ? 'delivered' : 'pending' }],
});

describe('ops runs', () => {
  it('starts a replay and prints what it matched', async () => {
    const api = fakeApi(() =>
      Response.json({ replay_id: RPL, matched: 2, enqueued: 1, skipped: 1, extra: true }, { status: 202 }),
    );
    expect(await run(['replay', '--event-ids', `${EVT_A},${EVT_B}`, '--force'], api.io)).toBe(0);
    expect(api.requests[0]).toMatchObject({
      method: 'POST',
      url: new URL('http://127.0.0.1:3000/webhooks/replay'),
      body: { event_ids: [EVT_A, EVT_B], force: true },
    });
    expect(JSON.parse(api.stdout())).toEqual({ replay_id: RPL, matched: 2, enqueued: 1, skipped: 1 });
  });

  it('waits for a replay until done and prints its final progress', async () => {
    const api = fakeApi((request, index) =>
      request.method === 'POST'
        ? Response.json({ replay_id: RPL, matched: 1, enqueued: 1, skipped: 0 }, { status: 202 })
        : Response.json(progress(index >= 3)),
    );
    expect(await run(['replay', '--event-ids', EVT_A, '--wait'], api.io)).toBe(0);
    expect(api.requests.map((request) => `${request.method} ${request.url.pathname}`)).toEqual([
      'POST /webhooks/replay',
      `GET /webhooks/replays/${RPL}`,
      `GET /webhooks/replays/${RPL}`,
      `GET /webhooks/replays/${RPL}`,
    ]);
    expect(api.sleeps).toEqual([1000, 1000]);
    expect(JSON.parse(api.stdout())).toMatchObject({ done: true, progress: { delivered: 1 } });
    expect(api.stderr()).toContain(`replay ${RPL}: matched 1, enqueued 1, skipped 0; waiting until done`);
  });

  it('gives up waiting after 10 minutes, printing the last progress, and exits 1', async () => {
    const api = fakeApi(() => Response.json(progress(false)));
    expect(await run(['replay', '--show', RPL, '--wait'], api.io)).toBe(1);
    expect(api.sleeps.reduce((sum, ms) => sum + ms, 0)).toBe(600_000);
    expect(JSON.parse(api.stdout())).toMatchObject({ done: false });
    expect(api.stderr()).toBe(
      `replay ${RPL} is not done after 10 minutes (its last progress is on stdout)\n`,
    );
  });

  it('shows a replay and an event', async () => {
    const api = fakeApi((request) =>
      Response.json(
        request.url.pathname.includes('replays') ? progress(true) : { event_id: EVT_A, deliveries: [] },
      ),
    );
    expect(await run(['replay', '--show', RPL], api.io)).toBe(0);
    expect(await run(['events', 'show', EVT_A], api.io)).toBe(0);
    expect(api.requests.map((request) => request.url.pathname)).toEqual([
      `/webhooks/replays/${RPL}`,
      `/webhooks/events/${EVT_A}`,
    ]);
  });

  it('lists one page of events with the filters, or every page with --all', async () => {
    const row = (id: string) => ({ event_id: id, type: 'payout.processed', ts: '2026-11-02T11:00:00.000Z' });
    const pages = (request: Recorded) =>
      Response.json(
        request.url.searchParams.get('cursor') === 'c1'
          ? { items: [row(EVT_B)] }
          : { items: [row(EVT_A)], cursor: 'c1' },
      );
    const api = fakeApi(pages);
    expect(await run(['events', '--status', 'delivered', '--limit', '1'], api.io)).toBe(0);
    expect(api.requests[0]?.url.search).toBe('?status=delivered&limit=1');
    expect(JSON.parse(api.stdout())).toEqual({ items: [row(EVT_A)], cursor: 'c1' });

    const all = fakeApi(pages);
    expect(await run(['events', '--endpoint', EP, '--all'], all.io)).toBe(0);
    expect(all.requests.map((request) => request.url.search)).toEqual([
      `?limit=200&endpoint_id=${EP}`,
      `?limit=200&endpoint_id=${EP}&cursor=c1`,
    ]);
    expect(JSON.parse(all.stdout())).toEqual({ items: [row(EVT_A), row(EVT_B)] });
  });

  it('prints the dead deliveries of the last 7 days, one per line or as JSON', async () => {
    const rows = [
      {
        event_id: EVT_A,
        type: 'payout.processed',
        ts: '2026-11-01T09:00:00.000Z',
        deliveries: [{ endpoint_id: EP, status: 'dead', attempts: 8 }],
      },
      {
        event_id: EVT_B,
        type: 'catalog.PriceListUpdated',
        ts: '2026-11-02T09:00:00.000Z',
        deliveries: [{ endpoint_id: EP, status: 'delivered', attempts: 1 }],
      },
    ];
    const api = fakeApi((request) =>
      Response.json(
        request.url.searchParams.has('cursor') ? { items: [rows[1]] } : { items: [rows[0]], cursor: 'n' },
      ),
    );
    expect(await run(['dlq'], api.io)).toBe(0);
    expect(Object.fromEntries(api.requests[0]?.url.searchParams ?? [])).toEqual({
      status: 'dead',
      from: '2026-10-26T12:00:00.000Z',
      to: '2026-11-02T12:00:00.000Z',
      limit: '200',
    });
    expect(api.requests).toHaveLength(2);
    expect(api.stdout()).toBe(`${EVT_A}\t${EP}\tpayout.processed\t2026-11-01T09:00:00.000Z\n`);
    expect(api.stderr()).toBe('1 dead delivery from 2026-10-26T12:00:00.000Z to 2026-11-02T12:00:00.000Z\n');

    const json = fakeApi(() => Response.json({ items: rows }));
    expect(await run(['dlq', '--json', '--to', '2026-11-02T00:00:00Z', '--endpoint', EP], json.io)).toBe(0);
    expect(json.requests[0]?.url.searchParams.get('from')).toBe('2026-10-26T00:00:00.000Z');
    expect(json.requests[0]?.url.searchParams.get('endpoint_id')).toBe(EP);
    expect(JSON.parse(json.stdout())).toEqual([
      {
        event_id: EVT_A,
        endpoint_id: EP,
        type: 'payout.processed',
        ts: '2026-11-01T09:00:00.000Z',
        attempts: 8,
      },
    ]);
  });

  it('prints nothing on stdout when nothing is dead, and refuses a --from after now (a usage error)', async () => {
    const api = fakeApi(() => Response.json({ items: [] }));
    expect(await run(['dlq'], api.io)).toBe(0);
    expect(api.stdout()).toBe('');
    expect(await run(['dlq', '--from', '2027-01-01'], api.io)).toBe(2);
    expect(api.stderr()).toContain('--from is after the end of the window');
    expect(api.requests).toHaveLength(1);
  });

  it('replays the dead deliveries of the window', async () => {
    const api = fakeApi(() =>
      Response.json({ replay_id: RPL, matched: 3, enqueued: 3, skipped: 0 }, { status: 202 }),
    );
    expect(await run(['dlq', 'replay', '--endpoint', EP], api.io)).toBe(0);
    expect(api.requests[0]?.body).toEqual({
      from: '2026-10-26T12:00:00.000Z',
      to: '2026-11-02T12:00:00.000Z',
      status: 'dead',
      endpoint_id: EP,
    });
    expect(JSON.parse(api.stdout())).toEqual({ replay_id: RPL, matched: 3, enqueued: 3, skipped: 0 });
  });

  it('creates an endpoint, printing the secret once with a note on stderr', async () => {
    const created = { endpoint_id: EP, url: 'https://p.example/h', topics: ['payout'], secret: SECRET };
    const api = fakeApi(() => Response.json(created, { status: 201 }));
    expect(
      await run(['endpoints', 'create', '--url', 'https://p.example/h', '--topics', 'payout'], api.io),
    ).toBe(0);
    expect(api.requests[0]).toMatchObject({
      method: 'POST',
      url: new URL('http://127.0.0.1:3000/webhooks/endpoints'),
      body: { url: 'https://p.example/h', topics: ['payout'] },
    });
    expect(JSON.parse(api.stdout())).toEqual(created);
    expect(api.stderr()).toContain('shown once');
  });

  it('lists, shows, updates, rotates and deletes endpoints', async () => {
    const api = fakeApi((request) =>
      request.method === 'DELETE'
        ? new Response(null, { status: 204 })
        : Response.json(
            request.url.pathname.endsWith('/rotate-secret')
              ? { endpoint_id: EP, secret: SECRET, previous_secret_expires_at: '2026-11-03T12:00:00.000Z' }
              : request.url.pathname === '/webhooks/endpoints'
                ? {
                    items: [{ endpoint_id: EP }],
                    ...(request.url.searchParams.has('cursor') ? {} : { cursor: 'n' }),
                  }
                : { endpoint_id: EP },
          ),
    );
    expect(await run(['endpoints', 'list'], api.io)).toBe(0);
    expect(await run(['endpoints', 'list', '--all'], api.io)).toBe(0);
    expect(await run(['endpoints', 'show', EP], api.io)).toBe(0);
    expect(await run(['endpoints', 'update', EP, '--disable'], api.io)).toBe(0);
    expect(await run(['endpoints', 'rotate-secret', EP], api.io)).toBe(0);
    expect(await run(['endpoints', 'delete', EP], api.io)).toBe(0);
    expect(
      api.requests.map((request) => `${request.method} ${request.url.pathname}${request.url.search}`),
    ).toEqual([
      'GET /webhooks/endpoints',
      'GET /webhooks/endpoints?limit=200',
      'GET /webhooks/endpoints?limit=200&cursor=n',
      `GET /webhooks/endpoints/${EP}`,
      `PATCH /webhooks/endpoints/${EP}`,
      `POST /webhooks/endpoints/${EP}/rotate-secret`,
      `DELETE /webhooks/endpoints/${EP}`,
    ]);
    expect(api.requests[4]?.body).toEqual({ status: 'disabled' });
    expect(api.stdout()).toContain('"items": [\n    {\n      "endpoint_id"');
    expect(api.stdout()).toContain(`{\n  "endpoint_id": "${EP}",\n  "deleted": true\n}\n`);
    expect(api.stderr()).toContain('Deliveries carry both signatures until 2026-11-03T12:00:00.000Z');
  });

  it('prints a refusal with its problems and trace id on stderr and exits 1', async () => {
    const api = fakeApi(() =>
      Response.json(
        {
          error: 'not_found',
          error_description: 'some events are unknown or their bodies expired',
          trace_id: 'trc_9',
          missing_event_ids: [EVT_A],
        },
        { status: 404 },
      ),
    );
    expect(await run(['replay', '--event-ids', EVT_A], api.io)).toBe(1);
    expect(api.stdout()).toBe('');
    expect(api.stderr()).toBe(
      [
        'error 404 not_found: some events are unknown or their bodies expired',
        `missing_event_ids: ["${EVT_A}"]`,
        'trace id: trc_9',
        '',
      ].join('\n'),
    );
  });

  it('exits 2 with the usage for a usage error, and 0 with the usage for help', async () => {
    const api = fakeApi(() => Response.json({}));
    expect(await run(['replay', '--event-ids', EVT_A, '--from', '2026-11-01'], api.io)).toBe(2);
    expect(api.stderr()).toContain('give either --event-ids or --from/--to, not both\nusage: npm run ops');
    expect(await run(['help'], api.io)).toBe(0);
    expect(api.stdout()).toContain('endpoints rotate-secret ep_…');
    expect(api.requests).toHaveLength(0);
  });

  it('fails clearly without a token, against a deployed API without --sigv4, and on an odd answer', async () => {
    const noToken = fakeApi(() => Response.json({}));
    const io = { ...noToken.io, env: {} };
    expect(await run(['events'], io)).toBe(1);
    expect(noToken.stderr()).toContain('no ADMIN_TOKEN and no readable /work/.local/data/credentials.json');
    const deployed = fakeApi(() => Response.json({}));
    const deployedEnv = { API_URL: 'https://abc.execute-api.eu-west-1.amazonaws.com/prod' };
    expect(await run(['dlq'], { ...deployed.io, env: deployedEnv })).toBe(1);
    expect(deployed.stderr()).toContain('Give --sigv4');
    const odd = fakeApi(() => Response.json({ nothing: true }));
    expect(await run(['events', '--all'], odd.io)).toBe(1);
    expect(odd.stderr()).toBe('unexpected answer: /webhooks/events has no items\n');
  });

  it('signs with SigV4 when asked', async () => {
    const api = fakeApi(() => Response.json({ items: [] }), {
      API_URL: 'https://abc.execute-api.eu-west-1.amazonaws.com/prod',
    });
    const options = {
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
      now: () => new Date('2026-11-02T10:20:30.000Z'),
    };
    expect(await run(['endpoints', 'list', '--sigv4'], api.io, options)).toBe(0);
    expect(api.requests[0]?.url.href).toBe(
      'https://abc.execute-api.eu-west-1.amazonaws.com/prod/webhooks/endpoints',
    );
  });
});

describe('dead deliveries of a listing', () => {
  it('keeps only dead deliveries and tolerates odd rows', () => {
    expect(
      deadDeliveries([
        null,
        { event_id: EVT_A, type: 't.x', ts: 'ts', deliveries: [{ endpoint_id: EP, status: 'dead' }, 'x'] },
        { event_id: EVT_B, deliveries: 'none' },
      ]),
    ).toEqual([{ event_id: EVT_A, endpoint_id: EP, type: 't.x', ts: 'ts', attempts: 0 }]);
  });
});
