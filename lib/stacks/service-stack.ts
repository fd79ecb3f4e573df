import { Stack, type StackProps } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as cxapi from 'aws-cdk-lib/cx-api';
import type { Construct } from 'constructs';
import {
  type BucketId,
  EVENT_SOURCE_MAPPINGS,
  type EventSourceMappingDefinition,
  EXPORTER_RATE_MINUTES,
  FUNCTIONS,
  type FunctionDefinition,
  type FunctionId,
  KEYS,
  type KeyId,
  type QueueId,
  RATES_RATE_MINUTES,
  ROUTES,
  SCHEDULER,
  SWEEPER_RATE_MINUTES,
  type TABLES,
} from '../../functions/definitions';
import { METRICS_NAMESPACE_ENV_VAR, metricsNamespace } from '../../functions/definitions/objectives';
import { ApiFirewall } from '../constructs/api-firewall';
import { DeadLetterAlarm } from '../constructs/dead-letter-alarm';
import { EncryptedQueue } from '../constructs/encrypted-queue';
import { LogSignalAlarm } from '../constructs/log-signal-alarm';
import { QueueToFunction } from '../constructs/queue-to-function';
import { RateScheduleToFunction } from '../constructs/rate-schedule-to-function';
import { SchedulerToQueue } from '../constructs/scheduler-to-queue';
import { ServiceApi } from '../constructs/service-api';
import { ServiceFunction, type TableAccess } from '../constructs/service-function';
import { ServiceObjectives } from '../constructs/service-objectives';
import { StaticEgress, type StaticEgressProps } from '../constructs/static-egress';
import { StreamToFunction } from '../constructs/stream-to-function';
import {
  bucketEntries,
  keyEntries,
  mapRecord,
  queueEntries,
  queueIdOf,
  type ServiceTableId,
  serviceTableEntries,
} from '../definition-entries';

/** The global secondary index names of a table, as its definition spells them. */
type IndexNameOf<T extends ServiceTableId> = (typeof TABLES)[T] extends {
  readonly globalSecondaryIndexes: readonly (infer Index)[];
}
  ? Index extends { readonly name: infer Name extends string }
    ? Name
    : never
  : never;

/**
 * What each function may touch. Everything else it is denied; the composition root only builds clients, so a
 * function never calls a service it has no grant for.
 */
interface FunctionAccess {
  readonly tables: Readonly<Partial<Record<ServiceTableId, TableAccess>>>;
  /** Indexes it queries (Query is authorized on each index's own ARN); each table must be in `tables`. */
  readonly queriesIndexes: { readonly [T in ServiceTableId]?: readonly IndexNameOf<T>[] };
  /** Tables it lists whole with Scan (the endpoints: few, all needed); each must be in `tables`. */
  readonly scans: readonly ServiceTableId[];
  /** Queues it sends to (SendMessage and GetQueueAttributes). */
  readonly sendsTo: readonly QueueId[];
  /** Keys it uses directly: sign, MAC or encrypt/decrypt per the key's kind. */
  readonly usesKeys: readonly KeyId[];
  /** Creates and deletes one-time retry schedules (passing the scheduler role). */
  readonly schedulesRetries: boolean;
  /** Runs the health probes: DescribeTable (in table read), GetQueueAttributes on the delivery queue, HeadBucket. */
  readonly probesBuckets: readonly BucketId[];
  /**
   * Buckets it writes new objects to, through the bucket's writer policy, and lists and reads through its reader
   * policy (a write-once put that S3 refuses with 412 compares the object already there; the exporter reads a
   * day back to build its manifest).
   */
  readonly writesBuckets: readonly BucketId[];
}

const FUNCTION_ACCESS: Readonly<Record<FunctionId, FunctionAccess>> = {
  api: {
    tables: { events: 'readWrite' },
    queriesIndexes: {},
    scans: [],
    sendsTo: ['delivery'],
    usesKeys: ['receiptSigning', 'data'],
    schedulesRetries: false,
    probesBuckets: ['receipts'],
    writesBuckets: [],
  },
  catalog: {
    tables: { catalog: 'read', priceCache: 'readWrite' },
    queriesIndexes: {},
    scans: [],
    sendsTo: [],
    usesKeys: [],
    schedulesRetries: false,
    probesBuckets: [],
    writesBuckets: [],
  },
  checkout: {
    tables: { catalog: 'read', quotes: 'readWrite', receipts: 'readWrite', idempotency: 'readWrite' },
    queriesIndexes: {},
    scans: [],
    sendsTo: [],
    usesKeys: ['receiptSigning', 'quoteMac'],
    schedulesRetries: false,
    probesBuckets: [],
    writesBuckets: [],
  },
  admin: {
    // A publication writes its catalog events to the outbox in the same transaction as the pointer; change
    // requests, their releases (signed with the receipt key) and the journal entries go with it.
    tables: {
      catalog: 'readWrite',
      idempotency: 'readWrite',
      priceCache: 'readWrite',
      events: 'readWrite',
      changeRequests: 'readWrite',
      journal: 'readWrite',
      // GET /admin/slo reads the FX breakers.
      rateState: 'read',
    },
    queriesIndexes: { changeRequests: ['by-created'] },
    scans: [],
    sendsTo: [],
    usesKeys: ['receiptSigning'],
    schedulesRetries: false,
    probesBuckets: [],
    writesBuckets: ['journal'],
  },
  webhooks: {
    tables: {
      endpoints: 'readWrite',
      events: 'readWrite',
      deliveries: 'readWrite',
      replays: 'readWrite',
      idempotency: 'readWrite',
      catalog: 'read',
    },
    // Event history by day, deliveries by endpoint or status; the endpoint list.
    queriesIndexes: {
      events: ['by-day'],
      deliveries: ['by-endpoint', 'by-status'],
      endpoints: ['by-partner-key'],
    },
    scans: ['endpoints'],
    // Replays restart deliveries.
    sendsTo: ['delivery'],
    // Encrypts endpoint signing secrets.
    usesKeys: ['data'],
    schedulesRetries: false,
    probesBuckets: [],
    writesBuckets: [],
  },
  fanout: {
    tables: { events: 'readWrite', endpoints: 'read', deliveries: 'readWrite' },
    queriesIndexes: {},
    // The enabled endpoints an event fans out to.
    scans: ['endpoints'],
    sendsTo: ['delivery'],
    usesKeys: [],
    schedulesRetries: false,
    probesBuckets: [],
    writesBuckets: [],
  },
  deliver: {
    // A 410 Gone disables the endpoint.
    tables: { events: 'read', endpoints: 'readWrite', deliveries: 'readWrite' },
    queriesIndexes: {},
    scans: [],
    sendsTo: ['delivery', 'deliveryDlq'],
    // Decrypts endpoint signing secrets.
    usesKeys: ['data'],
    schedulesRetries: true,
    probesBuckets: [],
    writesBuckets: [],
  },
  sweeper: {
    tables: { events: 'readWrite', endpoints: 'read', deliveries: 'readWrite' },
    // Events whose fan-out is not recorded (a sparse index).
    queriesIndexes: { events: ['fanout-pending'] },
    scans: ['endpoints'],
    sendsTo: ['delivery'],
    usesKeys: [],
    schedulesRetries: false,
    probesBuckets: [],
    writesBuckets: [],
  },
  replay: {
    // Selects deliveries through the events (by id or by day), never through the endpoints.
    tables: { events: 'read', deliveries: 'readWrite', replays: 'readWrite' },
    queriesIndexes: { events: ['by-day'] },
    scans: [],
    sendsTo: ['delivery'],
    usesKeys: [],
    schedulesRetries: false,
    probesBuckets: [],
    writesBuckets: [],
  },
  rates: {
    // Publishes rate ticks (catalog + outbox), opens change requests for held ticks, finishes approved
    // changes, journals every decision and closes journal slices with signed heads.
    tables: {
      catalog: 'readWrite',
      events: 'readWrite',
      rateState: 'readWrite',
      changeRequests: 'readWrite',
      journal: 'readWrite',
    },
    queriesIndexes: { changeRequests: ['by-created'] },
    scans: [],
    sendsTo: [],
    usesKeys: ['receiptSigning'],
    schedulesRetries: false,
    probesBuckets: [],
    writesBuckets: ['journal'],
  },
  exporter: {
    // Reads the receipts stream (granted by its event source mapping); writes each signed document, the daily
    // manifests and summaries (PutObject only: Object Lock keeps them) and reads a day back to hash it; journals
    // each manifest, closing slices with heads signed by the receipt key and copying them to the mirror. A
    // backfill scans the receipts table for documents the stream could not export.
    tables: { journal: 'readWrite', receipts: 'read' },
    queriesIndexes: {},
    scans: ['receipts'],
    sendsTo: [],
    usesKeys: ['receiptSigning'],
    schedulesRetries: false,
    probesBuckets: [],
    writesBuckets: ['receipts', 'journal'],
  },
};

export interface PricingServiceStackProps extends StackProps {
  readonly stage: string;
  /** From the stateful stack: the service tables, keyed as in `TABLES`. */
  readonly tables: Readonly<Record<ServiceTableId, dynamodb.ITable>>;
  /** From the stateful stack: the KMS keys, keyed as in `KEYS`. */
  readonly keys: Readonly<Record<KeyId, kms.IKey>>;
  /** From the stateful stack: the buckets, keyed as in `BUCKETS`. */
  readonly buckets: Readonly<Record<BucketId, s3.IBucket>>;
  /** From the stateful stack: per bucket, the managed policy that writes new objects into it. */
  readonly bucketWriters: Readonly<Record<BucketId, iam.IManagedPolicy>>;
  /** From the stateful stack: per bucket, the managed policy that lists and reads its objects. */
  readonly bucketReaders: Readonly<Record<BucketId, iam.IManagedPolicy>>;
  /**
   * Private ranges the deliver function may POST to besides public unicast addresses (`WEBHOOK_ALLOWED_CIDRS`,
   * e.g. a partner reached over a peering). Set on the deliver function only.
   * @default unset: public unicast only (C17)
   */
  readonly webhookAllowedCidrs?: readonly string[];
  /**
   * Deliveries from known, stable addresses: the deliver function (the only one that calls partners) runs in
   * the private subnets of a VPC whose NAT gateways, one per zone, have Elastic IPs this stack allocates
   * (output `DeliveryEgressIps`). NAT gateways and addresses are billed by the hour.
   * @default unset: the deliver function runs outside any VPC, from AWS-managed, changing addresses
   */
  readonly staticEgress?: StaticEgressProps;
}

/** Environment variables set on one function only, on top of the shared environment. */
const functionOnlyEnvironment = (
  functionId: FunctionId,
  props: PricingServiceStackProps,
): Record<string, string> => {
  if (functionId !== 'deliver' || props.webhookAllowedCidrs === undefined) return {};
  const cidrs = props.webhookAllowedCidrs.map((cidr) => cidr.trim());
  const invalid = cidrs.filter((cidr) => !/^[0-9A-Fa-f:.]+\/\d{1,3}$/.test(cidr));
  if (cidrs.length === 0 || invalid.length > 0)
    throw new Error(
      `webhookAllowedCidrs must be CIDR blocks, got ${JSON.stringify(props.webhookAllowedCidrs)}`,
    );
  return { WEBHOOK_ALLOWED_CIDRS: cidrs.join(',') };
};

/**
 * The stateless half: queues, functions, event source mappings, the REST API, the retry scheduler, the outbox
 * sweeper's schedule and the alarms, all generated from `functions/definitions`.
 */
export class PricingServiceStack extends Stack {
  readonly queues: Readonly<Record<QueueId, EncryptedQueue>>;
  readonly functions: Readonly<Record<FunctionId, ServiceFunction>>;
  /** The deliver function's VPC with stack-allocated NAT addresses, when `staticEgress` is set. */
  readonly staticEgress: StaticEgress | undefined;
  readonly scheduler: SchedulerToQueue;
  readonly sweeperSchedule: RateScheduleToFunction;
  readonly ratesSchedule: RateScheduleToFunction;
  /** The exporter's hourly run: manifests of closed days. */
  readonly exporterSchedule: RateScheduleToFunction;
  readonly api: ServiceApi;
  readonly alarms: Readonly<Partial<Record<QueueId, DeadLetterAlarm>>>;
  /** Alarms on signals the functions log (`{ "alarm": "<signal>" }`), by signal. */
  readonly signalAlarms: Readonly<
    Record<'DeliveryDead' | 'ReceiptExportFailed' | 'ReceiptExportLate', LogSignalAlarm>
  >;
  /** An alarm per service-level objective and their dashboard. */
  readonly objectives: ServiceObjectives;

  constructor(scope: Construct, id: string, props: PricingServiceStackProps) {
    super(scope, id, props);
    // The tables, keys and buckets this stack uses are imported from the stateful stack with strong (export)
    // references, so the stateful stack can never remove a resource this stack still uses.
    this.node.setContext(cxapi.DEFAULT_CROSS_STACK_REFERENCES, 'strong');
    const dataKey = props.keys.data;

    this.queues = this.createQueues(dataKey);
    this.scheduler = new SchedulerToQueue(this, 'DeliveryScheduler', {
      groupName: SCHEDULER.groupName,
      target: this.queues.delivery,
    });

    const environment = this.functionEnvironment(props);
    const egress = props.staticEgress
      ? new StaticEgress(this, 'DeliveryEgress', props.staticEgress)
      : undefined;
    this.staticEgress = egress;
    this.functions = mapRecord<FunctionId, FunctionDefinition, ServiceFunction>(
      FUNCTIONS,
      (definition, functionId) =>
        new ServiceFunction(this, `${functionId}Function`, {
          definition,
          environment: { ...environment, ...functionOnlyEnvironment(functionId, props) },
          ...(functionId === 'deliver' && egress ? { network: egress.network } : {}),
        }),
    );
    egress?.grantNetworkInterfaces(this.functions.deliver);
    for (const [functionId, fn] of Object.entries(this.functions) as [FunctionId, ServiceFunction][]) {
      this.grantAccess(fn, FUNCTION_ACCESS[functionId], props);
    }

    for (const [mappingId, mapping] of Object.entries(EVENT_SOURCE_MAPPINGS) as [
      string,
      EventSourceMappingDefinition,
    ][]) {
      const target = this.functions[mapping.function];
      if (mapping.kind === 'dynamodb-stream') {
        const table = (props.tables as Readonly<Record<string, dynamodb.ITable | undefined>>)[mapping.table];
        if (!table)
          throw new Error(`mapping ${mapping.id} reads table ${mapping.table}, which is not deployed`);
        new StreamToFunction(this, mappingId, {
          mapping,
          table,
          target,
          onFailure: this.queues[mapping.onFailureQueue],
        });
      } else {
        new QueueToFunction(this, mappingId, { mapping, source: this.queues[mapping.queue], target });
      }
    }

    this.api = new ServiceApi(this, 'Api', {
      restApiName: `${this.stackName}-api`,
      routes: ROUTES,
      handlers: mapRecord<FunctionId, ServiceFunction, lambda.IFunction>(this.functions, (fn) => fn.function),
    });
    new ApiFirewall(this, 'ApiFirewall', { stage: this.api.api.deploymentStage });

    // The outbox sweeper: fans out events whose stream fan-out is not recorded (ARCHITECTURE, outbox).
    this.sweeperSchedule = new RateScheduleToFunction(this, 'SweeperSchedule', {
      target: this.functions.sweeper,
      rateMinutes: SWEEPER_RATE_MINUTES,
      scheduleName: `${this.stackName}-sweeper`,
    });
    // FX ingestion, journal slices and approved changes left half-way (one run a minute, rule 9's finest).
    this.ratesSchedule = new RateScheduleToFunction(this, 'RatesSchedule', {
      target: this.functions.rates,
      rateMinutes: RATES_RATE_MINUTES,
      scheduleName: `${this.stackName}-rates`,
    });
    // The finance export's daily manifests: every hour, the closed days of the lookback window without one.
    this.exporterSchedule = new RateScheduleToFunction(this, 'ExporterSchedule', {
      target: this.functions.exporter,
      rateMinutes: EXPORTER_RATE_MINUTES,
      scheduleName: `${this.stackName}-exporter`,
    });

    this.alarms = Object.fromEntries(
      queueEntries()
        .filter(([, definition]) => definition.terminal === true)
        .map(([queueId]) => [
          queueId,
          new DeadLetterAlarm(this, `${queueId}Alarm`, { queue: this.queues[queueId] }),
        ]),
    ) as Partial<Record<QueueId, DeadLetterAlarm>>;
    this.signalAlarms = {
      DeliveryDead: new LogSignalAlarm(this, 'DeliveryDeadAlarm', {
        source: this.functions.deliver,
        signal: 'DeliveryDead',
        namespace: metricsNamespace(props.stage),
        description:
          'a delivery exhausted its retries (or was refused for good) and went to the delivery DLQ.',
      }),
      ReceiptExportFailed: new LogSignalAlarm(this, 'ReceiptExportFailedAlarm', {
        source: this.functions.exporter,
        signal: 'ReceiptExportFailed',
        namespace: metricsNamespace(props.stage),
        description:
          'a receipt or refund could not be exported (retried from the stream) or a manifest could not be built.',
      }),
      ReceiptExportLate: new LogSignalAlarm(this, 'ReceiptExportLateAlarm', {
        source: this.functions.exporter,
        signal: 'ReceiptExportLate',
        namespace: metricsNamespace(props.stage),
        description:
          "a document was exported after its day's manifest was written: the manifest does not list it.",
      }),
    };
    const deliveryDlqAlarm = this.alarms.deliveryDlq;
    if (!deliveryDlqAlarm) throw new Error('the delivery DLQ is a terminal queue and has a depth alarm');
    this.objectives = new ServiceObjectives(this, 'Objectives', {
      namespace: metricsNamespace(props.stage),
      api: this.api.api,
      deliveryDlq: this.queues.deliveryDlq,
      deliveryDlqAlarm,
      reader: this.functions.admin,
    });
  }

  /** Terminal queues first, then the work queues that redrive into them. */
  private createQueues(dataKey: kms.IKey): Record<QueueId, EncryptedQueue> {
    const queues: Partial<Record<QueueId, EncryptedQueue>> = {};
    const ordered = [...queueEntries()].sort(
      ([, a], [, b]) => Number(a.deadLetter !== undefined) - Number(b.deadLetter !== undefined),
    );
    for (const [queueId, definition] of ordered) {
      const deadLetterQueue = definition.deadLetter
        ? queues[queueIdOf(definition.deadLetter.queue)]
        : undefined;
      queues[queueId] = new EncryptedQueue(this, `${queueId}Queue`, {
        queueId,
        encryptionKey: dataKey,
        ...(deadLetterQueue ? { deadLetterQueue } : {}),
      });
    }
    return queues as Record<QueueId, EncryptedQueue>;
  }

  /** Every variable the AWS composition root reads, named by the definitions' `envVar`s. */
  private functionEnvironment(props: PricingServiceStackProps): Record<string, string> {
    return {
      ...Object.fromEntries(
        serviceTableEntries().map(([tableId, definition]) => [
          definition.envVar,
          props.tables[tableId].tableName,
        ]),
      ),
      ...Object.fromEntries(
        queueEntries().map(([queueId, definition]) => [
          definition.envVar,
          this.queues[queueId].queue.queueUrl,
        ]),
      ),
      ...Object.fromEntries(
        bucketEntries().map(([bucketId, definition]) => [
          definition.envVar,
          props.buckets[bucketId].bucketName,
        ]),
      ),
      ...Object.fromEntries(
        keyEntries().map(([keyId, definition]) => [definition.envVar, props.keys[keyId].keyArn]),
      ),
      [SCHEDULER.groupEnvVar]: this.scheduler.groupName,
      [SCHEDULER.roleEnvVar]: this.scheduler.role.roleArn,
      [METRICS_NAMESPACE_ENV_VAR]: metricsNamespace(props.stage),
    };
  }

  private grantAccess(fn: ServiceFunction, access: FunctionAccess, props: PricingServiceStackProps): void {
    const queried = access.queriesIndexes as Readonly<Partial<Record<ServiceTableId, readonly string[]>>>;
    const granted = new Set(Object.keys(access.tables));
    const ungranted = [...Object.keys(queried), ...access.scans].filter((tableId) => !granted.has(tableId));
    if (ungranted.length > 0)
      throw new Error(
        `${fn.definition.id}: queries or scans tables it has no access to: ${ungranted.join(', ')}`,
      );
    for (const [tableId, tableAccess] of Object.entries(access.tables) as [ServiceTableId, TableAccess][]) {
      fn.grantTableData(props.tables[tableId], tableAccess, props.keys.data, {
        indexes: queried[tableId] ?? [],
        scan: access.scans.includes(tableId),
      });
    }
    for (const queueId of access.sendsTo) fn.grantSendMessages(this.queues[queueId]);
    for (const keyId of access.usesKeys) fn.grantKeyUse(props.keys[keyId], KEYS[keyId].kind);
    for (const bucketId of access.probesBuckets) fn.grantBucketProbe(props.buckets[bucketId]);
    for (const bucketId of access.writesBuckets) {
      fn.role.addManagedPolicy(props.bucketWriters[bucketId]);
      fn.role.addManagedPolicy(props.bucketReaders[bucketId]);
    }
    if (access.schedulesRetries) this.scheduler.grantManageSchedules(fn);
  }
}
