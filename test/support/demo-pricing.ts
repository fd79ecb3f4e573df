import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { PricingCatalog } from '../../functions/domain/pricing/types';
import { type CatalogDocument, catalogDocumentSchema } from '../../functions/schemas/catalog-document';
import {
  type CatalogRelease,
  splitDocument,
  toPricingCatalog,
} from '../../functions/usecases/catalog/release';

/** A moment the demo catalog is in force (its lists from 2026-11-20, its rates from 2026-11-22 11:55). */
export const DEMO_AT = new Date('2026-11-22T12:00:00.000Z');

/** The demo catalog `npm start` publishes, parsed by the import schema. */
export const demoDocument = (): CatalogDocument =>
  catalogDocumentSchema.parse(
    JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../catalog/demo-catalog.json'), 'utf8')),
  );

/** A document as one release (every part version 1), as the local stack publishes it. */
export const releaseOf = (document: CatalogDocument): CatalogRelease => {
  const parts = splitDocument(document);
  return {
    commercial: { version: 1, effective_from: '2026-11-20T00:00:00.000Z', content: parts.commercial },
    fx: { version: 1, effective_from: '2026-11-22T11:55:00.000Z', content: parts.fx },
    tax: { version: 1, effective_from: '2026-07-01T00:00:00.000Z', content: parts.tax },
  };
};

/** The engine's snapshot of a release for a tenant at `DEMO_AT`. */
export const pricingCatalogOf = (release: CatalogRelease, tenant?: string): PricingCatalog =>
  toPricingCatalog(release, { ...(tenant ? { tenant } : {}), at: DEMO_AT });
