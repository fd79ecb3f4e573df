/**
 * `npm run bench -- large-catalog [--rows 1000000]`: the demo catalog with rows / 3 more products, each priced in
 * the three demo price lists that carry items of their own (the two derived lists price them too, computed), published on an in-memory local stack
 * through a catalog change request approved by two operators (the path every change takes), then served:
 * publication time and heap, the size of the stored release, a fresh instance's cold load of the release (what a
 * new Lambda instance does before its first price), and price reads p50/p95 over HTTP. Run by name only: it takes
 * minutes and gigabytes.
 */
import { readFileSync } from 'node:fs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { DynamoCatalogRepository } from '../functions/adapters/aws/catalog-repository';
import { S3ObjectStore } from '../functions/adapters/aws/object-store';
import { changeRequestDependencies } from '../functions/composition/change-requests';
import { startLocalStack } from '../functions/composition/local/stack';
import { CatalogReader } from '../functions/usecases/catalog/reader';
import { publishSeedCatalog } from '../functions/usecases/change-requests/bootstrap';
import { type BenchResult, nowMs, randomSecret, stopBenchStack, summarize } from './harness';
import { type OptionsBenchModule, positiveOption } from './options';

interface Product {
  readonly sku_id: string;
  readonly [field: string]: unknown;
}
interface PriceItem {
  readonly sku_id: string;
  readonly base_price: string;
  readonly [field: string]: unknown;
}
interface Pricelist {
  readonly pricelist_id: string;
  readonly derived_from?: unknown;
  readonly items: readonly PriceItem[];
  readonly [field: string]: unknown;
}

export const demo = (): Record<string, unknown> & { products: Product[]; pricelists: Pricelist[] } => {
  const { rate_policy: _policy, ...document } = JSON.parse(
    readFileSync(new URL('../catalog/demo-catalog.json', import.meta.url), 'utf8'),
  );
  return document;
};

/** The demo catalog with `count` more products, each priced in every list that has items of its own. */
export const largeDocument = (count: number) => {
  const document = demo();
  const template = document.products.find((product) => product.sku_id === 'GAME-STARFALL-PS5') as Product;
  const products = Array.from({ length: count }, (_, index) => ({
    ...template,
    sku_id: `BULK-${String(index).padStart(7, '0')}`,
    title: `Bulk product ${index}`,
  }));
  const pricelists = document.pricelists.map((list) => {
    const sample = list.items.find((item) => item.sku_id === 'GAME-STARFALL-PS5');
    if (list.derived_from !== undefined || !sample) return list;
    const { promo_refs: _refs, ...item } = sample;
    return {
      ...list,
      items: [
        ...list.items,
        ...products.map((product, index) => ({
          ...item,
          sku_id: product.sku_id,
          base_price: (10 + (index % 9_000) / 100).toFixed(2),
        })),
      ],
    };
  });
  const rows = pricelists.reduce((sum, list) => sum + list.items.length, 0);
  return { document: { ...document, products: [...document.products, ...products], pricelists }, rows };
};

const bench: OptionsBenchModule = {
  name: 'large-catalog',
  description:
    'a 1 000 000-row catalog published through a change request on the local stack: publication, cold load, price p95',
  options: ['rows'],
  onlyWhenNamed: true,
  run: async (ctx) => {
    // Products priced in each of the demo's three lists with items of their own: rows / 3 products.
    const count = Math.ceil(positiveOption(ctx, 'rows', 1_000_000) / 3);
    const apiKey = randomSecret('key_large');
    const stack = await startLocalStack({
      port: 0,
      apiKey,
      adminToken: randomSecret('adm_large'),
      logLevel: 'SILENT',
      seedCatalog: demo(),
      ratesIntervalMs: 3_600_000,
      exportIntervalMs: 3_600_000,
      rateLimit: { requestsPerSecond: 100_000, burst: 100_000 },
    });
    const results: BenchResult[] = [];
    try {
      let started = nowMs();
      const { document, rows } = largeDocument(count);
      const json = JSON.stringify(document);
      ctx.log(
        `built ${rows} price rows (${(json.length / 1024 ** 2).toFixed(0)} MB of JSON) in ${((nowMs() - started) / 1000).toFixed(1)} s`,
      );
      results.push(
        { bench: 'large-catalog', metric: 'price_rows', value: rows, unit: 'count' },
        { bench: 'large-catalog', metric: 'document', value: json.length / 1024 ** 2, unit: 'MiB' },
      );

      started = nowMs();
      const published = await publishSeedCatalog(
        changeRequestDependencies(stack.deps),
        JSON.parse(json),
        'the large-catalog benchmark',
      );
      const publishMs = nowMs() - started;
      const heap = process.memoryUsage();
      ctx.log(
        `published through ${published.cr_id} (${published.status}) in ${(publishMs / 1000).toFixed(1)} s; ` +
          `heap ${(heap.heapUsed / 1024 ** 2).toFixed(0)} MiB, rss ${(heap.rss / 1024 ** 2).toFixed(0)} MiB`,
      );
      results.push(
        { bench: 'large-catalog', metric: 'publish', value: publishMs, unit: 'ms' },
        { bench: 'large-catalog', metric: 'rss_after_publish', value: heap.rss / 1024 ** 2, unit: 'MiB' },
      );

      // A fresh instance's cold load, with nothing cached: from the part's S3 copy (the catalog and checkout
      // functions, which may read the bucket) and from the DynamoDB chunks alone (a function that may not).
      const { catalog } = stack.resources.tableNames;
      const header = await stack.clients.documents.send(
        new GetCommand({ TableName: catalog, Key: { pk: 'part#commercial', sk: 'v#0000000002' } }),
      );
      ctx.log(
        `commercial part: ${header.Item?.chunks} chunks, ${(Number(header.Item?.bytes) / 1024 ** 2).toFixed(1)} MiB gzip, ` +
          `S3 copy ${header.Item?.file_key ?? 'none'}`,
      );
      results.push({
        bench: 'large-catalog',
        metric: 'release_gzip',
        value: Number(header.Item?.bytes) / 1024 ** 2,
        unit: 'MiB',
      });
      const files = new S3ObjectStore(stack.clients.s3, stack.resources.bucketNames.catalogFiles);
      for (const [metric, repository] of [
        ['cold_load_s3', new DynamoCatalogRepository(stack.clients.documents, catalog, undefined, files)],
        ['cold_load', new DynamoCatalogRepository(stack.clients.documents, catalog)],
      ] as const) {
        started = nowMs();
        const loaded = await new CatalogReader(repository, stack.deps.clock).current();
        const coldMs = nowMs() - started;
        ctx.log(
          `${metric === 'cold_load' ? 'cold load from the DynamoDB chunks' : 'cold load from the S3 copy'}: ` +
            `${(coldMs / 1000).toFixed(2)} s (${loaded.release.commercial.content.pricelists.length} lists)`,
        );
        results.push({ bench: 'large-catalog', metric, value: coldMs, unit: 'ms' });
      }

      const latencies: number[] = [];
      for (let index = 0; index < 300; index += 1) {
        const sku = `BULK-${String((index * 7_919) % count).padStart(7, '0')}`;
        const at = nowMs();
        const response = await fetch(`${stack.url}/catalog/prices?sku=${sku}&currency=EUR&region=DE`, {
          headers: { 'x-api-key': apiKey },
        });
        await response.arrayBuffer();
        latencies.push(nowMs() - at);
        if (response.status !== 200 && index === 0) ctx.log(`price read answered ${response.status}`);
      }
      const summary = summarize(latencies);
      ctx.log(`price reads: p50 ${summary.median.toFixed(1)} ms, p95 ${summary.p95.toFixed(1)} ms`);
      results.push(
        { bench: 'large-catalog', metric: 'price_p50', value: summary.median, unit: 'ms' },
        { bench: 'large-catalog', metric: 'price_p95', value: summary.p95, unit: 'ms' },
      );
      return results;
    } finally {
      await stopBenchStack(stack, undefined, ctx);
    }
  },
};

export default bench;
