/**
 * The finance export of receipts (C10 documents) to the receipts bucket.
 *
 * - Each change of the receipts table (its stream) exports the signed documents it brings: the receipt on
 *   INSERT, each refund (return or chargeback) new in the image on MODIFY, under
 *   `receipts/dt=<day>/<id>.json`, as their RFC 8785 bytes. Objects are write-once: a record delivered again
 *   finds the same bytes there (by their SHA-256) and writes nothing; other bytes under the key are a conflict.
 * - A day's manifest is built once the day is closed (its next day began `graceMinutes` ago, so the stream's lag
 *   is covered): every object of the partition, hashed, in key order, with the RFC 9162 Merkle root of their
 *   digests and the totals per currency, signed like a receipt; then the CSV summary; then a journal entry
 *   `receipts-manifest:<day>` with the root (an append that is idempotent by its id). The manifest is the commit
 *   point: a run that stopped after it finishes the summary and the journal entry from the stored manifest.
 *   The scheduled run builds what is missing for the last `lookbackDays` closed days.
 * - A document exported after its day's manifest was written is not in that manifest: it is reported (the
 *   `ReceiptExportLate` signal) for an operator to look at, as the offline verification would.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { summaryBytes } from '../../domain/receipts/export/csv';
import {
  closedDays,
  datesBetween,
  dueDays,
  isDayClosed,
  isExportDate,
} from '../../domain/receipts/export/dates';
import {
  decodeJsonObject,
  documentsOfChange,
  type ExportDocument,
  exportBytes,
  exportDocumentOf,
  type ReceiptChange,
  receiptImageOf,
  sha256Hex,
  summaryFieldsOf,
} from '../../domain/receipts/export/documents';
import {
  MANIFESTS_PREFIX,
  manifestKey,
  parseDocumentKey,
  parseManifestKey,
  partitionPrefix,
  RECEIPTS_PREFIX,
  summaryKey,
} from '../../domain/receipts/export/keys';
import {
  asManifest,
  buildManifestPayload,
  type FoundObject,
  MANIFEST_ENTRY_TYPE,
  type Manifest,
  manifestEntryData,
  manifestEntryId,
} from '../../domain/receipts/export/manifest';
import { canonicalBytes, type JsonObject, receiptHash } from '../../domain/receipts/receipt';
import type { ReceiptItemSource } from '../../ports/checkout';
import type { Clock } from '../../ports/clock';
import type { JournalEntryInput } from '../../ports/journal';
import { ObjectConflictError, type ObjectStore, type PutOnceOutcome } from '../../ports/object-store';
import type { ReceiptSigner } from '../../ports/signing';
import { mapConcurrently } from '../../shared/concurrency';

/** When manifests are built. */
export interface ReceiptExportSettings {
  /** Minutes after midnight (UTC) before the previous day is closed. */
  readonly graceMinutes: number;
  /** How many closed days back the scheduled run looks for a missing manifest. */
  readonly lookbackDays: number;
}

export const DEFAULT_RECEIPT_EXPORT_SETTINGS: ReceiptExportSettings = { graceMinutes: 15, lookbackDays: 7 };

/** The journal, as far as the export uses it. */
export interface ExportJournal {
  append(input: JournalEntryInput): Promise<{ index: number; created: boolean }>;
  has(entryId: string): Promise<boolean>;
}

/** The slice of the Powertools logger the export uses. */
export type ExportLogger = Pick<Logger, 'info' | 'warn' | 'error'>;

export interface ReceiptExportDependencies {
  readonly objects: ObjectStore;
  readonly journal: ExportJournal;
  readonly signer: ReceiptSigner;
  readonly clock: Clock;
  readonly settings: ReceiptExportSettings;
  readonly logger: ExportLogger;
  /** The stored receipts, read by a backfill (`reexport`). */
  readonly receipts?: ReceiptItemSource;
}

/** A manifest asked for a day that is not closed yet (or not a date). */
export class ManifestRefusedError extends Error {
  constructor(
    readonly code: 'invalid_request' | 'day_not_closed',
    message: string,
  ) {
    super(message);
    this.name = 'ManifestRefusedError';
  }
}

/** A stored object that contradicts its manifest (bytes changed after the manifest was written). */
export class ExportIntegrityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExportIntegrityError';
  }
}

export interface ExportedObject {
  readonly key: string;
  readonly type: ExportDocument['type'];
  readonly outcome: PutOnceOutcome;
}

export interface ManifestResult {
  readonly date: string;
  /** `created`: built now; `exists`: it was there (and the summary and journal entry are too, now). */
  readonly outcome: 'created' | 'exists';
  readonly count: number;
  readonly merkle_root: string;
  readonly journal_index?: number;
}

/** What one backfill run did; `cursor` (when present) continues it where this run stopped. */
export interface ReexportReport {
  readonly from: string;
  readonly to: string;
  readonly scanned: number;
  readonly created: readonly string[];
  readonly existing: number;
  readonly cursor?: string;
}

/** Items read per page and pages per run of a backfill (one run stays well inside the function's timeout). */
const REEXPORT_PAGE_SIZE = 100;
const REEXPORT_MAX_PAGES = 200;

export interface ManifestRunReport {
  readonly checked: readonly string[];
  readonly created: readonly ManifestResult[];
  readonly failed: readonly { readonly date: string; readonly error: string }[];
}

const JSON_TYPE = 'application/json';
const CSV_TYPE = 'text/csv; charset=utf-8; header=present';
/** Objects read at once while building a manifest. */
const READ_PARALLEL = 16;

const parseObject = (key: string, bytes: Uint8Array): JsonObject => {
  const decoded = decodeJsonObject(bytes);
  if ('problem' in decoded) throw new ExportIntegrityError(`${key} is ${decoded.problem}`);
  return decoded.object;
};

export class ReceiptExport {
  constructor(private readonly deps: ReceiptExportDependencies) {}

  /** Exports the documents one change of the receipts table brings. */
  async exportChange(change: ReceiptChange): Promise<ExportedObject[]> {
    const exported: ExportedObject[] = [];
    for (const item of documentsOfChange(change)) {
      const outcome = await this.deps.objects.putOnce(item.key, exportBytes(item.document), JSON_TYPE);
      exported.push({ key: item.key, type: item.type, outcome });
      if (outcome === 'created') await this.reportIfLate(item);
    }
    return exported;
  }

  /** A document of a closed day whose manifest is already written is missing from that manifest. */
  private async reportIfLate(item: ExportDocument): Promise<void> {
    const { clock, settings, objects } = this.deps;
    if (!isDayClosed(item.date, clock.now(), settings.graceMinutes)) return;
    if (!(await objects.head(manifestKey(item.date)))) return;
    this.logLate(item.key, item.date);
  }

  /** The `ReceiptExportLate` signal: a document of `date` that its manifest does not list. */
  private logLate(key: string, date: string): void {
    this.deps.logger.error('document exported after its day was closed', {
      alarm: 'ReceiptExportLate',
      key,
      manifest: manifestKey(date),
    });
  }

  /**
   * Builds the manifest of `date` (with its summary and journal entry) unless it exists, in which case what a
   * stopped run left undone is finished. Refuses a day that is not closed (`ManifestRefusedError`).
   */
  async buildManifest(date: string): Promise<ManifestResult> {
    if (!isExportDate(date)) {
      throw new ManifestRefusedError(
        'invalid_request',
        `manifest_date must be a date (YYYY-MM-DD), got ${JSON.stringify(date)}`,
      );
    }
    const { clock, settings } = this.deps;
    if (!isDayClosed(date, clock.now(), settings.graceMinutes)) {
      throw new ManifestRefusedError(
        'day_not_closed',
        `${date} is not closed yet: its manifest can be built from ${date} + 1 day, 00:00 UTC + ${settings.graceMinutes} minutes`,
      );
    }
    const existing = await this.deps.objects.get(manifestKey(date));
    if (existing) return this.finish(this.storedManifest(date, existing), existing, 'exists');
    return this.create(date);
  }

  /**
   * Backfill: exports every document of the stored receipts dated `from` to `to` (UTC days, both included) that
   * the bucket lacks — a stream record that exhausted its retries, say. Documents already there are counted,
   * never written again; one written into a day whose manifest exists reports itself late, as any late document
   * does. A run reads at most `maxPages` pages; the report's `cursor` continues it.
   */
  async reexport(request: {
    readonly from: string;
    readonly to: string;
    readonly cursor?: string;
    readonly maxPages?: number;
    readonly pageSize?: number;
  }): Promise<ReexportReport> {
    const { receipts } = this.deps;
    if (!receipts) throw new Error('the receipts table is not available to this export');
    let days: ReadonlySet<string>;
    try {
      days = new Set(datesBetween(request.from, request.to, 366));
    } catch (error) {
      throw new ManifestRefusedError(
        'invalid_request',
        `from and to must be dates (YYYY-MM-DD), from ≤ to, at most 366 days: ${(error as Error).message}`,
      );
    }
    const created: string[] = [];
    let existing = 0;
    let scanned = 0;
    let cursor = request.cursor;
    for (let page = 0; page < (request.maxPages ?? REEXPORT_MAX_PAGES); page += 1) {
      const result = await receipts.page(cursor, request.pageSize ?? REEXPORT_PAGE_SIZE);
      scanned += result.items.length;
      for (const item of result.items) {
        const documents = documentsOfChange({ eventName: 'INSERT', newImage: receiptImageOf(item) });
        for (const document of documents.filter((candidate) => days.has(candidate.date))) {
          const outcome = await this.deps.objects.putOnce(
            document.key,
            exportBytes(document.document),
            JSON_TYPE,
          );
          if (outcome === 'created') {
            created.push(document.key);
            await this.reportIfLate(document);
          } else existing += 1;
        }
      }
      cursor = result.cursor;
      if (cursor === undefined) break;
    }
    return { from: request.from, to: request.to, scanned, created, existing, ...(cursor ? { cursor } : {}) };
  }

  /** The scheduled run: builds (or finishes) the manifest of every closed day of the lookback window. */
  async buildDueManifests(): Promise<ManifestRunReport> {
    const { clock, settings, objects, journal, logger } = this.deps;
    const closed = closedDays(clock.now(), settings.graceMinutes, settings.lookbackDays);
    const created: ManifestResult[] = [];
    const failed: { date: string; error: string }[] = [];
    const dates = dueDays(closed, await this.firstDay());
    for (const date of dates) {
      try {
        // A day whose manifest, summary and journal entry are all there costs two HEADs and one read.
        const [manifest, summary, journaled] = await Promise.all([
          objects.head(manifestKey(date)),
          objects.head(summaryKey(date)),
          journal.has(manifestEntryId(date)),
        ]);
        if (manifest && summary && journaled) continue;
        const result = await this.buildManifest(date);
        if (result.outcome === 'created') created.push(result);
      } catch (error) {
        failed.push({ date, error: (error as Error).message });
        logger.error('building the receipts manifest failed', {
          alarm: 'ReceiptExportFailed',
          date,
          error_type: (error as Error).name,
          error: (error as Error).message,
        });
      }
    }
    return { checked: dates, created, failed };
  }

  /** The export's first day: the date of its earliest manifest or document, whichever is earlier. */
  private async firstDay(): Promise<string | undefined> {
    const { objects } = this.deps;
    const [manifest, document] = await Promise.all([
      objects.firstKey(MANIFESTS_PREFIX),
      objects.firstKey(RECEIPTS_PREFIX),
    ]);
    const dates = [
      manifest === undefined ? undefined : parseManifestKey(manifest),
      document === undefined ? undefined : parseDocumentKey(document)?.date,
    ].filter((date): date is string => date !== undefined);
    return dates.sort()[0];
  }

  private storedManifest(date: string, bytes: Uint8Array): Manifest {
    const parsed = asManifest(parseObject(manifestKey(date), bytes));
    if ('problem' in parsed || parsed.manifest.date !== date) {
      throw new ExportIntegrityError(`${manifestKey(date)} is not the manifest of ${date}`);
    }
    return parsed.manifest;
  }

  private async create(date: string): Promise<ManifestResult> {
    const { objects, signer, clock } = this.deps;
    const listed = await objects.list(partitionPrefix(date));
    const found = await mapConcurrently(listed, READ_PARALLEL, async ({ key }): Promise<FoundObject> => {
      const bytes = await objects.get(key);
      if (!bytes) throw new ExportIntegrityError(`${key} was listed but cannot be read`);
      return { key, sha256: sha256Hex(bytes), document: summaryFieldsOf(parseObject(key, bytes)) };
    });
    const payload = buildManifestPayload({
      date,
      objects: found,
      generatedAt: clock.now().toISOString(),
      keyId: signer.keyId,
    }) as unknown as JsonObject;
    const manifest = {
      ...payload,
      hash: receiptHash(payload),
      signature: Buffer.from(await signer.sign(canonicalBytes(payload))).toString('base64'),
    } as JsonObject;
    const bytes = exportBytes(manifest);
    try {
      await objects.putOnce(manifestKey(date), bytes, JSON_TYPE);
    } catch (error) {
      // Another run wrote its manifest first: that one stands (it was built from the same closed day).
      if (!(error instanceof ObjectConflictError)) throw error;
      const stored = await objects.get(manifestKey(date));
      if (!stored) throw error;
      return this.finish(this.storedManifest(date, stored), stored, 'exists');
    }
    await this.reportMissedBy(date, new Set(listed.map(({ key }) => key)));
    const documents = new Map(found.map((object) => [object.key, object.document]));
    return this.finish(manifest as unknown as Manifest, bytes, 'created', documents);
  }

  /**
   * A document written between the listing and the manifest's write (a stream lagging past the grace) saw no
   * manifest yet, so it did not report itself late: the day is listed again once the manifest is written.
   */
  private async reportMissedBy(date: string, inManifest: ReadonlySet<string>): Promise<void> {
    for (const { key } of await this.deps.objects.list(partitionPrefix(date))) {
      if (!inManifest.has(key)) this.logLate(key, date);
    }
  }

  /**
   * Writes the summary (if missing) and appends the journal entry (if missing) of a stored manifest. The
   * summary is made from the manifest's own objects, each checked against the digest the manifest states.
   */
  private async finish(
    manifest: Manifest,
    bytes: Uint8Array,
    outcome: ManifestResult['outcome'],
    known?: ReadonlyMap<string, JsonObject>,
  ): Promise<ManifestResult> {
    const { objects, journal } = this.deps;
    const date = manifest.date;
    if (!(await objects.head(summaryKey(date)))) {
      const rows = await mapConcurrently(manifest.objects, READ_PARALLEL, async (object) => {
        let document = known?.get(object.key);
        if (!document) {
          const stored = await objects.get(object.key);
          if (!stored || sha256Hex(stored) !== object.sha256) {
            throw new ExportIntegrityError(`${object.key} does not match the manifest of ${date}`);
          }
          document = summaryFieldsOf(parseObject(object.key, stored));
        }
        return { item: exportDocumentOf(document), sha256: object.sha256 };
      });
      await objects.putOnce(summaryKey(date), summaryBytes(rows), CSV_TYPE);
    }
    let journalIndex: number | undefined;
    const entryId = manifestEntryId(date);
    if (!(await journal.has(entryId))) {
      journalIndex = (
        await journal.append({
          entry_id: entryId,
          type: MANIFEST_ENTRY_TYPE,
          data: manifestEntryData(manifest, sha256Hex(bytes)),
        })
      ).index;
    }
    const result: ManifestResult = {
      date,
      outcome,
      count: manifest.count,
      merkle_root: manifest.merkle_root,
      ...(journalIndex === undefined ? {} : { journal_index: journalIndex }),
    };
    this.deps.logger.info('receipts manifest', { ...result });
    return result;
  }
}
