import type { Logger } from '@aws-lambda-powertools/logger';
import { RETIRED_RECEIPT_KEY_IDS_ENV_VAR } from '../definitions';
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

const KMS_KEY_ARN = /^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:key\/[A-Za-z0-9-]{1,64}$/;

/**
 * `RETIRED_RECEIPT_KEY_IDS`: the KMS key ARNs of receipt keys retired from signing, comma-separated (unset or
 * empty: none). Receipts are kept 7–10 years and name their key, so every retired key stays listed.
 */
export const retiredReceiptKeysFromEnv = (env: Environment): string[] => {
  const value = env[RETIRED_RECEIPT_KEY_IDS_ENV_VAR];
  if (!value) return [];
  const ids = value
    .split(',')
    .map((id) => id.trim())
    .filter((id) => id.length > 0);
  const invalid = ids.filter((id) => !KMS_KEY_ARN.test(id));
  if (invalid.length > 0)
    throw new Error(`${RETIRED_RECEIPT_KEY_IDS_ENV_VAR}: not KMS key ARNs: ${invalid.join(', ')}`);
  return ids;
};
