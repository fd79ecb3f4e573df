/**
 * Bounded decimal input: a burst of maximal-size quote bodies through the local gateway and the `checkout`
 * function, both running in this process (in-memory stack, demo catalog), and the heap before and after.
 *
 * - `valid`: the largest quotes the schema accepts — 100 lines at the maximum quantity and 20 checkout fees whose
 *   amounts use every digit an amount may have (18 before the point, 9 after), each amount distinct, so each
 *   one is a new entry of the decimal parse cache.
 * - `invalid`: bodies just under the 256 KiB limit whose decimals are too long — one fee amount of ~260 000
 *   digits before the point, or after it, 20 fees of ~13 000 digits each, a quantity of ~260 000 digits — each
 *   with digits of its own. Each must be a 400 naming the field; before the limits, each one's amount was parsed
 *   and kept by the parse cache (bounded by count, not size).
 *
 * Heap figures are `process.memoryUsage().heapUsed` before the burst, after each phase, and after a full GC when
 * `global.gc` exists (`node --expose-gc --import tsx bench/run.ts decimal-input`); the last one is what the
 * burst left behind. `--valid` and `--invalid` set the number of bodies (default 200 and 1 000).
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { startLocalStack } from '../functions/composition/local/stack';
import { MAX_REQUEST_BODY_BYTES } from '../functions/definitions/limits';
import { parseCacheUsage } from '../functions/domain/money/decimal';
import { catalogDocumentSchema } from '../functions/schemas/catalog-document';
import { MAX_BASKET_LINES, MAX_LINE_QUANTITY } from '../functions/schemas/checkout';
import {
  type BenchContext,
  type BenchResult,
  latencyResults,
  measure,
  nowMs,
  randomSecret,
  stopBenchStack,
  summarize,
} from './harness';
import { type OptionsBenchModule, positiveOption } from './options';

const CONCURRENCY = 16;
const MAX_CHECKOUT_FEES = 20;
const MIB = 1024 * 1024;

interface Reply {
  readonly status: number;
  readonly text: string;
}

const post = (agent: Agent, url: URL, apiKey: string, body: string): Promise<Reply> =>
  new Promise((resolve) => {
    const outgoing = request(
      url,
      {
        agent,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'content-length': String(Buffer.byteLength(body)),
          'x-api-key': apiKey,
        },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('error', () => resolve({ status: 0, text: '' }));
        response.on('end', () =>
          resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    outgoing.on('error', () => resolve({ status: 0, text: '' }));
    outgoing.end(body);
  });

/** `count` random decimal digits (a new string each call). */
const randomDigits = (count: number): string => {
  const bytes = randomBytes(count);
  for (let index = 0; index < count; index += 1) bytes[index] = 0x30 + ((bytes[index] as number) % 10);
  return bytes.toString('latin1');
};

/** A random amount with every digit an amount may have: 18 before the point (no leading zero), 9 after. */
const maximalAmount = (): string =>
  `${1 + ((randomBytes(1)[0] as number) % 9)}${randomDigits(17)}.${randomDigits(9)}`;

interface Shape {
  readonly region: string;
  readonly currency: string;
  readonly skus: readonly string[];
}

const quote = (shape: Shape, fees: readonly { kind: string; amount: string }[], quantity: unknown = 1) => ({
  items: Array.from({ length: MAX_BASKET_LINES }, (_, index) => ({
    sku_id: shape.skus[index % shape.skus.length],
    quantity,
  })),
  region: shape.region,
  currency: shape.currency,
  buyer_type: 'consumer',
  checkout_fees: fees,
});

const validBody = (shape: Shape): string =>
  JSON.stringify(
    quote(
      shape,
      Array.from({ length: MAX_CHECKOUT_FEES }, (_, index) => ({
        kind: `fee_${index}`,
        amount: maximalAmount(),
      })),
      MAX_LINE_QUANTITY,
    ),
  );

type InvalidKind = 'integer' | 'fraction' | 'many-fees' | 'quantity';
const INVALID_KINDS: readonly InvalidKind[] = ['integer', 'fraction', 'many-fees', 'quantity'];

/** A body of `kind` filled with digits up to just under the body limit. */
const invalidBody = (shape: Shape, kind: InvalidKind): string => {
  const room = (template: string) => MAX_REQUEST_BODY_BYTES - Buffer.byteLength(template) - 16;
  if (kind === 'quantity') {
    const template = JSON.stringify(quote(shape, [], 0));
    // A JSON number of ~260 000 digits: valid JSON, parsed as Infinity, refused as a quantity.
    return template.replace('"quantity":0', `"quantity":${randomDigits(room(template))}`);
  }
  if (kind === 'many-fees') {
    const template = JSON.stringify(
      quote(
        shape,
        Array.from({ length: MAX_CHECKOUT_FEES }, (_, index) => ({ kind: `fee_${index}`, amount: '' })),
      ),
    );
    const each = Math.floor(room(template) / MAX_CHECKOUT_FEES);
    return JSON.stringify(
      quote(
        shape,
        Array.from({ length: MAX_CHECKOUT_FEES }, (_, index) => ({
          kind: `fee_${index}`,
          amount: `${1 + index}${randomDigits(each - 3)}`,
        })),
      ),
    );
  }
  const template = JSON.stringify(quote(shape, [{ kind: 'service', amount: '' }]));
  const digits = randomDigits(room(template) - 2);
  const amount = kind === 'integer' ? `9${digits}` : `0.${digits}`;
  return JSON.stringify(quote(shape, [{ kind: 'service', amount }]));
};

const heapMiB = (): number => process.memoryUsage().heapUsed / MIB;

const collect = (): boolean => {
  const gc: unknown = Reflect.get(globalThis, 'gc');
  if (typeof gc !== 'function') return false;
  gc();
  return true;
};

/** The demo catalog's SKUs a one-line quote in DE/EUR accepts. */
const quotableSkus = async (agent: Agent, url: URL, apiKey: string, candidates: readonly string[]) => {
  const quotable: string[] = [];
  for (const sku_id of candidates) {
    const reply = await post(
      agent,
      url,
      apiKey,
      JSON.stringify({
        items: [{ sku_id, quantity: 1 }],
        region: 'DE',
        currency: 'EUR',
        buyer_type: 'consumer',
      }),
    );
    if (reply.status === 201) quotable.push(sku_id);
  }
  return quotable;
};

interface Burst {
  readonly results: BenchResult[];
  readonly statuses: Record<string, number>;
}

const burst = async (
  ctx: BenchContext,
  name: string,
  count: number,
  send: (index: number) => Promise<Reply>,
): Promise<Burst> => {
  const statuses: Record<string, number> = {};
  let next = 0;
  let firstUnexpected: string | undefined;
  const measurement = await measure(
    async () => {
      const reply = await send(next++);
      statuses[reply.status] = (statuses[reply.status] ?? 0) + 1;
      if ((reply.status >= 500 || reply.status === 0) && firstUnexpected === undefined)
        firstUnexpected = `${reply.status} ${reply.text.slice(0, 300)}`;
    },
    { iterations: count, concurrency: CONCURRENCY },
  );
  ctx.log(`${name}: ${count} bodies, statuses ${JSON.stringify(statuses)}`);
  if (firstUnexpected) ctx.log(`${name}: first 5xx or network error: ${firstUnexpected}`);
  const bench = `decimal-input.${name}`;
  const errors = Object.entries(statuses)
    .filter(([status]) => Number(status) >= 500 || Number(status) === 0)
    .reduce((total, [, n]) => total + n, 0);
  return {
    statuses,
    results: [
      ...latencyResults(bench, summarize(measurement)),
      { bench, metric: '5xx/errors', value: errors, unit: 'count' },
    ],
  };
};

const bench: OptionsBenchModule = {
  name: 'decimal-input',
  description:
    'maximal valid and oversized-decimal quote bodies through the in-process gateway and checkout function ' +
    '(demo catalog, concurrency 16); heapUsed before, after and after GC',
  options: ['valid', 'invalid'],
  run: async (ctx) => {
    const validCount = positiveOption(ctx, 'valid', 200);
    const invalidCount = positiveOption(ctx, 'invalid', 1_000);
    ctx.log('starting the local stack in memory with the demo catalog');
    const apiKey = randomSecret('key_bench');
    const seedCatalog = catalogDocumentSchema.parse(
      JSON.parse(readFileSync(new URL('../catalog/demo-catalog.json', import.meta.url), 'utf8')),
    );
    const stack = await startLocalStack({
      port: 0,
      apiKey,
      adminToken: randomSecret('adm_bench'),
      logLevel: 'SILENT',
      seedCatalog,
      rateLimit: { requestsPerSecond: 1_000_000, burst: 1_000_000 },
    });
    const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });
    try {
      const url = new URL('/pricing/quote', stack.url);
      const candidates = [
        ...new Set(seedCatalog.pricelists.flatMap((list) => list.items.map((item) => item.sku_id))),
      ];
      const skus = await quotableSkus(agent, url, apiKey, candidates);
      if (skus.length === 0) throw new Error('no SKU of the demo catalog can be quoted in DE/EUR');
      const shape: Shape = { region: 'DE', currency: 'EUR', skus };
      ctx.log(
        `${skus.length} quotable SKUs; valid body ${(Buffer.byteLength(validBody(shape)) / 1024).toFixed(1)} KiB, ` +
          `invalid bodies ${INVALID_KINDS.map(
            (kind) => `${kind} ${(Buffer.byteLength(invalidBody(shape, kind)) / 1024).toFixed(1)} KiB`,
          ).join(', ')}`,
      );
      // Warm up every path once, so the figures are the burst's, not the first requests'.
      for (let index = 0; index < 20; index += 1) await post(agent, url, apiKey, validBody(shape));
      for (const kind of INVALID_KINDS) await post(agent, url, apiKey, invalidBody(shape, kind));

      const gc = collect();
      const before = heapMiB();
      const startedAt = nowMs();
      const valid = await burst(ctx, 'valid', validCount, () => post(agent, url, apiKey, validBody(shape)));
      const afterValid = heapMiB();
      const invalid = await burst(ctx, 'invalid', invalidCount, (index) =>
        post(
          agent,
          url,
          apiKey,
          invalidBody(shape, INVALID_KINDS[index % INVALID_KINDS.length] ?? 'integer'),
        ),
      );
      const afterInvalid = heapMiB();
      ctx.log(
        `burst of ${validCount + invalidCount} bodies in ${((nowMs() - startedAt) / 1000).toFixed(1)} s`,
      );
      collect();
      const afterGc = heapMiB();
      const cache = parseCacheUsage();
      ctx.log(
        `heapUsed ${before.toFixed(1)} MiB before, ${afterValid.toFixed(1)} after the valid bodies, ` +
          `${afterInvalid.toFixed(1)} after the invalid ones` +
          (gc ? `, ${afterGc.toFixed(1)} after GC` : ' (run node with --expose-gc for the figure after GC)') +
          `; parse cache ${cache.entries} entries, ${cache.chars} characters`,
      );
      return [
        ...valid.results,
        { bench: 'decimal-input.valid', metric: '201', value: valid.statuses['201'] ?? 0, unit: 'count' },
        ...invalid.results,
        { bench: 'decimal-input.invalid', metric: '400', value: invalid.statuses['400'] ?? 0, unit: 'count' },
        { bench: 'decimal-input.heap', metric: 'before', value: before, unit: 'MiB' },
        { bench: 'decimal-input.heap', metric: 'after valid', value: afterValid, unit: 'MiB' },
        { bench: 'decimal-input.heap', metric: 'after invalid', value: afterInvalid, unit: 'MiB' },
        ...(gc ? [{ bench: 'decimal-input.heap', metric: 'after GC', value: afterGc, unit: 'MiB' }] : []),
        { bench: 'decimal-input.parse-cache', metric: 'entries', value: cache.entries, unit: 'count' },
        { bench: 'decimal-input.parse-cache', metric: 'chars', value: cache.chars, unit: 'count' },
      ];
    } finally {
      await stopBenchStack(stack, agent, ctx);
    }
  },
};

export default bench;
