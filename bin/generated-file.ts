/**
 * The tools that write a document generated from the code (`npm run openapi`, `npm run security-matrix`,
 * `node --import tsx bin/webhook-vectors.ts`): they write it, or with `--check` write nothing and exit 1 when the
 * committed file differs from what the code generates (CI). Exit codes as every tool in bin/ (bin/cli.ts).
 */
import { relative } from 'node:path';
import { atMost, type CliIo, type Help, isHelp, parseToolLine, runCli } from './cli';

export interface GeneratedFile {
  /** The usage, ending with what `--check` does. */
  readonly usage: string;
  /** Its absolute path. */
  readonly file: string;
  /** Its content as the code gives it, from its content now (undefined when it cannot be read). */
  readonly generate: (current: string | undefined) => string;
  /** What is printed, with the file's path relative to the working directory. */
  readonly upToDate: (shown: string) => string;
  readonly stale: (shown: string) => string;
  readonly wrote: (shown: string) => string;
}

/** `[--check]` and nothing else. */
export const parseCheck = (argv: readonly string[]): { readonly check: boolean } | Help => {
  const line = parseToolLine(argv, { check: { type: 'boolean' } });
  if (isHelp(line)) return line;
  atMost(line.positionals, 0);
  return { check: line.values.check === true };
};

/** Writes the generated file (0), or with `--check` compares it: 0 when it is up to date, 1 when it is stale. */
export const runGenerator = (generated: GeneratedFile, argv: readonly string[], io: CliIo): Promise<number> =>
  runCli(
    {
      usage: generated.usage,
      parse: parseCheck,
      execute: async ({ check }) => {
        const shown = relative(io.cwd, generated.file);
        let current: string | undefined;
        try {
          current = await io.readFile(generated.file);
        } catch {
          current = undefined;
        }
        const content = generated.generate(current);
        if (!check) {
          await io.writeFile(generated.file, content);
          io.stdout(`${generated.wrote(shown)}\n`);
          return 0;
        }
        if (content === current) {
          io.stdout(`${generated.upToDate(shown)}\n`);
          return 0;
        }
        io.stderr(`${generated.stale(shown)}\n`);
        return 1;
      },
    },
    argv,
    io,
  );
