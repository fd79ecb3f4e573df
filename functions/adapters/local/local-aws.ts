import { createServer } from 'node:net';
import { type AwsClients, createAwsClients } from '../aws/clients';

/** Region and static credentials the local engines accept (DynamoDB Local runs with `-sharedDb`). */
export const LOCAL_REGION = 'us-east-1';
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' } as const;

/** The service's SDK clients on local engines: DynamoDB Local, and fauxqs for SQS and S3. */
export const localEngineClients = (engines: {
  readonly dynamoDbEndpoint: string;
  readonly sqsEndpoint: string;
}): AwsClients =>
  createAwsClients({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    dynamoDbEndpoint: engines.dynamoDbEndpoint,
    unsignedEmulator: true,
    sqsEndpoint: engines.sqsEndpoint,
    s3Endpoint: engines.sqsEndpoint,
  });

/** A free TCP port on loopback, chosen at run time. */
export const freePort = async (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });

export class PortInUseError extends Error {
  constructor(
    readonly port: number,
    options?: ErrorOptions,
  ) {
    super(
      `port ${port} is already in use; stop the other process or choose another with PORT=<port>`,
      options,
    );
    this.name = 'PortInUseError';
  }
}

/** Fails fast, before any engine starts, when the gateway's port is taken. */
export const assertPortFree = async (port: number, host: string): Promise<void> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) => {
      reject(error.code === 'EADDRINUSE' ? new PortInUseError(port, { cause: error }) : error);
    });
    server.listen(port, host, () => server.close(() => resolve()));
  });
