/**
 * The history index on DynamoDB Local (C30): written with each publication's new parts, read newest first by
 * subject with a position to go on from, and records of publications that lost their race skipped by readers.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoCatalogRepository } from '../../functions/adapters/aws/catalog-repository';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import type { CatalogRepository } from '../../functions/ports/catalog';
import type { Clock } from '../../functions/ports/clock';
import { catalogHistory } from '../../functions/usecases/catalog/history';
import { contentHash, importCatalog } from '../../functions/usecases/catalog/import';
import { minimalDocument } from '../support/catalog-document';
import { engineClients, provisionIsolated } from '../support/engines';

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

let repository: DynamoCatalogRepository;
let tableName: string;
const clock: Clock = { now: () => new Date('2026-11-22T12:00:00.000Z') };
const noChangeRequests = { get: async () => undefined };

beforeEach(async () => {
  const resources = await provisionIsolated(clients);
  tableName = resources.tableNames.catalog;
  repository = new DynamoCatalogRepository(clients.documents, tableName, resources.tableNames.events);
});

const withRate = (rate: string) =>
  minimalDocument({
    fx_rates: {
      base_currency: 'EUR',
      rates: [{ pair: 'EUR→USD', rate, source: 'ecb', method: 'provider', precision: 4 }],
    },
  });

const withPrice = (price: string) => {
  const document = minimalDocument();
  const item = document.pricelists[0]?.items[0];
  if (item) item.base_price = price;
  return document;
};

/** The repository without its index: the history from the stored versions. */
const walkOnly = (inner: CatalogRepository): CatalogRepository => ({
  current: () => inner.current(),
  publications: (options) => inner.publications(options),
  part: (kind, version) => inner.part(kind, version),
  latestPartVersion: (kind) => inner.latestPartVersion(kind),
  publish: (request) => inner.publish(request),
  publicationOfChange: (crId) => inner.publicationOfChange(crId),
  publication: (revision) => inner.publication(revision),
  history: async () => ({ records: [], more: false }),
  historyStart: async () => undefined,
});

describe('the history index (DynamoDB Local)', () => {
  it('is written with each new part: one record per changed item, the first indexed version marked', async () => {
    await importCatalog({ repository, clock }, minimalDocument());
    await importCatalog({ repository, clock }, withPrice('49.99'));
    expect(await repository.historyStart('commercial')).toBe(1);
    expect(await repository.historyStart('fx')).toBe(1);
    const game = await repository.history('sku:sku_game', { limit: 10 });
    expect(game.more).toBe(false);
    expect(game.records.map((record) => [record.version, record.change, record.revision])).toEqual([
      [2, 'changed', 2],
      [1, 'added', 1],
    ]);
    expect(game.records[0]).toMatchObject({
      subject: 'sku:sku_game',
      scope: 'pl_eur',
      currency: 'EUR',
      kind: 'commercial',
      value: { sku_id: 'sku_game', base_price: '49.99' },
    });
    // The shirt did not change in version 2.
    expect((await repository.history('sku:sku_shirt', { limit: 10 })).records.map((r) => r.version)).toEqual([
      1,
    ]);
    // Paging from a position.
    const older = await repository.history('sku:sku_game', { limit: 1, before: { version: 2, scope: '' } });
    expect(older.records.map((record) => record.version)).toEqual([1]);
    const first = await repository.history('sku:sku_game', { limit: 1 });
    expect(first.more).toBe(true);
    expect((await repository.publication(2))?.versions).toEqual({ commercial: 2, fx: 1, tax: 1 });
    expect(await repository.publication(3)).toBeUndefined();
  });

  it('keeps records of publications that lost their race, and readers skip them', async () => {
    await importCatalog({ repository, clock }, minimalDocument());
    const rates = ['1.01', '1.02', '1.03', '1.04', '1.05', '1.06'];
    await Promise.all(rates.map((rate) => importCatalog({ repository, clock }, withRate(rate))));
    const stored = await clients.documents.send(
      new QueryCommand({
        TableName: tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': 'history#pair:EUR-USD' },
      }),
    );
    const published = (await repository.publications()).length;
    expect(published).toBe(7);
    // Losers of the race wrote records for versions no publication names.
    expect(stored.Items?.length ?? 0).toBeGreaterThanOrEqual(published);
    const deps = { repository, changeRequests: noChangeRequests };
    const indexed = await catalogHistory(deps, { pair: 'EUR-USD', limit: 100 });
    const walked = await catalogHistory(
      { ...deps, repository: walkOnly(repository) },
      { pair: 'EUR-USD', limit: 100 },
    );
    expect(indexed.items).toEqual(walked.items);
    expect(indexed.items).toHaveLength(7);
    // Racing writers of one version number never mix their chunks: every part reads back as its header says.
    for (let version = 1; version <= (await repository.latestPartVersion('fx')); version += 1) {
      const part = await repository.part('fx', version);
      if (part) expect(contentHash(part.content), `fx v${version}`).toBe(part.content_sha256);
    }
    expect(new Set(indexed.items.map((item) => item.fx_version)).size).toBe(7);
  });
});
