import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { DynamoDBStreamsClient } from '@aws-sdk/client-dynamodb-streams';
import { KMSClient } from '@aws-sdk/client-kms';
import { S3Client } from '@aws-sdk/client-s3';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/**
 * Where the AWS SDK clients point. In AWS only `region` is set; the local stack and the tests point the same
 * clients at DynamoDB Local and fauxqs, which speak the real wire protocols.
 */
export interface AwsClientConfig {
  readonly region: string;
  readonly dynamoDbEndpoint?: string;
  readonly sqsEndpoint?: string;
  readonly s3Endpoint?: string;
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /**
   * DynamoDB Local checks that a request carries SigV4 headers, not what they sign: with this set, requests to
   * `dynamoDbEndpoint` carry well-formed headers without the HMAC work (about a quarter of the client's CPU per
   * call). Only for an emulator; AWS always gets real signatures.
   */
  readonly unsignedEmulator?: boolean;
}

type RequestSigner = Extract<NonNullable<DynamoDBClientConfig['signer']>, { sign: unknown }>;

/** Authorization headers an emulator accepts, for the given access key, without computing a signature. */
export const emulatorSigner = (accessKeyId: string, region: string): RequestSigner => ({
  sign: async (request) => {
    request.headers.authorization =
      `AWS4-HMAC-SHA256 Credential=${accessKeyId}/20000101/${region}/dynamodb/aws4_request, ` +
      'SignedHeaders=host, Signature=0';
    request.headers['x-amz-date'] = '20000101T000000Z';
    return request;
  },
});

export interface AwsClients {
  readonly dynamoDb: DynamoDBClient;
  readonly documents: DynamoDBDocumentClient;
  readonly streams: DynamoDBStreamsClient;
  readonly sqs: SQSClient;
  readonly s3: S3Client;
}

const base = (config: AwsClientConfig) => ({
  region: config.region,
  ...(config.credentials ? { credentials: config.credentials } : {}),
});

/** The document client used for every DynamoDB access: plain JS values in, plain JS values out. */
export const documentClientOf = (dynamoDb: DynamoDBClient): DynamoDBDocumentClient =>
  DynamoDBDocumentClient.from(dynamoDb, {
    marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
    unmarshallOptions: { wrapNumbers: false },
  });

/**
 * The SDK's logger middleware formats every request and response for a logger (masking sensitive members) even
 * when nothing logs them: ≈ 2 % of the delivery path's CPU. The service logs its own calls, never the SDK's.
 */
const withoutSdkLogging = <T extends { middlewareStack: { remove(name: string): boolean } }>(
  client: T,
): T => {
  client.middlewareStack.remove('loggerMiddleware');
  return client;
};

export const createAwsClients = (config: AwsClientConfig): AwsClients => {
  const dynamoDbOptions = {
    ...base(config),
    ...(config.dynamoDbEndpoint ? { endpoint: config.dynamoDbEndpoint } : {}),
    ...(config.unsignedEmulator && config.dynamoDbEndpoint && config.credentials
      ? { signer: emulatorSigner(config.credentials.accessKeyId, config.region) }
      : {}),
  };
  const dynamoDb = withoutSdkLogging(new DynamoDBClient(dynamoDbOptions));
  return {
    dynamoDb,
    documents: documentClientOf(dynamoDb),
    streams: withoutSdkLogging(new DynamoDBStreamsClient(dynamoDbOptions)),
    sqs: withoutSdkLogging(
      new SQSClient({ ...base(config), ...(config.sqsEndpoint ? { endpoint: config.sqsEndpoint } : {}) }),
    ),
    s3: withoutSdkLogging(
      new S3Client({
        ...base(config),
        // A checksum only where an operation requires one or the caller gives it (every put here names its
        // SHA-256): by default the SDK would sign the CRC32 of an empty body into a pre-signed upload URL, and S3
        // would refuse every upload through it.
        requestChecksumCalculation: 'WHEN_REQUIRED',
        ...(config.s3Endpoint ? { endpoint: config.s3Endpoint, forcePathStyle: true } : {}),
      }),
    ),
  };
};

export const createKmsClient = (region: string): KMSClient => new KMSClient({ region });
export const createSchedulerClient = (region: string): SchedulerClient => new SchedulerClient({ region });

export const destroyAwsClients = (clients: AwsClients): void => {
  clients.documents.destroy();
  clients.dynamoDb.destroy();
  clients.streams.destroy();
  clients.sqs.destroy();
  clients.s3.destroy();
};
