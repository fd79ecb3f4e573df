import type { CatalogRepository } from '../../ports/catalog';
import type { CatalogDocument } from '../../schemas/catalog-document';
import { CatalogNotFoundError, type CatalogReader } from './reader';
import { joinRelease } from './release';

export type ExportSelection =
  | { readonly kind: 'current' }
  | { readonly kind: 'revision'; readonly revision: number }
  /** The parts a receipt pins, whatever is in force now: what recomputing a receipt years later needs. */
  | { readonly kind: 'versions'; readonly commercial: number; readonly fx: number; readonly tax: number };

export interface CatalogExport {
  readonly document: CatalogDocument & { readonly effective_from?: string };
  readonly revision?: number;
  readonly versions: string;
}

/** The catalog in the import format: the release in force, a publication by revision, or pinned part versions. */
export const exportCatalog = async (
  reader: CatalogReader,
  repository: CatalogRepository,
  selection: ExportSelection,
): Promise<CatalogExport> => {
  if (selection.kind === 'versions') {
    const release = await reader.release(selection);
    return {
      document: joinRelease(release),
      versions: `${selection.commercial},fx-${selection.fx},${selection.tax}`,
    };
  }
  const publication =
    selection.kind === 'revision'
      ? (await repository.publications()).find((entry) => entry.revision === selection.revision)
      : (await reader.current({ fresh: true })).publication;
  if (!publication)
    throw new CatalogNotFoundError(
      `no catalog revision ${selection.kind === 'revision' ? selection.revision : ''}`,
    );
  const { commercial, fx, tax } = publication.versions;
  const release = await reader.release(publication.versions);
  return {
    document: { effective_from: publication.effective_from, ...joinRelease(release) },
    revision: publication.revision,
    versions: `${commercial},fx-${fx},${tax}`,
  };
};
