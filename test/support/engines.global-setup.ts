import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { startDynamoDbLocalOnFreePort } from '../../functions/adapters/local/dynamodb-local';
import { startFauxqsServer } from '../../functions/adapters/local/fauxqs';

declare module 'vitest' {
  export interface ProvidedContext {
    dynamoDbEndpoint: string;
    sqsEndpoint: string;
  }
}

/**
 * Integration tests run against real engines: one in-memory DynamoDB Local (Java) and one in-process fauxqs,
 * on free ports chosen now, shared by every integration test file (each isolates itself with a name prefix)
 * and stopped at the end.
 */
export default async function setup(project: TestProject) {
  const workDir = mkdtempSync(path.join(tmpdir(), 'pricing-it-'));
  const [dynamo, fauxqs] = await Promise.all([
    startDynamoDbLocalOnFreePort({ workDir }),
    startFauxqsServer({}),
  ]);
  project.provide('dynamoDbEndpoint', dynamo.endpoint);
  project.provide('sqsEndpoint', fauxqs.endpoint);
  return async () => {
    await Promise.all([dynamo.stop(), fauxqs.stop()]);
    rmSync(workDir, { recursive: true, force: true });
  };
}
