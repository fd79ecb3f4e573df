import { createAwsClients, createKmsClient, createSchedulerClient } from '../adapters/aws/clients';
import { AwsCloudDestinations } from '../adapters/aws/cloud-destinations';
import { CloudWatchObjectiveFigures, createCloudWatchClient } from '../adapters/aws/cloudwatch-objectives';
import { emfServiceMetrics } from '../adapters/aws/emf-metrics';
import { EventBridgeOneTimeScheduler } from '../adapters/aws/eventbridge-scheduler';
import { KmsDataCipher, KmsMacSigner, KmsReceiptSigner } from '../adapters/aws/kms-signing';
import { BUCKETS, type FunctionId, KEYS, QUEUES, type QueueId, SCHEDULER, TABLES } from '../definitions';
import { API_NAME_ENV_VAR, METRICS_NAMESPACE_ENV_VAR, serviceNameOf } from '../definitions/objectives';
import type { ServiceMetrics } from '../ports/metrics';
import { systemClock } from '../shared/clock';
import { createLogger } from '../shared/logger';
import type { MetricsDependencies, ServiceDependencies } from './dependencies';
import type { Environment } from './environment';
import { lazyObject } from './lazy';
import { callerUsagePlanFromEnv, operatorRolesFromEnv } from './operators';
import { awsRateSourceAccess } from './rates';
import { retiredReceiptKeysFromEnv } from './receipts';
import { composeService, type ServicePlatform } from './service';
import {
  AWS_EGRESS,
  egressPolicyFromEnv,
  retryPolicyFromEnv,
  trustPrincipalFromEnv,
  webhookSettingsFromEnv,
} from './webhooks';

/** A required setting of the deployed function; its absence is a deployment defect, reported by name. */
const required = (env: Environment, name: string): string => {
  const value = env[name];
  if (!value) throw new Error(`missing environment variable ${name}`);
  return value;
};

/** The ARN partition of a region: `aws`, `aws-cn` or `aws-us-gov`. */
export const partitionOf = (region: string): string =>
  region.startsWith('cn-') ? 'aws-cn' : region.startsWith('us-gov-') ? 'aws-us-gov' : 'aws';

/** Queue ARN from its URL (`https://sqs.<region>.amazonaws.com/<account>/<name>`). */
export const queueArnFromUrl = (url: string): string => {
  const match = url.match(/^https:\/\/sqs\.([a-z0-9-]+)\.[^/]+\/(\d+)\/([^/]+)$/);
  if (!match) throw new Error(`not an SQS queue URL: ${url}`);
  const [, region = '', account, name] = match;
  return `arn:${partitionOf(region)}:sqs:${region}:${account}:${name}`;
};

/**
 * The ARN of a queue the function reaches by URL. With `AWS_ENDPOINT_URL_SQS` set (an SQS emulator: the bundle
 * test, `LOCAL_BUNDLES=1 npm start`), a URL under that endpoint, `<endpoint>/<account>/<name>`, is in the
 * function's region; any other URL must be an SQS queue URL.
 */
export const queueArnOf = (url: string, env: Environment, region: string): string => {
  const emulator = env.AWS_ENDPOINT_URL_SQS?.replace(/\/$/, '');
  const local =
    emulator && url.startsWith(`${emulator}/`)
      ? url.slice(emulator.length).match(/^\/(\d+)\/([^/]+)$/)
      : null;
  if (!local) return queueArnFromUrl(url);
  return `arn:${partitionOf(region)}:sqs:${region}:${local[1]}:${local[2]}`;
};

/** The AWS platform: clients and names from the Lambda environment the CDK stack sets, each read on first use. */
export const awsPlatform = (env: Environment = process.env): ServicePlatform => {
  const region = required(env, 'AWS_REGION');
  const once = <T>(build: () => T): (() => T) => {
    let value: T | undefined;
    return () => {
      value ??= build();
      return value;
    };
  };
  const clients = once(() => createAwsClients({ region }));
  const kms = once(() => createKmsClient(region));
  const receiptSigner = once(() => new KmsReceiptSigner(kms(), required(env, KEYS.receiptSigning.envVar)));
  const metricsNamespace = () => required(env, METRICS_NAMESPACE_ENV_VAR);
  const queueUrl = (id: QueueId) => required(env, QUEUES[id].envVar);
  const recorders = new Map<FunctionId, ServiceMetrics>();
  return {
    env,
    clock: systemClock,
    createLogger: (functionId) => createLogger({ serviceName: `pricing-${functionId}` }),
    clients,
    tableName: (id) => required(env, TABLES[id].envVar),
    queueUrl,
    bucketName: (id) => required(env, BUCKETS[id].envVar),
    receiptSigner,
    retiredReceiptKeys: once(() =>
      retiredReceiptKeysFromEnv(env).map((keyId) => new KmsReceiptSigner(kms(), keyId)),
    ),
    quoteMac: once(() => new KmsMacSigner(kms(), required(env, KEYS.quoteMac.envVar))),
    // Application secrets (endpoint secrets, client-certificate keys, sealed answers): the data key is for
    // DynamoDB, SQS and S3 only, used by those services, never by the functions directly.
    secretsCipher: once(() => new KmsDataCipher(kms(), required(env, KEYS.secrets.envVar))),
    // One-time retry schedules target the delivery queue (the only queue they send to).
    scheduler: once(
      () =>
        new EventBridgeOneTimeScheduler(createSchedulerClient(region), {
          groupName: required(env, SCHEDULER.groupEnvVar),
          roleArn: required(env, SCHEDULER.roleEnvVar),
          queueArns: { delivery: queueArnOf(queueUrl('delivery'), env, region) },
        }),
    ),
    egress: once(() => egressPolicyFromEnv(env, AWS_EGRESS)),
    trustPrincipal: once(() => trustPrincipalFromEnv(env)),
    cloudDestinations: once(
      () =>
        new AwsCloudDestinations({
          region,
          egress: egressPolicyFromEnv(env, AWS_EGRESS),
          emulatorQueues: env.WEBHOOK_EMULATOR_QUEUES === 'true',
        }),
    ),
    retryPolicy: once(() => retryPolicyFromEnv(env)),
    webhookSettings: webhookSettingsFromEnv(env),
    rates: once(() => ({ simulatedStepSeconds: 60, simulated: {}, ...awsRateSourceAccess(env, region) })),
    metrics: once(() =>
      lazyObject<MetricsDependencies>({
        recorder: () => (functionId: FunctionId) => {
          let recorder = recorders.get(functionId);
          if (!recorder) {
            recorder = emfServiceMetrics({
              namespace: metricsNamespace(),
              serviceName: serviceNameOf(functionId),
            });
            recorders.set(functionId, recorder);
          }
          return recorder;
        },
        // Only the reader of the objectives (GET /admin/slo) builds this, with the API's name when set.
        figures: () => {
          const apiName = env[API_NAME_ENV_VAR];
          return new CloudWatchObjectiveFigures(createCloudWatchClient(region), systemClock, {
            namespace: metricsNamespace(),
            ...(apiName ? { apiName } : {}),
          });
        },
      }),
    ),
    operatorRoles: once(() => operatorRolesFromEnv(env)),
    callerUsagePlan: once(() => callerUsagePlanFromEnv(env, region)),
  };
};

const cached = new Map<FunctionId, ServiceDependencies>();

/**
 * Composition root inside Lambda: the dependencies of one function, from the environment the CDK stack sets on
 * it (`environmentOf` in `functions/definitions/access.ts`), built once per instance and each member on first use.
 */
export const awsDependencies = (
  functionId: FunctionId,
  env: Environment = process.env,
): ServiceDependencies => {
  let deps = cached.get(functionId);
  if (!deps) {
    deps = composeService(awsPlatform(env), functionId);
    cached.set(functionId, deps);
  }
  return deps;
};
