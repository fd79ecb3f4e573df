import type { Logger } from '@aws-lambda-powertools/logger';
import {
  DEFAULT_RECEIPT_EXPORT_SETTINGS,
  ReceiptExport,
  type ReceiptExportSettings,
} from '../usecases/receipts/export';
import type { ServiceDependencies } from './dependencies';
import { type Environment, integerSetting } from './environment';

/**
 * When the finance export builds daily manifests: `RECEIPT_EXPORT_GRACE_MINUTES` after midnight UTC (default 15,
 * covering the stream's lag) the previous day is closed; the scheduled run looks `RECEIPT_EXPORT_LOOKBACK_DAYS`
 * closed days back (default 7) for a missing manifest.
 */
export const receiptExportSettings = (env: Environment): ReceiptExportSettings => ({
  graceMinutes:
    integerSetting(env, 'RECEIPT_EXPORT_GRACE_MINUTES', 0, 1440) ??
    DEFAULT_RECEIPT_EXPORT_SETTINGS.graceMinutes,
  lookbackDays:
    integerSetting(env, 'RECEIPT_EXPORT_LOOKBACK_DAYS', 1, 90) ??
    DEFAULT_RECEIPT_EXPORT_SETTINGS.lookbackDays,
});

/** The export use case over a function's dependencies. */
export const receiptExport = (deps: ServiceDependencies, logger: Logger): ReceiptExport =>
  new ReceiptExport({
    objects: deps.receiptExport.objects,
    journal: deps.journal,
    signer: deps.receiptSigner,
    clock: deps.clock,
    settings: deps.receiptExport.settings,
    receipts: deps.receiptExport.receipts,
    logger,
  });
