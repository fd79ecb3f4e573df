import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBBatchResponse, DynamoDBRecord, DynamoDBStreamEvent } from 'aws-lambda';
import { awsDependencies } from '../composition/aws';
import type { ServiceDependencies } from '../composition/dependencies';
import { receiptExport } from '../composition/receipts';
import { type ReceiptChange, receiptImageOf } from '../domain/receipts/export/documents';
import {
  ManifestRefusedError,
  type ManifestResult,
  type ManifestRunReport,
  type ReexportReport,
} from '../usecases/receipts/export';
import { publishKeySet } from '../usecases/receipts/key-set';
import { lazyHandler } from './lazy';
import { causeOf } from './middleware/http';
import { handleStreamBatch } from './stream-batch';

/** Records of one stream batch exported at once. */
const EXPORT_CONCURRENCY = 8;

/** What an explicit invocation answers: the manifest, or a C6-style refusal. */
export type ManifestInvocationResult =
  | ({ readonly ok: true } & ManifestResult)
  | { readonly ok: false; readonly error: string; readonly error_description: string };

/** What a backfill invocation answers: what it exported, or a C6-style refusal. */
export type ReexportInvocationResult =
  | ({ readonly ok: true } & ReexportReport)
  | { readonly ok: false; readonly error: string; readonly error_description: string };

export type ExporterResult =
  | DynamoDBBatchResponse
  | ManifestRunReport
  | ManifestInvocationResult
  | ReexportInvocationResult;

export type ExporterHandler = (event: unknown, context: unknown) => Promise<ExporterResult>;

const isStreamEvent = (event: unknown): event is DynamoDBStreamEvent =>
  typeof event === 'object' && event !== null && Array.isArray((event as { Records?: unknown }).Records);

const imageOf = (image: Record<string, unknown> | undefined) =>
  image ? receiptImageOf(unmarshall(image as Record<string, AttributeValue>)) : undefined;

const changeOf = (record: DynamoDBRecord): ReceiptChange | undefined => {
  const eventName = record.eventName;
  if (eventName !== 'INSERT' && eventName !== 'MODIFY' && eventName !== 'REMOVE') return undefined;
  const oldImage = imageOf(record.dynamodb?.OldImage);
  const newImage = imageOf(record.dynamodb?.NewImage);
  return { eventName, ...(oldImage ? { oldImage } : {}), ...(newImage ? { newImage } : {}) };
};

/**
 * The finance exporter, three ways in:
 * - the receipts table's stream (event source mapping): each record's new documents become objects in the
 *   receipts bucket; every failed record is reported (ReportBatchItemFailures), so the mapping retries
 *   from there and a batch handed over again writes nothing twice;
 * - its hourly schedule (EventBridge Scheduler; a timer locally): the manifests of the closed days of the
 *   lookback window that are missing;
 * - an operator's `aws lambda invoke --payload '{"manifest_date":"YYYY-MM-DD"}'`: that day's manifest, refused
 *   (`day_not_closed`) before the day is closed;
 * - an operator's backfill, `{"reexport":{"from":"YYYY-MM-DD","to":"YYYY-MM-DD","cursor"?}}`: the stored receipts'
 *   documents of those days that the bucket lacks (records the stream could not export), page by page.
 */
export const createExporterHandler = (deps: ServiceDependencies): ExporterHandler => {
  const logger = deps.createLogger('exporter');
  const exporter = receiptExport(deps, logger);

  const exportBatch = (event: DynamoDBStreamEvent): Promise<DynamoDBBatchResponse> =>
    handleStreamBatch(
      event,
      EXPORT_CONCURRENCY,
      async (record) => {
        const change = changeOf(record);
        const exported = change ? await exporter.exportChange(change) : [];
        if (exported.length > 0) logger.info('documents exported', { exported });
      },
      (record, error) =>
        logger.error('receipt export failed', {
          alarm: 'ReceiptExportFailed',
          sequence_number: record.dynamodb?.SequenceNumber ?? '',
          error: (error as Error).message,
          ...causeOf(error),
        }),
    );

  const refusal = (error: unknown) => {
    if (error instanceof ManifestRefusedError) {
      return { ok: false as const, error: error.code, error_description: error.message };
    }
    throw error;
  };

  return async (event) => {
    if (isStreamEvent(event)) return exportBatch(event);
    if (typeof event === 'object' && event !== null && 'reexport' in event) {
      const request = (event as { reexport: unknown }).reexport;
      const { from, to, cursor } = (typeof request === 'object' && request !== null ? request : {}) as Record<
        string,
        unknown
      >;
      try {
        const report = await exporter.reexport({
          from: String(from),
          to: String(to),
          ...(typeof cursor === 'string' ? { cursor } : {}),
        });
        logger.info('receipts re-exported', { ...report, created: report.created.length });
        return { ok: true, ...report };
      } catch (error) {
        return refusal(error);
      }
    }
    if (typeof event === 'object' && event !== null && 'manifest_date' in event) {
      try {
        const result = await exporter.buildManifest(
          String((event as { manifest_date: unknown }).manifest_date),
        );
        return { ok: true, ...result };
      } catch (error) {
        return refusal(error);
      }
    }
    const report = await exporter.buildDueManifests();
    if (report.created.length > 0 || report.failed.length > 0) logger.info('manifest run', { ...report });
    // The key set verifiers pin (`--jwks`): written once per distinct set, beside the receipts it verifies.
    await publishKeySet(deps.receiptExport.objects, deps.receiptSigner, deps.retiredReceiptKeys).then(
      ({ key, outcome }) => {
        if (outcome === 'created') logger.info('receipt key set written', { key });
      },
      (error: unknown) => logger.error('receipt key set not written', { error: error as Error }),
    );
    return report;
  };
};

export const handler = lazyHandler(() => createExporterHandler(awsDependencies('exporter')));
