/**
 * The bundle host of `LOCAL_BUNDLES=1` (functions/adapters/local/bundle-host.ts) with small bundles written here:
 * an instance is a process of its own with only the environment given, serving invocations over IPC; a handler's
 * failure keeps its name and message; an instance the pool discards is killed, its call fails and the next
 * instance starts afresh; a bundle that cannot load fails with its import error; stop leaves no process.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Context } from 'aws-lambda';
import { afterAll, describe, expect, it } from 'vitest';
import {
  BundleHost,
  BundleInitError,
  BundleInvocationError,
} from '../../functions/adapters/local/bundle-host';
import { lambdaContext } from '../unit/support/lambda';

const dir = mkdtempSync(join(tmpdir(), 'pricing-bundle-host-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const bundle = (name: string, source: string): string => {
  const file = join(dir, `${name}.mjs`);
  writeFileSync(file, source);
  return file;
};

const ECHO = bundle(
  'echo',
  `export const handler = async (event, context) => {
    if (event.fail) { const error = new Error('refused: ' + event.fail); error.name = 'Refused'; throw error; }
    if (event.hang) await new Promise(() => undefined);
    return { pid: process.pid, secret: process.env.ONLY_THIS ?? null, home: process.env.HOME ?? null, event, remaining: context.getRemainingTimeInMillis() > 0 };
  };`,
);

const context = (): Context => lambdaContext();

describe('the bundle host', () => {
  it('serves invocations from one process per instance, with only the environment given', async () => {
    const host = new BundleHost<Record<string, unknown>, Record<string, unknown>>({
      functionId: 'echo',
      file: ECHO,
      env: { ONLY_THIS: 'yes' },
    });
    try {
      const one = host.createInstance();
      const first = await one({ n: 1 }, context());
      const second = await one({ n: 2 }, context());
      expect(first).toMatchObject({ secret: 'yes', home: null, event: { n: 1 }, remaining: true });
      expect(second.pid).toBe(first.pid);
      expect(first.pid).not.toBe(process.pid);
      const other = await host.createInstance()({ n: 3 }, context());
      expect(other.pid).not.toBe(first.pid);
      await expect(one({ fail: 'no' }, context())).rejects.toMatchObject({
        name: 'Refused',
        message: 'refused: no',
      });
      await expect(one({ fail: 'no' }, context())).rejects.toBeInstanceOf(BundleInvocationError);
    } finally {
      await host.stop();
    }
  });

  it('kills an instance the pool discards: its call fails, the next instance starts afresh', async () => {
    const host = new BundleHost<Record<string, unknown>, Record<string, unknown>>({
      functionId: 'echo',
      file: ECHO,
      env: {},
    });
    try {
      const hung = host.createInstance();
      const { pid } = await hung({ n: 1 }, context());
      const call = hung({ hang: true }, context());
      host.dispose(hung);
      await expect(call).rejects.toThrow(/the echo instance exited \(SIGKILL\)/);
      expect(() => process.kill(pid as number, 0)).toThrow();
      const fresh = await host.createInstance()({ n: 2 }, context());
      expect(fresh.pid).not.toBe(pid);
    } finally {
      await host.stop();
    }
  });

  it('fails a bundle that cannot load with its import error', async () => {
    const broken = bundle(
      'broken',
      "import 'a-package-that-is-not-there';\nexport const handler = async () => 1;\n",
    );
    const host = new BundleHost({ functionId: 'broken', file: broken, env: {} });
    try {
      const error = await host
        .createInstance()({}, context())
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(BundleInitError);
      expect((error as Error).message).toMatch(
        /the broken bundle failed to initialize: .*a-package-that-is-not-there/,
      );
    } finally {
      await host.stop();
    }
  });
});
