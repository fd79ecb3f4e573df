/**
 * `npm run smoke` (bin/smoke.ts) as a user runs it after a deploy, here against the local stack: a child process
 * from the repository root, with a loopback receiver for the test event. Every check passes (exit 0); a wrong
 * caller key, a receiver that fails and a wrong URL fail their rows (exit 1); a wrong command line exits 2.
 */
import { describe, expect, it } from 'vitest';
import { freePort } from '../../functions/adapters/local/local-aws';
import { runScript, type ScriptRun } from '../support/run-script';
import { demoStackWithReceiver } from '../support/stack-with-receiver';
import type { ReceivedRequest } from '../support/webhook-receiver';

const API_KEY = 'key_e2e_smoke_0123456789abcdef';
const ADMIN_TOKEN = 'adm_e2e_smoke_0123456789abcdef';

const world = demoStackWithReceiver({ apiKey: API_KEY, adminToken: ADMIN_TOKEN });

interface SmokeRun extends ScriptRun {
  /** The table's rows: check → [result, detail]. */
  readonly rows: ReadonlyMap<string, readonly [string, string]>;
}

const CHECKS = [
  'health',
  'keys',
  'price',
  'quote',
  'commit',
  'receipt',
  'webhook endpoint',
  'webhook event',
  'webhook delivery',
  'webhook cleanup',
];

/** The table's rows (`check  result  ms  detail`), by check. */
const rowsOf = (stdout: string): Map<string, readonly [string, string]> => {
  const rows = new Map<string, readonly [string, string]>();
  for (const line of stdout.split('\n')) {
    const match = /^(\S+(?: \S+)?)\s+(pass|fail|skip)\s+\d+\s+(.*)$/.exec(line);
    if (match) rows.set(match[1] as string, [match[2] as string, match[3] as string]);
  }
  return rows;
};

/** `npm run smoke -- <args>`; no caller key, token or data directory from this machine's environment. */
const smoke = async (...args: string[]): Promise<SmokeRun> => {
  const result = await runScript('bin/smoke.ts', args, {
    API_KEY: '',
    ADMIN_TOKEN: '',
    API_AUTH: '',
    DATA_DIR: '/nonexistent-smoke-data',
  });
  return { ...result, rows: rowsOf(result.stdout) };
};

const smokeEvents = (): ReceivedRequest[] =>
  world.receiver.requests.filter((request) => request.envelope.type === 'smoke.test');

const endpointsLeft = async (): Promise<unknown[]> => {
  const response = await fetch(`${world.stack.url}/webhooks/endpoints`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  return ((await response.json()) as { items: unknown[] }).items;
};

describe('npm run smoke against the local stack', () => {
  it('passes every check, the test event delivered to the loopback receiver, and exits 0', async () => {
    world.receiver.react = () => ({ kind: 'respond', status: 204 });
    const result = await smoke(
      '--url',
      world.stack.url,
      '--api-key',
      API_KEY,
      '--token',
      ADMIN_TOKEN,
      '--receiver',
      world.receiver.baseUrl,
    );
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout.startsWith(`smoke test of ${world.stack.url}\ncheck `)).toBe(true);
    expect([...result.rows.keys()]).toEqual(CHECKS);
    expect([...result.rows.values()].map(([outcome]) => outcome)).toEqual(CHECKS.map(() => 'pass'));
    expect(result.rows.get('receipt')?.[1]).toMatch(/^receipt rcpt_\S+: hash and signature valid \(key /);
    expect(result.stdout).toContain('10 passed, 0 failed, 0 skipped\n');
    expect(result.stderr).toBe('');

    const [event, ...more] = smokeEvents();
    expect(more).toEqual([]);
    expect(event?.path).toBe('/webhooks/v1/smoke');
    expect(event?.envelope).toMatchObject({ type: 'smoke.test', producer: 'smoke', attempt: 1 });
    expect(result.rows.get('webhook delivery')?.[1]).toContain(`${event?.envelope.event_id} delivered`);
    // The temporary endpoint is gone.
    expect(await endpointsLeft()).toEqual([]);
  }, 60_000);

  it('fails the rows of a wrong caller key and of a receiver that answers 500, and exits 1', async () => {
    world.receiver.react = () => ({ kind: 'respond', status: 500 });
    const before = smokeEvents().length;
    const result = await smoke(
      `--url=${world.stack.url}/`,
      '--api-key',
      'key_not_issued_0123456789abcdef',
      '--token',
      ADMIN_TOKEN,
      '--receiver',
      world.receiver.baseUrl,
      '--wait',
      '10',
    );
    expect(result.code, result.stdout + result.stderr).toBe(1);
    const outcome = (check: string) => result.rows.get(check)?.[0];
    expect(CHECKS.map((check) => [check, outcome(check)])).toEqual([
      ['health', 'pass'],
      ['keys', 'pass'],
      ['price', 'fail'],
      ['quote', 'fail'],
      ['commit', 'skip'],
      ['receipt', 'skip'],
      ['webhook endpoint', 'pass'],
      ['webhook event', 'pass'],
      ['webhook delivery', 'fail'],
      ['webhook cleanup', 'pass'],
    ]);
    expect(result.rows.get('price')?.[1]).toMatch(/^price: error 401 /);
    expect(result.rows.get('commit')?.[1]).toBe('needs the quote');
    expect(result.rows.get('webhook delivery')?.[1]).toMatch(/: retrying \(attempt 1: HTTP 500/);
    expect(result.stdout).toContain('5 passed, 3 failed, 2 skipped\n');
    expect(smokeEvents().length).toBe(before + 1);
    expect(await endpointsLeft()).toEqual([]);
  }, 60_000);

  it('fails every row that needs the API at a wrong URL, skips the webhook without a receiver, exits 1', async () => {
    const closed = `http://127.0.0.1:${await freePort()}`;
    const result = await smoke('--url', closed, '--api-key', API_KEY);
    expect(result.code).toBe(1);
    expect([...result.rows].map(([check, [outcome]]) => [check, outcome])).toEqual([
      ['health', 'fail'],
      ['keys', 'fail'],
      ['price', 'fail'],
      ['quote', 'fail'],
      ['commit', 'skip'],
      ['receipt', 'skip'],
      ['webhook', 'skip'],
    ]);
    expect(result.rows.get('health')?.[1]).toContain(`GET /health: cannot reach ${closed}`);
    expect(result.rows.get('webhook')?.[1]).toBe('no --receiver given: no test event sent');
  }, 60_000);

  it('exits 2 with the usage for a wrong command line, checking nothing', async () => {
    const result = await smoke('--url', world.stack.url, '--api-key', API_KEY, '--token', 't', '--sigv4');
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toMatch(
      /^give --token \(the local stack\) or --sigv4 \(a deployed API\), not both\nusage: npm run smoke/,
    );
  });
});

describe('the journal export by page, against the local stack', () => {
  it('serves pages pinned to the first page’s head, and npm run verify-journal follows them to a verified journal', async () => {
    const get = async (query: string) => {
      const response = await fetch(`${world.stack.url}/audit/journal/export${query}`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      });
      expect(response.status).toBe(200);
      return (await response.json()) as {
        tree_size: number;
        entries: unknown[];
        heads: unknown[];
        next_cursor?: string;
      };
    };
    // Page by page, one entry each.
    const first = await get('?limit=1');
    expect(first.tree_size).toBeGreaterThan(0);
    const entries = [...first.entries];
    let cursor = first.next_cursor;
    while (cursor) {
      const page = await get(`?limit=1&cursor=${encodeURIComponent(cursor)}`);
      expect(page.entries.length).toBeLessThanOrEqual(1);
      expect(page.tree_size).toBe(first.tree_size);
      entries.push(...page.entries);
      cursor = page.next_cursor;
    }
    expect(entries).toHaveLength(first.tree_size);
    const refused = await fetch(`${world.stack.url}/audit/journal/export?cursor=not-a-cursor`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(refused.status).toBe(400);

    const result = await runScript('bin/verify-journal.ts', ['--from-api', world.stack.url], {
      ADMIN_TOKEN,
      API_AUTH: '',
      DATA_DIR: '/nonexistent-journal-data',
    });
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toMatch(/OK/);
  }, 60_000);
});
