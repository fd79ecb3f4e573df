/**
 * Catalogs larger than one API response or request: an export past `EXPORT_INLINE_MAX_BYTES` (or asked for as a
 * link) is stored once as gzip JSON and handed out as a download link; a document to import may be uploaded
 * through an upload link and then imported by its upload id (`POST /admin/catalog/import` with `upload_id`).
 */
import { MAX_CATALOG_UPLOAD_BYTES } from '../../definitions/limits';
import type { CatalogFiles, FileLink } from '../../ports/catalog-files';

/**
 * Largest export answered in the response body, measured as Lambda carries it (a JSON string inside the proxy
 * response, quotes escaped): below Lambda's 6 MB response limit with room for the headers.
 */
export const EXPORT_INLINE_MAX_BYTES = 5 * 1024 * 1024;
/** How long a download or upload link works. */
export const FILE_LINK_SECONDS = 15 * 60;
export { MAX_CATALOG_UPLOAD_BYTES };
/**
 * Where exports are stored (by day, then content-addressed: a link always names an object written that day, far
 * from its 7-day expiry) and where uploads land (expired after a day).
 */
export const CATALOG_FILE_PREFIXES = { exports: 'exports/', uploads: 'uploads/' } as const;

/** An export handed out as a file: its download link, size and format. */
export interface ExportLink extends FileLink {
  readonly bytes: number;
  readonly content_type: 'application/gzip';
}

/**
 * How an export is handed out: in the body up to `EXPORT_INLINE_MAX_BYTES` (measured as Lambda carries the body,
 * a JSON string inside the proxy response, each quote escaped once more), else — or when `link` is asked — as a
 * download link of the document stored once. The document is serialised once.
 */
export const deliverExport = async (
  files: CatalogFiles,
  document: unknown,
  options: { readonly link: boolean; readonly at: Date },
): Promise<{ readonly link?: ExportLink }> => {
  const json = JSON.stringify(document);
  if (!options.link && Buffer.byteLength(JSON.stringify(json)) <= EXPORT_INLINE_MAX_BYTES) return {};
  const day = options.at.toISOString().slice(0, 10);
  const stored = await files.storeJson(`${CATALOG_FILE_PREFIXES.exports}${day}/catalog-`, json);
  const link = await files.downloadLink(stored.key, FILE_LINK_SECONDS);
  return { link: { ...link, bytes: stored.bytes, content_type: 'application/gzip' } };
};

/** Where to upload a catalog document (gzip or plain JSON, one HTTP PUT) before importing it by `upload_id`. */
export interface CatalogUpload extends FileLink {
  readonly upload_id: string;
  readonly method: 'PUT';
  /** The size the link accepts, exactly. */
  readonly bytes: number;
  readonly max_bytes: number;
}

export const createUpload = async (
  files: CatalogFiles,
  uploadId: string,
  bytes: number,
): Promise<CatalogUpload> => ({
  upload_id: uploadId,
  method: 'PUT',
  ...(await files.uploadLink(`${CATALOG_FILE_PREFIXES.uploads}${uploadId}`, FILE_LINK_SECONDS, bytes)),
  bytes,
  max_bytes: MAX_CATALOG_UPLOAD_BYTES,
});

/** The uploaded document, or `undefined` when nothing was uploaded under the id (or it expired). */
export const readUpload = (files: CatalogFiles, uploadId: string): Promise<unknown> =>
  files.readJson(`${CATALOG_FILE_PREFIXES.uploads}${uploadId}`, MAX_CATALOG_UPLOAD_BYTES);
