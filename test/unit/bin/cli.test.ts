/**
 * The command-line convention every tool in bin/ shares (bin/cli.ts): `parseArgs` strict and typed, global
 * options anywhere, commands by their words, `--help`, and the exit codes 0 (done), 1 (failed), 2 (usage).
 */
import { describe, expect, it } from 'vitest';
import * as asyncapi from '../../../bin/asyncapi';
import * as catalog from '../../../bin/catalog';
import {
  atMost,
  type CliIo,
  commaList,
  DescribedError,
  EXIT_FAILURE,
  EXIT_OK,
  EXIT_USAGE,
  HELP,
  isHelp,
  oneOf,
  parseCommandLine,
  parseLine,
  parseToolLine,
  runCli,
  UsageError,
} from '../../../bin/cli';
import * as openapi from '../../../bin/openapi';
import * as ops from '../../../bin/ops';
import * as receipts from '../../../bin/receipts';
import * as receiver from '../../../bin/receiver';
import * as securityMatrix from '../../../bin/security-matrix';
import * as smoke from '../../../bin/smoke';
import * as verifyJournal from '../../../bin/verify-journal';
import * as verifyReceipt from '../../../bin/verify-receipt';
import * as verifyRelease from '../../../bin/verify-release';
import * as webhookVectors from '../../../bin/webhook-vectors';
import { cliWorld } from '../../support/cli-world';
import { runScript } from '../../support/run-script';

type Run = (argv: readonly string[], io: CliIo) => Promise<number>;

const OPTIONS = {
  out: { type: 'string' },
  as: { type: 'string', value: 'an operator name' },
  tag: { type: 'string', multiple: true },
  force: { type: 'boolean' },
} as const;

describe('parseLine', () => {
  it('gives typed values and the positionals, --name value and --name=value alike', () => {
    expect(parseLine(['a.json', '--out', 'x', '--force', '--tag=1', '--tag', '2', 'b'], OPTIONS)).toEqual({
      values: { out: 'x', force: true, tag: ['1', '2'] },
      positionals: ['a.json', 'b'],
    });
    expect(parseLine(['--out=a=b', '-', '--', '--force'], OPTIONS)).toEqual({
      values: { out: 'a=b' },
      positionals: ['-', '--force'],
    });
    expect(parseLine(['--out=-x'], OPTIONS).values.out).toBe('-x');
  });

  it.each([
    [['--bogus'], undefined, 'unknown option --bogus'],
    [['--bogus=1'], 'export', 'unknown option --bogus for export'],
    [['-x'], 'export', 'unknown option -x for export'],
    [['--out'], undefined, '--out needs a value'],
    [['--out', '--force'], undefined, '--out needs a value'],
    [['--as', '-1'], undefined, '--as needs an operator name'],
    [['--force=yes'], undefined, '--force takes no value'],
    [['--out', 'a', '--out=b'], undefined, '--out is given twice'],
  ])('refuses %j (context %s) with a UsageError: %s', (args, context, message) => {
    let thrown: unknown;
    try {
      parseLine(args, OPTIONS, context);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UsageError);
    expect((thrown as Error).message).toBe(message);
  });

  it('checks the number of positionals, lists and choices', () => {
    expect(atMost(['a'], 1)).toEqual(['a']);
    expect(() => atMost(['a', 'b', 'c'], 1)).toThrow(new UsageError('unexpected arguments: b c'));
    expect(commaList(' a, b,,c ,')).toEqual(['a', 'b', 'c']);
    expect(oneOf('dead', ['dead', 'delivered'], '--status')).toBe('dead');
    expect(oneOf(undefined, ['dead'], '--status')).toBeUndefined();
    expect(() => oneOf('lost', ['dead', 'delivered'], '--status')).toThrow(
      new UsageError('--status must be one of dead, delivered, not lost'),
    );
  });
});

describe('parseCommandLine', () => {
  const GLOBAL = { sigv4: { type: 'boolean' }, as: { type: 'string', value: 'an operator name' } } as const;
  const COMMANDS = Object.fromEntries(
    ['events', 'events show', 'endpoints create', 'endpoints delete', 'import'].map((name) => [
      name,
      (args: readonly string[], command: string) => ({ command, args }),
    ]),
  );
  /** The command line as the command chosen, the arguments its parser got, the global options. */
  const parse = (argv: readonly string[]) => {
    const line = parseCommandLine(argv, GLOBAL, COMMANDS);
    return isHelp(line) ? line : { ...line.command, global: line.global };
  };

  it('picks the longest command its first words name, with the global options from anywhere', () => {
    expect(parse(['events', '--limit', '5'])).toEqual({
      command: 'events',
      args: ['--limit', '5'],
      global: {},
    });
    expect(parse(['--sigv4', 'events', 'show', 'evt_1', '--as', 'alice'])).toEqual({
      command: 'events show',
      args: ['evt_1'],
      global: { sigv4: true, as: 'alice' },
    });
    expect(parse(['endpoints', 'create', '--url', 'u', '--as=bob'])).toEqual({
      command: 'endpoints create',
      args: ['--url', 'u'],
      global: { as: 'bob' },
    });
    // After `--`, nothing is an option: the command's own parse gets it.
    expect(parse(['import', '--', '--sigv4'])).toEqual({
      command: 'import',
      args: ['--', '--sigv4'],
      global: {},
    });
  });

  it('asks for help with --help or -h anywhere, help, or nothing', () => {
    for (const argv of [[], ['help'], ['--help'], ['-h'], ['endpoints', 'create', '--help'], ['--sigv4']])
      expect(parse(argv)).toBe(HELP);
    expect(parseToolLine(['a.json', '-h'], OPTIONS)).toBe(HELP);
    // An option's value is not a request for help (without `=`, a value that starts with a dash is refused).
    expect(() => parseToolLine(['--out', '-h'], OPTIONS)).toThrow(new UsageError('--out needs a value'));
  });

  it.each([
    [['deploy'], 'unknown command deploy'],
    [['endpoints'], 'endpoints needs a command: create, delete'],
    [['endpoints', 'purge'], 'unknown command endpoints purge'],
    [['--limit', '5', 'events'], 'give a command before --limit'],
    [['events', '--as'], '--as needs an operator name'],
    [['events', '--as', '--sigv4'], '--as needs an operator name'],
    [['events', '--as', 'a', '--as', 'b'], '--as is given twice'],
    [['events', '--sigv4=yes'], '--sigv4 takes no value'],
  ])('refuses %j: %s', (argv, message) => {
    expect(() => parse(argv)).toThrow(new UsageError(message));
  });
});

describe('runCli: one exit-code convention', () => {
  const tool = (execute: (parsed: { readonly file: string }) => Promise<number | undefined>) => ({
    usage: 'usage: tool <file>',
    failurePrefix: 'cannot do it: ',
    parse: (argv: readonly string[]) => {
      const line = parseToolLine(argv, {});
      if (isHelp(line)) return line;
      const [file] = atMost(line.positionals, 1);
      if (file === undefined) throw new UsageError('give a file');
      return { file };
    },
    execute,
  });
  class Refusal extends DescribedError {
    override describe(): string {
      return 'error 403 forbidden\ntrace id: t\n';
    }
  }

  /** The exit code and the output of the tool on `argv` when `execute` does `outcome`. */
  const outcomeOf = async (argv: readonly string[], outcome: () => Promise<number | undefined>) => {
    const world = cliWorld({});
    let ran = false;
    const code = await runCli(
      tool(() => {
        ran = true;
        return outcome();
      }),
      argv,
      world.io,
    );
    return { code, stdout: world.out.join(''), stderr: world.err.join(''), ran };
  };

  type Case = readonly [
    string,
    readonly string[],
    () => Promise<number | undefined>,
    number,
    string,
    string,
    boolean,
  ];
  it.each<Case>([
    ['help: the usage on stdout', ['--help'], async () => 1, EXIT_OK, 'usage: tool <file>\n', '', false],
    ['done (nothing returned)', ['a'], async () => undefined, EXIT_OK, '', '', true],
    ['what execute returns', ['a'], async () => EXIT_FAILURE, EXIT_FAILURE, '', '', true],
    [
      'a wrong command line: the message and the usage on stderr, nothing run',
      ['a', '--bogus'],
      async () => 0,
      EXIT_USAGE,
      '',
      'unknown option --bogus\nusage: tool <file>\n',
      false,
    ],
    [
      'a failure: on stderr after the prefix',
      ['a'],
      () => Promise.reject(new Error('fetch failed')),
      EXIT_FAILURE,
      '',
      'cannot do it: fetch failed\n',
      true,
    ],
    [
      'a described failure: in full',
      ['a'],
      () => Promise.reject(new Refusal('forbidden')),
      EXIT_FAILURE,
      '',
      'cannot do it: error 403 forbidden\ntrace id: t\n',
      true,
    ],
    [
      'a usage error found while running: with the usage',
      ['a'],
      () => Promise.reject(new UsageError('--from is after now')),
      EXIT_USAGE,
      '',
      '--from is after now\nusage: tool <file>\n',
      true,
    ],
  ])('%s (exit %i)', async (_, argv, outcome, code, stdout, stderr, ran) => {
    expect(await outcomeOf(argv, outcome)).toEqual({ code, stdout, stderr, ran });
  });
});

// ---------------------------------------------------------------------------------------------------------
// Every tool: the same usage error (an unknown option) exits 2 with the message and the usage, running nothing

/** Each tool's `run`, with a command line that is right but for `--no-such-option`. */
const TOOLS: readonly (readonly [string, Run, readonly string[], string])[] = [
  ['catalog', catalog.run, ['export'], ' for export'],
  ['ops', ops.run, ['events'], ' for events'],
  [
    'receipts',
    receipts.run,
    ['export', '--from', '2026-11-01', '--to', '2026-11-01', '--out', 'x'],
    ' for export',
  ],
  ['smoke', smoke.run, ['--url', 'http://127.0.0.1:9'], ''],
  ['verify-receipt', verifyReceipt.run, ['receipt.json'], ''],
  ['verify-release', verifyRelease.run, ['release.json'], ''],
  ['verify-journal', verifyJournal.run, ['export.json'], ''],
  ['webhook-vectors', webhookVectors.run, ['--check'], ''],
  ['openapi', openapi.run, ['--check'], ''],
  ['asyncapi', asyncapi.run, ['--check'], ''],
  ['security-matrix', securityMatrix.run, ['--check'], ''],
];

describe('every tool in bin/', () => {
  it.each(TOOLS)(
    '%s: exits 2 for an unknown option, the message and the usage on stderr',
    async (_, run, args, context) => {
      const world = cliWorld({}, {}, { API_URL: 'http://127.0.0.1:9', ADMIN_TOKEN: 'adm_test' });
      expect(await run([...args, '--no-such-option'], world.io)).toBe(EXIT_USAGE);
      expect(world.err.join('')).toMatch(new RegExp(`^unknown option --no-such-option${context}\\nusage:`));
      expect(world.out).toEqual([]);
      expect(world.requests).toEqual([]);
      expect(world.written.size).toBe(0);
    },
  );

  it.each(TOOLS)('%s: prints its usage on stdout for --help and exits 0', async (_, run, args) => {
    const world = cliWorld({});
    expect(await run([...args, '--help'], world.io)).toBe(EXIT_OK);
    expect(world.out.join('')).toMatch(/^usage:/);
    expect(world.err).toEqual([]);
    expect(world.requests).toEqual([]);
  });

  it('receiver (a server, as a process): exits 2 for an unknown option before starting anything', async () => {
    // Without secrets it could not start (exit 1): only the command line can make it exit 2.
    const result = await runScript('bin/receiver.ts', ['--no-such-option'], { WEBHOOK_SECRETS: '' });
    expect(result).toEqual({
      code: EXIT_USAGE,
      stdout: '',
      stderr: `unknown option --no-such-option\n${receiver.USAGE}\n`,
    });
    expect(receiver.parseArgs(['-h'])).toBe(HELP);
    expect(() => receiver.parseArgs(['extra'])).toThrow(new UsageError('unexpected arguments: extra'));
  });
});
