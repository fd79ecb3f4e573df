/**
 * Where a running local stack can be reached: `<DATA_DIR>/runtime.json`, written by `npm start` once the stack is
 * up and removed when it stops. Tools that read the stack's state directly (`npm run receipts -- export` reads the
 * receipts bucket) find its endpoints there instead of asking for flags.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import * as z from 'zod';
import type { BucketId } from '../../definitions';
import { LOCAL_REGION } from './local-aws';

export const RUNTIME_FILE = 'runtime.json';

const runtimeSchema = z.object({
  api_url: z.url(),
  /** fauxqs: the S3 (and SQS) endpoint. */
  s3_endpoint: z.url(),
  /** The partner account's twin (IAM, STS, EventBridge) for cloud destinations. */
  partner_aws_endpoint: z.url(),
  region: z.string().min(1),
  buckets: z.object({ receipts: z.string().min(1), journal: z.string().min(1) }),
  pid: z.number().int(),
  started_at: z.string(),
});

export type LocalRuntime = z.infer<typeof runtimeSchema>;

/** The runtime description of a started stack. */
export const localRuntimeOf = (stack: {
  readonly url: string;
  readonly sqsEndpoint: string;
  readonly partnerAwsEndpoint: string;
  readonly resources: { readonly bucketNames: Readonly<Record<BucketId, string>> };
}): LocalRuntime => ({
  api_url: stack.url,
  s3_endpoint: stack.sqsEndpoint,
  partner_aws_endpoint: stack.partnerAwsEndpoint,
  region: LOCAL_REGION,
  buckets: { receipts: stack.resources.bucketNames.receipts, journal: stack.resources.bucketNames.journal },
  pid: process.pid,
  started_at: new Date().toISOString(),
});

export const runtimeFile = (dataDir: string): string => path.join(dataDir, RUNTIME_FILE);

export const writeLocalRuntime = async (dataDir: string, runtime: LocalRuntime): Promise<string> => {
  const file = runtimeFile(dataDir);
  await writeFile(file, `${JSON.stringify(runtime, null, 2)}\n`, { mode: 0o600 });
  return file;
};

export const removeLocalRuntime = async (dataDir: string): Promise<void> => {
  await rm(runtimeFile(dataDir), { force: true });
};

/** The runtime file's content; `undefined` when there is no readable, valid file (no stack running). */
export const readLocalRuntime = async (file: string): Promise<LocalRuntime | undefined> => {
  let content: unknown;
  try {
    content = JSON.parse(await readFile(file, 'utf8'));
  } catch {
    return undefined;
  }
  const parsed = runtimeSchema.safeParse(content);
  return parsed.success ? parsed.data : undefined;
};
