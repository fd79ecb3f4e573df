/**
 * Cold starts from a file copy (docs/capacity.md §3): a part version larger than one chunk is also stored in the
 * catalog-files bucket when it is written, named by its header with the SHA-256 of its bytes; a reader that has
 * the bucket loads it in one GET (DynamoDB Local and fauxqs), a reader without it (or a copy that is missing or
 * not the recorded bytes) reads the chunks. Small parts get no copy.
 */
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { DeleteCommand, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demo, largeDocument } from '../../bench/large-catalog.bench';
import { DynamoCatalogRepository } from '../../functions/adapters/aws/catalog-repository';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import { S3ObjectStore } from '../../functions/adapters/aws/object-store';
import type { ProvisionedResources } from '../../functions/adapters/local/bootstrap';
import type { Clock } from '../../functions/ports/clock';
import { importCatalog } from '../../functions/usecases/catalog/import';
import { CatalogReader } from '../../functions/usecases/catalog/reader';
import { joinRelease } from '../../functions/usecases/catalog/release';
import { engineClients, provisionIsolated } from '../support/engines';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

const clock: Clock = { now: () => new Date('2026-11-26T12:00:00.000Z') };
let resources: ProvisionedResources;
let files: S3ObjectStore;
let document: ReturnType<typeof largeDocument>['document'];

/** Copies the repositories could not use, as they reported them. */
const unusable: { key: string; reason: string }[] = [];

const repositoryWith = (withFiles: boolean) =>
  new DynamoCatalogRepository(
    clients.documents,
    resources.tableNames.catalog,
    resources.tableNames.events,
    withFiles ? files : undefined,
    (key, reason) => unusable.push({ key, reason }),
  );

const header = async (kind: string) =>
  (
    await clients.documents.send(
      new GetCommand({
        TableName: resources.tableNames.catalog,
        Key: { pk: `part#${kind}`, sk: 'v#0000000001' },
      }),
    )
  ).Item as Record<string, unknown>;

beforeAll(async () => {
  resources = await provisionIsolated(clients);
  files = new S3ObjectStore(clients.s3, resources.bucketNames.catalogFiles);
  ({ document } = largeDocument(14_000));
  await importCatalog({ repository: repositoryWith(true), clock }, document);
}, 120_000);

describe('part versions larger than one chunk', () => {
  it('get a file copy named by their header with its SHA-256; small parts get none', async () => {
    const commercial = await header('commercial');
    expect(commercial.chunks).toBeGreaterThan(1);
    expect(commercial.file_key).toMatch(/^parts\/commercial\/0000000001-[0-9a-f-]{36}\.json\.gz$/);
    const stored = await files.head(String(commercial.file_key));
    expect(stored).toMatchObject({ size: commercial.bytes, sha256: commercial.file_sha256 });
    expect(await header('fx')).not.toHaveProperty('file_key');
    expect(await header('tax')).not.toHaveProperty('file_key');
  });

  it('load from the copy in one GET when the reader has the bucket, even with the chunks gone; from the chunks otherwise', async () => {
    const loaded = await new CatalogReader(repositoryWith(true), clock).current();
    expect(joinRelease(loaded.release).products).toEqual(document.products);

    // A copy that is not the recorded bytes is ignored: the chunks answer.
    const commercial = await header('commercial');
    const key = String(commercial.file_key);
    const original = await files.get(key);
    await clients.s3.send(
      new PutObjectCommand({ Bucket: files.bucket, Key: key, Body: Buffer.from('tampered') }),
    );
    const fromChunks = await new CatalogReader(repositoryWith(true), clock).current();
    expect(joinRelease(fromChunks.release).products).toEqual(document.products);
    expect(unusable).toEqual([{ key, reason: 'not the bytes its header recorded' }]);
    await clients.s3.send(new PutObjectCommand({ Bucket: files.bucket, Key: key, Body: original }));

    // The chunks removed: the reader with the bucket still loads (from the copy), the one without cannot.
    const chunkPk = `chunk#commercial#0000000001#${String(commercial.chunk_set)}`;
    const chunks = await clients.documents.send(
      new QueryCommand({
        TableName: resources.tableNames.catalog,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': chunkPk },
      }),
    );
    expect(chunks.Items?.length).toBe(commercial.chunks);
    for (const item of chunks.Items ?? [])
      await clients.documents.send(
        new DeleteCommand({ TableName: resources.tableNames.catalog, Key: { pk: item.pk, sk: item.sk } }),
      );
    const fromFile = await new CatalogReader(repositoryWith(true), clock).current();
    expect(joinRelease(fromFile.release).products).toEqual(document.products);
    await expect(new CatalogReader(repositoryWith(false), clock).current()).rejects.toThrow(/chunks/);
  });

  it('keeps the demo catalog (one chunk per part) without copies', async () => {
    const small = await provisionIsolated(clients);
    const repository = new DynamoCatalogRepository(
      clients.documents,
      small.tableNames.catalog,
      small.tableNames.events,
      new S3ObjectStore(clients.s3, small.bucketNames.catalogFiles),
    );
    await importCatalog({ repository, clock }, demo());
    expect(await new S3ObjectStore(clients.s3, small.bucketNames.catalogFiles).list('parts/')).toEqual([]);
  });
});
