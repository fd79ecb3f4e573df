/**
 * `npm run verify-receipt -- <receipt.json> [--keys <url-or-file>] [--catalog <file>] [--no-recompute]`
 *
 * Verifies a receipt offline (C10): its hash over the RFC 8785 bytes of its payload, and its ECDSA P-256
 * signature with the key `key_id` from a JWKS (`GET /keys`, a URL or a saved file). Then recomputes its totals
 * from the versions it pins: the catalog parts come from `--catalog` (an export of exactly those versions) or
 * from `GET /admin/catalog/export?pricelist_version=…&fx_version=…&tax_rule_version=…` of the local stack
 * (`API_URL`, admin token as for `npm run catalog`). Exit code 0 only when everything checks out.
 */
import { canonicalJson, type Json } from '../functions/domain/money/canonical';
import { priceBasket } from '../functions/domain/pricing/basket';
import type { BasketRequest } from '../functions/domain/pricing/types';
import type { JsonObject } from '../functions/domain/receipts/receipt';
import { type Jwk, verifyReceipt } from '../functions/domain/receipts/receipt';
import { catalogDocumentSchema } from '../functions/schemas/catalog-document';
import {
  type CatalogRelease,
  fxVersionNumber,
  splitDocument,
  toPricingCatalog,
} from '../functions/usecases/catalog/release';
import { adminToken, type CliIo, DEFAULT_API_URL } from './catalog';
import { isMainModule, processIo } from './cli';
import { defaultKeysSource, loadJson } from './keys';

const USAGE =
  'usage: npm run verify-receipt -- <receipt.json> [--keys <url-or-file>] [--catalog <file>] [--no-recompute]';

interface Options {
  readonly file: string;
  readonly keys?: string;
  readonly catalog?: string;
  readonly recompute: boolean;
}

export const parseOptions = (argv: readonly string[]): Options => {
  let file: string | undefined;
  let keys: string | undefined;
  let catalog: string | undefined;
  let recompute = true;
  for (let index = 0; index < argv.length; index += 1) {
    const arg = argv[index] as string;
    if (arg === '--keys') keys = argv[++index];
    else if (arg === '--catalog') catalog = argv[++index];
    else if (arg === '--no-recompute') recompute = false;
    else if (arg.startsWith('--') || file) throw new Error(USAGE);
    else file = arg;
  }
  if (!file) throw new Error(USAGE);
  return { file, recompute, ...(keys ? { keys } : {}), ...(catalog ? { catalog } : {}) };
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
  const basket = receipt.basket as unknown as BasketRequest;
  const quotedAt = new Date(String(receipt.quoted_at));
  const pricing = priceBasket(
    toPricingCatalog(release, { ...(basket.tenant ? { tenant: basket.tenant } : {}), at: quotedAt }),
    basket,
    { at: quotedAt.toISOString() },
  );
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

export const run = async (argv: readonly string[], io: CliIo): Promise<number> => {
  let options: Options;
  try {
    options = parseOptions(argv);
  } catch (error) {
    io.stderr(`${(error as Error).message}\n`);
    return 2;
  }
  try {
    const receipt = JSON.parse(await io.readFile(options.file)) as JsonObject;
    const keysSource = options.keys ?? defaultKeysSource(io);
    const jwks = (await loadJson(io, keysSource)) as { keys?: Jwk[] };
    const check = verifyReceipt(receipt, jwks.keys ?? []);
    if (!check.valid) {
      io.stdout(`receipt ${String(receipt.receipt_id)}: INVALID (${check.reason})\n`);
      return 1;
    }
    io.stdout(
      `receipt ${String(receipt.receipt_id)}: hash and signature valid (key ${String(receipt.key_id)})\n`,
    );
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
  } catch (error) {
    io.stderr(`cannot verify: ${(error as Error).message}\n`);
    return 1;
  }
};

if (isMainModule(import.meta.url)) {
  run(process.argv.slice(2), processIo()).then((code) => process.exit(code));
}
