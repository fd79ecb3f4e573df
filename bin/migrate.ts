/**
 * `npm run migrate -- endpoint-shards --table <deliveries table> [--segments N] [--page-size N] [--state <file>]`
 *
 * Sets the deliveries' endpoint index key (`endpoint_shard`) on every item written before it existed (docs/
 * decisions.md, "deliveries by endpoint"): the data step of upgrading a deployment made before the sharded
 * endpoint index (README, "Upgrading"). It writes straight on the table with the caller's AWS credentials and
 * region (the SDK's default chain; `AWS_ENDPOINT_URL_DYNAMODB` points it at DynamoDB Local). With `--state` the
 * position of each scan segment is saved after every page, and a run with the same file continues from it.
 *
 * Prints the totals (items scanned, items updated) as JSON; exit 0 when every segment finished, 1 on a failure
 * (the state file keeps what was done), 2 for a wrong command line.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { documentClientOf } from '../functions/adapters/aws/clients';
import { backfillEndpointShards, type MigrationProgress } from '../functions/adapters/aws/migrations';
import { type CliIo, type Help, isHelp, parseToolLine, runCli, runMain, UsageError } from './cli';

export const USAGE = `usage:
  npm run migrate -- endpoint-shards --table <deliveries table> [--segments N] [--page-size N] [--state <file>]
AWS credentials and region from the environment (AWS_PROFILE, AWS_REGION…); AWS_ENDPOINT_URL_DYNAMODB for DynamoDB Local`;

export const MIGRATIONS = ['endpoint-shards'] as const;

export interface Options {
  readonly migration: (typeof MIGRATIONS)[number];
  readonly table: string;
  readonly segments: number;
  readonly pageSize: number;
  readonly state?: string;
}

const wholeNumber = (option: string, value: string | undefined, fallback: number, max: number): number => {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!Number.isInteger(parsed) || parsed < 1 || parsed > max)
    throw new UsageError(`${option} needs a whole number from 1 to ${max}`);
  return parsed;
};

export const parseOptions = (argv: readonly string[]): Options | Help => {
  const line = parseToolLine(argv, {
    table: { type: 'string', value: 'a table name' },
    segments: { type: 'string', value: 'a number of scan segments' },
    'page-size': { type: 'string', value: 'a number of items' },
    state: { type: 'string', value: 'a file' },
  });
  if (isHelp(line)) return line;
  const [migration, ...extra] = line.positionals;
  if (migration === undefined) throw new UsageError(`name a migration: ${MIGRATIONS.join(', ')}`);
  if (!(MIGRATIONS as readonly string[]).includes(migration))
    throw new UsageError(`unknown migration ${migration}: ${MIGRATIONS.join(', ')}`);
  if (extra.length > 0) throw new UsageError(`unexpected ${extra.join(' ')}`);
  const { table, state } = line.values;
  if (table === undefined) throw new UsageError('--table names the deliveries table');
  return {
    migration: migration as Options['migration'],
    table,
    segments: wholeNumber('--segments', line.values.segments, 4, 64),
    pageSize: wholeNumber('--page-size', line.values['page-size'], 500, 1000),
    ...(state === undefined ? {} : { state }),
  };
};

/** Reads a saved progress: one entry per segment, each a scan key, `null` (finished) or absent (not started). */
const loadProgress = async (
  io: CliIo,
  file: string,
  segments: number,
): Promise<MigrationProgress | undefined> => {
  let text: string;
  try {
    text = await io.readFile(file);
  } catch (error) {
    // No state saved yet: a first run.
    if (/ENOENT/.test((error as Error).message)) return undefined;
    throw error;
  }
  let saved: unknown;
  try {
    saved = JSON.parse(text);
  } catch {
    // Every update is conditional: starting over repeats no write, it only reads the table again.
    throw new UsageError(`${file} is not a saved progress (cut short?): remove it to start over`);
  }
  const entries = (saved as { segments?: unknown }).segments;
  if (!Array.isArray(entries) || entries.length !== segments)
    throw new UsageError(
      `${file} holds no progress of ${segments} segments (give the --segments it was run with)`,
    );
  return entries.map((entry: unknown) =>
    entry === 'start' ? undefined : (entry as MigrationProgress[number]),
  );
};

/** `createClient`: the SDK's default chain; tests give a client of DynamoDB Local. The run destroys it. */
export const run = (
  argv: readonly string[],
  io: CliIo,
  createClient: () => DynamoDBClient = () => new DynamoDBClient({}),
): Promise<number> =>
  runCli(
    {
      usage: USAGE,
      parse: parseOptions,
      failurePrefix: 'migration stopped: ',
      execute: async (options) => {
        const dynamoDb = createClient();
        let saving: Promise<void> = Promise.resolve();
        try {
          const progress =
            options.state === undefined ? undefined : await loadProgress(io, options.state, options.segments);
          const totals = await backfillEndpointShards(documentClientOf(dynamoDb), options.table, {
            segments: options.segments,
            pageSize: options.pageSize,
            ...(progress ? { progress } : {}),
            // Segments finish pages concurrently: their saves go one after the other, so the file always holds
            // one whole progress (the last).
            onPage: (next) => {
              if (options.state === undefined) return;
              const state = options.state;
              const segments = next.map((entry) => (entry === undefined ? 'start' : entry));
              saving = saving.then(() =>
                io.writeFile(state, `${JSON.stringify({ migration: options.migration, segments })}\n`),
              );
              return saving;
            },
          });
          io.stdout(`${JSON.stringify({ migration: options.migration, table: options.table, ...totals })}\n`);
          return 0;
        } finally {
          dynamoDb.destroy();
        }
      },
    },
    argv,
    io,
  );

await runMain(import.meta.url, (argv, io) => run(argv, io));
