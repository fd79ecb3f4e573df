/**
 * The stages of replacing tables' indexes in an existing deployment (`TableDefinition.
 * retiredGlobalSecondaryIndexes`, context `retiredIndexes`). CloudFormation adds or removes one global secondary
 * index per table per update, DynamoDB builds a new index before it can be read, and the stateful stack (the
 * tables) is updated before the service stack (the functions), so each deploy changes one index and the functions
 * never read an index that is still building or that the same deploy removes:
 *
 * | stage        | indexes of a table with n retired ones         | the functions read                         |
 * |--------------|------------------------------------------------|--------------------------------------------|
 * | `add-s`      | the retired ones, replacements 1…s             | replacements 1…s-1, retired s…n            |
 * | `keep`       | the retired ones, every replacement            | every replacement                          |
 * | `drop-d`     | retired d+1…n, every replacement               | every replacement                          |
 * | none         | every replacement (a new deployment at once)   | every replacement                          |
 *
 * Between two stages wait until the index the earlier one added is `ACTIVE`, or the one it removed is gone
 * (`aws dynamodb describe-table`). A function is granted every retired index that still exists at its stage.
 * Pure data and functions: no SDK, no CDK.
 */
import {
  type GlobalSecondaryIndexDefinition,
  type RetiredGlobalSecondaryIndexDefinition,
  TABLES,
  type TableDefinition,
} from './resources';

export type IndexMigrationStage =
  | { readonly kind: 'add'; readonly step: number }
  | { readonly kind: 'keep' }
  | { readonly kind: 'drop'; readonly step: number };

/** The most retired indexes of any one table: the number of `add-` stages. */
export const maxRetiredIndexes = (tables: readonly TableDefinition[] = Object.values(TABLES)): number =>
  Math.max(0, ...tables.map((table) => table.retiredGlobalSecondaryIndexes?.length ?? 0));

/** Every stage the definitions have, in deploy order: `add-1` … `add-n`, `keep`, `drop-1` … `drop-(n-1)`. */
export const indexMigrationStages = (tables?: readonly TableDefinition[]): string[] => {
  const most = maxRetiredIndexes(tables);
  if (most === 0) return [];
  return [
    ...Array.from({ length: most }, (_, index) => `add-${index + 1}`),
    'keep',
    ...Array.from({ length: most - 1 }, (_, index) => `drop-${index + 1}`),
  ];
};

/** A stage's name (`add-2`, `keep`, `drop-1`) as a stage; anything the definitions do not have throws. */
export const parseIndexMigrationStage = (
  value: string,
  tables?: readonly TableDefinition[],
): IndexMigrationStage => {
  const stages = indexMigrationStages(tables);
  if (!stages.includes(value))
    throw new Error(
      stages.length === 0
        ? `no index is being replaced: retiredIndexes takes no value (got ${JSON.stringify(value)})`
        : `retiredIndexes must be one of ${stages.join(', ')} (got ${JSON.stringify(value)})`,
    );
  if (value === 'keep') return { kind: 'keep' };
  const [kind, step] = value.split('-') as ['add' | 'drop', string];
  return { kind, step: Number(step) };
};

/** Whether retired index number `position` (1-based) of its table is read instead of its replacement. */
const readsRetired = (position: number, stage: IndexMigrationStage | undefined): boolean =>
  stage?.kind === 'add' && position >= stage.step;

/** The indexes a table has at a stage (no stage: its definition's, as a new deployment has them). */
export const tableIndexesAt = (
  table: TableDefinition,
  stage?: IndexMigrationStage,
): GlobalSecondaryIndexDefinition[] => {
  const retired = table.retiredGlobalSecondaryIndexes ?? [];
  const positionOf = (name: string) => retired.findIndex((index) => index.replacedBy === name) + 1;
  const replacements = (table.globalSecondaryIndexes ?? []).filter((index) => {
    const position = positionOf(index.name);
    return position === 0 || stage === undefined || stage.kind !== 'add' || position <= stage.step;
  });
  const kept = retired.filter(
    (_, index) => stage !== undefined && (stage.kind !== 'drop' || index + 1 > stage.step),
  );
  return [...replacements, ...kept];
};

/** The retired indexes of a table read instead of their replacements at a stage. */
export const retiredIndexesReadAt = (
  table: TableDefinition,
  stage?: IndexMigrationStage,
): RetiredGlobalSecondaryIndexDefinition[] =>
  (table.retiredGlobalSecondaryIndexes ?? []).filter((_, index) => readsRetired(index + 1, stage));
