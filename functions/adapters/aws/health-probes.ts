import { DescribeTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { HeadBucketCommand, type S3Client } from '@aws-sdk/client-s3';
import { GetQueueAttributesCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { HealthProbe } from '../../ports/health';

export const dynamoDbProbe = (client: DynamoDBClient, tableName: string): HealthProbe => ({
  component: 'dynamodb',
  check: async () => {
    await client.send(new DescribeTableCommand({ TableName: tableName }));
  },
});

export const sqsProbe = (client: SQSClient, queueUrl: string): HealthProbe => ({
  component: 'sqs',
  check: async () => {
    await client.send(new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['QueueArn'] }));
  },
});

export const s3Probe = (client: S3Client, bucket: string): HealthProbe => ({
  component: 's3',
  check: async () => {
    await client.send(new HeadBucketCommand({ Bucket: bucket }));
  },
});
