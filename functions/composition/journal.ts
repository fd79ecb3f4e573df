import { type Environment, integerSetting } from './environment';

/** Names the audit journal in its signed tree heads. */
export const JOURNAL_LOG_ID = 'pricing-audit-journal';

/**
 * When the journal closes a slice with a signed tree head: after `JOURNAL_SLICE_SIZE` entries (default 32) or
 * when the last head is `JOURNAL_SLICE_SECONDS` old (default 3600) and entries wait.
 */
export const journalSlicing = (env: Environment): { sliceSize: number; sliceSeconds: number } => ({
  sliceSize: integerSetting(env, 'JOURNAL_SLICE_SIZE', 1, 100_000) ?? 32,
  sliceSeconds: integerSetting(env, 'JOURNAL_SLICE_SECONDS', 1, 86_400) ?? 3600,
});
