/**
 * `npm run verify-journal -- <export.json> | --from-api <base-url> …`: the audit journal (RFC 9162) verified
 * offline against the service's public keys — every signed head, inclusion and consistency proofs. Exit code 0
 * when it verifies, 1 when it does not (every problem listed) or cannot be read, 2 for a wrong command line.
 */
import {
  type JournalProblem,
  type JournalVerificationReport,
  verifyJournalExport,
} from '../functions/domain/audit/journal-verify';
import { AdminClient, type AdminClientOptions } from './admin-client';
import { type CliIo, type Help, isHelp, parseToolLine, runMain, UsageError } from './cli';
import { defaultKeysSource, loadJson, loadKeys, runVerifier, VERIFIER_OPTIONS, verifierFile } from './keys';

export const USAGE = `usage:
  npm run verify-journal -- <export.json> [--keys <url-or-file>] [--proof-sample N]
  npm run verify-journal -- --from-api <base-url> [--out <file>] [--keys <url-or-file>] [--sigv4] [--proof-sample N]
keys default to <base-url>/keys (without --from-api: $API_URL/keys, the local stack by default)`;

export interface Options {
  readonly file?: string;
  readonly fromApi?: string;
  readonly out?: string;
  readonly keys?: string;
  readonly proofSample?: number;
  readonly sigv4?: true;
}

export const parseOptions = (argv: readonly string[]): Options | Help => {
  const line = parseToolLine(argv, {
    ...VERIFIER_OPTIONS,
    'from-api': { type: 'string', value: 'a base URL' },
    'proof-sample': { type: 'string', value: 'a positive integer' },
  });
  if (isHelp(line)) return line;
  const { 'from-api': fromApi, 'proof-sample': sample, out, keys, sigv4 } = line.values;
  const file = verifierFile(line, {
    option: '--from-api',
    given: fromApi,
    value: '<base-url>',
    file: 'an export file',
    fetched: 'an export',
  });
  if (sample !== undefined && !/^[1-9]\d{0,8}$/.test(sample)) {
    throw new UsageError('--proof-sample needs a positive integer');
  }
  return {
    ...(file === undefined ? {} : { file }),
    ...(fromApi === undefined ? {} : { fromApi }),
    ...(out === undefined ? {} : { out }),
    ...(keys === undefined ? {} : { keys }),
    ...(sample === undefined ? {} : { proofSample: Number(sample) }),
    ...(sigv4 ? { sigv4: true as const } : {}),
  };
};

const where = (problem: JournalProblem): string => {
  const parts: string[] = [];
  if (problem.range && problem.range.from !== problem.range.to) {
    parts.push(`entries ${problem.range.from}–${problem.range.to}`);
  } else if (problem.index !== undefined) parts.push(`entry ${problem.index}`);
  if (problem.tree_size !== undefined) parts.push(`head ${problem.tree_size}`);
  return parts.length > 0 ? ` [${parts.join(', ')}]` : '';
};

/** The report as the CLI prints it. */
export const describeReport = (report: JournalVerificationReport): string => {
  const name = `journal ${report.log_id ?? '(unnamed)'}`;
  const proofs = `${report.inclusion_checked} inclusion and ${report.consistency_checked} consistency proofs checked`;
  if (report.ok) {
    const tree =
      report.tree_size === undefined
        ? 'empty'
        : `tree size ${report.tree_size}, root ${report.root_hash as string}`;
    return (
      `${name}: OK — ${report.entries} entries, ${report.verified_heads} signed heads verified (${tree}); ` +
      `${proofs}\n`
    );
  }
  const lines = report.problems.map((problem) => `  ${problem.kind}${where(problem)}: ${problem.message}`);
  const count = `${report.problems.length} problem${report.problems.length === 1 ? '' : 's'}`;
  return (
    `${name}: INVALID — ${count} (${report.entries} entries, ${report.heads} heads, ` +
    `${report.verified_heads} verified)\n${lines.join('\n')}\n`
  );
};

/** Entries asked per export page (the API's largest), and the pages followed at most. */
const EXPORT_PAGE = 2_000;
const MAX_EXPORT_PAGES = 100_000;

type JsonObject = Record<string, unknown>;

/** Fetches the export through the admin client from `baseUrl`, page by page, saving it to `out` when given. */
const fetchExport = async (
  io: CliIo,
  options: Options & { readonly fromApi: string },
  clientOptions: Omit<AdminClientOptions, 'sigv4'>,
): Promise<unknown> => {
  const client = await AdminClient.connect(
    { ...io, env: { ...io.env, API_URL: options.fromApi } },
    { ...clientOptions, ...(options.sigv4 ? { sigv4: true } : {}) },
  );
  // The export comes by page, pinned to the head of the first: the pages together are the document.
  const pages: JsonObject[] = [];
  let cursor: string | undefined;
  do {
    const { body: page } = await client.get(
      `/audit/journal/export?limit=${EXPORT_PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
    );
    pages.push(page as JsonObject);
    const next = (page as JsonObject).next_cursor;
    cursor = typeof next === 'string' ? next : undefined;
    if (pages.length > MAX_EXPORT_PAGES)
      throw new Error(`the export did not end within ${MAX_EXPORT_PAGES} pages`);
  } while (cursor);
  const body = {
    log_id: pages[0]?.log_id,
    entries: pages.flatMap((page) => (Array.isArray(page.entries) ? page.entries : [])),
    heads: pages.flatMap((page) => (Array.isArray(page.heads) ? page.heads : [])),
  };
  if (options.out !== undefined) {
    await io.writeFile(options.out, `${JSON.stringify(body, null, 2)}\n`);
    io.stdout(`export saved to ${options.out}\n`);
  }
  return body;
};

export const run = (
  argv: readonly string[],
  io: CliIo,
  clientOptions: Omit<AdminClientOptions, 'sigv4'> = {},
): Promise<number> =>
  runVerifier(argv, io, {
    usage: USAGE,
    parse: parseOptions,
    execute: async (options) => {
      const document =
        options.fromApi === undefined
          ? await loadJson(io, options.file as string)
          : await fetchExport(io, { ...options, fromApi: options.fromApi }, clientOptions);
      const keys = await loadKeys(io, options.keys ?? defaultKeysSource(io, options.fromApi));
      const report = verifyJournalExport(
        document,
        keys,
        options.proofSample === undefined ? {} : { proofSample: options.proofSample },
      );
      io.stdout(describeReport(report));
      return report.ok ? 0 : 1;
    },
  });

await runMain(import.meta.url, run);
