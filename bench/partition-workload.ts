/**
 * The workload of the partition load model: the local stack in memory (the demo catalog without its rate
 * policy, background timers out of the way) with a `PartitionRecorder` on its DynamoDB client, driven over HTTP
 * through the gateway phase by phase — price reads, quotes, commits, webhook deliveries — each phase counting the
 * units its operations consumed per partition key. `GOALS` are the rates per phase the design must carry in one
 * region (issue "Scale past one partition").
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { POINTER_REPLICAS } from '../functions/adapters/aws/catalog-repository';
import { STATUS_SHARDS } from '../functions/adapters/aws/webhook-store';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../functions/adapters/local/local-aws';
import { type LocalStack, startLocalStack } from '../functions/composition/local/stack';
import { STATS_SHARDS } from '../functions/domain/webhooks/endpoint-stats';
import { DAY_SHARDS, ENDPOINT_SHARDS, FANOUT_PENDING_SHARDS } from '../functions/domain/webhooks/envelope';
import { randomSecret } from './harness';
import { type FamilySizes, PartitionRecorder, type PhaseUsage } from './partition-model';

/** Operations per second per phase at the goals: deliveries are (event, endpoint) pairs. */
export const GOALS = { price: 30_000, quote: 1_000, commit: 300, delivery: 10_000 } as const;
export type Phase = keyof typeof GOALS;

/**
 * The sharded key families the service writes, each with its fixed number of keys: the model spreads a family's
 * load over all of them, not over the few a short run happened to touch.
 */
export const SHARD_FAMILIES: FamilySizes = (ref) => {
  const { table, index } = ref;
  if (table === 'events' && index === 'by-day-keys') return DAY_SHARDS;
  if (table === 'events' && index === 'fanout-pending-keys') return FANOUT_PENDING_SHARDS;
  if (table === 'deliveries' && index === 'by-endpoint-keys') return ENDPOINT_SHARDS;
  if (table === 'deliveries' && index === 'by-status-keys') return STATUS_SHARDS;
  if (table === 'endpointStats' && index === undefined) return STATS_SHARDS;
  if (table === 'catalog' && index === undefined && ref.key.startsWith('pointer#')) return POINTER_REPLICAS;
  return undefined;
};

/** Endpoints every event of the delivery phase goes to (each receives every event: the hottest partner case). */
export const ENDPOINTS_PER_EVENT = 5;

export interface WorkloadOptions {
  /** Operations per phase (deliveries: events × endpoints). */
  readonly operations: number;
  /** Requests in flight at once. */
  readonly concurrency?: number;
  readonly log?: (line: string) => void;
  /** Extra work inside a phase, through the recorder (the model's test plants a hot key so). */
  readonly plant?: (recorder: PartitionRecorder, phase: Phase) => void;
}

interface DemoCatalog {
  readonly products: readonly {
    readonly sku_id: string;
    readonly product_type?: string;
    readonly quantity_rules?: { readonly min?: number; readonly increment?: number };
  }[];
  readonly display_rules: readonly {
    readonly region: string;
    readonly currency_whitelist: readonly string[];
  }[];
}

const demoCatalog = (): DemoCatalog & Record<string, unknown> => {
  const { rate_policy: _policy, ...catalog } = JSON.parse(
    readFileSync(new URL('../catalog/demo-catalog.json', import.meta.url), 'utf8'),
  ) as DemoCatalog & Record<string, unknown>;
  return catalog;
};

/** Runs `task` `count` times, at most `concurrency` at once. */
const repeat = async (count: number, concurrency: number, task: (index: number) => Promise<void>) => {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(count, concurrency) }, async () => {
      for (let index = next++; index < count; index = next++) await task(index);
    }),
  );
};

const pick = <T>(items: readonly T[], index: number): T => items[index % items.length] as T;

/** A loopback receiver that answers 204 and counts what it received. */
const startReceiver = async (): Promise<{ url: string; received: () => number; server: Server }> => {
  let received = 0;
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      received += 1;
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received: () => received,
    server,
  };
};

/** Measures every phase; returns each phase's usage per partition key. */
export const measurePartitionLoad = async (options: WorkloadOptions): Promise<Map<string, PhaseUsage>> => {
  const log = options.log ?? (() => undefined);
  const concurrency = options.concurrency ?? 8;
  const apiKey = randomSecret('key_partitions');
  const adminToken = randomSecret('adm_partitions');
  let raw: DynamoDBClient | undefined;
  let recorder: PartitionRecorder | undefined;
  const catalog = demoCatalog();
  const hour = 3_600_000;
  const stack: LocalStack = await startLocalStack({
    port: 0,
    apiKey,
    adminToken,
    logLevel: (process.env.PARTITIONS_LOG_LEVEL as 'ERROR' | undefined) ?? 'SILENT',
    seedCatalog: catalog,
    rateLimit: { requestsPerSecond: 100_000, burst: 100_000 },
    // Background runs (rates, sweeper, manifests) stay out of the phases.
    ratesIntervalMs: hour,
    exportIntervalMs: hour,
    webhooks: { sweepIntervalMs: hour },
    onAwsClients: (clients) => {
      const endpoint = clients.dynamoDb.config.endpoint;
      raw = new DynamoDBClient({
        region: LOCAL_REGION,
        credentials: LOCAL_CREDENTIALS,
        ...(endpoint ? { endpoint } : {}),
      });
      recorder = new PartitionRecorder(raw);
      recorder.instrument(clients.dynamoDb);
    },
  });
  const receiver = await startReceiver();
  try {
    if (!recorder) throw new Error('the stack did not hand over its clients');
    const model = recorder;
    model.mapTables(stack.resources.tableNames);
    const call = async (method: string, path: string, body?: unknown, admin = false): Promise<unknown> => {
      const response = await fetch(new URL(path, stack.url), {
        method,
        headers: {
          ...(admin ? { authorization: `Bearer ${adminToken}` } : { 'x-api-key': apiKey }),
          ...(body === undefined
            ? {}
            : { 'content-type': 'application/json', 'idempotency-key': randomUUID() }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      const answer = (await response.json()) as unknown;
      if (response.status >= 500)
        throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
      return response.ok ? answer : undefined;
    };
    const goods = catalog.products.filter((product) => product.product_type !== 'stored_value');
    const markets = catalog.display_rules.flatMap((rule) =>
      rule.currency_whitelist.map((currency) => ({ region: rule.region, currency })),
    );
    const basket = (index: number) => ({
      items: [
        {
          sku_id: pick(goods, index).sku_id,
          quantity: Math.max(
            pick(goods, index).quantity_rules?.min ?? 1,
            pick(goods, index).quantity_rules?.increment ?? 1,
          ),
        },
      ],
      region: 'DE',
      currency: 'EUR',
      buyer_type: 'consumer',
    });
    /** A phase in two halves (`work(0)` then `work(1)`): keys seen in both are shared by its operations. */
    const phase = async (name: Phase, operations: number, work: (half: 0 | 1) => Promise<void>) => {
      const usage = model.start(name);
      options.plant?.(model, name);
      const started = performance.now();
      await work(0);
      model.secondHalf();
      options.plant?.(model, name);
      await work(1);
      usage.operations = operations;
      model.stop();
      log(`${name}: ${operations} operations in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    };
    const n = options.operations;

    /** The price read of operation `index` (the same sequence warms the instances and is then measured). */
    const priceRead = (index: number) => {
      const market = pick(markets, index * 7);
      return call(
        'GET',
        `/catalog/prices?sku=${pick(goods, index).sku_id}&currency=${market.currency}&region=${market.region}`,
      );
    };
    // Warm the function instances (their catalogs and price caches) with the price phase's own reads, twice, so the
    // measured phase sees the steady state of a peak: entries in every instance's local cache and in the shared
    // one. (The demo catalog's few SKUs would otherwise make a short run all first reads.)
    for (let round = 0; round < 2; round += 1)
      await repeat(n, concurrency, (index) => priceRead(index).then(() => undefined));

    /** Operation indexes of one half of a phase of `count` operations. */
    const halfOf = (count: number, half: 0 | 1) => {
      const first = Math.floor(count / 2);
      return half === 0 ? { from: 0, count: first } : { from: first, count: count - first };
    };
    const repeatHalf = (count: number, half: 0 | 1, task: (index: number) => Promise<void>) => {
      const { from, count: size } = halfOf(count, half);
      return repeat(size, concurrency, (index) => task(from + index));
    };
    await phase('price', n, (half) =>
      repeatHalf(n, half, async (index) => {
        await priceRead(index);
      }),
    );
    await phase('quote', n, (half) =>
      repeatHalf(n, half, async (index) => void (await call('POST', '/pricing/quote', basket(index)))),
    );
    const quotes: { quote_id: string; signature: string }[] = [];
    await repeat(n, concurrency, async (index) => {
      const quote = (await call('POST', '/pricing/quote', basket(index))) as
        | { quote_id: string; signature: string }
        | undefined;
      if (quote) quotes.push(quote);
    });
    await phase('commit', quotes.length, (half) =>
      repeatHalf(quotes.length, half, async (index) => {
        const quote = quotes[index];
        if (quote)
          await call('POST', '/pricing/commit', { quote_id: quote.quote_id, signature: quote.signature });
      }),
    );

    for (let endpoint = 0; endpoint < ENDPOINTS_PER_EVENT; endpoint += 1) {
      await call(
        'POST',
        '/webhooks/endpoints',
        { url: receiver.url, topics: ['partitions'], description: `model ${endpoint}` },
        true,
      );
    }
    const events = Math.max(1, Math.round(n / ENDPOINTS_PER_EVENT));
    const publishAndAwait = async (from: number, count: number) => {
      const expected = receiver.received() + count * ENDPOINTS_PER_EVENT;
      await repeat(count, concurrency, async (offset) => {
        await call(
          'POST',
          '/webhooks/events',
          {
            event_id: `partitions-${from + offset}-${randomUUID()}`,
            type: 'partitions.load',
            producer: 'model',
            data: { index: from + offset },
          },
          true,
        );
      });
      const deadline = Date.now() + 60_000;
      while (receiver.received() < expected && Date.now() < deadline)
        await new Promise((resolve) => setTimeout(resolve, 100));
      // The last outcomes are recorded after the receiver answered.
      await new Promise((resolve) => setTimeout(resolve, 500));
      if (receiver.received() < expected)
        throw new Error(`${receiver.received()} of ${expected} deliveries arrived`);
    };
    await phase('delivery', events * ENDPOINTS_PER_EVENT, async (half) => {
      const { from, count } = halfOf(events, half);
      await publishAndAwait(from, count);
    });
    if (model.errors.length > 0)
      log(`unattributed requests: ${model.errors.length}, e.g. ${model.errors[0]}`);
    return model.phases as Map<string, PhaseUsage>;
  } finally {
    receiver.server.close();
    await stack.stop();
    raw?.destroy();
  }
};
