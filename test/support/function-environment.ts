/**
 * The environment the CDK gives one function (`environmentOf`), with its CloudFormation references resolved: the
 * names of tables, queues and buckets from `names`, keys as KMS ARNs, and the settings every deployment sets.
 * Shared by the composition test (AWS-shaped names) and the bundle test (the engines' resources).
 */
import {
  BUCKETS,
  type BucketId,
  CALLER_USAGE_PLAN_NAME_ENV_VAR,
  environmentOf,
  type FunctionId,
  KEYS,
  OPERATOR_ROLES_ENV_VAR,
  QUEUES,
  type QueueId,
  SCHEDULER,
  type ServiceTableId,
  TABLES,
} from '../../functions/definitions';
import { METRICS_NAMESPACE_ENV_VAR } from '../../functions/definitions/objectives';

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
  if (key) return `arn:aws:kms:${names.region}:${names.account}:key/${key.id}`;
  return {
    [SCHEDULER.groupEnvVar]: SCHEDULER.groupName,
    [SCHEDULER.roleEnvVar]: `arn:aws:iam::${names.account}:role/pricing-scheduler`,
    [METRICS_NAMESPACE_ENV_VAR]: 'Pricing/test',
    [OPERATOR_ROLES_ENV_VAR]: '[]',
    [CALLER_USAGE_PLAN_NAME_ENV_VAR]: 'pricing-test-callers',
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
