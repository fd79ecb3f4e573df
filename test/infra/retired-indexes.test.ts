/**
 * A staged index replacement (`retiredGlobalSecondaryIndexes`, context `retiredIndexes`): the deliveries' indexes
 * that copied whole items replaced by keys-only ones in deploys that each add or remove one index per table, the
 * functions reading a retired index only while its replacement is being built, and granted it while it exists.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import {
  type IndexMigrationStage,
  indexMigrationStages,
  parseIndexMigrationStage,
  READ_RETIRED_INDEXES_ENV_VAR,
  retiredIndexesOfTable,
  retiredIndexesReadBy,
  TABLES,
  type TableDefinition,
  tableIndexesAt,
} from '../../functions/definitions';
import { addPricingStacks, retiredIndexesFromContext } from '../../lib/pricing-app';
import { logicalIdOf } from './fixture';

interface Resource {
  readonly Type: string;
  readonly Properties: Record<string, unknown>;
}

const synthesize = (stage?: string) => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stacks = addPricingStacks(app, {
    stage: 'test',
    nag: false,
    ...(stage ? { retiredIndexes: parseIndexMigrationStage(stage) } : {}),
  });
  const stateful = Template.fromStack(stacks.stateful).toJSON() as { Resources: Record<string, Resource> };
  const service = Template.fromStack(stacks.service).toJSON() as { Resources: Record<string, Resource> };
  const deliveries = stateful.Resources[logicalIdOf(stacks.stateful.tables.deliveries)] as Resource;
  const indexes = (
    deliveries.Properties.GlobalSecondaryIndexes as {
      IndexName: string;
      Projection: { ProjectionType: string };
    }[]
  ).map((index) => `${index.IndexName} ${index.Projection.ProjectionType}`);
  const readers = Object.fromEntries(
    Object.values(service.Resources)
      .filter((resource) => resource.Type === 'AWS::Lambda::Function')
      .flatMap((resource) => {
        const read = (resource.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)
          ?.Variables?.[READ_RETIRED_INDEXES_ENV_VAR];
        return read === undefined ? [] : [[String(resource.Properties.Description).split(':')[0], read]];
      }),
  );
  const grantedIndexes = JSON.stringify(
    Object.values(service.Resources).filter((resource) => resource.Type === 'AWS::IAM::Policy'),
  ).match(/\/index\/by-(?:endpoint|status)[a-z-]*"/g);
  return { indexes, readers, granted: [...new Set(grantedIndexes ?? [])].sort() };
};

const KEYS_ONLY = ['by-endpoint-keys KEYS_ONLY', 'by-status-keys KEYS_ONLY'];
const ALL_FOUR = [
  '/index/by-endpoint-keys"',
  '/index/by-endpoint-shard"',
  '/index/by-status"',
  '/index/by-status-keys"',
];

describe('staged replacement of the deliveries indexes by keys-only ones', () => {
  it('a new deployment (and the last stage) has only the keys-only indexes, read and granted', () => {
    expect(synthesize()).toEqual({
      indexes: KEYS_ONLY,
      readers: {},
      granted: ['/index/by-endpoint-keys"', '/index/by-status-keys"'],
    });
  });

  it('the stages, in deploy order', () => {
    expect(indexMigrationStages()).toEqual(['add-1', 'add-2', 'keep', 'drop-1']);
  });

  it('add-1: the endpoint replacement is built while every function reads the retired indexes, granted them', () => {
    const { indexes, readers, granted } = synthesize('add-1');
    expect(indexes).toEqual(['by-endpoint-keys KEYS_ONLY', 'by-endpoint-shard ALL', 'by-status ALL']);
    expect(Object.keys(readers).sort()).toEqual([
      'Replay for operators, invoked directly',
      'Webhook operator routes',
    ]);
    expect(readers['Webhook operator routes']).toBe('deliveries/by-endpoint-shard,deliveries/by-status');
    expect(granted).toEqual(ALL_FOUR);
  });

  it('add-2: the status replacement is built; the endpoint one, built, is read', () => {
    const { indexes, readers, granted } = synthesize('add-2');
    expect(indexes).toEqual([...KEYS_ONLY, 'by-endpoint-shard ALL', 'by-status ALL']);
    expect(readers['Webhook operator routes']).toBe('deliveries/by-status');
    // Still granted what add-1's functions read: they run (with this role) until this deploy replaces them.
    expect(granted).toEqual(ALL_FOUR);
  });

  it('keep, then drop-1: the retired indexes leave one per deploy once nothing reads them, granted while they exist', () => {
    expect(synthesize('keep')).toEqual({
      indexes: [...KEYS_ONLY, 'by-endpoint-shard ALL', 'by-status ALL'],
      readers: {},
      granted: ALL_FOUR,
    });
    expect(synthesize('drop-1')).toEqual({
      indexes: [...KEYS_ONLY, 'by-status ALL'],
      readers: {},
      granted: ['/index/by-endpoint-keys"', '/index/by-status"', '/index/by-status-keys"'],
    });
  });

  it('every deploy from the shape before to the last changes one index of each table', () => {
    const stages: (IndexMigrationStage | undefined)[] = [
      ...indexMigrationStages().map((stage) => parseIndexMigrationStage(stage)),
      undefined,
    ];
    for (const table of Object.values(TABLES) as TableDefinition[]) {
      const before = (table.retiredGlobalSecondaryIndexes ?? []).map((index) => index.name);
      const shapes = [
        [
          ...(table.globalSecondaryIndexes ?? [])
            .map((index) => index.name)
            .filter((name) => !isReplacement(table, name)),
          ...before,
        ],
        ...stages.map((stage) => tableIndexesAt(table, stage).map((index) => index.name)),
      ];
      for (let step = 1; step < shapes.length; step += 1) {
        const [previous, next] = [new Set(shapes[step - 1]), new Set(shapes[step])];
        const changed =
          [...previous].filter((name) => !next.has(name)).length +
          [...next].filter((name) => !previous.has(name)).length;
        expect(changed, `${table.id}, deploy ${step}`).toBeLessThanOrEqual(1);
      }
    }
  });

  it('the functions that read a retired index are those that query its replacement', () => {
    expect(retiredIndexesReadBy('webhooks').map((entry) => entry.index)).toEqual([
      'by-endpoint-shard',
      'by-status',
    ]);
    expect(retiredIndexesReadBy('replay', parseIndexMigrationStage('add-2'))).toEqual([]);
    expect(retiredIndexesReadBy('replay', parseIndexMigrationStage('add-1'))).toEqual([
      { table: 'deliveries', index: 'by-endpoint-shard' },
    ]);
    expect(retiredIndexesReadBy('deliver')).toEqual([]);
    // The variable names each index with its table: an index name may repeat on another table.
    expect(
      retiredIndexesOfTable('deliveries/by-status,events/by-status,deliveries/by-x', 'deliveries'),
    ).toEqual(new Set(['by-status', 'by-x']));
    expect(retiredIndexesOfTable(undefined, 'deliveries')).toEqual(new Set());
  });

  it('refuses any other stage, naming the ones there are', () => {
    for (const wrong of ['read', 'drop-2', 'add-3', 'add-0'])
      expect(() => retiredIndexesFromContext(new App({ context: { retiredIndexes: wrong } }))).toThrow(
        'retiredIndexes must be one of add-1, add-2, keep, drop-1',
      );
    expect(retiredIndexesFromContext(new App({ context: { retiredIndexes: 'add-2' } }))).toEqual({
      kind: 'add',
      step: 2,
    });
    expect(retiredIndexesFromContext(new App())).toBeUndefined();
  });
});

/** Whether an index replaces a retired one (absent from the shape before the replacement). */
const isReplacement = (table: TableDefinition, name: string): boolean =>
  (table.retiredGlobalSecondaryIndexes ?? []).some((index) => index.replacedBy === name);
