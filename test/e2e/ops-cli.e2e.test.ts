import { describe, expect, it } from 'vitest';
import {
  endpointsPageResponseSchema,
  endpointWithSecretResponseSchema,
  eventHistoryResponseSchema,
  replayProgressResponseSchema,
} from '../../functions/schemas/webhooks';
import { runScript, type ScriptRun } from '../support/run-script';
import { demoStackWithReceiver } from '../support/stack-with-receiver';

const API_KEY = 'key_e2e_ops_0123456789abcdef';
const ADMIN_TOKEN = 'adm_e2e_ops_0123456789abcdef';

const world = demoStackWithReceiver({ apiKey: API_KEY, adminToken: ADMIN_TOKEN });

/** `npm run ops -- <args>` as a user runs it: a child process from the repository root, the stack's URL and token. */
const ops = (...args: string[]): Promise<ScriptRun> =>
  runScript('bin/ops.ts', args, { API_URL: world.stack.url, ADMIN_TOKEN, API_AUTH: '' });

/** The CLI succeeded: exit 0 (its stderr in the failure message otherwise). */
const succeeded = (result: ScriptRun): ScriptRun => {
  if (result.code !== 0) throw new Error(`ops exited ${result.code}:\n${result.stderr}`);
  return result;
};

const admin = async (method: string, route: string, body?: unknown) => {
  const response = await fetch(`${world.stack.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
};

const eventually = async <T>(probe: () => Promise<T | undefined>, what: string, timeoutMs = 15_000) => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
};

describe('npm run ops against the local stack', () => {
  it('creates an endpoint, shows a delivery, replays it, finds no dead letter, rotates and deletes', async () => {
    // endpoints create: the secret, once.
    const created = succeeded(
      await ops(
        'endpoints',
        'create',
        '--url',
        world.receiver.baseUrl,
        '--topics',
        'payout',
        '--description',
        'e2e',
      ),
    );
    const endpoint = endpointWithSecretResponseSchema.parse(JSON.parse(created.stdout));
    expect(endpoint).toMatchObject({ url: world.receiver.baseUrl, topics: ['payout'], status: 'enabled' });
    expect(endpoint.secret).toMatch(/^whsec_/);
    expect(created.stderr).toContain('shown once');

    // An event of another producer, over the HTTP API; delivered to the receiver.
    const published = await admin('POST', '/webhooks/events', {
      type: 'payout.processed',
      data: { payout_id: 'po_1', status: 'paid', amount_minor: 100, currency: 'EUR' },
    });
    expect(published.status).toBe(202);
    const eventId = String(published.body.event_id);
    await eventually(async () => {
      const history = eventHistoryResponseSchema.parse(
        (await admin('GET', `/webhooks/events/${eventId}`)).body,
      );
      return history.deliveries[0]?.status === 'delivered' ? history : undefined;
    }, 'the first delivery');
    expect(world.receiver.requests.map((request) => request.envelope.attempt)).toEqual([1]);

    // events show: the delivery and its attempt.
    const shown = eventHistoryResponseSchema.parse(
      JSON.parse(succeeded(await ops('events', 'show', eventId)).stdout),
    );
    expect(shown.event_id).toBe(eventId);
    expect(shown.deliveries).toEqual([
      expect.objectContaining({
        endpoint_id: endpoint.endpoint_id,
        status: 'delivered',
        attempts: [expect.objectContaining({ attempt: 1, http_status: 200, outcome: 'delivered' })],
      }),
    ]);

    // endpoints list: the endpoint, without its secret.
    const listed = endpointsPageResponseSchema.parse(
      JSON.parse(succeeded(await ops('endpoints', 'list')).stdout),
    );
    const row = listed.items.find((item) => item.endpoint_id === endpoint.endpoint_id);
    expect(row).toBeDefined();
    expect(row).not.toHaveProperty('secret');

    // replay --wait: delivered again, same event, attempt 2.
    const replayed = succeeded(await ops('replay', '--event-ids', eventId, '--wait'));
    const progress = replayProgressResponseSchema.parse(JSON.parse(replayed.stdout));
    expect(progress).toMatchObject({ matched: 1, enqueued: 1, skipped: 0, done: true });
    expect(progress.progress.delivered).toBe(1);
    expect(progress.deliveries).toEqual([
      { event_id: eventId, endpoint_id: endpoint.endpoint_id, status: 'delivered' },
    ]);
    expect(replayed.stderr).toContain(`replay ${progress.replay_id}: matched 1, enqueued 1, skipped 0`);
    expect(
      world.receiver.requests.map((request) => [request.envelope.event_id, request.envelope.attempt]),
    ).toEqual([
      [eventId, 1],
      [eventId, 2],
    ]);

    // dlq: nothing dead.
    const dlq = succeeded(await ops('dlq'));
    expect(dlq.stdout).toBe('');
    expect(dlq.stderr).toContain('0 dead deliveries from');

    // endpoints rotate-secret: a new secret, the old one still sent for a while.
    const rotated = endpointWithSecretResponseSchema.parse(
      JSON.parse(succeeded(await ops('endpoints', 'rotate-secret', endpoint.endpoint_id)).stdout),
    );
    expect(rotated.secret).not.toBe(endpoint.secret);
    expect(rotated.previous_secret_expires_at).toBeDefined();

    // endpoints delete: gone; showing it now is a 404 on stderr and exit 1.
    const deleted = succeeded(await ops('endpoints', 'delete', endpoint.endpoint_id));
    expect(JSON.parse(deleted.stdout)).toEqual({ endpoint_id: endpoint.endpoint_id, deleted: true });
    const missing = await ops('endpoints', 'show', endpoint.endpoint_id);
    expect(missing.code).toBe(1);
    expect(missing.stdout).toBe('');
    expect(missing.stderr).toMatch(/^error 404 not_found: .*\ntrace id: \S+\n$/);
  }, 60_000);

  it('refuses a bad command line with the usage and exit 2, sending nothing', async () => {
    const result = await ops('replay', '--event-ids', 'evt_x', '--from', '2026-11-01T00:00:00Z');
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('give either --event-ids or --from/--to, not both');
    expect(result.stderr).toContain('usage: npm run ops');
    expect(result.stdout).toBe('');
  });
});
