import { DynamoApiKeyStore } from '../adapters/aws/api-key-store';
import { DynamoCatalogRepository } from '../adapters/aws/catalog-repository';
import { DynamoChangeRequestStore } from '../adapters/aws/change-request-store';
import { DynamoReceiptItemSource } from '../adapters/aws/checkout-repository';
import { createAwsClients, createKmsClient, createSchedulerClient } from '../adapters/aws/clients';
import { CloudWatchObjectiveFigures, createCloudWatchClient } from '../adapters/aws/cloudwatch-objectives';
import { emfServiceMetrics } from '../adapters/aws/emf-metrics';
import { EventBridgeOneTimeScheduler } from '../adapters/aws/eventbridge-scheduler';
import { dynamoDbProbe, s3Probe, sqsProbe } from '../adapters/aws/health-probes';
import { DynamoJournalStore, S3JournalMirror } from '../adapters/aws/journal-store';
import { KmsDataCipher, KmsMacSigner, KmsReceiptSigner } from '../adapters/aws/kms-signing';
import { S3ObjectStore } from '../adapters/aws/object-store';
import { DynamoPriceCacheStore } from '../adapters/aws/price-cache-store';
import { DynamoRateStateStore } from '../adapters/aws/rate-state-store';
import { SqsMessageQueue } from '../adapters/aws/sqs-queue';
import {
  BUCKETS,
  type BucketId,
  type FunctionId,
  KEYS,
  QUEUES,
  type QueueId,
  SCHEDULER,
  serviceTables,
  type TableDefinition,
} from '../definitions';
import { API_NAME_ENV_VAR, METRICS_NAMESPACE_ENV_VAR, serviceNameOf } from '../definitions/objectives';
import type { ServiceMetrics } from '../ports/metrics';
import { systemClock } from '../shared/clock';
import { createLogger } from '../shared/logger';
import { Journal } from '../usecases/audit/journal';
import { guardrailsFromEnv } from './change-requests';
import type { ServiceDependencies, ServiceTableId } from './dependencies';
import type { Environment } from './environment';
import { idempotencyDependencies } from './idempotency';
import { JOURNAL_LOG_ID, journalSlicing } from './journal';
import { callerUsagePlanFromEnv, operatorRolesFromEnv } from './operators';
import { awsRateSourceAccess } from './rates';
import { receiptExportSettings, retiredReceiptKeysFromEnv } from './receipts';
import { AWS_EGRESS, egressPolicyFromEnv, retryPolicyFromEnv, webhookDependencies } from './webhooks';

/** A required setting of the deployed function; its absence is a deployment defect, reported by name. */
const required = (env: Environment, name: string): string => {
  const value = env[name];
  if (!value) throw new Error(`missing environment variable ${name}`);
  return value;
};

const recordOf = <Id extends string>(
  definitions: Readonly<Record<Id, { readonly envVar: string }>>,
  env: Environment,
): Record<Id, string> => {
  const entries = Object.entries(definitions) as [Id, { envVar: string }][];
  return Object.fromEntries(
    entries.map(([id, definition]) => [id, required(env, definition.envVar)]),
  ) as Record<Id, string>;
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

let cached: ServiceDependencies | undefined;

/** Composition root inside Lambda: every name comes from the environment the CDK stack sets. */
export const awsDependencies = (env: Environment = process.env): ServiceDependencies => {
  if (cached) return cached;
  const region = required(env, 'AWS_REGION');
  const tableNames = Object.fromEntries(
    serviceTables().map((table: TableDefinition) => [table.id, required(env, table.envVar)]),
  ) as Record<ServiceTableId, string>;
  const queueUrls = recordOf<QueueId>(QUEUES, env);
  const bucketNames = recordOf<BucketId>(BUCKETS, env);
  const queueArns = Object.fromEntries(
    Object.entries(queueUrls).map(([id, url]) => [id, queueArnFromUrl(url)]),
  ) as Record<QueueId, string>;
  const groupName = required(env, SCHEDULER.groupEnvVar);
  const roleArn = required(env, SCHEDULER.roleEnvVar);
  const metricsNamespace = required(env, METRICS_NAMESPACE_ENV_VAR);
  const apiName = env[API_NAME_ENV_VAR];
  const recorders = new Map<FunctionId, ServiceMetrics>();
  const keyIds = {
    receipt: required(env, KEYS.receiptSigning.envVar),
    quote: required(env, KEYS.quoteMac.envVar),
    // Application secrets (endpoint secrets, client-certificate keys, sealed answers): the data key is for
    // DynamoDB, SQS and S3 only, used by those services, never by the functions directly.
    secrets: required(env, KEYS.secrets.envVar),
  };
  const clients = createAwsClients({ region });
  const kms = createKmsClient(region);
  const receiptSigner = new KmsReceiptSigner(kms, keyIds.receipt);
  cached = {
    clock: systemClock,
    createLogger: (functionId) => createLogger({ serviceName: `pricing-${functionId}` }),
    dynamoDb: clients.dynamoDb,
    documents: clients.documents,
    tableNames,
    bucketNames,
    queueUrls,
    queue: new SqsMessageQueue(clients.sqs, queueUrls),
    scheduler: new EventBridgeOneTimeScheduler(createSchedulerClient(region), {
      groupName,
      roleArn,
      queueArns,
    }),
    receiptSigner,
    retiredReceiptKeys: retiredReceiptKeysFromEnv(env).map((keyId) => new KmsReceiptSigner(kms, keyId)),
    quoteMac: new KmsMacSigner(kms, keyIds.quote),
    secretsCipher: new KmsDataCipher(kms, keyIds.secrets),
    catalogRepository: new DynamoCatalogRepository(clients.documents, tableNames.catalog, tableNames.events),
    webhooks: webhookDependencies({
      documents: clients.documents,
      tableNames,
      egress: egressPolicyFromEnv(env, AWS_EGRESS),
      policy: retryPolicyFromEnv(env),
    }),
    priceCacheStore: new DynamoPriceCacheStore(clients.documents, tableNames.priceCache),
    changeRequests: new DynamoChangeRequestStore(clients.documents, tableNames.changeRequests),
    guardrails: guardrailsFromEnv(env),
    rates: {
      state: new DynamoRateStateStore(clients.documents, tableNames.rateState),
      simulatedStepSeconds: 60,
      simulated: {},
      ...awsRateSourceAccess(env, region),
    },
    journal: new Journal({
      store: new DynamoJournalStore(clients.documents, tableNames.journal),
      mirror: new S3JournalMirror(clients.s3, bucketNames.journal),
      signer: receiptSigner,
      clock: systemClock,
      logId: JOURNAL_LOG_ID,
      ...journalSlicing(env),
    }),
    receiptExport: {
      objects: new S3ObjectStore(clients.s3, bucketNames.receipts),
      settings: receiptExportSettings(env),
      receipts: new DynamoReceiptItemSource(clients.documents, tableNames.receipts),
    },
    metrics: {
      recorder: (functionId) => {
        let recorder = recorders.get(functionId);
        if (!recorder) {
          recorder = emfServiceMetrics({
            namespace: metricsNamespace,
            serviceName: serviceNameOf(functionId),
          });
          recorders.set(functionId, recorder);
        }
        return recorder;
      },
      figures: new CloudWatchObjectiveFigures(createCloudWatchClient(region), systemClock, {
        namespace: metricsNamespace,
        ...(apiName ? { apiName } : {}),
      }),
    },
    idempotency: idempotencyDependencies(clients.documents, tableNames.idempotency, env),
    apiKeys: new DynamoApiKeyStore(clients.documents, tableNames.apiKeys),
    operatorRoles: operatorRolesFromEnv(env),
    callerUsagePlan: callerUsagePlanFromEnv(env, region),
    healthProbes: [
      dynamoDbProbe(clients.dynamoDb, tableNames.events),
      sqsProbe(clients.sqs, queueUrls.delivery),
      s3Probe(clients.s3, bucketNames.receipts),
    ],
  };
  return cached;
};
