/**
 * Helpers for tests of keys-only indexes and their staged replacement (`functions/definitions/index-migration.ts`)
 * on DynamoDB Local: the write units each index consumed, and the tables a stage's functions meet.
 */
import type { ConsumedCapacity, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  indexMigrationStages,
  parseIndexMigrationStage,
  retiredIndexesReadAt,
  type TableDefinition,
  tableIndexesAt,
} from '../../functions/definitions';

/** The write units each index consumed while `run` ran (`ReturnConsumedCapacity: INDEXES` on every call). */
export const indexWrites = async (
  client: DynamoDBClient,
  run: () => Promise<unknown>,
): Promise<Record<string, number>> => {
  const units: Record<string, number> = {};
  const name = 'indexWrites';
  client.middlewareStack.add(
    (next) => async (args) => {
      (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'INDEXES';
      const result = await next(args);
      const consumed = (result.output as { ConsumedCapacity?: ConsumedCapacity }).ConsumedCapacity;
      for (const [index, used] of Object.entries(consumed?.GlobalSecondaryIndexes ?? {}))
        units[index] = (units[index] ?? 0) + (used.CapacityUnits ?? 0);
      return result;
    },
    { step: 'initialize', name },
  );
  try {
    await run();
  } finally {
    client.middlewareStack.remove(name);
  }
  return units;
};

/** A table as it is at a stage (`none`: its definition's shape), with the index that stage builds left out. */
const builtAt = (table: TableDefinition, stage: string): TableDefinition => {
  const indexes =
    stage === 'none' ? table.globalSecondaryIndexes : tableIndexesAt(table, parseIndexMigrationStage(stage));
  // The index the stage adds is still being built: not there to be read.
  const building = stage.startsWith('add-')
    ? table.retiredGlobalSecondaryIndexes?.[Number(stage.slice(4)) - 1]?.replacedBy
    : undefined;
  return {
    ...table,
    globalSecondaryIndexes: (indexes ?? []).filter((index) => index.name !== building),
    retiredGlobalSecondaryIndexes: [],
  };
};

/**
 * Every table a stage's functions meet: their own stage's, and the next stage's (the stateful stack is updated
 * first, so they run on it until the service stack replaces them), each as built then. With the retired indexes
 * the functions read at the stage.
 */
export const stagedTables = (
  table: TableDefinition,
): { stage: string; shape: string; table: TableDefinition; readRetired: Set<string> }[] => {
  const stages = [...indexMigrationStages(), 'none'];
  return stages.flatMap((stage, position) =>
    [stage, stages[position + 1]].flatMap((shape) =>
      shape === undefined
        ? []
        : [
            {
              stage,
              shape,
              table: builtAt(table, shape),
              readRetired: new Set(
                stage === 'none'
                  ? []
                  : retiredIndexesReadAt(table, parseIndexMigrationStage(stage)).map((index) => index.name),
              ),
            },
          ],
    ),
  );
};
