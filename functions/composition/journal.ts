type Environment = Readonly<Record<string, string | undefined>>;

/** Names the audit journal in its signed tree heads. */
export const JOURNAL_LOG_ID = 'pricing-audit-journal';

const positiveInteger = (env: Environment, name: string, fallback: number, max: number): number => {
  const value = env[name];
  if (value === undefined || value === '') return fallback;
  const parsed = Number(value);
  if (!/^\d+$/.test(value) || parsed < 1 || parsed > max) {
    throw new Error(`${name} must be an integer from 1 to ${max}, got ${JSON.stringify(value)}`);
  }
  return parsed;
};

/**
 * When the journal closes a slice with a signed tree head: after `JOURNAL_SLICE_SIZE` entries (default 32) or
 * when the last head is `JOURNAL_SLICE_SECONDS` old (default 3600) and entries wait.
 */
export const journalSlicing = (env: Environment): { sliceSize: number; sliceSeconds: number } => ({
  sliceSize: positiveInteger(env, 'JOURNAL_SLICE_SIZE', 32, 100_000),
  sliceSeconds: positiveInteger(env, 'JOURNAL_SLICE_SECONDS', 3600, 86_400),
});
