/**
 * `npm run verify-receipt -- <receipt.json> [--keys <url-or-file>] [--catalog <file>] [--no-recompute]`
 *
 * Verifies a receipt offline (C10): its hash over the RFC 8785 bytes of its payload, and its ECDSA P-256
 * signature with the key `key_id` from a JWKS (`GET /keys`, a URL or a saved file). Then recomputes its totals
 * from the versions it pins: the catalog parts come from `--catalog` (an export of exactly those versions) or
 * from `GET /admin/catalog/export?pricelist_version=…&fx_version=…&tax_rule_version=…` of the local stack
 * (`API_URL`, admin token as for `npm run catalog`). Exit code 0 only when everything checks out, 1 when
 * something does not (or cannot be read), 2 for a wrong command line (bin/cli.ts).
 */
import { canonicalJson, type Json } from '../functions/domain/money/canonical';
import type { JsonObject } from '../functions/domain/receipts/receipt';
import { type Jwk, verifyReceipt } from '../functions/domain/receipts/receipt';
import { catalogDocumentSchema } from '../functions/schemas/catalog-document';
import {
  type CatalogRelease,
  fxVersionNumber,
  repriceReceipt,
  splitDocument,
} from '../functions/usecases/catalog/release';
import { adminToken, DEFAULT_API_URL } from './admin-client';
import { atMost, type CliIo, type Help, isHelp, parseToolLine, runMain, UsageError } from './cli';
import { defaultKeysSource, loadJson, runVerifier } from './keys';

export const USAGE = `usage: npm run verify-receipt -- <receipt.json> [--keys <url-or-file>] [--catalog <file>] [--no-recompute]
keys default to $API_URL/keys (the local stack by default); without --catalog, the pinned versions come from the
local stack's GET /admin/catalog/export (ADMIN_TOKEN, else admin_token in $DATA_DIR/credentials.json)`;

interface Options {
  readonly file: string;
  readonly keys?: string;
  readonly catalog?: string;
  readonly recompute: boolean;
}

export const parseOptions = (argv: readonly string[]): Options | Help => {
  const line = parseToolLine(argv, {
    keys: { type: 'string' },
    catalog: { type: 'string' },
    'no-recompute': { type: 'boolean' },
  });
  if (isHelp(line)) return line;
  const [file] = atMost(line.positionals, 1);
  if (file === undefined) throw new UsageError('give a receipt file');
  const { keys, catalog } = line.values;
  return {
    file,
    recompute: line.values['no-recompute'] !== true,
    ...(keys === undefined ? {} : { keys }),
    ...(catalog === undefined ? {} : { catalog }),
  };
};

/** The receipt's pinned release, from a file or from the API's export by versions. */
const pinnedRelease = async (
  io: CliIo,
  receipt: JsonObject,
  catalogFile?: string,
): Promise<CatalogRelease> => {
  const fxVersion = String(receipt.fx_version);
  let document: unknown;
  if (catalogFile) {
    document = JSON.parse(await io.readFile(catalogFile));
  } else {
    const base = io.env.API_URL || DEFAULT_API_URL;
    const query = new URLSearchParams({
      pricelist_version: String(receipt.pricelist_version),
      fx_version: fxVersion,
      tax_rule_version: String(receipt.tax_rule_version),
    });
    const response = await io.fetch(`${base}/admin/catalog/export?${query}`, {
      method: 'GET',
      headers: { authorization: `Bearer ${await adminToken(io)}` },
    });
    if (!response.ok) throw new Error(`the catalog export answered ${response.status}`);
    document = await response.json();
  }
  const parsed = catalogDocumentSchema.parse(document);
  const parts = splitDocument(parsed);
  const from = String(receipt.quoted_at);
  return {
    commercial: {
      version: Number(receipt.pricelist_version),
      effective_from: from,
      content: parts.commercial,
    },
    fx: { version: fxVersionNumber(fxVersion) ?? 0, effective_from: from, content: parts.fx },
    tax: { version: Number(receipt.tax_rule_version), effective_from: from, content: parts.tax },
  };
};

/** Prices the receipt's basket again on its pinned versions; returns the fields that differ. */
export const recomputeDifferences = (receipt: JsonObject, release: CatalogRelease): string[] => {
  const pricing = repriceReceipt(receipt, release);
  const totals = receipt.computed_totals as JsonObject;
  const expected: Record<string, Json> = {
    subtotal: pricing.subtotal,
    discounts: pricing.discounts,
    total: pricing.total,
    currency: pricing.currency,
    taxes: pricing.taxes as unknown as Json,
    fees: pricing.fees as unknown as Json,
  };
  return Object.entries(expected)
    .filter(([field, value]) => canonicalJson(totals[field] ?? null) !== canonicalJson(value))
    .map(
      ([field, value]) =>
        `${field}: receipt ${canonicalJson(totals[field] ?? null)}, recomputed ${canonicalJson(value)}`,
    );
};

/**
 * The receipt's hash and signature checked offline against a JWKS (`GET /keys`, as fetched or saved), with the
 * line that says so: `receipt rcpt_…: hash and signature valid (key …)` or `receipt rcpt_…: INVALID (reason)`.
 */
export const checkReceipt = (
  receipt: JsonObject,
  jwks: unknown,
): { readonly valid: boolean; readonly line: string } => {
  const keys = typeof jwks === 'object' && jwks !== null && 'keys' in jwks ? jwks.keys : undefined;
  const check = verifyReceipt(receipt, Array.isArray(keys) ? (keys as Jwk[]) : []);
  const name = `receipt ${String(receipt.receipt_id)}`;
  return check.valid
    ? { valid: true, line: `${name}: hash and signature valid (key ${String(receipt.key_id)})` }
    : { valid: false, line: `${name}: INVALID (${check.reason})` };
};

/** Exit code 0 when the receipt verifies (and its totals recompute), 1 when not, 2 for a wrong command line. */
export const run = (argv: readonly string[], io: CliIo): Promise<number> =>
  runVerifier(argv, io, {
    usage: USAGE,
    parse: parseOptions,
    execute: async (options) => {
      const receipt = JSON.parse(await io.readFile(options.file)) as JsonObject;
      const check = checkReceipt(receipt, await loadJson(io, options.keys ?? defaultKeysSource(io)));
      io.stdout(`${check.line}\n`);
      if (!check.valid) return 1;
      if (!options.recompute) return 0;
      const differences = recomputeDifferences(receipt, await pinnedRelease(io, receipt, options.catalog));
      if (differences.length > 0) {
        io.stdout(`recomputed totals DIFFER:\n  ${differences.join('\n  ')}\n`);
        return 1;
      }
      io.stdout(
        `recomputed from pricelist_version ${String(receipt.pricelist_version)}, ${String(receipt.fx_version)}, ` +
          `tax_rule_version ${String(receipt.tax_rule_version)}: totals match (${String((receipt.computed_totals as JsonObject).total)} ` +
          `${String((receipt.computed_totals as JsonObject).currency)})\n`,
      );
      return 0;
    },
  });

await runMain(import.meta.url, run);
