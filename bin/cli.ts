/**
 * The one command-line convention of the tools in bin/ (`npm run catalog`, `ops`, `receipts`, `smoke`,
 * `verify-receipt`, `verify-release`, `verify-journal`, `receiver`, `webhook-vectors`, `openapi`,
 * `security-matrix`): arguments parsed by `node:util` `parseArgs` (strict, typed options), `--help`, and one
 * set of exit codes:
 *
 *   0  success (`--help` too: the usage on stdout)
 *   1  the operation or the check failed: the API refused or could not be reached, a credential is missing, a
 *      document does not verify, a smoke check failed, a generated file is stale
 *   2  usage error: an unknown command or option, a missing or malformed argument — the message, then the
 *      usage, on stderr; nothing was sent or written
 *
 * The grammar is `[command [subcommand]] [options] [arguments]`, the tool's global options (`--sigv4`, `--as`)
 * anywhere on the line; `--name value` and `--name=value`; a value option given twice is refused; `--` ends the
 * options. Also here: the real process as a `CliIo`, and "is this module the script node runs".
 */
import { readFile, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { type ParseArgsConfig, type ParseArgsOptionDescriptor, parseArgs } from 'node:util';

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;

/** What the CLIs need from the outside world; tests give fakes. */
export interface CliIo {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly cwd: string;
  readonly fetch: (url: string, init: RequestInit) => Promise<Response>;
  readonly readFile: (file: string) => Promise<string>;
  readonly writeFile: (file: string, content: string) => Promise<void>;
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

/** A wrong command line: exit 2, the message and the usage on stderr. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A failure that says more on stderr than its message (an API's refusal with its problems and trace id). */
export abstract class DescribedError extends Error {
  /** Every line to print, each ending with a newline. */
  abstract describe(): string;
}

/** One option: `parseArgs`'s descriptor, and what its value is called in "--name needs …" (default "a value"). */
export interface CliOption extends ParseArgsOptionDescriptor {
  readonly value?: string;
}

export type CliOptions = Readonly<Record<string, CliOption>>;

/** The values of `options` as given: a string (a list with `multiple`), `true` for a switch, absent if not given. */
export type OptionValues<O extends CliOptions> = {
  readonly [K in keyof O]?: O[K]['type'] extends 'boolean'
    ? boolean
    : O[K]['multiple'] extends true
      ? readonly string[]
      : string;
};

export interface CommandLine<O extends CliOptions> {
  readonly values: OptionValues<O>;
  readonly positionals: readonly string[];
}

/** `--help` and `-h`, which every tool takes anywhere on its line. */
const HELP_OPTIONS = { help: { type: 'boolean', short: 'h' } } as const satisfies CliOptions;

/** The result of a parse that asked for the usage. */
export const HELP = { kind: 'help' } as const;
export type Help = typeof HELP;

export const isHelp = (value: unknown): value is Help =>
  typeof value === 'object' && value !== null && 'kind' in value && value.kind === 'help';

/** The tokens `parseArgs` sees when it is not strict: unknown options too, every value where it would take one. */
const tokensOf = (args: readonly string[], options: CliOptions) =>
  parseArgs({
    args: [...args],
    options,
    strict: false,
    allowPositionals: true,
    tokens: true,
  } satisfies ParseArgsConfig).tokens;

/** Why a strict parse refused `args`, in this convention's words (or undefined when no token says why). */
const refusal = (args: readonly string[], options: CliOptions, context: string | undefined) => {
  for (const token of tokensOf(args, options)) {
    if (token.kind === 'option-terminator') return undefined;
    if (token.kind !== 'option') continue;
    const option = Object.hasOwn(options, token.name) ? options[token.name] : undefined;
    if (option === undefined) return `unknown option ${token.rawName}${context ? ` for ${context}` : ''}`;
    if (option.type === 'boolean' && token.value !== undefined) return `${token.rawName} takes no value`;
    // Without `=`, a value that starts with a dash is the next option: the value is missing.
    if (
      option.type === 'string' &&
      (token.value === undefined || (!token.inlineValue && token.value.startsWith('-')))
    )
      return `${token.rawName} needs ${option.value ?? 'a value'}`;
  }
  return undefined;
};

/**
 * `args` parsed strictly with `options` (`context` names the command in "unknown option --x for <context>"):
 * the values and the positionals, or a UsageError naming what is wrong.
 */
export const parseLine = <const O extends CliOptions>(
  args: readonly string[],
  options: O,
  context?: string,
): CommandLine<O> => {
  const config: ParseArgsConfig = {
    args: [...args],
    options,
    strict: true,
    allowPositionals: true,
    tokens: true,
  };
  let parsed: ReturnType<typeof parseArgs<ParseArgsConfig>>;
  try {
    parsed = parseArgs(config);
  } catch (error) {
    throw new UsageError(refusal(args, options, context) ?? (error as Error).message);
  }
  // parseArgs keeps the last of a repeated value option; here that is a mistake to point out.
  const given = new Set<string>();
  for (const token of parsed.tokens ?? []) {
    if (token.kind !== 'option' || token.value === undefined || options[token.name]?.multiple) continue;
    if (given.has(token.name)) throw new UsageError(`${token.rawName} is given twice`);
    given.add(token.name);
  }
  return { values: parsed.values as OptionValues<O>, positionals: parsed.positionals };
};

/** The positionals when there are at most `count`; a UsageError naming the rest otherwise. */
export const atMost = (positionals: readonly string[], count: number): readonly string[] => {
  if (positionals.length > count)
    throw new UsageError(`unexpected arguments: ${positionals.slice(count).join(' ')}`);
  return positionals;
};

/** A value that must be one of `known` (undefined when not given); a UsageError naming them otherwise. */
export const oneOf = <T extends string>(
  value: string | undefined,
  known: readonly T[],
  option: string,
): T | undefined => {
  if (value === undefined) return undefined;
  const found = known.find((candidate) => candidate === value);
  if (found === undefined) throw new UsageError(`${option} must be one of ${known.join(', ')}, not ${value}`);
  return found;
};

/** A comma-separated list (`a, b,c`): its entries trimmed, empty ones dropped. */
export const commaList = (value: string): string[] =>
  value
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry.length > 0);

/** The command named by the leading words of `args` (the longest match), and the arguments after them. */
const chooseCommand = (args: readonly string[], commands: readonly string[]) => {
  const words: string[] = [];
  for (const arg of args) {
    if (arg.startsWith('-')) break;
    words.push(arg);
  }
  const [first, second] = words;
  if (first === undefined) throw new UsageError(`give a command before ${args[0]}`);
  for (let count = words.length; count > 0; count -= 1) {
    const name = words.slice(0, count).join(' ');
    const command = commands.find((candidate) => candidate === name);
    if (command !== undefined) return { command, args: args.slice(count) };
  }
  const group = commands.filter((name) => name.startsWith(`${first} `));
  if (group.length === 0 || second !== undefined)
    throw new UsageError(`unknown command ${group.length === 0 ? first : `${first} ${second}`}`);
  throw new UsageError(
    `${first} needs a command: ${group.map((name) => name.slice(first.length + 1)).join(', ')}`,
  );
};

/** Whether `--help` or `-h` is on the line (read with the tool's `options`, so an option's value is not one). */
const asksForHelp = (argv: readonly string[], options: CliOptions): boolean => {
  for (const token of tokensOf(argv, { ...options, ...HELP_OPTIONS })) {
    if (token.kind === 'option-terminator') return false;
    if (token.kind === 'option' && token.name === 'help') return true;
  }
  return false;
};

/** The command line of a tool without commands: HELP for `--help` / `-h`, else `argv` parsed with `options`. */
export const parseToolLine = <const O extends CliOptions>(
  argv: readonly string[],
  options: O,
): CommandLine<O> | Help => (asksForHelp(argv, options) ? HELP : parseLine(argv, options));

/** A command's parse: its own arguments (after its words and the global options) as what to run. */
export type CommandParser<C> = (args: readonly string[], command: string) => C;

/**
 * The command line of a tool whose commands are `commands` (`{ 'endpoints create': parse, … }`): HELP for
 * `--help`, `-h` (anywhere), `help` or nothing at all; else the command its first words name (the longest match)
 * as its parser makes it from the rest of the line, and the global options (strictly parsed, wherever they are).
 */
export const parseCommandLine = <const G extends CliOptions, C>(
  argv: readonly string[],
  global: G,
  commands: Readonly<Record<string, CommandParser<C>>>,
): { readonly command: C; readonly global: OptionValues<G> } | Help => {
  if (asksForHelp(argv, global)) return HELP;
  const globalArgs: string[] = [];
  const taken = new Set<number>();
  for (const token of tokensOf(argv, global)) {
    if (token.kind === 'option-terminator') break;
    if (token.kind !== 'option' || !Object.hasOwn(global, token.name)) continue;
    taken.add(token.index);
    globalArgs.push(argv[token.index] as string);
    if (token.value !== undefined && !token.inlineValue) {
      taken.add(token.index + 1);
      globalArgs.push(token.value);
    }
  }
  const rest = argv.filter((_, index) => !taken.has(index));
  if (rest.length === 0 || rest[0] === 'help') return HELP;
  const values = parseLine(globalArgs, global).values;
  const chosen = chooseCommand(rest, Object.keys(commands));
  const parse = commands[chosen.command] as CommandParser<C>;
  return { command: parse(chosen.args, chosen.command), global: values };
};

/** A tool: its usage, how its command line parses, and what it does with it. */
export interface Cli<Parsed, Io extends CliIo = CliIo> {
  readonly usage: string;
  /** The command line as what to run, or HELP; throws (a UsageError) naming what is wrong. */
  readonly parse: (argv: readonly string[]) => Parsed | Help;
  /** Runs it; the exit code (0 when it returns nothing). A UsageError it throws is a usage error too. */
  readonly execute: (parsed: Parsed, io: Io) => Promise<number | undefined> | Promise<void>;
  /** Printed before the description of a failure (`cannot verify: `). */
  readonly failurePrefix?: string;
}

/** What a failure prints on stderr: a usage error with the usage, a described error, or the message. */
export const describeCliFailure = (error: unknown, usage: string, prefix = ''): string => {
  if (error instanceof UsageError) return `${error.message}\n${usage}\n`;
  if (error instanceof DescribedError) return `${prefix}${error.describe()}`;
  return `${prefix}${error instanceof Error ? error.message : String(error)}\n`;
};

/** The command line as what to run, or the exit code after printing the usage (help: 0; a wrong line: 2). */
const readCommandLine = <Parsed>(
  cli: Pick<Cli<Parsed>, 'usage' | 'parse'>,
  argv: readonly string[],
  io: Pick<CliIo, 'stdout' | 'stderr'>,
): { readonly parsed: Parsed } | { readonly exit: number } => {
  let parsed: Parsed | Help;
  try {
    parsed = cli.parse(argv);
  } catch (error) {
    io.stderr(`${error instanceof Error ? error.message : String(error)}\n${cli.usage}\n`);
    return { exit: EXIT_USAGE };
  }
  if (!isHelp(parsed)) return { parsed };
  io.stdout(`${cli.usage}\n`);
  return { exit: EXIT_OK };
};

/**
 * Runs a tool on `argv`: the usage on stdout for help (0); the message and the usage on stderr for a wrong
 * command line (2); else what `execute` returns, or 1 with the failure on stderr (2 for a UsageError).
 */
export const runCli = async <Parsed, Io extends CliIo>(
  cli: Cli<Parsed, Io>,
  argv: readonly string[],
  io: Io,
): Promise<number> => {
  const line = readCommandLine(cli, argv, io);
  if ('exit' in line) return line.exit;
  try {
    return (await cli.execute(line.parsed, io)) ?? EXIT_OK;
  } catch (error) {
    io.stderr(describeCliFailure(error, cli.usage, cli.failurePrefix));
    return error instanceof UsageError ? EXIT_USAGE : EXIT_FAILURE;
  }
};

/** Whether the module of `moduleUrl` (its `import.meta.url`) is the script node was started with. */
export const isMainModule = (moduleUrl: string): boolean =>
  process.argv[1] !== undefined && moduleUrl === pathToFileURL(process.argv[1]).href;

/** This process as a CLI's world: its environment, working directory, files, network, stdout and stderr. */
export const processIo = (): CliIo => ({
  env: process.env,
  cwd: process.cwd(),
  fetch: (url, init) => fetch(url, init),
  readFile: (file) => readFile(file, 'utf8'),
  writeFile: (file, content) => writeFile(file, content, 'utf8'),
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
});

/**
 * A tool that keeps running (a server), when its module (`moduleUrl`, its `import.meta.url`) is the script node
 * runs: help (0) and a wrong command line (2) end the process; otherwise `start` gets what the line says.
 */
export const startMain = <Parsed>(
  moduleUrl: string,
  cli: Pick<Cli<Parsed>, 'usage' | 'parse'>,
  start: (parsed: Parsed) => void,
): void => {
  if (!isMainModule(moduleUrl)) return;
  const line = readCommandLine(cli, process.argv.slice(2), processIo());
  if ('exit' in line) process.exit(line.exit);
  start(line.parsed);
};

/**
 * A tool's `run` on this process's arguments, when its module (`moduleUrl`, its `import.meta.url`) is the script
 * node runs; the process ends with its exit code once its output is written (no `process.exit`, which may cut
 * output to a pipe short where pipes are asynchronous).
 */
export const runMain = async (
  moduleUrl: string,
  run: (argv: readonly string[], io: CliIo) => Promise<number>,
): Promise<void> => {
  if (isMainModule(moduleUrl)) process.exitCode = await run(process.argv.slice(2), processIo());
};
