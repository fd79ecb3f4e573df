import type { Logger } from '@aws-lambda-powertools/logger';
import {
  DEFAULT_RECEIPT_EXPORT_SETTINGS,
  ReceiptExport,
  type ReceiptExportSettings,
} from '../usecases/receipts/export';
import type { ServiceDependencies } from './dependencies';

type Environment = Readonly<Record<string, string | undefined>>;

const integer = (env: Environment, name: string, fallback: number, min: number, max: number): number => {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || parsed < min || parsed > max) {
    throw new Error(`${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}`);
  }
  return parsed;
};

/**
 * When the finance export builds daily manifests: `RECEIPT_EXPORT_GRACE_MINUTES` after midnight UTC (default 15,
 * covering the stream's lag) the previous day is closed; the scheduled run looks `RECEIPT_EXPORT_LOOKBACK_DAYS`
 * closed days back (default 7) for a missing manifest.
 */
export const receiptExportSettings = (env: Environment): ReceiptExportSettings => ({
  graceMinutes: integer(
    env,
    'RECEIPT_EXPORT_GRACE_MINUTES',
    DEFAULT_RECEIPT_EXPORT_SETTINGS.graceMinutes,
    0,
    1440,
  ),
  lookbackDays: integer(
    env,
    'RECEIPT_EXPORT_LOOKBACK_DAYS',
    DEFAULT_RECEIPT_EXPORT_SETTINGS.lookbackDays,
    1,
    90,
  ),
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
