import { RemovalPolicy } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as kms from 'aws-cdk-lib/aws-kms';
import { Construct } from 'constructs';
import {
  type AttributeType,
  type IndexMigrationStage,
  type KeyAttribute,
  type TableDefinition,
  tableIndexesAt,
} from '../../functions/definitions';
import { SECURE_DEFAULTS } from './defaults';

const ATTRIBUTE_TYPES: Readonly<Record<AttributeType, dynamodb.AttributeType>> = {
  S: dynamodb.AttributeType.STRING,
  N: dynamodb.AttributeType.NUMBER,
  B: dynamodb.AttributeType.BINARY,
};

const attributeOf = (attribute: KeyAttribute): dynamodb.Attribute => ({
  name: attribute.name,
  type: ATTRIBUTE_TYPES[attribute.type],
});

export interface ServiceTableProps {
  /** The table's definition from `functions/definitions`: keys, stream, TTL and indexes come from it. */
  readonly definition: TableDefinition;
  /** Customer-managed key that encrypts the table (and its stream). */
  readonly encryptionKey: kms.IKey;
  /** The stage of a staged index replacement (context `retiredIndexes`): which indexes the table has then. */
  readonly indexStage?: IndexMigrationStage;
  /** @default SECURE_DEFAULTS.statefulRemovalPolicy (RETAIN) */
  readonly removalPolicy?: RemovalPolicy;
}

/**
 * A DynamoDB table exactly as its definition describes it, with the secure defaults: on-demand billing,
 * point-in-time recovery, encryption with the customer-managed data key, and deletion protection whenever the
 * table is retained.
 */
export class ServiceTable extends Construct {
  readonly table: dynamodb.Table;

  constructor(scope: Construct, id: string, props: ServiceTableProps) {
    super(scope, id);
    const { definition } = props;
    const removalPolicy = props.removalPolicy ?? SECURE_DEFAULTS.statefulRemovalPolicy;
    this.table = new dynamodb.Table(this, 'Table', {
      partitionKey: attributeOf(definition.partitionKey),
      ...(definition.sortKey ? { sortKey: attributeOf(definition.sortKey) } : {}),
      ...(definition.stream ? { stream: dynamodb.StreamViewType[definition.stream] } : {}),
      ...(definition.timeToLiveAttribute ? { timeToLiveAttribute: definition.timeToLiveAttribute } : {}),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED,
      encryptionKey: props.encryptionKey,
      removalPolicy,
      deletionProtection: removalPolicy === RemovalPolicy.RETAIN,
    });
    for (const index of tableIndexesAt(definition, props.indexStage)) {
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: attributeOf(index.partitionKey),
        ...(index.sortKey ? { sortKey: attributeOf(index.sortKey) } : {}),
        projectionType: dynamodb.ProjectionType[index.projection ?? 'ALL'],
      });
    }
  }
}
