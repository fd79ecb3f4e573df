/**
 * The environment the CDK gives one function (`environmentOf`), with its CloudFormation references resolved: the
 * names of tables, queues and buckets from `names`, keys as KMS ARNs, and the settings every deployment sets.
 * `lambdaEnvironmentOnEngines` adds what Lambda and the AWS SDK read (region, credentials, and an endpoint for
 * every AWS service a function calls) to run a function's bundle against the local engines and the AWS twin: the local stack on bundles
 * (`LOCAL_BUNDLES=1 npm start`) and the bundle test. The composition test resolves AWS-shaped names.
 */

import type { ProvisionedResources } from '../../adapters/local/bootstrap';
import { loopbackQueueUrl } from '../../adapters/local/fauxqs';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../adapters/local/local-aws';
import {
  BUCKETS,
  type BucketId,
  CALLER_USAGE_PLAN_NAME_ENV_VAR,
  environmentOf,
  type FunctionId,
  KEYS,
  keyArn,
  OPERATOR_ROLES_ENV_VAR,
  PARTNER_TRUST_PRINCIPAL_ENV_VAR,
  QUEUES,
  type QueueId,
  SCHEDULER,
  type ServiceTableId,
  TABLES,
} from '../../definitions';
import { METRICS_NAMESPACE_ENV_VAR } from '../../definitions/objectives';

/** The caller usage plan's name in a resolved environment (the AWS twin knows it). */
export const LOCAL_CALLER_USAGE_PLAN = 'pricing-local-callers';
/** The account of the local engines' ARNs. */
export const LOCAL_ACCOUNT = '000000000000';

/** A key's ARN on the local engines. */
export const localKeyArn = (id: string): string => keyArn(id, LOCAL_REGION, LOCAL_ACCOUNT);

export interface ResourceNames {
  readonly region: string;
  readonly account: string;
  readonly table: (id: ServiceTableId) => string;
  readonly queueUrl: (id: QueueId) => string;
  readonly bucket: (id: BucketId) => string;
}

/** The value of one variable a function may be given, or undefined for an optional one nobody configured. */
const resolvedValue = (names: ResourceNames, variable: string): string | undefined => {
  const table = (Object.keys(TABLES) as ServiceTableId[]).find((id) => TABLES[id].envVar === variable);
  if (table) return names.table(table);
  const queue = (Object.keys(QUEUES) as QueueId[]).find((id) => QUEUES[id].envVar === variable);
  if (queue) return names.queueUrl(queue);
  const bucket = (Object.keys(BUCKETS) as BucketId[]).find((id) => BUCKETS[id].envVar === variable);
  if (bucket) return names.bucket(bucket);
  const key = Object.values(KEYS).find((definition) => definition.envVar === variable);
  if (key) return keyArn(key.id, names.region, names.account);
  return {
    [SCHEDULER.groupEnvVar]: SCHEDULER.groupName,
    [SCHEDULER.roleEnvVar]: `arn:aws:iam::${names.account}:role/pricing-scheduler`,
    [METRICS_NAMESPACE_ENV_VAR]: 'Pricing/local',
    [OPERATOR_ROLES_ENV_VAR]: '[]',
    [CALLER_USAGE_PLAN_NAME_ENV_VAR]: LOCAL_CALLER_USAGE_PLAN,
    [PARTNER_TRUST_PRINCIPAL_ENV_VAR]: `arn:aws:iam::${names.account}:root`,
  }[variable];
};

/** The function's variables as its template sets them (optional ones only when they have a value), and the region. */
export const functionEnvironment = (
  functionId: FunctionId,
  names: ResourceNames,
): Record<string, string> => ({
  AWS_REGION: names.region,
  ...Object.fromEntries(
    environmentOf(functionId).flatMap((variable) => {
      const value = resolvedValue(names, variable.name);
      if (value === undefined && variable.required)
        throw new Error(`no value for ${functionId}'s required variable ${variable.name}`);
      return value === undefined ? [] : [[variable.name, value]];
    }),
  ),
});

/** Where the local engines and the AWS twin listen, and the resources provisioned on them. */
export interface LocalEngines {
  readonly resources: ProvisionedResources;
  readonly dynamoDbEndpoint: string;
  /** fauxqs: SQS and S3. */
  readonly sqsEndpoint: string;
  /** The AWS twin: KMS, EventBridge Scheduler, API Gateway. */
  readonly twinEndpoint: string;
  /** The partner account's twin: IAM roles, STS and EventBridge (cloud destinations). */
  readonly partnerEndpoint: string;
}

/**
 * A function's whole Lambda environment on the local engines: its template's variables resolved to the engines'
 * resources (queue URLs under fauxqs' loopback endpoint), the region and credentials, the SDK's per-service
 * endpoints, and `settings` (the deployment's tuning: `WEBHOOK_*`, log level) on top.
 */
export const lambdaEnvironmentOnEngines = (
  functionId: FunctionId,
  engines: LocalEngines,
  settings: Readonly<Record<string, string>> = {},
): Record<string, string> => ({
  ...functionEnvironment(functionId, {
    region: LOCAL_REGION,
    account: LOCAL_ACCOUNT,
    table: (id) => engines.resources.tableNames[id],
    queueUrl: (id) => loopbackQueueUrl(engines.resources.queueUrls[id], engines.sqsEndpoint),
    bucket: (id) => engines.resources.bucketNames[id],
  }),
  AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
  AWS_ENDPOINT_URL_DYNAMODB: engines.dynamoDbEndpoint,
  AWS_ENDPOINT_URL_DYNAMODB_STREAMS: engines.dynamoDbEndpoint,
  AWS_ENDPOINT_URL_SQS: engines.sqsEndpoint,
  AWS_ENDPOINT_URL_S3: engines.sqsEndpoint,
  AWS_ENDPOINT_URL_KMS: engines.twinEndpoint,
  AWS_ENDPOINT_URL_SCHEDULER: engines.twinEndpoint,
  AWS_ENDPOINT_URL_API_GATEWAY: engines.twinEndpoint,
  AWS_ENDPOINT_URL_CLOUDWATCH: engines.twinEndpoint,
  // Partners' accounts (cloud destinations): their roles' STS and their event buses.
  AWS_ENDPOINT_URL_STS: engines.partnerEndpoint,
  AWS_ENDPOINT_URL_EVENTBRIDGE: engines.partnerEndpoint,
  // Not emulated (FX provider credentials by reference): the twin answers 501 naming the call, so nothing a
  // function does on the engines reaches AWS.
  AWS_ENDPOINT_URL_SECRETS_MANAGER: engines.twinEndpoint,
  ...settings,
});
