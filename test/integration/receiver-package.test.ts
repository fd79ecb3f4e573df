/**
 * The receiver kit as partners install it (issue "webhook interoperability", item 5): `npm pack` of the
 * `@pricing-service/webhook-receiver` workspace, installed from the tarball into an empty scratch project outside
 * the repository (offline: it has no dependencies of its own), then used there — by Node's ESM and CommonJS
 * loaders — to verify every published signature vector (HMAC native, Standard Webhooks, Ed25519 in both schemes)
 * and one real delivery of the local stack; a tampered copy of each is refused.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../functions/composition/local/stack';
import { endpointWithSecretResponseSchema } from '../../functions/schemas/webhooks';
import { eventually } from '../support/engines';
import { startReceiver, type TestReceiver } from '../support/webhook-receiver';

const ROOT = resolve(import.meta.dirname, '..', '..');
const ADMIN = 'adm_package_0123456789abcdef';
const scratch = mkdtempSync(join(tmpdir(), 'receiver-package-'));
let packed: { filename: string; size: number; unpackedSize: number; entryCount: number };
let stack: LocalStack;
let receiver: TestReceiver;

const npm = (args: string[], cwd: string) =>
  execFileSync('npm', args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, npm_config_update_notifier: 'false' },
  });

beforeAll(async () => {
  const out = npm(
    ['pack', '--workspace', 'packages/webhook-receiver', '--pack-destination', scratch, '--json', '--silent'],
    ROOT,
  );
  const [first] = JSON.parse(out.slice(out.indexOf('['))) as (typeof packed)[];
  if (!first) throw new Error(`npm pack printed no package: ${out}`);
  packed = first;
  const project = join(scratch, 'project');
  execFileSync('mkdir', ['-p', project]);
  writeFileSync(
    join(project, 'package.json'),
    JSON.stringify({ name: 'scratch', private: true, type: 'module' }),
  );
  npm(
    ['install', join(scratch, packed.filename), '--offline', '--ignore-scripts', '--no-audit', '--no-fund'],
    project,
  );
  copyFileSync(join(ROOT, 'docs', 'webhook-signature-vectors.json'), join(project, 'vectors.json'));
  [stack, receiver] = await Promise.all([
    startLocalStack({
      port: 0,
      apiKey: 'key_package_0123456789abcdef',
      adminToken: ADMIN,
      logLevel: 'SILENT',
      streamPollIntervalMs: 50,
    }),
    startReceiver(() => ({ kind: 'respond', status: 204 })),
  ]);
}, 120_000);

afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

/** What the scratch project runs: only the installed package and Node. */
const VERIFY = `
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { verifyWebhook, WebhookVerificationError } from '@pricing-service/webhook-receiver';
const cjs = createRequire(import.meta.url)('@pricing-service/webhook-receiver');
const vectors = JSON.parse(readFileSync('vectors.json', 'utf8'));
const delivery = JSON.parse(readFileSync('delivery.json', 'utf8'));
const EVENT = 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C';
const outcome = (input, verify = verifyWebhook) => {
  try { return verify(input).event_id; } catch (error) {
    if (error instanceof WebhookVerificationError || error?.name === 'WebhookVerificationError') return error.code;
    throw error;
  }
};
const results = [];
const check = (name, input) => {
  const tampered = { ...input, body: Buffer.concat([Buffer.from(input.body), Buffer.from(' ')]) };
  results.push({ name, esm: outcome(input), cjs: outcome(input, cjs.verifyWebhook), tampered: outcome(tampered) });
};
for (const v of vectors.vectors) {
  if (!v.body) continue;
  check('native ' + v.name, { body: v.body, method: v.method, path: v.path, secrets: v.secrets ?? [v.secret],
    headers: { 'X-Signature': v.expected_signature, 'X-Timestamp': v.timestamp, 'X-Event-Id': EVENT },
    now: new Date(v.timestamp) });
}
for (const v of vectors.standard_webhooks.vectors) {
  if (!v.body) continue;
  check('standard-webhooks ' + v.name, { body: v.body, method: 'POST', path: '/webhooks/v1/catalog',
    secrets: v.secrets ?? [v.secret], headers: { 'webhook-id': v.webhook_id, 'webhook-timestamp': v.webhook_timestamp,
    'webhook-signature': v.expected_signature }, now: new Date(Number(v.webhook_timestamp) * 1000) });
}
for (const v of vectors.ed25519.vectors) {
  if (!v.body) continue;
  const native = v.scheme === 'native';
  check('ed25519 ' + v.name, { body: v.body, method: 'POST',
    path: native ? v.signed_content.split('\\n')[2] : '/webhooks/v1/catalog', secrets: [],
    publicKeys: vectors.ed25519.jwks.keys, endpointId: v.endpoint_id, headers: { ...v.headers, 'X-Event-Id': EVENT },
    now: native ? new Date(v.headers['X-Timestamp']) : new Date(Number(v.headers['webhook-timestamp']) * 1000) });
}
check('real delivery', { ...delivery, body: Buffer.from(delivery.body, 'base64'), now: new Date(delivery.now) });
console.log(JSON.stringify(results));
`;

describe('the packed receiver kit', () => {
  it('is small, depends on nothing, and installs offline into an empty project', () => {
    expect(packed.filename).toMatch(/^pricing-service-webhook-receiver-\d+\.\d+\.\d+\.tgz$/);
    expect(packed.size).toBeLessThan(100_000);
    const installed = readdirSync(join(scratch, 'project', 'node_modules'), { recursive: true }).filter(
      (entry) => String(entry).endsWith('package.json'),
    );
    // Only the kit itself: no dependency was installed with it.
    expect(installed).toEqual([join('@pricing-service', 'webhook-receiver', 'package.json')]);
    console.info(
      `receiver kit: ${packed.filename}, ${packed.size} bytes packed, ${packed.unpackedSize} unpacked, ${packed.entryCount} files, 0 dependencies`,
    );
  });

  it('verifies every published vector and a real delivery there, by ESM and CommonJS, and refuses tampered copies', async () => {
    const created = await fetch(`${stack.url}/webhooks/endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: `${receiver.baseUrl}/pkg`, topics: ['pkg'] }),
    });
    const endpoint = endpointWithSecretResponseSchema.parse(await created.json());
    const published = await fetch(`${stack.url}/webhooks/events`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'pkg.changed', data: { seq: 1 } }),
    });
    const { event_id: eventId } = (await published.json()) as { event_id: string };
    const request = await eventually(async () =>
      receiver.requests.find((r) => r.envelope.event_id === eventId),
    );
    writeFileSync(
      join(scratch, 'project', 'delivery.json'),
      JSON.stringify({
        body: request.body.toString('base64'),
        method: 'POST',
        path: request.path,
        headers: request.headers,
        secrets: [endpoint.secret],
        now: new Date(request.receivedAt).toISOString(),
      }),
    );
    writeFileSync(join(scratch, 'project', 'verify.mjs'), VERIFY);
    const run = spawnSync(process.execPath, ['verify.mjs'], {
      cwd: join(scratch, 'project'),
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '' },
    });
    expect(run.status, run.stderr).toBe(0);
    const results = JSON.parse(run.stdout) as { name: string; esm: string; cjs: string; tampered: string }[];
    expect(results.filter((result) => result.name.startsWith('ed25519')).length).toBeGreaterThan(0);
    expect(results.filter((result) => result.name.startsWith('standard-webhooks')).length).toBeGreaterThan(0);
    for (const result of results) {
      const expected = result.name === 'real delivery' ? eventId : 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C';
      expect({ name: result.name, esm: result.esm, cjs: result.cjs, tampered: result.tampered }).toEqual({
        name: result.name,
        esm: expected,
        cjs: expected,
        tampered: 'signature_mismatch',
      });
    }
  });
});
