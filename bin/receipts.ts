/**
 * `npm run receipts -- export --from <YYYY-MM-DD> --to <YYYY-MM-DD> --out <dir>`
 *
 * Downloads the finance export of a range of days from the receipts bucket (every manifest, CSV summary and
 * object, same key layout under `--out`) and verifies it offline: each object's SHA-256 against its day's
 * manifest, each document's hash and signature with the JWKS, each manifest's signature, count and Merkle root,
 * its totals and its summary, and that the bucket and the manifest list the same objects. Prints the totals per
 * currency (receipts gross, refunds, chargebacks, net) and `<out>/export-report.json`; exits 0 when everything
 * verifies, 1 naming every problem, 2 for a wrong command line (bin/cli.ts).
 *
 * Where the bucket is: the local stack's (`<DATA_DIR>/runtime.json`, written by `npm start`) by default; a
 * deployed one with `--bucket <name>` (AWS credentials and region from the default provider chain, or
 * `--region`); an S3-compatible endpoint (an in-memory local stack) with `--endpoint <url> --bucket <name>`.
 * The JWKS: `--jwks <url-or-file>`, else the local stack's `/keys`, else `$API_URL/keys`.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
import { S3ObjectStore } from '../functions/adapters/aws/object-store';
import { LOCAL_CREDENTIALS } from '../functions/adapters/local/local-aws';
import { readLocalRuntime, runtimeFile } from '../functions/adapters/local/runtime-file';
import { datesBetween, isDayClosed, isExportDate } from '../functions/domain/receipts/export/dates';
import { manifestKey, partitionPrefix, summaryKey } from '../functions/domain/receipts/export/keys';
import { type CurrencyTotals, sumTotals } from '../functions/domain/receipts/export/totals';
import { type DayVerification, verifyExportedDay } from '../functions/domain/receipts/export/verify';
import type { Jwk } from '../functions/domain/receipts/receipt';
import type { ObjectStore } from '../functions/ports/object-store';
import { mapConcurrently } from '../functions/shared/concurrency';
import { DEFAULT_RECEIPT_EXPORT_SETTINGS } from '../functions/usecases/receipts/export';
import { DEFAULT_DATA_DIR } from './admin-client';
import {
  atMost,
  type CliIo,
  type Help,
  isHelp,
  parseCommandLine,
  parseLine,
  runMain,
  UsageError,
} from './cli';
import { defaultKeysSource, loadKeys, runVerifier } from './keys';

export const USAGE = `usage:
  npm run receipts -- export --from <YYYY-MM-DD> --to <YYYY-MM-DD> --out <dir>
      [--bucket <name> [--region <region>] [--endpoint <url>]] [--jwks <url-or-file>]
the local stack's bucket by default (its $DATA_DIR/runtime.json, DATA_DIR default ${DEFAULT_DATA_DIR});
--bucket for a deployed one (AWS credentials from the default provider chain)`;

/** Days one export covers at most. */
export const MAX_DAYS = 366;
/** Objects downloaded at once. */
const DOWNLOAD_PARALLEL = 16;

export interface ExportOptions {
  readonly from: string;
  readonly to: string;
  readonly out: string;
  readonly bucket?: string;
  readonly region?: string;
  readonly endpoint?: string;
  readonly jwks?: string;
}

const EXPORT_OPTIONS = {
  from: { type: 'string' },
  to: { type: 'string' },
  out: { type: 'string' },
  bucket: { type: 'string' },
  region: { type: 'string' },
  endpoint: { type: 'string' },
  jwks: { type: 'string' },
} as const;

/** `export --from … --to … --out …` (the one command) as its options, HELP, or a UsageError. */
export const parseOptions = (argv: readonly string[]): ExportOptions | Help => {
  const line = parseCommandLine(
    argv,
    {},
    {
      export: (args, command) => parseLine(args, EXPORT_OPTIONS, command),
    },
  );
  if (isHelp(line)) return line;
  const { values, positionals } = line.command;
  atMost(positionals, 0);
  const { from, to, out, bucket, region, endpoint, jwks } = values;
  if (from === undefined || to === undefined || out === undefined) {
    throw new UsageError('export needs --from, --to and --out');
  }
  for (const [name, date] of [
    ['--from', from],
    ['--to', to],
  ] as const) {
    if (!isExportDate(date)) throw new UsageError(`${name} must be a date (YYYY-MM-DD), got ${date}`);
  }
  if (from > to) throw new UsageError(`--from ${from} is after --to ${to}`);
  datesBetween(from, to, MAX_DAYS);
  if (bucket === undefined) {
    if (region !== undefined) throw new UsageError('--region goes with --bucket');
    if (endpoint !== undefined) throw new UsageError('--endpoint goes with --bucket');
  }
  return {
    from,
    to,
    out,
    ...(bucket === undefined ? {} : { bucket }),
    ...(region === undefined ? {} : { region }),
    ...(endpoint === undefined ? {} : { endpoint }),
    ...(jwks === undefined ? {} : { jwks }),
  };
};

/** Where the export is read from: a store over the bucket, its name, and where the JWKS is by default. */
interface Source {
  readonly store: ObjectStore;
  readonly bucket: string;
  readonly description: string;
  readonly keys: string;
  readonly close: () => void;
}

const openSource = async (io: CliIo, options: ExportOptions): Promise<Source> => {
  if (options.bucket !== undefined) {
    const region = options.region ?? (io.env.AWS_REGION || io.env.AWS_DEFAULT_REGION);
    const s3 = new S3Client({
      ...(region ? { region } : {}),
      ...(options.endpoint
        ? { endpoint: options.endpoint, forcePathStyle: true, credentials: LOCAL_CREDENTIALS }
        : {}),
    });
    return {
      store: new S3ObjectStore(s3, options.bucket),
      bucket: options.bucket,
      description: options.endpoint ? `${options.endpoint}` : 'AWS',
      keys: options.jwks ?? defaultKeysSource(io),
      close: () => s3.destroy(),
    };
  }
  const file = runtimeFile(path.resolve(io.cwd, io.env.DATA_DIR || DEFAULT_DATA_DIR));
  const runtime = await readLocalRuntime(file);
  if (!runtime) {
    throw new Error(
      `no local stack is running (no readable ${file}): start it with npm start, or give --bucket <name> ` +
        'for a deployed bucket',
    );
  }
  const s3 = new S3Client({
    region: runtime.region,
    endpoint: runtime.s3_endpoint,
    forcePathStyle: true,
    credentials: LOCAL_CREDENTIALS,
  });
  return {
    store: new S3ObjectStore(s3, runtime.buckets.receipts),
    bucket: runtime.buckets.receipts,
    description: `the local stack at ${runtime.api_url}`,
    keys: options.jwks ?? (io.env.API_URL ? defaultKeysSource(io) : `${runtime.api_url}/keys`),
    close: () => s3.destroy(),
  };
};

/** Writes a downloaded object under `out` at its key; a key that would leave `out` is a problem instead. */
const saveUnder = async (out: string, key: string, bytes: Uint8Array): Promise<string | undefined> => {
  const target = path.resolve(out, key);
  if (!target.startsWith(`${out}${path.sep}`))
    return `${key}: a key that leaves the output directory; not saved`;
  await mkdir(path.dirname(target), { recursive: true });
  await writeFile(target, bytes);
  return undefined;
};

/** Downloads one day (manifest, summary, every object of its partition), saves it and verifies it. */
const exportDay = async (
  store: ObjectStore,
  date: string,
  out: string,
  keys: readonly Jwk[],
  open: boolean,
): Promise<DayVerification> => {
  const [manifest, summary, listed] = await Promise.all([
    store.get(manifestKey(date)),
    store.get(summaryKey(date)),
    store.list(partitionPrefix(date)),
  ]);
  const downloaded = await mapConcurrently(listed, DOWNLOAD_PARALLEL, async ({ key }) => ({
    key,
    bytes: await store.get(key),
  }));
  const objects = new Map<string, Uint8Array>();
  const saved: (string | undefined)[] = [];
  for (const { key, bytes } of downloaded) {
    if (!bytes) continue;
    objects.set(key, bytes);
    saved.push(await saveUnder(out, key, bytes));
  }
  if (manifest) saved.push(await saveUnder(out, manifestKey(date), manifest));
  if (summary) saved.push(await saveUnder(out, summaryKey(date), summary));
  const verification = verifyExportedDay(
    {
      date,
      open,
      ...(manifest ? { manifest } : {}),
      ...(summary ? { summary } : {}),
      listed: listed.map(({ key }) => key),
      objects,
    },
    keys,
  );
  const unsaved = saved.filter((problem): problem is string => problem !== undefined);
  return unsaved.length === 0
    ? verification
    : { ...verification, problems: [...verification.problems, ...unsaved] };
};

/** One line per currency: receipts gross, refunds paid back, chargebacks, net, with how many of each. */
export const describeTotals = (totals: Readonly<Record<string, CurrencyTotals>>): string =>
  Object.entries(totals)
    .map(
      ([currency, figures]) =>
        `  ${currency}  gross ${figures.gross} (${figures.receipts} receipt${figures.receipts === 1 ? '' : 's'})  ` +
        `refunds ${figures.refunds} (${figures.refunds_count})  ` +
        `chargebacks ${figures.chargebacks} (${figures.chargebacks_count})  net ${figures.net}\n`,
    )
    .join('');

const jwksOf = (keys: Awaited<ReturnType<typeof loadKeys>>): Jwk[] =>
  (Array.isArray(keys) ? keys : (keys as { keys: Jwk[] }).keys) as Jwk[];

/**
 * `receipts export`. A day not closed yet (by the default grace) is not expected to have a manifest: its
 * documents are verified one by one and it is reported as open.
 */
export const run = (
  argv: readonly string[],
  io: CliIo,
  now: () => Date = () => new Date(),
): Promise<number> =>
  runVerifier(argv, io, {
    usage: USAGE,
    parse: parseOptions,
    execute: async (options) => {
      const out = path.resolve(io.cwd, options.out);
      const source = await openSource(io, options);
      try {
        const keys = jwksOf(await loadKeys(io, source.keys));
        const dates = datesBetween(options.from, options.to, MAX_DAYS);
        io.stdout(
          `receipts export ${options.from} to ${options.to} from bucket ${source.bucket} (${source.description})\n`,
        );
        const days: DayVerification[] = [];
        for (const date of dates) {
          const open = !isDayClosed(date, now(), DEFAULT_RECEIPT_EXPORT_SETTINGS.graceMinutes);
          const day = await exportDay(source.store, date, out, keys, open);
          days.push(day);
          const state = day.problems.length === 0 ? 'verified' : `${day.problems.length} problem(s)`;
          const root = day.manifest
            ? `, merkle root ${day.manifest.merkle_root}`
            : day.open
              ? ` (open: its manifest comes ${DEFAULT_RECEIPT_EXPORT_SETTINGS.graceMinutes} minutes after midnight UTC; documents verified one by one)`
              : '';
          const documents = `${day.documents.length} document${day.documents.length === 1 ? '' : 's'}`;
          io.stdout(`  ${date}: ${documents}${root}: ${state}\n`);
        }
        const totals = sumTotals(days.map((day) => day.totals));
        const problems = days.flatMap((day) => day.problems);
        const documents = days.reduce((count, day) => count + day.documents.length, 0);
        io.stdout(
          `totals per currency (${documents} verified documents):\n${describeTotals(totals) || '  none\n'}`,
        );
        const report = {
          from: options.from,
          to: options.to,
          bucket: source.bucket,
          days: days.map((day) => ({
            date: day.date,
            documents: day.documents.length,
            ...(day.manifest ? { count: day.manifest.count, merkle_root: day.manifest.merkle_root } : {}),
            totals: day.totals,
            problems: day.problems,
          })),
          totals,
          problems,
        };
        await mkdir(out, { recursive: true });
        await writeFile(path.join(out, 'export-report.json'), `${JSON.stringify(report, null, 2)}\n`);
        io.stdout(`files and export-report.json written to ${out}\n`);
        if (problems.length === 0) return 0;
        io.stderr(`${problems.length} problem(s):\n${problems.map((problem) => `  ${problem}\n`).join('')}`);
        return 1;
      } finally {
        source.close();
      }
    },
  });

await runMain(import.meta.url, run);
