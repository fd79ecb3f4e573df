import { createHash } from 'node:crypto';
import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoCatalogRepository, POINTER_REPLICAS } from '../../functions/adapters/aws/catalog-repository';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import type { Clock } from '../../functions/ports/clock';
import { importCatalog, publishCatalogChange } from '../../functions/usecases/catalog/import';
import { CatalogReader } from '../../functions/usecases/catalog/reader';
import { joinRelease, splitDocument } from '../../functions/usecases/catalog/release';
import { CatalogValidationError } from '../../functions/usecases/catalog/validate';
import { minimalDocument } from '../support/catalog-document';
import { engineClients, provisionIsolated } from '../support/engines';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

let repository: DynamoCatalogRepository;
let tableName: string;
let now = new Date('2026-11-22T12:00:00.000Z');
const clock: Clock = { now: () => now };

beforeEach(async () => {
  const resources = await provisionIsolated(clients);
  tableName = resources.tableNames.catalog;
  repository = new DynamoCatalogRepository(clients.documents, tableName, resources.tableNames.events);
  now = new Date('2026-11-22T12:00:00.000Z');
});

describe('catalog import and versions (DynamoDB Local)', () => {
  it('publishes a document as version 1 of each part and exports it unchanged', async () => {
    const result = await importCatalog({ repository, clock }, minimalDocument());
    expect(result).toMatchObject({
      revision: 1,
      versions: { pricelist_version: 1, fx_version: 'fx-1', tax_rule_version: 1 },
      changed: ['commercial', 'fx', 'tax'],
    });
    const { release } = await new CatalogReader(repository, clock).current();
    expect(joinRelease(release)).toEqual(minimalDocument());
  });

  it('treats an identical import as a no-op', async () => {
    await importCatalog({ repository, clock }, minimalDocument());
    const again = await importCatalog({ repository, clock }, minimalDocument());
    expect(again).toMatchObject({ revision: 1, changed: [] });
    expect(await repository.publications()).toHaveLength(1);
  });

  it('versions each part on its own: a rate change gives a new fx_version and keeps the others', async () => {
    await importCatalog({ repository, clock }, minimalDocument());
    const changed = minimalDocument({
      fx_rates: {
        base_currency: 'EUR',
        rates: [{ pair: 'EUR→USD', rate: '1.0901', source: 'ecb', method: 'provider', precision: 4 }],
      },
    });
    const result = await importCatalog({ repository, clock }, changed);
    expect(result).toMatchObject({
      revision: 2,
      versions: { pricelist_version: 1, fx_version: 'fx-2', tax_rule_version: 1 },
      changed: ['fx'],
    });
    const reader = new CatalogReader(repository, clock);
    const old = await reader.release({ commercial: 1, fx: 1, tax: 1 });
    expect(old.fx.content.fx_rates.rates[0]?.rate).toBe('1.0842');
  });

  it('writes the pointer and its replicas in one transaction: every replica names the new revision, and a read after the publication never sees the older one', async () => {
    await importCatalog({ repository, clock }, minimalDocument());
    const changed = minimalDocument({
      fx_rates: {
        base_currency: 'EUR',
        rates: [{ pair: 'EUR→USD', rate: '1.0901', source: 'ecb', method: 'provider', precision: 4 }],
      },
    });
    await importCatalog({ repository, clock }, changed);
    const revisions = await Promise.all(
      Array.from({ length: POINTER_REPLICAS }, async (_, replica) => {
        const item = await clients.documents.send(
          new GetCommand({
            TableName: tableName,
            Key: { pk: `pointer#${replica}`, sk: 'current' },
            ConsistentRead: true,
          }),
        );
        return item.Item?.revision;
      }),
    );
    expect(new Set(revisions)).toEqual(new Set([2]));
    // Reads pick replicas at random: many reads, every one the new revision.
    const reads = await Promise.all(Array.from({ length: 200 }, () => repository.current()));
    expect(new Set(reads.map((publication) => publication?.revision))).toEqual(new Set([2]));
  });

  it('publishes against the pointer itself: replicas left behind by a publication that wrote the pointer alone block nothing, and the next publication heals them', async () => {
    await importCatalog({ repository, clock }, minimalDocument());
    // An older build publishes revision 2 by writing the pointer alone: every replica still says revision 1.
    const pointer = await clients.documents.send(
      new GetCommand({ TableName: tableName, Key: { pk: 'pointer', sk: 'current' }, ConsistentRead: true }),
    );
    const publication = { ...(pointer.Item?.publication as Record<string, unknown>), revision: 2 };
    await clients.documents.send(
      new PutCommand({
        TableName: tableName,
        Item: { pk: 'pointer', sk: 'current', revision: 2, publication },
      }),
    );
    const result = await importCatalog(
      { repository, clock },
      minimalDocument({
        fx_rates: {
          base_currency: 'EUR',
          rates: [{ pair: 'EUR→USD', rate: '1.0777', source: 'ecb', method: 'provider', precision: 4 }],
        },
      }),
    );
    expect(result.revision).toBe(3);
    const reads = await Promise.all(Array.from({ length: POINTER_REPLICAS }, () => repository.current()));
    expect(new Set(reads.map((read) => read?.revision))).toEqual(new Set([3]));
  });

  it('reads the pointer itself when a catalog was last published before the replicas existed', async () => {
    await importCatalog({ repository, clock }, minimalDocument());
    const pointer = await clients.documents.send(
      new GetCommand({ TableName: tableName, Key: { pk: 'pointer', sk: 'current' }, ConsistentRead: true }),
    );
    for (let replica = 0; replica < POINTER_REPLICAS; replica += 1)
      await clients.documents.send(
        new DeleteCommand({ TableName: tableName, Key: { pk: `pointer#${replica}`, sk: 'current' } }),
      );
    expect(await repository.current()).toEqual(pointer.Item?.publication);
    // The next publication writes the replicas again.
    await importCatalog(
      { repository, clock },
      minimalDocument({
        fx_rates: {
          base_currency: 'EUR',
          rates: [{ pair: 'EUR→USD', rate: '1.0999', source: 'ecb', method: 'provider', precision: 4 }],
        },
      }),
    );
    const replica = await clients.documents.send(
      new GetCommand({ TableName: tableName, Key: { pk: 'pointer#0', sk: 'current' }, ConsistentRead: true }),
    );
    expect(replica.Item?.revision).toBe(2);
  });

  it('refuses an invalid document with every problem and its path, writing nothing', async () => {
    const invalid = minimalDocument({
      products: [{ sku_id: 'sku_game', title: 'Game' }],
      display_rules: [{ region: 'US', currency_whitelist: ['JPY'] }],
    });
    const error = await importCatalog({ repository, clock }, invalid).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(CatalogValidationError);
    const paths = (error as CatalogValidationError).problems.map((problem) => problem.path);
    expect(paths).toContain('$.pricelists[0].items[1].sku_id');
    expect(await repository.current()).toBeUndefined();
    expect(await repository.latestPartVersion('commercial')).toBe(0);
  });

  it('reports schema problems with their JSON paths', async () => {
    const error = await importCatalog(
      { repository, clock },
      { ...minimalDocument(), pricelists: [{ pricelist_id: 'x' }], extra: 1 },
    ).catch((caught: unknown) => caught);
    const paths = (error as CatalogValidationError).problems.map((problem) => problem.path);
    expect(paths).toEqual(
      expect.arrayContaining(['$', '$.pricelists[0].base_currency', '$.pricelists[0].items']),
    );
  });

  it('publishes concurrent imports one after the other, none lost', async () => {
    const documents = Array.from({ length: 5 }, (_, index) =>
      minimalDocument({
        fx_rates: {
          base_currency: 'EUR',
          rates: [{ pair: 'EUR→USD', rate: `1.0${index}`, source: 'ecb', method: 'provider', precision: 4 }],
        },
      }),
    );
    const results = await Promise.all(
      documents.map((document) => importCatalog({ repository, clock }, document)),
    );
    expect(new Set(results.map((result) => result.revision)).size).toBe(5);
    expect((await repository.current())?.revision).toBe(5);
    expect(await repository.publications()).toHaveLength(5);
  });

  it('stores a catalog larger than one DynamoDB item in chunks and reads it back whole', async () => {
    const count = 12_000;
    // Hash-like titles barely compress, so the gzip'd part is well over one 300 KB chunk.
    const products = Array.from({ length: count }, (_, index) => ({
      sku_id: `sku_${index}`,
      title: createHash('sha256').update(`title-${index}`).digest('hex'),
    }));
    const items = products.map((product, index) => ({
      sku_id: product.sku_id,
      base_price: `${1 + (index % 500)}.${String(index % 100).padStart(2, '0')}`,
      base_currency: 'EUR',
      tax_class: 'standard',
      pricing_model: 'flat' as const,
    }));
    const document = minimalDocument({
      products,
      pricelists: [{ pricelist_id: 'pl_eur', base_currency: 'EUR', items }],
    });
    await importCatalog({ repository, clock }, document);
    const header = await clients.documents.send(
      new GetCommand({ TableName: tableName, Key: { pk: 'part#commercial', sk: 'v#0000000001' } }),
    );
    expect(Number(header.Item?.chunks)).toBeGreaterThan(1);
    const { release } = await new CatalogReader(repository, clock).current();
    expect(release.commercial.content.products).toHaveLength(count);
    expect(joinRelease(release)).toEqual(document);
  });

  it('looks releases up as of a time: a future effective_from is not in force until then', async () => {
    await importCatalog({ repository, clock }, minimalDocument());
    await importCatalog(
      { repository, clock },
      minimalDocument({
        effective_from: '2026-12-01T00:00:00.000Z',
        products: minimalDocument().products.slice(0, 2),
      }),
    );
    const reader = new CatalogReader(repository, clock);
    expect((await reader.current({ fresh: true })).publication.revision).toBe(1);
    now = new Date('2026-12-01T00:00:00.000Z');
    expect((await reader.current({ fresh: true })).publication.revision).toBe(2);
    expect((await reader.inForceAt(new Date('2026-11-30T00:00:00.000Z'))).revision).toBe(1);
  });

  it('lists only the publications after a revision, in order', async () => {
    for (const title of ['one', 'two', 'three']) {
      await importCatalog(
        { repository, clock },
        minimalDocument({ products: minimalDocument().products.map((product) => ({ ...product, title })) }),
      );
    }
    expect((await repository.publications()).map((entry) => entry.revision)).toEqual([1, 2, 3]);
    expect((await repository.publications({ afterRevision: 1 })).map((entry) => entry.revision)).toEqual([
      2, 3,
    ]);
    expect(await repository.publications({ afterRevision: 3 })).toEqual([]);
  });

  it('publishes a change request once: a racing completion of the same one finds its publication', async () => {
    await importCatalog({ repository, clock }, minimalDocument());
    const changed = minimalDocument({
      products: minimalDocument().products.map((product) => ({ ...product, title: 'changed' })),
    });
    const parts = splitDocument(changed);
    const publishIt = () =>
      publishCatalogChange(
        { repository, clock },
        { plan: () => parts, changeRequestId: 'cr_once', effectiveFrom: '2026-01-01T00:00:00.000Z' },
      );
    // Both read revision 1 and plan the same change; one publishes, the other finds that publication.
    const [first, second] = await Promise.all([publishIt(), publishIt()]);
    expect(first.revision).toBe(2);
    expect(second.revision).toBe(2);
    expect((await repository.publications()).map((entry) => entry.change_request_id ?? null)).toEqual([
      null,
      'cr_once',
    ]);
    expect((await repository.publicationOfChange('cr_once'))?.revision).toBe(2);
    expect(await repository.publicationOfChange('cr_other')).toBeUndefined();
    // Later, with the pointer at the same revision, a third completion is refused by the mark, not published.
    expect((await publishIt()).revision).toBe(2);
    expect(await repository.publications({ afterRevision: 2 })).toEqual([]);
  });
});
