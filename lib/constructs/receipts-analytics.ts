import { Duration, Stack } from 'aws-cdk-lib';
import * as athena from 'aws-cdk-lib/aws-athena';
import * as glue from 'aws-cdk-lib/aws-glue';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { BucketWithAccessLogs } from './bucket-with-access-logs';

export interface ReceiptsAnalyticsProps {
  /** Deployment stage: part of the database and workgroup names. */
  readonly stage: string;
  /** The receipts bucket (`receipts/dt=YYYY-MM-DD/<id>.json`, one signed document per object). */
  readonly receiptsBucket: s3.IBucket;
  /** Encrypts query results (and the results bucket). */
  readonly encryptionKey: kms.IKey;
  /** Where the results bucket's server access logs go. */
  readonly accessLogBucket: s3.IBucket;
  /** First day partition projection answers (`YYYY-MM-DD`). @default '2024-01-01' */
  readonly firstDay?: string;
  /** Days query results are kept. @default 30 */
  readonly resultRetentionDays?: number;
  /** Largest scan one query may make, in bytes. @default 10 GiB */
  readonly bytesScannedCutoffPerQuery?: number;
}

/** A Glue column. */
interface Column {
  readonly name: string;
  readonly type: string;
  readonly comment: string;
}

/**
 * The columns finance queries, over receipts and refunds alike (a column a document does not have is null).
 * Amounts stay decimal strings (C1) — `CAST(net AS DECIMAL(38, 9))` in a query — so no figure is ever binary
 * floating point; versions are the numbers and strings the documents carry.
 */
export const RECEIPT_COLUMNS: readonly Column[] = [
  { name: 'receipt_id', type: 'string', comment: 'rcpt_…; on a refund, the receipt it refunds' },
  { name: 'refund_id', type: 'string', comment: 'rfd_… (refunds only)' },
  { name: 'kind', type: 'string', comment: 'return or chargeback (refunds only)' },
  { name: 'quote_id', type: 'string', comment: 'the committed quote (receipts only)' },
  { name: 'status', type: 'string', comment: 'issued (receipts: the status when signed)' },
  { name: 'issued_at', type: 'string', comment: 'ISO 8601 UTC (receipts)' },
  { name: 'created_at', type: 'string', comment: 'ISO 8601 UTC (refunds)' },
  {
    name: 'computed_totals',
    type: 'struct<currency:string,subtotal:string,discounts:string,total:string>',
    comment: 'receipt totals, decimal strings',
  },
  { name: 'currency', type: 'string', comment: 'refund currency' },
  { name: 'amount', type: 'string', comment: 'refunded amount before the fee (decimal string)' },
  { name: 'fee', type: 'string', comment: 'refund fee kept (decimal string)' },
  { name: 'net', type: 'string', comment: 'paid back: amount − fee (decimal string)' },
  {
    name: 'lines',
    type: 'array<struct<key:string,line:int,sku_id:string,quantity:int,amount:string>>',
    comment: 'refunded lines',
  },
  { name: 'pricelist_version', type: 'int', comment: 'pinned price list version' },
  { name: 'fx_version', type: 'string', comment: 'pinned FX publication (fx-N)' },
  { name: 'tax_rule_version', type: 'int', comment: 'pinned tax rule version' },
  { name: 'trace_id', type: 'string', comment: 'trace of the commit (receipts)' },
  { name: 'key_id', type: 'string', comment: 'signing key (kid in GET /keys)' },
  { name: 'hash', type: 'string', comment: 'sha256: + hex over the RFC 8785 payload' },
  { name: 'signature', type: 'string', comment: 'base64 DER ECDSA P-256 signature' },
];

const nameOf = (text: string): string => text.toLowerCase().replace(/[^a-z0-9_]/g, '_');

/**
 * SQL over the finance export without a crawler: a Glue database and an external table over `receipts/` (JSON
 * SerDe, one document per object) whose `dt` partitions come from partition projection (a date per day from
 * `firstDay` to today), and an Athena workgroup whose settings every query must use (enforced): results
 * encrypted with the data key (SSE-KMS) into their own private, SSL-only, versioned results bucket that logs
 * its accesses and drops results after `resultRetentionDays`.
 */
export class ReceiptsAnalytics extends Construct {
  readonly database: glue.CfnDatabase;
  readonly table: glue.CfnTable;
  readonly workGroup: athena.CfnWorkGroup;
  readonly resultsBucket: s3.Bucket;
  readonly databaseName: string;
  readonly tableName = 'receipts';

  constructor(scope: Construct, id: string, props: ReceiptsAnalyticsProps) {
    super(scope, id);
    const stack = Stack.of(this);
    const firstDay = props.firstDay ?? '2024-01-01';
    if (!/^\d{4}-\d{2}-\d{2}$/.test(firstDay))
      throw new Error(`firstDay must be YYYY-MM-DD, got ${firstDay}`);
    this.databaseName = nameOf(`pricing_${props.stage}_finance`);

    this.resultsBucket = new BucketWithAccessLogs(this, 'Results', {
      definition: {
        id: 'athena-results',
        description: 'Athena query results of the finance workgroup.',
        envVar: 'ATHENA_RESULTS_BUCKET_NAME',
      },
      encryptionKey: props.encryptionKey,
      accessLogBucket: props.accessLogBucket,
      objectLock: false,
    }).bucket;
    this.resultsBucket.addLifecycleRule({
      expiration: Duration.days(props.resultRetentionDays ?? 30),
      noncurrentVersionExpiration: Duration.days(1),
    });

    this.database = new glue.CfnDatabase(this, 'Database', {
      catalogId: stack.account,
      databaseInput: {
        name: this.databaseName,
        description: 'Finance export: signed receipts and refunds (one JSON document per object).',
      },
    });

    const location = `s3://${props.receiptsBucket.bucketName}/receipts/`;
    this.table = new glue.CfnTable(this, 'Table', {
      catalogId: stack.account,
      databaseName: this.databaseName,
      tableInput: {
        name: this.tableName,
        description: 'Signed receipts, returns and chargebacks, partitioned by UTC day (dt).',
        tableType: 'EXTERNAL_TABLE',
        parameters: {
          EXTERNAL: 'TRUE',
          classification: 'json',
          'projection.enabled': 'true',
          'projection.dt.type': 'date',
          'projection.dt.format': 'yyyy-MM-dd',
          'projection.dt.range': `${firstDay},NOW`,
          'projection.dt.interval': '1',
          'projection.dt.interval.unit': 'DAYS',
          'storage.location.template': `${location}dt=\${dt}/`,
        },
        partitionKeys: [{ name: 'dt', type: 'string', comment: 'UTC day (YYYY-MM-DD)' }],
        storageDescriptor: {
          location,
          inputFormat: 'org.apache.hadoop.mapred.TextInputFormat',
          outputFormat: 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat',
          serdeInfo: {
            serializationLibrary: 'org.openx.data.jsonserde.JsonSerDe',
            parameters: { 'ignore.malformed.json': 'false' },
          },
          columns: RECEIPT_COLUMNS.map((column) => ({ ...column })),
        },
      },
    });
    this.table.node.addDependency(this.database);

    this.workGroup = new athena.CfnWorkGroup(this, 'WorkGroup', {
      name: `pricing-${props.stage}-finance`,
      description: 'Finance queries over the receipts export; results encrypted with the data key.',
      state: 'ENABLED',
      recursiveDeleteOption: false,
      workGroupConfiguration: {
        enforceWorkGroupConfiguration: true,
        publishCloudWatchMetricsEnabled: true,
        bytesScannedCutoffPerQuery: props.bytesScannedCutoffPerQuery ?? 10 * 1024 ** 3,
        engineVersion: { selectedEngineVersion: 'Athena engine version 3' },
        resultConfiguration: {
          outputLocation: `s3://${this.resultsBucket.bucketName}/results/`,
          expectedBucketOwner: stack.account,
          encryptionConfiguration: { encryptionOption: 'SSE_KMS', kmsKey: props.encryptionKey.keyArn },
        },
      },
    });
  }
}
