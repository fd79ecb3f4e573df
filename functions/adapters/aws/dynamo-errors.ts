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
  const reasons = cancellationCodes(error);
  if (!reasons) return undefined;
  if (reasons.includes('ConditionalCheckFailed')) return 'condition';
  if (reasons.includes('TransactionConflict')) return 'conflict';
  // A cancelled transaction that names no reason (some emulators): treat it as a failed condition.
  return reasons.length === 0 ? 'condition' : undefined;
};

/**
 * Why each item of a cancelled transaction failed, in the transaction's order (`ConditionalCheckFailed`,
 * `TransactionConflict`, `None`…), or undefined when the error is not a cancelled transaction.
 */
export const cancellationCodes = (error: unknown): readonly (string | undefined)[] | undefined =>
  (error as Error).name === 'TransactionCanceledException'
    ? ((error as { CancellationReasons?: readonly { Code?: string }[] }).CancellationReasons ?? []).map(
        (reason) => reason.Code,
      )
    : undefined;
