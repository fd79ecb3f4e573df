import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { type AwsClients, createAwsClients } from '../../functions/adapters/aws/clients';
import { type ProvisionedResources, provisionResources } from '../../functions/adapters/local/bootstrap';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../functions/adapters/local/local-aws';

/** SDK clients pointed at the engines the integration global setup started. */
export const engineClients = (): AwsClients =>
  createAwsClients({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    dynamoDbEndpoint: inject('dynamoDbEndpoint'),
    sqsEndpoint: inject('sqsEndpoint'),
    s3Endpoint: inject('sqsEndpoint'),
  });

/** A lowercase prefix unique to one test file or case, so tests share engines without sharing state. */
export const uniquePrefix = (): string => `t${randomBytes(4).toString('hex')}-`;

/** Every table, queue and bucket from the definitions, under a fresh prefix. */
export const provisionIsolated = async (
  clients: AwsClients,
  prefix = uniquePrefix(),
): Promise<ProvisionedResources> =>
  provisionResources({ dynamoDb: clients.dynamoDb, sqs: clients.sqs, s3: clients.s3, namePrefix: prefix });

/** Polls until `probe` returns a value (not undefined) or the time runs out. */
export const eventually = async <T>(
  probe: () => Promise<T | undefined>,
  { timeoutMs = 15_000, intervalMs = 50 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> => {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
};

export const silentLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };
