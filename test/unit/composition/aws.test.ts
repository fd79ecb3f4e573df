import { describe, expect, it } from 'vitest';
import { awsDependencies, queueArnFromUrl } from '../../../functions/composition/aws';
import {
  BUCKETS,
  KEYS,
  QUEUES,
  SCHEDULER,
  serviceTables,
  TABLES,
  type TableDefinition,
} from '../../../functions/definitions';
import { METRICS_NAMESPACE_ENV_VAR } from '../../../functions/definitions/objectives';

const ACCOUNT = '123456789012';
const queueUrl = (id: string) => `https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/pricing-${id}`;

/** Every variable the deployed functions need, named by the definitions (not by this test). */
const completeEnvironment = (): Record<string, string> => ({
  AWS_REGION: 'eu-west-1',
  ...Object.fromEntries(serviceTables().map((table) => [table.envVar, `pricing-${table.id}`])),
  ...Object.fromEntries(Object.values(QUEUES).map((queue) => [queue.envVar, queueUrl(queue.id)])),
  ...Object.fromEntries(Object.values(BUCKETS).map((bucket) => [bucket.envVar, `pricing-${bucket.id}`])),
  // The data key is used by DynamoDB, SQS and S3 on the functions' behalf, never by a function directly.
  ...Object.fromEntries(
    Object.values(KEYS)
      .filter((key) => key.id !== KEYS.data.id)
      .map((key) => [key.envVar, `alias/pricing-${key.id}`]),
  ),
  [SCHEDULER.groupEnvVar]: SCHEDULER.groupName,
  [SCHEDULER.roleEnvVar]: `arn:aws:iam::${ACCOUNT}:role/pricing-scheduler`,
  [METRICS_NAMESPACE_ENV_VAR]: 'Pricing/test',
});

const without = (env: Record<string, string>, name: string): Record<string, string> =>
  Object.fromEntries(Object.entries(env).filter(([key]) => key !== name));

describe('queueArnFromUrl', () => {
  it('turns an SQS queue URL into its ARN', () => {
    expect(queueArnFromUrl(`https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/pricing-delivery`)).toBe(
      `arn:aws:sqs:eu-west-1:${ACCOUNT}:pricing-delivery`,
    );
  });

  it('keeps a FIFO queue name and derives the partition from the region', () => {
    expect(queueArnFromUrl(`https://sqs.cn-north-1.amazonaws.com.cn/${ACCOUNT}/jobs.fifo`)).toBe(
      `arn:aws-cn:sqs:cn-north-1:${ACCOUNT}:jobs.fifo`,
    );
  });

  it.each([
    ['not a URL', 'pricing-delivery'],
    ['plain http', `http://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/q`],
    ['no account', 'https://sqs.eu-west-1.amazonaws.com/q'],
    ['non-numeric account', 'https://sqs.eu-west-1.amazonaws.com/acct/q'],
    ['extra path segment', `https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/q/extra`],
    ['trailing slash', `https://sqs.eu-west-1.amazonaws.com/${ACCOUNT}/q/`],
    ['local emulator URL', `http://127.0.0.1:4566/${ACCOUNT}/q`],
  ])('refuses a malformed URL (%s), naming it', (_label, url) => {
    expect(() => queueArnFromUrl(url)).toThrow(`not an SQS queue URL: ${url}`);
  });
});

describe('awsDependencies: missing settings', () => {
  it('names the first missing variable when only AWS_REGION is set', () => {
    const firstTable = serviceTables()[0];
    expect(firstTable).toBeDefined();
    expect(() => awsDependencies({ AWS_REGION: 'eu-west-1' })).toThrow(
      `missing environment variable ${firstTable?.envVar}`,
    );
  });

  it.each(Object.keys(completeEnvironment()))('names %s when it alone is missing', (name) => {
    expect(() => awsDependencies(without(completeEnvironment(), name))).toThrow(
      new Error(`missing environment variable ${name}`),
    );
  });

  it('treats an empty value as missing', () => {
    expect(() => awsDependencies({ ...completeEnvironment(), AWS_REGION: '' })).toThrow(
      'missing environment variable AWS_REGION',
    );
  });

  it('refuses a queue URL that is not an SQS URL', () => {
    const env = {
      ...completeEnvironment(),
      [QUEUES.delivery.envVar]: 'http://localhost:4566/000000000000/q',
    };
    expect(() => awsDependencies(env)).toThrow(/not an SQS queue URL/);
  });
});

// Runs last: a successful call is cached for the life of the module.
describe('awsDependencies: complete settings', () => {
  it('builds every dependency without the local-only tables', () => {
    const localTables = Object.values(TABLES)
      .filter((table: TableDefinition) => table.scope === 'local')
      .map((table) => table.envVar);
    const env = completeEnvironment();
    for (const name of localTables) expect(env[name]).toBeUndefined();
    const deps = awsDependencies(env);
    expect(deps.tableNames).toEqual(
      Object.fromEntries(serviceTables().map((table) => [table.id, `pricing-${table.id}`])),
    );
    expect(deps.queueUrls.delivery).toBe(queueUrl(QUEUES.delivery.id));
    expect(deps.bucketNames.receipts).toBe(`pricing-${BUCKETS.receipts.id}`);
    expect(deps.healthProbes).toHaveLength(3);
    expect(awsDependencies({})).toBe(deps);
  });
});
