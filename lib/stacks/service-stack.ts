import { CfnOutput, Stack, type StackProps, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import * as cxapi from 'aws-cdk-lib/cx-api';
import type { Construct } from 'constructs';
import { DEFAULT_FX_SECRETS_PREFIX } from '../../functions/adapters/aws/secrets-manager';
import { webhookSettingsFromEnv } from '../../functions/composition/webhooks';
import {
  type BucketId,
  CALLER_USAGE_PLAN_NAME_ENV_VAR,
  type DirectKeyId,
  EVENT_SOURCE_MAPPINGS,
  type EventSourceMappingDefinition,
  EXPORTER_RATE_MINUTES,
  environmentOf,
  FUNCTION_ACCESS,
  FUNCTIONS,
  type FunctionAccess,
  type FunctionDefinition,
  type FunctionId,
  HEALTH_PROBES,
  type IndexMigrationStage,
  KEYS,
  type KeyId,
  type KeyUse,
  OPERATOR_ROLES_ENV_VAR,
  PARTNER_TRUST_PRINCIPAL_ENV_VAR,
  type QueueId,
  RATES_RATE_MINUTES,
  READ_RETIRED_INDEXES_ENV_VAR,
  RETIRED_RECEIPT_KEY_IDS_ENV_VAR,
  ROUTES,
  retiredIndexesGrantedTo,
  retiredIndexesReadAt,
  retiredIndexRef,
  SCHEDULER,
  SWEEPER_RATE_MINUTES,
  type TableItemAction,
  WEBHOOK_ALLOWED_CIDRS_ENV_VAR,
  WEBHOOK_TENANT_RETENTION_ENV_VAR,
} from '../../functions/definitions';
import { METRICS_NAMESPACE_ENV_VAR, metricsNamespace } from '../../functions/definitions/objectives';
import { OPERATOR_ROLES } from '../../functions/domain/access/principals';
import { EXTERNAL_ID_PREFIX } from '../../functions/domain/webhooks/destinations';
import { ApiFirewall, SITE_ORIGIN_SECRET_HEADER, type SiteOriginSecret } from '../constructs/api-firewall';
import { DeadLetterAlarm } from '../constructs/dead-letter-alarm';
import { nagResource } from '../constructs/defaults';
import { EncryptedQueue } from '../constructs/encrypted-queue';
import { LogSignalAlarm } from '../constructs/log-signal-alarm';
import { type MachineOperatorRole, OperatorRoles } from '../constructs/operator-roles';
import { QueueToFunction } from '../constructs/queue-to-function';
import { RateScheduleToFunction } from '../constructs/rate-schedule-to-function';
import { SchedulerToQueue } from '../constructs/scheduler-to-queue';
import { ServiceApi } from '../constructs/service-api';
import { ServiceFunction } from '../constructs/service-function';
import { keyUseActions } from '../constructs/service-keys';
import { ServiceObjectives } from '../constructs/service-objectives';
import { StaticEgress, type StaticEgressProps } from '../constructs/static-egress';
import { StreamToFunction } from '../constructs/stream-to-function';
import { WebSite } from '../constructs/web-site';
import {
  bucketEntries,
  keyEntries,
  mapRecord,
  queueEntries,
  queueIdOf,
  type ServiceTableId,
  serviceTableEntries,
} from '../definition-entries';

export interface PricingServiceStackProps extends StackProps {
  readonly stage: string;
  /** The built console and partner portal (`lib/web-build.ts`): served by CloudFront in front of the API when set. */
  readonly webAssetDir?: string;
  /** The site's CloudFront-scope web ACL (`PricingEdgeStack`, us-east-1), attached to the distribution. */
  readonly siteFirewallArn?: string;
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
   * Shorter body retention for some tenants' events, days by tenant (1–30; `WEBHOOK_TENANT_RETENTION_DAYS`). Set on
   * every function that writes events.
   * @default unset: every event's body is kept the service's 30 days (an endpoint may shorten it)
   */
  readonly tenantRetentionDays?: Readonly<Record<string, number>>;
  /**
   * Deliveries from known, stable addresses: the deliver function (the only one that calls partners) runs in
   * the private subnets of a VPC whose NAT gateways, one per zone, have Elastic IPs this stack allocates
   * (output `DeliveryEgressIps`). NAT gateways and addresses are billed by the hour.
   * @default unset: the deliver function runs outside any VPC, from AWS-managed, changing addresses
   */
  readonly staticEgress?: StaticEgressProps;
  /**
   * The account whose principals may assume the human operator roles (with a source identity, C27).
   * @default this stack's account
   */
  readonly operatorTrustAccount?: string;
  /** Machine principals acting as operators (CI, other services): their role ARNs and roles, never `approver`. */
  readonly machineOperatorRoles?: readonly MachineOperatorRole[];
  /**
   * KMS key ARNs of receipt keys retired from signing (C10): `GET /keys` keeps listing them, and the exporter
   * writes them into the key sets it stores beside the receipts.
   */
  readonly retiredReceiptKeyArns?: readonly string[];
  /**
   * The stage of a staged index replacement (context `retiredIndexes`): in its `add-` stages the functions read
   * the retired indexes whose replacements are still being built, and are granted them.
   */
  readonly indexStage?: IndexMigrationStage;
}

/** The variable the admin function finds the caller usage plan by (its id would make a dependency cycle). */
export { CALLER_USAGE_PLAN_NAME_ENV_VAR };

/** `tenantRetentionDays`, checked as the functions will check it at start (`WEBHOOK_TENANT_RETENTION_DAYS`). */
const tenantRetentionOf = (configured: Readonly<Record<string, number>>): string => {
  const value = JSON.stringify(configured);
  webhookSettingsFromEnv({ [WEBHOOK_TENANT_RETENTION_ENV_VAR]: value });
  return value;
};

/** `webhookAllowedCidrs`, checked: CIDR blocks joined with commas (`WEBHOOK_ALLOWED_CIDRS`). */
const allowedCidrsOf = (configured: readonly string[]): string => {
  const cidrs = configured.map((cidr) => cidr.trim());
  const invalid = cidrs.filter((cidr) => !/^[0-9A-Fa-f:.]+\/\d{1,3}$/.test(cidr));
  if (cidrs.length === 0 || invalid.length > 0)
    throw new Error(`webhookAllowedCidrs must be CIDR blocks, got ${JSON.stringify(configured)}`);
  return cidrs.join(',');
};

/**
 * One function's environment: exactly the variables its composition reads (`environmentOf`, derived from the
 * same declaration its grants come from), each from `values`; an optional one only when configured.
 */
const environmentFor = (
  functionId: FunctionId,
  values: Readonly<Record<string, string>>,
): Record<string, string> =>
  Object.fromEntries(
    environmentOf(functionId).flatMap((variable) => {
      const value = values[variable.name];
      if (value === undefined && variable.required)
        throw new Error(`${functionId}: no value for its variable ${variable.name}`);
      return value === undefined ? [] : [[variable.name, value]];
    }),
  );

/**
 * The stateless half: queues, functions, event source mappings, the REST API (caller-key authorizer, usage plan,
 * resource policy), the operator roles, the retry scheduler, the outbox sweeper's schedule and the alarms, all
 * generated from `functions/definitions`.
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
  /** The console and the partner portal (absent when the app is built without them). */
  readonly webSite?: WebSite;
  /** The operator roles (C27): one per role for people, and the machine roles given by configuration. */
  readonly operatorRoles: OperatorRoles;
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

    this.operatorRoles = new OperatorRoles(this, 'OperatorRoles', {
      ...(props.operatorTrustAccount ? { trustAccount: props.operatorTrustAccount } : {}),
      ...(props.machineOperatorRoles ? { machineRoles: props.machineOperatorRoles } : {}),
    });
    const restApiName = `${this.stackName}-api`;
    const shared = {
      operatorRoles: this.operatorRoles.environmentValue(),
      usagePlanName: `${restApiName}-callers`,
    };

    const values = this.environmentValues(props, shared);
    const egress = props.staticEgress
      ? new StaticEgress(this, 'DeliveryEgress', props.staticEgress)
      : undefined;
    this.staticEgress = egress;
    this.functions = mapRecord<FunctionId, FunctionDefinition, ServiceFunction>(
      FUNCTIONS,
      (definition, functionId) =>
        new ServiceFunction(this, `${functionId}Function`, {
          definition,
          environment: environmentFor(functionId, values),
          ...(functionId === 'deliver' && egress ? { network: egress.network } : {}),
        }),
    );
    egress?.grantNetworkInterfaces(this.functions.deliver);
    for (const [functionId, fn] of Object.entries(this.functions) as [FunctionId, ServiceFunction][]) {
      this.grantAccess(fn, functionId, FUNCTION_ACCESS[functionId], props);
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
          tableKey: dataKey,
          target,
          onFailure: this.queues[mapping.onFailureQueue],
        });
      } else {
        new QueueToFunction(this, mappingId, { mapping, source: this.queues[mapping.queue], target });
      }
    }

    this.api = new ServiceApi(this, 'Api', {
      restApiName,
      routes: ROUTES,
      handlers: mapRecord<FunctionId, ServiceFunction, lambda.IFunction>(this.functions, (fn) => fn.function),
      authorizer: this.functions.authorizer.function,
      operators: this.operatorRoles.principals(),
      usagePlanName: shared.usagePlanName,
    });
    // Requests through the site's distribution carry a secret header: the regional web ACL leaves counting them
    // per address to the edge web ACL, which sees the viewers' addresses.
    const siteOrigin = props.webAssetDir ? this.siteOriginSecret() : undefined;
    new ApiFirewall(this, 'ApiFirewall', {
      stage: this.api.api.deploymentStage,
      ...(siteOrigin ? { siteOrigin } : {}),
    });
    for (const [functionId, fn] of Object.entries(this.functions) as [FunctionId, ServiceFunction][]) {
      if (FUNCTION_ACCESS[functionId].registersCallerKeys) this.grantCallerKeyRegistration(fn);
    }
    for (const role of OPERATOR_ROLES) {
      new CfnOutput(
        this,
        `OperatorRole${role.replace(/(^|_)(\w)/g, (_, __, letter: string) => letter.toUpperCase())}Arn`,
        {
          description: `Operator role ${role} (C27): assume it with a source identity that is also the session name`,
          value: this.operatorRoles.human[role].roleArn,
        },
      );
    }

    // The console and the partner portal, with the API on the same origin.
    if (props.webAssetDir) {
      this.webSite = new WebSite(this, 'WebSite', {
        assetDir: props.webAssetDir,
        api: this.api.api,
        ...(siteOrigin ? { originSecret: siteOrigin } : {}),
        ...(props.siteFirewallArn ? { webAclArn: props.siteFirewallArn } : {}),
      });
      new CfnOutput(this, 'ConsoleUrl', {
        description: 'The operator console (and /portal/: the partner portal), in front of the API',
        value: `https://${this.webSite.distribution.distributionDomainName}/console/`,
      });
    }

    // Partners with SQS or EventBridge destinations may narrow their trust to this role (aws:PrincipalArn).
    new CfnOutput(this, 'WebhookDeliveryRoleArn', {
      description:
        "The role that assumes partners' roles for SQS and EventBridge destinations (C34): a partner's trust policy " +
        'may require it as aws:PrincipalArn besides the service account and the external id.',
      value: this.functions.deliver.role.roleArn,
    });

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

  /**
   * The value of every variable a function may be given (`environmentFor` picks each function's own); the API's
   * name is added by the objectives' reader (`ServiceObjectives`), which knows the API.
   */
  private environmentValues(
    props: PricingServiceStackProps,
    shared: { readonly operatorRoles: string; readonly usagePlanName: string },
  ): Record<string, string> {
    const readRetired = serviceTableEntries().flatMap(([tableId, definition]) =>
      retiredIndexesReadAt(definition, props.indexStage).map((index) => retiredIndexRef(tableId, index.name)),
    );
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
      [OPERATOR_ROLES_ENV_VAR]: shared.operatorRoles,
      [CALLER_USAGE_PLAN_NAME_ENV_VAR]: shared.usagePlanName,
      [PARTNER_TRUST_PRINCIPAL_ENV_VAR]: `arn:${this.partition}:iam::${this.account}:root`,
      ...(props.retiredReceiptKeyArns?.length
        ? { [RETIRED_RECEIPT_KEY_IDS_ENV_VAR]: props.retiredReceiptKeyArns.join(',') }
        : {}),
      // Given only to the functions that query a replacement (`environmentOf`), each granted what it reads.
      ...(readRetired.length > 0 ? { [READ_RETIRED_INDEXES_ENV_VAR]: readRetired.join(',') } : {}),
      ...(props.webhookAllowedCidrs !== undefined
        ? { [WEBHOOK_ALLOWED_CIDRS_ENV_VAR]: allowedCidrsOf(props.webhookAllowedCidrs) }
        : {}),
      ...(props.tenantRetentionDays !== undefined
        ? { [WEBHOOK_TENANT_RETENTION_ENV_VAR]: tenantRetentionOf(props.tenantRetentionDays) }
        : {}),
    };
  }

  /**
   * The value CloudFront adds to the API requests it forwards (`SITE_ORIGIN_SECRET_HEADER`), generated in Secrets
   * Manager and resolved by CloudFormation into the distribution and the regional web ACL.
   */
  private siteOriginSecret(): SiteOriginSecret {
    const secret = new secretsmanager.Secret(this, 'SiteOriginSecret', {
      description:
        "Sent by the site's distribution to the API: its requests are counted per viewer at the edge",
      generateSecretString: { passwordLength: 48, excludePunctuation: true },
    });
    Validations.of(secret).acknowledge({
      id: 'AwsSolutions-SMG4',
      reason:
        'It only exempts requests from the regional per-address count (the edge web ACL counts them per viewer) and ' +
        'grants no access. Its users re-read it only when their own properties change, so a rotation in place ' +
        'would split them: it is replaced instead (a new secret, so new references), in one deploy.',
    });
    return { header: SITE_ORIGIN_SECRET_HEADER, value: secret.secretValue.unsafeUnwrap() };
  }

  private grantAccess(
    fn: ServiceFunction,
    functionId: FunctionId,
    access: FunctionAccess,
    props: PricingServiceStackProps,
  ): void {
    const retired = props.indexStage ? retiredIndexesGrantedTo(functionId, props.indexStage) : [];
    for (const [tableId, grant] of Object.entries(access.tables) as [
      ServiceTableId,
      { readonly actions: readonly TableItemAction[]; readonly indexes?: readonly string[] },
    ][]) {
      const retiredIndexes = retired.filter((entry) => entry.table === tableId).map((entry) => entry.index);
      fn.grantTableItems(props.tables[tableId], props.keys.data, {
        ...grant,
        ...(retiredIndexes.length > 0 ? { indexes: [...(grant.indexes ?? []), ...retiredIndexes] } : {}),
      });
    }
    for (const queueId of access.sendsTo) fn.grantSendMessages(this.queues[queueId]);
    for (const queueId of access.readsQueueDepths ?? []) fn.grantQueueAttributes(this.queues[queueId]);
    for (const [keyId, uses] of Object.entries(access.keys) as [DirectKeyId, readonly string[]][]) {
      const kind = KEYS[keyId].kind;
      fn.grantKeyUse(props.keys[keyId], keyUseActions(kind, uses as KeyUse<typeof kind>[]));
    }
    if (access.probesHealth) {
      fn.grantDescribeTable(props.tables[HEALTH_PROBES.table]);
      fn.grantQueueAttributes(this.queues[HEALTH_PROBES.queue]);
      fn.grantBucketProbe(props.buckets[HEALTH_PROBES.bucket]);
    }
    for (const bucketId of access.readsBuckets ?? []) fn.role.addManagedPolicy(props.bucketReaders[bucketId]);
    for (const bucketId of access.writesBuckets) {
      fn.role.addManagedPolicy(props.bucketWriters[bucketId]);
      fn.role.addManagedPolicy(props.bucketReaders[bucketId]);
    }
    if (access.schedulesRetries) this.scheduler.grantManageSchedules(fn);
    if (access.readsFxCredentials) this.grantFxCredentialReads(fn);
    if (access.assumesPartnerRoles) this.grantPartnerRoleAssumption(fn);
    if (access.publishesReceiptKeys && props.retiredReceiptKeyArns?.length) {
      // Retired receipt keys: their public halves only (they never sign again).
      fn.role.addToPrincipalPolicy(
        new iam.PolicyStatement({
          actions: ['kms:GetPublicKey'],
          resources: [...props.retiredReceiptKeyArns],
        }),
      );
    }
  }

  /**
   * SQS and EventBridge destinations (C34): `sts:AssumeRole` on partners' roles, only with one of the service's
   * external ids and never on a role of the service's own account. Which role a delivery assumes is the endpoint's,
   * and what the role may do is the partner's policy.
   */
  private grantPartnerRoleAssumption(fn: ServiceFunction): void {
    const resource = `arn:${this.partition}:iam::*:role/*`;
    const policy = new iam.Policy(this, `${fn.definition.id}PartnerRoles`, {
      statements: [
        new iam.PolicyStatement({
          actions: ['sts:AssumeRole'],
          resources: [resource],
          conditions: {
            StringLike: { 'sts:ExternalId': `${EXTERNAL_ID_PREFIX}*` },
            StringNotEquals: { 'aws:ResourceAccount': this.account },
          },
        }),
      ],
      roles: [fn.role],
    });
    Validations.of(policy).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagResource(this, 'arn:<AWS::Partition>:iam::*:role/*')}]`,
      reason:
        "Partners' roles are in their own accounts, named by each endpoint at run time: the grant is sts:AssumeRole " +
        "only, with the service's external ids only, and never in the service's own account.",
    });
  }

  /**
   * FX provider credentials (C23 rate policy, `auth.secret_ref`): GetSecretValue on the secrets under the prefix
   * the function reads them with (`FX_SECRETS_PREFIX`, default `pricing/fx/`). Secrets encrypted with the
   * default `aws/secretsmanager` key need nothing more.
   */
  private grantFxCredentialReads(fn: ServiceFunction): void {
    const statement = new iam.PolicyStatement({
      actions: ['secretsmanager:GetSecretValue'],
      resources: [
        `arn:${this.partition}:secretsmanager:${this.region}:${this.account}:secret:${DEFAULT_FX_SECRETS_PREFIX}*`,
      ],
    });
    const policy = new iam.Policy(this, `${fn.definition.id}FxCredentials`, {
      statements: [statement],
      roles: [fn.role],
    });
    Validations.of(policy).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagResource(this, `arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${DEFAULT_FX_SECRETS_PREFIX}*`)}]`,
      reason:
        'Secrets Manager appends a random suffix to every secret ARN, and a rate policy names its credentials by ' +
        'reference at run time: the grant covers the FX credentials prefix only, read-only.',
    });
  }

  /**
   * Registering a caller key's usage identifier (C26): create the API key (`POST /apikeys`, its value the
   * identifier), add it to the caller usage plan (`POST /usageplans/<id>/keys`), delete it on revocation
   * (`DELETE /apikeys/<id>`), and find the plan's id by its name (`GET /usageplans`). In a policy of its own,
   * which the function does not wait for: the plan's id cannot be in the function's own policy or environment
   * (the API's methods depend on the function).
   */
  private grantCallerKeyRegistration(fn: ServiceFunction): void {
    const arn = (path: string) => `arn:${this.partition}:apigateway:${this.region}::${path}`;
    const policy = new iam.Policy(this, `${fn.definition.id}CallerKeyRegistration`, {
      statements: [
        // The plan by its name; a caller key's API key by its name (`caller-<identifier>`) to delete it.
        new iam.PolicyStatement({
          actions: ['apigateway:GET'],
          resources: [arn('/usageplans'), arn('/apikeys')],
        }),
        new iam.PolicyStatement({
          actions: ['apigateway:POST'],
          resources: [arn('/apikeys'), arn(`/usageplans/${this.api.usagePlan.usagePlanId}/keys`)],
        }),
        new iam.PolicyStatement({ actions: ['apigateway:DELETE'], resources: [arn('/apikeys/*')] }),
      ],
      roles: [fn.role],
    });
    Validations.of(policy).acknowledge({
      id: `AwsSolutions-IAM5[Resource::${nagResource(this, 'arn:<AWS::Partition>:apigateway:<AWS::Region>::/apikeys/*')}]`,
      reason:
        "API Gateway names an API key by an id it generates when the key is created; a revoked caller key's " +
        'API key is deleted by that id. Only DELETE is allowed on it, on API keys only.',
    });
  }
}
