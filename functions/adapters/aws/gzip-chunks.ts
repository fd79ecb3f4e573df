import { promisify } from 'node:util';
import { gunzip, gzip } from 'node:zlib';
import { BatchWriteCommand, type DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';

const gzipAsync = promisify(gzip);
const gunzipAsync = promisify(gunzip);

/** DynamoDB items are at most 400 KB; large JSON is gzip'd and split into chunks well below that. */
export const CHUNK_BYTES = 300 * 1024;

const pad = (value: number): string => String(value).padStart(10, '0');

/** Where the chunks of one value live: one partition, sort keys `<prefix><index>`. */
export interface ChunkLocation {
  readonly tableName: string;
  readonly partitionKey: { readonly name: string; readonly value: string };
  readonly sortKeyName: string;
  readonly prefix: string;
}

/** `value` as gzip'd JSON. */
export const gzipJson = (value: unknown): Promise<Buffer> =>
  gzipAsync(Buffer.from(JSON.stringify(value), 'utf8'));

/** The value of gzip'd JSON. */
export const gunzipJson = async (compressed: Uint8Array): Promise<unknown> =>
  JSON.parse((await gunzipAsync(compressed)).toString('utf8'));

/** Writes `value` as gzip'd JSON chunks; returns how many (the caller records it to detect partial reads). */
export const writeGzipChunks = async (
  documents: DynamoDBDocumentClient,
  location: ChunkLocation,
  value: unknown,
): Promise<{ chunks: number; bytes: number }> =>
  writeCompressedChunks(documents, location, await gzipJson(value));

/** Writes gzip'd bytes as chunks (`writeGzipChunks` of bytes already compressed). */
export const writeCompressedChunks = async (
  documents: DynamoDBDocumentClient,
  location: ChunkLocation,
  compressed: Buffer,
): Promise<{ chunks: number; bytes: number }> => {
  const chunks: Buffer[] = [];
  for (let offset = 0; offset < compressed.length; offset += CHUNK_BYTES) {
    chunks.push(compressed.subarray(offset, offset + CHUNK_BYTES));
  }
  for (let start = 0; start < chunks.length; start += 25) {
    await documents.send(
      new BatchWriteCommand({
        RequestItems: {
          [location.tableName]: chunks.slice(start, start + 25).map((data, index) => ({
            PutRequest: {
              Item: {
                [location.partitionKey.name]: location.partitionKey.value,
                [location.sortKeyName]: `${location.prefix}${pad(start + index)}`,
                data,
              },
            },
          })),
        },
      }),
    );
  }
  return { chunks: chunks.length, bytes: compressed.length };
};

/** Reads a value written by `writeGzipChunks`; throws when fewer than `expected` chunks are there. */
export const readGzipChunks = async (
  documents: DynamoDBDocumentClient,
  location: ChunkLocation,
  expected: number,
): Promise<unknown> => {
  const parts: Uint8Array[] = [];
  let exclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await documents.send(
      new QueryCommand({
        TableName: location.tableName,
        KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :prefix)',
        ExpressionAttributeNames: { '#pk': location.partitionKey.name, '#sk': location.sortKeyName },
        ExpressionAttributeValues: { ':pk': location.partitionKey.value, ':prefix': location.prefix },
        ...(exclusiveStartKey ? { ExclusiveStartKey: exclusiveStartKey } : {}),
      }),
    );
    for (const item of page.Items ?? []) parts.push(item.data as Uint8Array);
    exclusiveStartKey = page.LastEvaluatedKey;
  } while (exclusiveStartKey);
  if (parts.length !== expected) {
    throw new Error(`${location.partitionKey.value}: ${parts.length} of ${expected} chunks`);
  }
  return gunzipJson(Buffer.concat(parts));
};
