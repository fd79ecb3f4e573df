import { Template } from 'aws-cdk-lib/assertions';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  EVENT_SOURCE_MAPPINGS,
  type KeyAttribute,
  type QueueDefinition,
  type StreamMappingDefinition,
  TABLES,
  type TableDefinition,
} from '../../functions/definitions';
import { queueEntries, queueIdOf, serviceTableEntries } from '../../lib/definition-entries';
import { logicalIdOf, type PricingAppFixture, pricingApp } from './fixture';

/**
 * The template and `functions/definitions` agree: the local stack's bootstrap creates its tables and queues
 * from the same objects, so a table or queue the CDK deploys differently from its definition fails here.
 */
let fixture: PricingAppFixture;
let stateful: Template;
let service: Template;

beforeAll(() => {
  fixture = pricingApp();
  const assembly = fixture.app.synth();
  stateful = Template.fromJSON(assembly.getStackArtifact(fixture.stacks.stateful.artifactId).template);
  service = Template.fromJSON(assembly.getStackArtifact(fixture.stacks.service.artifactId).template);
});
afterAll(() => fixture.cleanup());

type Properties = Record<string, unknown>;
const propertiesIn = (template: Template, logicalId: string): Properties => {
  const resource = template.toJSON().Resources[logicalId] as { Properties: Properties } | undefined;
  if (!resource) throw new Error(`no resource ${logicalId}`);
  return resource.Properties;
};

const keySchemaOf = (partitionKey: KeyAttribute, sortKey?: KeyAttribute) => [
  { AttributeName: partitionKey.name, KeyType: 'HASH' },
  ...(sortKey ? [{ AttributeName: sortKey.name, KeyType: 'RANGE' }] : []),
];

const attributeDefinitionsOf = (definition: TableDefinition) => {
  const attributes = new Map<string, string>();
  const add = (attribute?: KeyAttribute) => {
    if (attribute) attributes.set(attribute.name, attribute.type);
  };
  add(definition.partitionKey);
  add(definition.sortKey);
  for (const index of definition.globalSecondaryIndexes ?? []) {
    add(index.partitionKey);
    add(index.sortKey);
  }
  return [...attributes].map(([AttributeName, AttributeType]) => ({ AttributeName, AttributeType }));
};

const tables = serviceTableEntries().map(([tableId, definition]) => ({ tableId, definition }));
const tablePropertiesOf = (tableId: (typeof tables)[number]['tableId']): Properties =>
  propertiesIn(stateful, logicalIdOf(fixture.stacks.stateful.tables[tableId]));

describe('tables agree with their definitions', () => {
  it.each(tables)('$tableId key schema', ({ tableId, definition }) => {
    expect(tablePropertiesOf(tableId).KeySchema).toEqual(
      keySchemaOf(definition.partitionKey, definition.sortKey),
    );
  });

  it.each(tables)('$tableId attribute types', ({ tableId, definition }) => {
    expect(tablePropertiesOf(tableId).AttributeDefinitions).toEqual(
      expect.arrayContaining(attributeDefinitionsOf(definition)),
    );
  });

  it.each(tables)('$tableId stream view', ({ tableId, definition }) => {
    expect(
      (tablePropertiesOf(tableId).StreamSpecification as { StreamViewType?: string } | undefined)
        ?.StreamViewType,
    ).toBe(definition.stream);
  });

  it.each(tables)('$tableId TTL attribute', ({ tableId, definition }) => {
    expect(
      (tablePropertiesOf(tableId).TimeToLiveSpecification as { AttributeName?: string } | undefined)
        ?.AttributeName,
    ).toBe(definition.timeToLiveAttribute);
  });

  it.each(tables)('$tableId global secondary indexes', ({ tableId, definition }) => {
    const indexes = (tablePropertiesOf(tableId).GlobalSecondaryIndexes ?? []) as {
      IndexName: string;
      KeySchema: unknown;
    }[];
    expect(indexes.map(({ IndexName, KeySchema }) => ({ IndexName, KeySchema }))).toEqual(
      (definition.globalSecondaryIndexes ?? []).map((index) => ({
        IndexName: index.name,
        KeySchema: keySchemaOf(index.partitionKey, index.sortKey),
      })),
    );
  });

  it('tables scoped "local" are not deployed', () => {
    const localTables = Object.values(TABLES as Record<string, TableDefinition>).filter(
      (definition) => definition.scope === 'local',
    );
    stateful.resourceCountIs('AWS::DynamoDB::Table', Object.keys(TABLES).length - localTables.length);
  });
});

const queues = queueEntries().map(([queueId, definition]) => ({
  queueId,
  definition: definition as QueueDefinition,
}));
const queueLogicalId = (queueId: (typeof queues)[number]['queueId']): string =>
  logicalIdOf(fixture.stacks.service.queues[queueId].queue);

describe('queues agree with their definitions', () => {
  it.each(queues)('$queueId redrive', ({ queueId, definition }) => {
    const deadLetter = definition.deadLetter;
    expect(propertiesIn(service, queueLogicalId(queueId)).RedrivePolicy).toEqual(
      deadLetter
        ? {
            deadLetterTargetArn: { 'Fn::GetAtt': [queueLogicalId(queueIdOf(deadLetter.queue)), 'Arn'] },
            maxReceiveCount: deadLetter.maxReceiveCount,
          }
        : undefined,
    );
  });

  it.each(queues)('$queueId retention', ({ queueId, definition }) => {
    expect(propertiesIn(service, queueLogicalId(queueId)).MessageRetentionPeriod).toBe(
      definition.retentionDays * 86_400,
    );
  });
});

describe('event source mappings agree with their definitions', () => {
  it('one mapping per EVENT_SOURCE_MAPPINGS entry', () => {
    service.resourceCountIs('AWS::Lambda::EventSourceMapping', Object.keys(EVENT_SOURCE_MAPPINGS).length);
  });

  it('queue mappings have their batch size and concurrency cap', () => {
    const sqsMappings = Object.values(EVENT_SOURCE_MAPPINGS).filter((mapping) => mapping.kind === 'sqs');
    expect(sqsMappings.length).toBeGreaterThan(0);
    for (const mapping of sqsMappings) {
      service.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
        BatchSize: mapping.batchSize,
        ScalingConfig: { MaximumConcurrency: mapping.maxConcurrency },
        FunctionResponseTypes: ['ReportBatchItemFailures'],
      });
    }
  });

  it('stream mappings filter on the record kinds their definition names (Lambda event filtering), others on none', () => {
    const streamMappings: StreamMappingDefinition[] = Object.values(EVENT_SOURCE_MAPPINGS).filter(
      (mapping) => mapping.kind === 'dynamodb-stream',
    );
    const filtered = streamMappings.filter((mapping) => mapping.eventNames);
    expect(filtered.map((mapping) => mapping.id)).toEqual(['events-to-fanout']);
    const deployed = Object.values(service.findResources('AWS::Lambda::EventSourceMapping')).filter(
      (resource) => resource.Properties.StartingPosition !== undefined,
    );
    expect(deployed).toHaveLength(streamMappings.length);
    const patterns = deployed.map((resource) =>
      resource.Properties.FilterCriteria?.Filters?.map((filter: { Pattern: string }) => filter.Pattern),
    );
    expect(patterns.filter((pattern) => pattern !== undefined)).toEqual([
      [JSON.stringify({ eventName: ['INSERT'] })],
    ]);
  });
});
