import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type BenchContext, type BenchResult, nowMs, randomSecret, stopBenchStack } from './harness';

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * A loopback receiver for the delivery benches: each request's event id and arrival time by the first segment of
 * its path, the most requests it held at once per path, every one answered 204 after `delayMs(path)`.
 */
export const startArrivalsReceiver = async (delayMs: (path: string) => number) => {
  const arrivals = new Map<string, { eventId: string; at: number }[]>();
  const inFlight = new Map<string, { now: number; most: number }>();
  const server: Server = createServer((req, res) => {
    const at = nowMs();
    const path = (req.url ?? '').split('/')[1] ?? '';
    const concurrency = inFlight.get(path) ?? { now: 0, most: 0 };
    concurrency.now += 1;
    concurrency.most = Math.max(concurrency.most, concurrency.now);
    inFlight.set(path, concurrency);
    res.on('close', () => {
      concurrency.now -= 1;
    });
    const eventId = String(req.headers['x-event-id'] ?? '');
    const list = arrivals.get(path) ?? [];
    list.push({ eventId, at });
    arrivals.set(path, list);
    req.resume();
    req.on('end', () => {
      setTimeout(() => {
        res.writeHead(204);
        res.end();
      }, delayMs(path));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    arrivals,
    inFlight,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
};

/**
 * The in-memory local stack (no API rate limit) and an arrivals receiver, for a delivery bench: `call` is an operator
 * call, `stop` stops both.
 */
export const deliveryBenchWorld = async (ctx: BenchContext, delayMs: (path: string) => number) => {
  const { startLocalStack } = await import('../functions/composition/local/stack');
  const adminToken = randomSecret('adm_bench');
  const stack = await startLocalStack({
    port: 0,
    apiKey: randomSecret('key_bench'),
    adminToken,
    logLevel: 'SILENT',
    rateLimit: { requestsPerSecond: 100_000, burst: 100_000 },
  });
  const receiver = await startArrivalsReceiver(delayMs);
  const call = async (method: string, path: string, body: unknown) => {
    const response = await fetch(new URL(path, stack.url), {
      method,
      headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  return {
    receiver,
    call,
    stop: async () => {
      await receiver.close();
      await stopBenchStack(stack, undefined, ctx);
    },
  };
};

/** What reached the receiver of the events published: delivered, lost (never received) and duplicated. */
export const arrivalCounts = (
  name: string,
  published: Iterable<string>,
  arrivals: readonly { eventId: string }[],
) => {
  const received = new Set(arrivals.map((arrival) => arrival.eventId));
  const lost = [...published].filter((id) => !received.has(id)).length;
  const duplicates = arrivals.length - received.size;
  const rows: BenchResult[] = [
    { bench: name, metric: 'delivered', value: received.size, unit: 'count' },
    { bench: name, metric: 'lost', value: lost, unit: 'count' },
    { bench: name, metric: 'duplicates', value: duplicates, unit: 'count' },
  ];
  return { received, lost, duplicates, rows };
};
