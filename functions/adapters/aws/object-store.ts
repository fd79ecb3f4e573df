/**
 * Write-once objects on S3 (the same code against fauxqs in the local stack).
 *
 * A put is `PutObject` with `If-None-Match: *`: S3 refuses to replace an object (412), and a 412 over the same
 * bytes is a copy already made. fauxqs accepts the header without enforcing it, so `S3ObjectStore` also looks
 * first (`HeadObject`): an object already there is compared, never rewritten, locally as in AWS. Each object
 * carries the SHA-256 of its bytes as metadata (`x-amz-meta-sha256`, lowercase hex) and as the request's
 * `x-amz-checksum-sha256`, so S3 checks the bytes it receives and a later put of the same bytes is recognised
 * from a `HeadObject`. Encryption is the bucket's default (SSE-KMS with the data key in AWS).
 */
import { createHash } from 'node:crypto';
import {
  GetObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type PutObjectCommandInput,
  type S3Client,
} from '@aws-sdk/client-s3';
import {
  type ListedObject,
  ObjectConflictError,
  type ObjectHead,
  type ObjectStore,
  type PutOnceOutcome,
} from '../../ports/object-store';

/** The user metadata key (`x-amz-meta-sha256`) that holds the SHA-256 of an object's bytes. */
export const SHA256_METADATA = 'sha256';

const SHA256_HEX = /^[0-9a-f]{64}$/;

const statusOf = (error: unknown): number | undefined =>
  (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;

/** S3's answer to `If-None-Match: *` over an existing object. */
export const preconditionFailed = (error: unknown): boolean =>
  (error as Error).name === 'PreconditionFailed' || statusOf(error) === 412;

/** No such object (`HeadObject` answers a bare 404, `GetObject` `NoSuchKey`). */
const notFound = (error: unknown): boolean => {
  const name = (error as Error).name;
  return name === 'NotFound' || name === 'NoSuchKey' || statusOf(error) === 404;
};

/**
 * `PutObject` with `If-None-Match: *`: `created`, or, when S3 answers 412 (an object is there), `exists` if
 * `holdsSameBytes` says the object there has the bytes to write, else `conflict`.
 */
export const putIfNoneMatch = async (
  s3: S3Client,
  input: PutObjectCommandInput,
  holdsSameBytes: () => Promise<boolean>,
): Promise<PutOnceOutcome | 'conflict'> => {
  try {
    await s3.send(new PutObjectCommand({ ...input, IfNoneMatch: '*' }));
    return 'created';
  } catch (error) {
    if (!preconditionFailed(error)) throw error;
  }
  return (await holdsSameBytes()) ? 'exists' : 'conflict';
};

const sha256Of = (bytes: Uint8Array) => createHash('sha256').update(bytes);

/** An S3 bucket as an `ObjectStore`. */
export class S3ObjectStore implements ObjectStore {
  constructor(
    private readonly s3: S3Client,
    readonly bucket: string,
    /** Keys per `ListObjectsV2` page (S3's maximum, 1000, by default). */
    private readonly pageSize = 1000,
  ) {}

  async putOnce(key: string, body: Uint8Array, contentType: string): Promise<PutOnceOutcome> {
    const sha256 = sha256Of(body).digest('hex');
    const existing = await this.head(key);
    if (existing) {
      if (await this.holds(key, existing, sha256)) return 'exists';
      throw new ObjectConflictError(key);
    }
    const outcome = await putIfNoneMatch(
      this.s3,
      {
        Bucket: this.bucket,
        Key: key,
        Body: body,
        ContentType: contentType,
        Metadata: { [SHA256_METADATA]: sha256 },
        ChecksumSHA256: Buffer.from(sha256, 'hex').toString('base64'),
      },
      async () => {
        const winner = await this.head(key);
        return winner !== undefined && (await this.holds(key, winner, sha256));
      },
    );
    if (outcome === 'conflict') throw new ObjectConflictError(key);
    return outcome;
  }

  /** Whether the object under `key` has the bytes of digest `sha256`: from its metadata, else its bytes. */
  private async holds(key: string, head: ObjectHead, sha256: string): Promise<boolean> {
    if (head.sha256 !== undefined) return head.sha256 === sha256;
    const bytes = await this.get(key);
    return bytes !== undefined && sha256Of(bytes).digest('hex') === sha256;
  }

  async head(key: string): Promise<ObjectHead | undefined> {
    try {
      const answer = await this.s3.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      const sha256 = answer.Metadata?.[SHA256_METADATA];
      return {
        size: answer.ContentLength ?? 0,
        ...(sha256 !== undefined && SHA256_HEX.test(sha256) ? { sha256 } : {}),
      };
    } catch (error) {
      if (notFound(error)) return undefined;
      throw error;
    }
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      const answer = await this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      return answer.Body ? await answer.Body.transformToByteArray() : new Uint8Array();
    } catch (error) {
      if (notFound(error)) return undefined;
      throw error;
    }
  }

  async firstKey(prefix: string): Promise<string | undefined> {
    const page = await this.s3.send(
      new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, MaxKeys: 1 }),
    );
    return page.Contents?.[0]?.Key;
  }

  async list(prefix: string): Promise<ListedObject[]> {
    const objects: ListedObject[] = [];
    let token: string | undefined;
    do {
      const page = await this.s3.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: prefix,
          MaxKeys: this.pageSize,
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      for (const object of page.Contents ?? []) {
        if (object.Key !== undefined) objects.push({ key: object.Key, size: object.Size ?? 0 });
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return objects;
  }
}
