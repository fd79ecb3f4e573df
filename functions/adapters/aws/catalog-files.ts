/**
 * Catalog files on S3 (`CatalogFiles`): gzip JSON written once through `S3ObjectStore`, pre-signed GET and PUT
 * URLs (`@aws-sdk/s3-request-presigner`, signed with the function's own credentials, so a link grants exactly what
 * its role may do and no more than its lifetime), uploads read with their size checked before and while they are
 * decompressed.
 */
import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import {
  type CatalogFiles,
  type FileLink,
  FileTooLargeError,
  FileUnreadableError,
} from '../../ports/catalog-files';
import { S3ObjectStore } from './object-store';

const GZIP_MAGIC = [0x1f, 0x8b];

const isGzip = (bytes: Uint8Array) => bytes[0] === GZIP_MAGIC[0] && bytes[1] === GZIP_MAGIC[1];

export class S3CatalogFiles implements CatalogFiles {
  private readonly objects: S3ObjectStore;

  constructor(
    private readonly s3: S3Client,
    private readonly bucket: string,
    private readonly now: () => Date = () => new Date(),
  ) {
    this.objects = new S3ObjectStore(s3, bucket);
  }

  async storeJson(prefix: string, text: string): Promise<{ readonly key: string; readonly bytes: number }> {
    const key = `${prefix}${createHash('sha256').update(text).digest('hex')}.json.gz`;
    const existing = await this.objects.head(key);
    if (existing) return { key, bytes: existing.size };
    const body = gzipSync(text);
    // Two writers of one document write the same bytes (gzip is deterministic here): `putOnce` accepts that.
    await this.objects.putOnce(key, body, 'application/gzip');
    return { key, bytes: body.byteLength };
  }

  async downloadLink(key: string, seconds: number): Promise<FileLink> {
    return this.link(new GetObjectCommand({ Bucket: this.bucket, Key: key }), seconds);
  }

  async uploadLink(key: string, seconds: number, bytes: number): Promise<FileLink> {
    // The length is a signed header: S3 refuses a body of any other size.
    return this.link(new PutObjectCommand({ Bucket: this.bucket, Key: key, ContentLength: bytes }), seconds);
  }

  async readJson(key: string, maxBytes: number): Promise<unknown> {
    const head = await this.objects.head(key);
    if (!head) return undefined;
    if (head.size > maxBytes) throw new FileTooLargeError(head.size, maxBytes);
    const stored = await this.objects.get(key);
    if (!stored) return undefined;
    let text: string;
    try {
      const bytes = isGzip(stored) ? gunzipSync(stored, { maxOutputLength: maxBytes }) : stored;
      text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE')
        throw new FileTooLargeError(maxBytes + 1, maxBytes);
      throw new FileUnreadableError('the file is neither gzip nor UTF-8 text');
    }
    try {
      return JSON.parse(text) as unknown;
    } catch {
      throw new FileUnreadableError('the file is not JSON');
    }
  }

  private async link(command: GetObjectCommand | PutObjectCommand, seconds: number): Promise<FileLink> {
    const signedAt = this.now();
    const url = await getSignedUrl(this.s3, command, { expiresIn: seconds, signingDate: signedAt });
    return { url, expires_at: new Date(signedAt.getTime() + seconds * 1000).toISOString() };
  }
}
