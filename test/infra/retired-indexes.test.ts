/**
 * A staged index replacement (`retiredGlobalSecondaryIndexes`, context `retiredIndexes`): the deliveries'
 * `by-endpoint` index replaced by `by-endpoint-shard` in deploys that each add or remove one index, the functions
 * reading the retired one (and granted it) only in the first stage.
 */
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { READ_RETIRED_INDEXES_ENV_VAR, retiredIndexesReadBy } from '../../functions/definitions';
import { addPricingStacks, type RetiredIndexesStage, retiredIndexesFromContext } from '../../lib/pricing-app';
import { logicalIdOf } from './fixture';

interface Resource {
  readonly Type: string;
  readonly Properties: Record<string, unknown>;
}

const synthesize = (retiredIndexes?: RetiredIndexesStage) => {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stacks = addPricingStacks(app, {
    stage: 'test',
    nag: false,
    ...(retiredIndexes ? { retiredIndexes } : {}),
  });
  const stateful = Template.fromStack(stacks.stateful).toJSON() as { Resources: Record<string, Resource> };
  const service = Template.fromStack(stacks.service).toJSON() as { Resources: Record<string, Resource> };
  const deliveries = stateful.Resources[logicalIdOf(stacks.stateful.tables.deliveries)] as Resource;
  const indexes = (deliveries.Properties.GlobalSecondaryIndexes as { IndexName: string }[]).map(
    (index) => index.IndexName,
  );
  const readers = Object.values(service.Resources)
    .filter((resource) => resource.Type === 'AWS::Lambda::Function')
    .filter(
      (resource) =>
        (resource.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables?.[
          READ_RETIRED_INDEXES_ENV_VAR
        ] === 'true',
    )
    .map((resource) => String(resource.Properties.Description));
  const grantedIndexes = JSON.stringify(
    Object.values(service.Resources).filter((resource) => resource.Type === 'AWS::IAM::Policy'),
  ).match(/\/index\/by-endpoint(?:-shard)?"/g);
  return { indexes, readers, granted: [...new Set(grantedIndexes ?? [])].sort() };
};

describe('staged replacement of the deliveries by-endpoint index', () => {
  it('a new deployment (and the last stage) has only the replacement, read and granted', () => {
    expect(synthesize()).toEqual({
      indexes: ['by-endpoint-shard', 'by-status'],
      readers: [],
      granted: ['/index/by-endpoint-shard"'],
    });
  });

  it('stage read: both indexes; the webhooks function alone reads the retired one and is granted both', () => {
    const { indexes, readers, granted } = synthesize('read');
    expect(indexes).toEqual(['by-endpoint-shard', 'by-status', 'by-endpoint']);
    expect(readers).toHaveLength(1);
    expect(readers[0]).toMatch(/^Webhook operator routes/);
    expect(granted).toEqual(['/index/by-endpoint"', '/index/by-endpoint-shard"']);
  });

  it('stage keep: both indexes stay while the functions read the replacement, granted it alone', () => {
    expect(synthesize('keep')).toEqual({
      indexes: ['by-endpoint-shard', 'by-status', 'by-endpoint'],
      readers: [],
      granted: ['/index/by-endpoint-shard"'],
    });
  });

  it('the functions that read a retired index are those that query its replacement', () => {
    expect(retiredIndexesReadBy('webhooks')).toEqual([{ table: 'deliveries', index: 'by-endpoint' }]);
    expect(retiredIndexesReadBy('deliver')).toEqual([]);
  });

  it('refuses any other stage, naming the context key', () => {
    const app = new App({ context: { retiredIndexes: 'drop' } });
    expect(() => retiredIndexesFromContext(app)).toThrow(/context retiredIndexes must be read or keep/);
    expect(retiredIndexesFromContext(new App({ context: { retiredIndexes: 'read' } }))).toBe('read');
    expect(retiredIndexesFromContext(new App())).toBeUndefined();
  });
});
