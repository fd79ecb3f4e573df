import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { CliIo } from '../../../bin/admin-client';
import { describeTotals, parseOptions, run, USAGE } from '../../../bin/receipts';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const ioWith = (env: Record<string, string> = {}) => {
  const output = { stdout: '', stderr: '' };
  const io: CliIo = {
    env,
    cwd: process.cwd(),
    fetch: async () => {
      throw new Error('no network in this test');
    },
    readFile: async () => {
      throw new Error('no files in this test');
    },
    writeFile: async () => undefined,
    stdout: (text) => {
      output.stdout += text;
    },
    stderr: (text) => {
      output.stderr += text;
    },
  };
  return { io, output };
};

describe('npm run receipts -- export: command line', () => {
  it('takes the range, the output directory and where the bucket and keys are', () => {
    expect(parseOptions(['export', '--from', '2026-11-01', '--to', '2026-11-30', '--out', 'x'])).toEqual({
      from: '2026-11-01',
      to: '2026-11-30',
      out: 'x',
    });
    expect(
      parseOptions([
        'export',
        '--from=2026-11-01',
        '--to=2026-11-01',
        '--out=x',
        '--bucket',
        'pricing-prod-receipts',
        '--region',
        'eu-west-1',
        '--jwks',
        'keys.json',
      ]),
    ).toEqual({
      from: '2026-11-01',
      to: '2026-11-01',
      out: 'x',
      bucket: 'pricing-prod-receipts',
      region: 'eu-west-1',
      jwks: 'keys.json',
    });
  });

  it.each([
    [['import'], /unknown command import/],
    [['export', '--from', '2026-11-01', '--to', '2026-11-02'], /needs --from, --to and --out/],
    [['export', '--from', '2026-11-31', '--to', '2026-12-01', '--out', 'x'], /--from must be a date/],
    [['export', '--from', '2026-11-02', '--to', '2026-11-01', '--out', 'x'], /is after --to/],
    [['export', '--from', '2025-01-01', '--to', '2026-12-31', '--out', 'x'], /more than 366 days/],
    [
      ['export', '--from', '2026-11-01', '--to', '2026-11-01', '--out', 'x', '--region', 'eu-west-1'],
      /--region goes with --bucket/,
    ],
    [
      ['export', '--from', '2026-11-01', '--to', '2026-11-01', '--out', 'x', '--since', 'y'],
      /unknown option --since/,
    ],
    [
      ['export', '--from', '2026-11-01', '--to', '2026-11-01', '--out', 'x', 'extra'],
      /unexpected arguments: extra/,
    ],
  ])('%j is refused', (argv, message) => {
    expect(() => parseOptions(argv)).toThrow(message);
  });

  it('prints the usage for help or no command at all', async () => {
    for (const argv of [[], ['help'], ['--help'], ['export', '-h']]) {
      const { io, output } = ioWith();
      expect(parseOptions(argv)).toEqual({ kind: 'help' });
      expect(await run(argv, io)).toBe(0);
      expect(output.stdout).toBe(`${USAGE}\n`);
    }
  });

  it('a wrong command line prints the problem and the usage and exits 2', async () => {
    const { io, output } = ioWith();
    expect(await run(['export'], io)).toBe(2);
    expect(output.stderr).toBe(`export needs --from, --to and --out\n${USAGE}\n`);
  });

  it('without --bucket and without a running local stack, says how to go on and exits 1', async () => {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'receipts-cli-'));
    dirs.push(dataDir);
    const { io, output } = ioWith({ DATA_DIR: dataDir });
    expect(await run(['export', '--from', '2026-11-01', '--to', '2026-11-01', '--out', dataDir], io)).toBe(1);
    expect(output.stderr).toBe(
      `cannot verify: no local stack is running (no readable ${path.join(dataDir, 'runtime.json')}): start it ` +
        'with npm start, or give --bucket <name> for a deployed bucket\n',
    );
  });

  it('prints one line of totals per currency', () => {
    expect(
      describeTotals({
        EUR: {
          receipts: 3,
          gross: '30.00',
          refunds_count: 1,
          refunds: '4.50',
          chargebacks_count: 1,
          chargebacks: '10.00',
          net: '15.50',
        },
      }),
    ).toBe('  EUR  gross 30.00 (3 receipts)  refunds 4.50 (1)  chargebacks 10.00 (1)  net 15.50\n');
    expect(
      describeTotals({
        JPY: {
          receipts: 1,
          gross: '500',
          refunds_count: 0,
          refunds: '0',
          chargebacks_count: 0,
          chargebacks: '0',
          net: '500',
        },
      }),
    ).toBe('  JPY  gross 500 (1 receipt)  refunds 0 (0)  chargebacks 0 (0)  net 500\n');
  });
});
