/**
 * Why a conditional DynamoDB write did not happen.
 * - `condition`: a condition expression was false (`ConditionalCheckFailedException`, or a cancelled transaction
 *   whose reasons include `ConditionalCheckFailed`): someone else's write came first.
 * - `conflict`: a transaction was cancelled only because another transaction was touching the same items
 *   (`TransactionConflict`): nothing was decided, retrying is right.
 * - `undefined`: any other error, to be thrown.
 */
export const conditionalFailure = (error: unknown): 'condition' | 'conflict' | undefined => {
  const name = (error as Error).name;
  if (name === 'ConditionalCheckFailedException') return 'condition';
  if (name !== 'TransactionCanceledException') return undefined;
  const reasons = (error as { CancellationReasons?: readonly { Code?: string }[] }).CancellationReasons ?? [];
  if (reasons.some((reason) => reason.Code === 'ConditionalCheckFailed')) return 'condition';
  if (reasons.some((reason) => reason.Code === 'TransactionConflict')) return 'conflict';
  // A cancelled transaction that names no reason (some emulators): treat it as a failed condition.
  return reasons.length === 0 ? 'condition' : undefined;
};
