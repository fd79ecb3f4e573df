import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoIdempotencyLedger, IDEMPOTENCY_LEASE_SECONDS } from '../adapters/aws/idempotency-ledger';
import type { IdempotencyDependencies } from './dependencies';
import { type Environment, integerSetting } from './environment';

/**
 * The idempotency layer of every POST (C8, C25): the ledger on the `idempotency` table, with the in-progress lease
 * from `IDEMPOTENCY_LEASE_SECONDS` (1–900, default IDEMPOTENCY_LEASE_SECONDS = 10).
 */
export const idempotencyDependencies = (
  documents: DynamoDBDocumentClient,
  tableName: string,
  env: Environment,
  onCheckpoint?: IdempotencyDependencies['onCheckpoint'],
): IdempotencyDependencies => ({
  ledger: new DynamoIdempotencyLedger({
    documents,
    tableName,
    leaseSeconds: integerSetting(env, 'IDEMPOTENCY_LEASE_SECONDS', 1, 900) ?? IDEMPOTENCY_LEASE_SECONDS,
  }),
  ...(onCheckpoint ? { onCheckpoint } : {}),
});

/**
 * A test hook of the local stack: `CRASH_AT=<operation>:<point>[,…]` ends the process with SIGKILL the first time
 * a request of that operation passes that point (`after-effect`, `after-record`, or a point a use case names),
 * so the crash tests see a real crash at a known place. Unset (always, outside those tests): no hook.
 */
export const crashHookFromEnv = (env: Environment): IdempotencyDependencies['onCheckpoint'] => {
  const points = new Set(
    (env.CRASH_AT ?? '')
      .split(',')
      .map((point) => point.trim())
      .filter((point) => point.length > 0),
  );
  if (points.size === 0) return undefined;
  return (operation, point) => {
    if (points.has(`${operation}:${point}`)) process.kill(process.pid, 'SIGKILL');
  };
};
