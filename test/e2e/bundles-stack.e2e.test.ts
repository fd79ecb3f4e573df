/**
 * The local stack on the deployed bundles (`LOCAL_BUNDLES=1 npm start`): the app synthesized with bundling as
 * `npm run deploy` builds it, every function run from its bundle in processes of its own with only its template's
 * environment, KMS, Scheduler and API Gateway through the AWS twin. `npm run smoke` passes every check against
 * it, as it does against the in-process stack; `GET /admin/slo` reads the figures CloudWatch's twin extracted from
 * the bundles' EMF lines; an unknown caller key is refused by the authorizer's bundle; at stop no function process
 * is left.
 */
import { execFileSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../functions/composition/local/stack';
import { bundleFiles, type SynthesizedBundles, synthesizeFunctionBundles } from '../../lib/function-bundles';
import { startDemoStack } from '../support/demo-stack';
import { runScript } from '../support/run-script';
import { startReceiver, type TestReceiver } from '../support/webhook-receiver';

const API_KEY = 'key_e2e_bundles_0123456789abcdef';
const ADMIN_TOKEN = 'adm_e2e_bundles_0123456789abcdef';

let synthesized: SynthesizedBundles;
let stack: LocalStack | undefined;
let receiver: TestReceiver;

/** Processes running a function bundle (the bundle host's `host.mjs` in a `pricing-<function>-bundle-` directory). */
const bundleProcesses = (): string[] => {
  const lines = execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' }).split('\n');
  return lines.filter((line) => /pricing-[a-z]+-bundle-[^/]+\/host\.mjs/.test(line));
};

beforeAll(async () => {
  synthesized = synthesizeFunctionBundles({ cache: true });
  [stack, receiver] = await Promise.all([
    startDemoStack({ apiKey: API_KEY, adminToken: ADMIN_TOKEN, bundles: bundleFiles(synthesized) }),
    startReceiver(),
  ]);
}, 180_000);

afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
  synthesized?.cleanup();
});

describe('the local stack on the deployed bundles', () => {
  it('passes every check of npm run smoke, the receipt signed through the KMS twin', async () => {
    const url = stack?.url ?? '';
    receiver.react = () => ({ kind: 'respond', status: 204 });
    const result = await runScript(
      'bin/smoke.ts',
      ['--url', url, '--api-key', API_KEY, '--token', ADMIN_TOKEN, '--receiver', receiver.baseUrl],
      { API_KEY: '', ADMIN_TOKEN: '', API_AUTH: '', DATA_DIR: '/nonexistent-smoke-data' },
    );
    expect(result.code, result.stdout + result.stderr).toBe(0);
    expect(result.stdout).toContain('10 passed, 0 failed, 0 skipped\n');
    expect(result.stdout).toMatch(
      /receipt\s+pass\s+\d+\s+receipt rcpt_\S+: hash and signature valid \(key arn:aws:kms:/,
    );
    const smokeEvents = receiver.requests.filter((request) => request.envelope.type === 'smoke.test');
    expect(smokeEvents).toHaveLength(1);
    // Every function that served the smoke ran as a process of its own.
    expect(bundleProcesses().length).toBeGreaterThanOrEqual(5);
  }, 120_000);

  it('reports the objectives from the bundles’ EMF metrics through the CloudWatch twin (GET /admin/slo)', async () => {
    const response = await fetch(`${stack?.url}/admin/slo`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(response.status).toBe(200);
    const body = (await response.json()) as {
      source: string;
      objectives: Record<string, { samples: number; status: string }>;
    };
    expect(body.source).toBe('cloudwatch');
    // The window ends at the last whole minute (CloudWatch's periods), so the smoke's samples of this minute are
    // not in it yet (their extraction and statistics: test/integration/aws-twin.test.ts); the live ones are read.
    expect(body.objectives.delivery_dlq_depth).toMatchObject({ samples: 1, status: 'met' });
    expect(Object.keys(body.objectives).length).toBeGreaterThanOrEqual(10);
  });

  it('refuses an unknown caller key through the authorizer bundle, 401 in the error shape', async () => {
    const response = await fetch(
      `${stack?.url}/catalog/prices?sku=GAME-STARFALL-PS5&currency=EUR&region=DE`,
      {
        headers: { 'x-api-key': 'key_not_issued_0123456789abcdef' },
      },
    );
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ error: 'unauthorized' });
  });

  it('leaves no function process behind at stop', async () => {
    await stack?.stop();
    stack = undefined;
    expect(bundleProcesses()).toEqual([]);
  }, 60_000);
});
