import { mkdirSync } from 'node:fs';
import { startFauxqs } from 'fauxqs';

export interface FauxqsServer {
  readonly endpoint: string;
  readonly port: number;
  stop(): Promise<void>;
}

/**
 * fauxqs in-process: the SQS and S3 wire APIs for the same `@aws-sdk/client-sqs`/`client-s3` adapters the
 * service uses in AWS. With a data directory its SQLite persistence keeps queued, in-flight and delayed
 * messages and objects across restarts.
 */
export const startFauxqsServer = async (options: { readonly dataDir?: string; readonly port?: number }) => {
  if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });
  const server = await startFauxqs({
    port: options.port ?? 0,
    logger: false,
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
  });
  let stopped = false;
  const result: FauxqsServer = {
    endpoint: `http://127.0.0.1:${server.port}`,
    port: server.port,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await server.stop();
    },
  };
  return result;
};

/**
 * A fauxqs queue URL (`http://sqs.<region>.localhost:<port>/<account>/<name>`) under the server's loopback
 * endpoint, for a process whose resolver has no `*.localhost` names (a bundle run as Lambda runs it): the AWS SDK
 * sends SQS requests to the queue URL's host.
 */
export const loopbackQueueUrl = (queueUrl: string, endpoint: string): string =>
  `${endpoint.replace(/\/$/, '')}${new URL(queueUrl).pathname}`;
