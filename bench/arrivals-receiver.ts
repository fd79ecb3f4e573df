import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { nowMs } from './harness';

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
