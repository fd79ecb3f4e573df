import { createHash } from 'node:crypto';
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { S3ObjectStore } from '../../../functions/adapters/aws/object-store';
import { ObjectConflictError } from '../../../functions/ports/object-store';

/**
 * What S3 does and fauxqs does not (the integration tests cover the rest on fauxqs): `If-None-Match: *` answered
 * with 412 when another writer got there between the HEAD and the PUT.
 */
const s3 = mockClient(S3Client);
// The stub is on the client class's prototype: undone after this file, for the files that share its worker.
afterAll(() => s3.restore());
afterEach(() => s3.reset());

const notFound = Object.assign(new Error('NotFound'), {
  name: 'NotFound',
  $metadata: { httpStatusCode: 404 },
});
const precondition = Object.assign(
  new Error('At least one of the pre-conditions you specified did not hold'),
  {
    name: 'PreconditionFailed',
    $metadata: { httpStatusCode: 412 },
  },
);
const body = new TextEncoder().encode('{"receipt_id":"rcpt_1"}');
const digest = createHash('sha256').update(body).digest('hex');
const store = () => new S3ObjectStore(new S3Client({ region: 'eu-west-1' }), 'receipts-bucket');

describe('S3ObjectStore against S3 semantics', () => {
  it('puts with If-None-Match, the SHA-256 as metadata and as the request checksum', async () => {
    s3.on(HeadObjectCommand).rejects(notFound);
    s3.on(PutObjectCommand).resolves({});
    expect(await store().putOnce('receipts/dt=2026-11-22/rcpt_1.json', body, 'application/json')).toBe(
      'created',
    );
    expect(s3.commandCalls(PutObjectCommand)[0]?.args[0].input).toEqual({
      Bucket: 'receipts-bucket',
      Key: 'receipts/dt=2026-11-22/rcpt_1.json',
      Body: body,
      ContentType: 'application/json',
      Metadata: { sha256: digest },
      ChecksumSHA256: Buffer.from(digest, 'hex').toString('base64'),
      IfNoneMatch: '*',
    });
  });

  it('a 412 over the same bytes is a copy another writer made; over other bytes a conflict', async () => {
    s3.on(HeadObjectCommand)
      .rejectsOnce(notFound)
      .resolvesOnce({ ContentLength: body.length, Metadata: { sha256: digest } })
      .rejectsOnce(notFound)
      .resolvesOnce({ ContentLength: 2, Metadata: { sha256: '0'.repeat(64) } });
    s3.on(PutObjectCommand).rejects(precondition);
    expect(await store().putOnce('k', body, 'application/json')).toBe('exists');
    await expect(store().putOnce('k', body, 'application/json')).rejects.toThrow(ObjectConflictError);
  });

  it('an object without the metadata is compared by its bytes', async () => {
    s3.on(HeadObjectCommand).resolves({ ContentLength: body.length, Metadata: {} });
    s3.on(GetObjectCommand).resolves({ Body: { transformToByteArray: async () => body } as never });
    expect(await store().putOnce('k', body, 'application/json')).toBe('exists');
    expect(s3.commandCalls(PutObjectCommand)).toHaveLength(0);
  });

  it('the first key under a prefix costs one request of one key', async () => {
    s3.on(ListObjectsV2Command)
      .resolvesOnce({ Contents: [{ Key: 'manifests/dt=2026-11-19.json' }] })
      .resolvesOnce({});
    expect(await store().firstKey('manifests/')).toBe('manifests/dt=2026-11-19.json');
    expect(await store().firstKey('receipts/')).toBeUndefined();
    expect(s3.commandCalls(ListObjectsV2Command).map((call) => call.args[0].input)).toEqual([
      { Bucket: 'receipts-bucket', Prefix: 'manifests/', MaxKeys: 1 },
      { Bucket: 'receipts-bucket', Prefix: 'receipts/', MaxKeys: 1 },
    ]);
  });

  it('any other error is thrown', async () => {
    s3.on(HeadObjectCommand).rejects(
      Object.assign(new Error('denied'), { name: 'AccessDenied', $metadata: { httpStatusCode: 403 } }),
    );
    await expect(store().putOnce('k', body, 'application/json')).rejects.toThrow('denied');
    await expect(store().head('k')).rejects.toThrow('denied');
    s3.on(GetObjectCommand).rejects(Object.assign(new Error('NoSuchKey'), { name: 'NoSuchKey' }));
    expect(await store().get('k')).toBeUndefined();
  });
});
