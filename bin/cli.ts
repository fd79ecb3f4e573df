/**
 * The plumbing the CLIs share (`npm run catalog`, `npm run ops`, `npm run verify-receipt`, `npm run receiver`):
 * the real process as a `CliIo`, "is this module the script node runs", and the run of an admin command —
 * parse the command line, print the usage, connect the admin client (bin/admin-client.ts), print a failure.
 */
import { readFile, writeFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import {
  AdminApiError,
  AdminClient,
  type AdminClientOptions,
  type CliIo,
  DEFAULT_API_URL,
  DEFAULT_DATA_DIR,
  UsageError,
} from './admin-client';

/** Exit code of a wrong command line: 1, as any other failure of the admin CLIs. */
export const EXIT_USAGE = 1;
export const EXIT_FAILURE = 1;

/** The end of an admin CLI's usage: the environment it reads. */
export const ADMIN_CLI_ENVIRONMENT = `environment:
  API_URL      the API (default ${DEFAULT_API_URL})
  ADMIN_TOKEN  the local admin token (default: admin_token in $DATA_DIR/credentials.json)
  DATA_DIR     the local stack's data directory (default ${DEFAULT_DATA_DIR})
  API_AUTH     sigv4 to sign requests with IAM SigV4 like --sigv4 (AWS credentials from the default
               provider chain; region from the execute-api host, else AWS_REGION / AWS_DEFAULT_REGION)`;

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

/** What a failed admin command prints on stderr: the API's refusal, a usage error with the usage, or the message. */
export const describeCliFailure = (error: unknown, usage: string): string => {
  if (error instanceof AdminApiError) return error.describe();
  if (error instanceof UsageError) return `${error.message}\n${usage}\n`;
  return `${(error as Error).message}\n`;
};

/** A command of an admin CLI: `help`, or one that talks to the admin routes (`--sigv4`: signed with IAM SigV4). */
export type AdminCommand = { readonly kind: string; readonly sigv4?: true };

export interface AdminCli<Command extends AdminCommand, Io extends CliIo> {
  readonly usage: string;
  /** The command line as a command; throws UsageError naming what is wrong. */
  readonly parse: (argv: readonly string[]) => Command;
  /** Runs a command other than `help`; an exit code to end with, else 0. */
  readonly execute: (
    command: Exclude<Command, { readonly kind: 'help' }>,
    client: AdminClient,
    io: Io,
  ) => Promise<number | undefined> | Promise<void>;
}

/** An admin CLI's `run(argv, io, options?)`: {@link runAdminCli} of `cli`. */
export const adminCliRunner =
  <Command extends AdminCommand, Io extends CliIo>(cli: AdminCli<Command, Io>) =>
  (argv: readonly string[], io: Io, options: Omit<AdminClientOptions, 'sigv4'> = {}): Promise<number> =>
    runAdminCli(cli, argv, io, options);

/**
 * Runs one command of an admin CLI: a usage error prints the message and the usage (exit 1), `help` the usage
 * (exit 0); any other command runs with a connected admin client, a failure printed on stderr (exit 1).
 */
export const runAdminCli = async <Command extends AdminCommand, Io extends CliIo>(
  cli: AdminCli<Command, Io>,
  argv: readonly string[],
  io: Io,
  options: Omit<AdminClientOptions, 'sigv4'>,
): Promise<number> => {
  let command: Command;
  try {
    command = cli.parse(argv);
  } catch (error) {
    io.stderr(`${(error as Error).message}\n${cli.usage}\n`);
    return EXIT_USAGE;
  }
  if (command.kind === 'help') {
    io.stdout(`${cli.usage}\n`);
    return 0;
  }
  try {
    const client = await AdminClient.connect(io, { ...options, sigv4: command.sigv4 === true });
    return (await cli.execute(command as Exclude<Command, { readonly kind: 'help' }>, client, io)) ?? 0;
  } catch (error) {
    io.stderr(describeCliFailure(error, cli.usage));
    return error instanceof UsageError ? EXIT_USAGE : EXIT_FAILURE;
  }
};

export interface Flags {
  readonly values: ReadonlyMap<string, string>;
  readonly switches: ReadonlySet<string>;
  readonly positionals: readonly string[];
}

/**
 * `--name value`, `--name=value` for the value options, bare `--name` for the switches; anything else that
 * starts with `-` is unknown to `context`. A value option given twice is refused.
 */
export const parseFlags = (
  args: readonly string[],
  context: string,
  valueOptions: readonly string[],
  switchOptions: readonly string[] = [],
): Flags => {
  const values = new Map<string, string>();
  const switches = new Set<string>();
  const positionals: string[] = [];
  for (let index = 0; index < args.length; index += 1) {
    const arg = args[index] as string;
    if (!arg.startsWith('-') || arg === '-') {
      positionals.push(arg);
      continue;
    }
    const equals = arg.indexOf('=');
    const name = equals === -1 ? arg : arg.slice(0, equals);
    const inline = equals === -1 ? undefined : arg.slice(equals + 1);
    if (switchOptions.includes(name)) {
      if (inline !== undefined) throw new UsageError(`${name} takes no value`);
      switches.add(name);
    } else if (valueOptions.includes(name)) {
      let value = inline;
      if (value === undefined) {
        index += 1;
        const next = args[index];
        if (next === undefined || next.startsWith('--')) throw new UsageError(`${name} needs a value`);
        value = next;
      }
      if (values.has(name)) throw new UsageError(`${name} is given twice`);
      values.set(name, value);
    } else {
      throw new UsageError(`unknown option ${name} for ${context}`);
    }
  }
  return { values, switches, positionals };
};
