/**
 * A staged index replacement (`retiredGlobalSecondaryIndexes`, context `retiredIndexes`): the deliveries' and
 * events' indexes that copied whole items replaced by keys-only ones in deploys that each add or remove one index
 * per table, the
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
  const indexesOf = (table: 'deliveries' | 'events') =>
    (
      (stateful.Resources[logicalIdOf(stacks.stateful.tables[table])] as Resource).Properties
        .GlobalSecondaryIndexes as { IndexName: string; Projection: { ProjectionType: string } }[]
    ).map((index) => `${index.IndexName} ${index.Projection.ProjectionType}`);
  const readers = Object.fromEntries(
    Object.values(service.Resources)
      .filter((resource) => resource.Type === 'AWS::Lambda::Function')
      .flatMap((resource) => {
        const read = (resource.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)
          ?.Variables?.[READ_RETIRED_INDEXES_ENV_VAR];
        return read === undefined
          ? []
          : [[String(resource.Properties.Description).split(/[:(]/)[0]?.trim(), read]];
      }),
  );
  const grantedIndexes = JSON.stringify(
    Object.values(service.Resources).filter((resource) => resource.Type === 'AWS::IAM::Policy'),
  ).match(/\/index\/(?:by-endpoint|by-status|by-day|fanout-pending)[a-z-]*"/g);
  return {
    indexes: { deliveries: indexesOf('deliveries'), events: indexesOf('events') },
    readers,
    granted: [...new Set(grantedIndexes ?? [])].map((match) => match.slice('/index/'.length, -1)).sort(),
  };
};

const KEYS_ONLY = {
  deliveries: ['by-endpoint-keys KEYS_ONLY', 'by-status-keys KEYS_ONLY'],
  events: ['by-day-keys KEYS_ONLY', 'fanout-pending-keys KEYS_ONLY'],
};
const REPLACEMENTS = ['by-day-keys', 'by-endpoint-keys', 'by-status-keys', 'fanout-pending-keys'];
const RETIRED = ['by-day', 'by-endpoint-shard', 'by-status', 'fanout-pending'];

describe('staged replacement of the deliveries and events indexes by keys-only ones', () => {
  it('a new deployment (and the last stage) has only the keys-only indexes, read and granted', () => {
    expect(synthesize()).toEqual({ indexes: KEYS_ONLY, readers: {}, granted: REPLACEMENTS });
  });

  it('the stages, in deploy order', () => {
    expect(indexMigrationStages()).toEqual(['add-1', 'add-2', 'keep', 'drop-1']);
  });

  it('add-1: the first replacement of each table is built while every function reads the retired indexes, granted them', () => {
    const { indexes, readers, granted } = synthesize('add-1');
    expect(indexes).toEqual({
      deliveries: ['by-endpoint-keys KEYS_ONLY', 'by-endpoint-shard ALL', 'by-status ALL'],
      events: ['by-day-keys KEYS_ONLY', 'by-day ALL', 'fanout-pending ALL'],
    });
    // Each function that queries a replacement is told what is read instead, with the table.
    expect(Object.keys(readers).sort()).toEqual([
      'Replay for operators, invoked directly',
      'Sweeper',
      'Webhook operator routes',
    ]);
    expect(readers['Sweeper']).toBe(
      'events/by-day,events/fanout-pending,deliveries/by-endpoint-shard,deliveries/by-status',
    );
    expect(granted).toEqual([...REPLACEMENTS, ...RETIRED].sort());
  });

  it('add-2: the second replacement is built; the first, built, is read', () => {
    const { indexes, readers, granted } = synthesize('add-2');
    expect(indexes).toEqual({
      deliveries: [...KEYS_ONLY.deliveries, 'by-endpoint-shard ALL', 'by-status ALL'],
      events: [...KEYS_ONLY.events, 'by-day ALL', 'fanout-pending ALL'],
    });
    expect(readers['Webhook operator routes']).toBe('events/fanout-pending,deliveries/by-status');
    // Still granted what add-1's functions read: they run (with this role) until this deploy replaces them.
    expect(granted).toEqual([...REPLACEMENTS, ...RETIRED].sort());
  });

  it('keep, then drop-1: the retired indexes leave one per deploy once nothing reads them, granted while they exist', () => {
    expect(synthesize('keep')).toEqual({
      indexes: {
        deliveries: [...KEYS_ONLY.deliveries, 'by-endpoint-shard ALL', 'by-status ALL'],
        events: [...KEYS_ONLY.events, 'by-day ALL', 'fanout-pending ALL'],
      },
      readers: {},
      granted: [...REPLACEMENTS, ...RETIRED].sort(),
    });
    expect(synthesize('drop-1')).toEqual({
      indexes: {
        deliveries: [...KEYS_ONLY.deliveries, 'by-status ALL'],
        events: [...KEYS_ONLY.events, 'fanout-pending ALL'],
      },
      readers: {},
      granted: [...REPLACEMENTS, 'by-status', 'fanout-pending'].sort(),
    });
  });

  it('every deploy from the shape before to the last changes one index of each table', () => {
    const stages: (IndexMigrationStage | undefined)[] = [
      ...indexMigrationStages().map((stage) => parseIndexMigrationStage(stage)),
      undefined,
    ];
    let retiring = 0;
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
      let total = 0;
      for (let step = 1; step < shapes.length; step += 1) {
        const [previous, next] = [new Set(shapes[step - 1]), new Set(shapes[step])];
        const changed =
          [...previous].filter((name) => !next.has(name)).length +
          [...next].filter((name) => !previous.has(name)).length;
        expect(changed, `${table.id}, deploy ${step}`).toBeLessThanOrEqual(1);
        total += changed;
      }
      // Every replacement added and every retired index removed, ending on the definition's own indexes.
      expect(total, table.id).toBe(2 * before.length);
      expect(shapes.at(-1), table.id).toEqual(
        (table.globalSecondaryIndexes ?? []).map((index) => index.name),
      );
      retiring += before.length;
    }
    expect(retiring).toBe(4);
  });

  it('the functions that read a retired index are those that query its replacement', () => {
    expect(retiredIndexesReadBy('webhooks').map((entry) => `${entry.table}/${entry.index}`)).toEqual([
      'events/by-day',
      'deliveries/by-endpoint-shard',
      'deliveries/by-status',
    ]);
    expect(retiredIndexesReadBy('sweeper').map((entry) => `${entry.table}/${entry.index}`)).toEqual([
      'events/fanout-pending',
    ]);
    expect(retiredIndexesReadBy('replay', parseIndexMigrationStage('add-2'))).toEqual([]);
    expect(retiredIndexesReadBy('replay', parseIndexMigrationStage('add-1'))).toEqual([
      { table: 'events', index: 'by-day' },
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
