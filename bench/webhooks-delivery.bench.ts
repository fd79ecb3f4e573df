/**
 * End-to-end webhook delivery latency: from the moment a producer sends `POST /webhooks/events` to the moment a
 * loopback receiver answers 204 to the signed delivery of that event. In-memory local stack (production retry
 * policy), one receiver, one endpoint; events are published open loop at a fixed 100 events/s (each send
 * scheduled by time, never waiting for the previous answer) for 60 s (`WEBHOOK_BENCH_SECONDS` shortens it,
 * `WEBHOOK_BENCH_RATE` changes the rate, e.g. to find the rate the stack sustains on a machine).
 *
 * Per event: the send time just before the request and the receive time at the receiver (by `X-Event-Id`), on
 * the same monotonic clock. The publisher and the receiver run in a worker thread (this module, started again
 * with `workerData`), so neither queues behind the stack's event loop and the receive time is when the request
 * really arrived. An event accepted (202) but not received within 10 s after the last send is counted lost.
 * 20 warm-up events (delivered before the run) are excluded.
 *
 * Figures: p50/p95/p99/max latency of the delivered events, delivered, lost, publish errors, receiver-side
 * duplicates, achieved publish rate, publish p95, and CPU per event sent of the stack's thread (gateway,
 * functions, pollers, SDK clients, fauxqs), of DynamoDB Local's JVM and of the load thread, over the measured
 * run (sending plus the drain). Where the time goes, from the histories of every 10th accepted event (wall
 * clock, so including events delivered after the drain): event write → fan-out recorded (`fanned_out_at`) and
 * event write → start of attempt 1.
 *
 * Target here: p95 ≤ 1 s (the spec allows 3 s). The stream poll interval stays at its default (200 ms): it only
 * matters while the events stream is idle (a poller that finds records polls again at once), so it adds at most
 * 200 ms to an event arriving on an idle stream and is not what limits the sustained rate; 50 ms measured the
 * same at 100 events/s.
 */
import { Agent, createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import type { LocalStackOptions } from '../functions/composition/local/stack';
import { DynamoCallCounter } from './dynamo-calls';
import {
  type BenchModule,
  type BenchResult,
  nowMs,
  positiveNumber,
  processTreeCpuMs,
  randomSecret,
  stopBenchStack,
  summarize,
} from './harness';

const ROLE = 'webhooks-delivery-load';
const DEFAULT_SECONDS = 60;
const DEFAULT_RATE = 100;
const WARMUP_EVENTS = 20;
const DRAIN_MS = 10_000;

interface LoadConfig {
  readonly role: typeof ROLE;
  readonly baseUrl: string;
  readonly adminToken: string;
  readonly ratePerSecond: number;
  readonly durationMs: number;
}

/** Worker → main: the measured phase starts or ends (CPU samples), then the result. */
type LoadMessage =
  | { readonly type: 'log'; readonly line: string }
  | { readonly type: 'measure-start' }
  | { readonly type: 'measure-end' }
  | { readonly type: 'result'; readonly result: LoadResult };

interface LoadResult {
  /** Send → receiver 204, ms, one per event received. */
  readonly latencies: number[];
  /** Send → 202, ms. */
  readonly publishLatencies: number[];
  readonly sent: number;
  readonly accepted: number;
  readonly publishErrors: number;
  readonly firstError: string | undefined;
  readonly lost: number;
  readonly duplicates: number;
  /** First send to last send (ms). */
  readonly sendWindowMs: number;
  /** Sends later than their slot by more than 50 ms (the load thread could not keep up). */
  readonly lateSends: number;
  readonly clientCpuMs: number;
  /** From the histories of a sample of events (wall clock): event write → fan-out recorded, → attempt 1 start. */
  readonly stages: { readonly fanout: number[]; readonly firstAttempt: number[] };
}

// ---------------------------------------------------------------------------------------------------------
// The load thread: receiver, endpoint, publisher.

interface Answer {
  readonly status: number;
  readonly body: string;
}

const send = (agent: Agent, url: URL, method: 'GET' | 'POST', token: string, body?: unknown) =>
  new Promise<Answer>((resolve) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      url,
      {
        agent,
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(payload
            ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) }
            : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('error', (error) => resolve({ status: 0, body: String(error) }));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
      },
    );
    req.on('error', (error) => resolve({ status: 0, body: String(error) }));
    req.end(payload);
  });

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const runLoad = async (config: LoadConfig): Promise<void> => {
  const port = parentPort;
  if (!port) throw new Error('the load runs in a worker thread');
  const post = (message: LoadMessage) => port.postMessage(message);

  // Receive times by event id (first arrival), and duplicates.
  const received = new Map<string, number>();
  let duplicates = 0;
  const server: Server = createServer((req, res) => {
    req.on('data', () => undefined);
    req.on('end', () => {
      const eventId = req.headers['x-event-id'];
      if (typeof eventId === 'string') {
        if (received.has(eventId)) duplicates += 1;
        else received.set(eventId, nowMs());
      }
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const receiverUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/webhooks/v1`;

  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  const base = config.baseUrl;
  const created = await send(agent, new URL('/webhooks/endpoints', base), 'POST', config.adminToken, {
    url: receiverUrl,
    topics: ['payout'],
  });
  if (created.status !== 201) throw new Error(`endpoint not created: ${created.status} ${created.body}`);

  const eventsUrl = new URL('/webhooks/events', base);
  let seq = 0;
  const publish = () => {
    seq += 1;
    return send(agent, eventsUrl, 'POST', config.adminToken, {
      type: 'payout.processed',
      tenant: 'bench',
      producer: 'payments',
      data: { payout_id: `po_bench_${seq}`, status: 'paid', amount_minor: 1250, currency: 'EUR', seq },
    });
  };
  const eventIdOf = (answer: Answer): string | undefined =>
    answer.status === 202 ? (JSON.parse(answer.body) as { event_id: string }).event_id : undefined;

  const waitFor = async (ids: readonly string[], deadline: number) => {
    while (ids.some((id) => !received.has(id)) && nowMs() < deadline) await sleep(20);
  };

  // Warm-up: function instances, SDK connections, the stream iterator.
  const warmIds: string[] = [];
  for (let index = 0; index < WARMUP_EVENTS; index += 1) {
    const id = eventIdOf(await publish());
    if (!id) throw new Error('warm-up publish refused');
    warmIds.push(id);
  }
  await waitFor(warmIds, nowMs() + 30_000);
  const warmLost = warmIds.filter((id) => !received.has(id)).length;
  post({ type: 'log', line: `warm-up: ${WARMUP_EVENTS} events, ${warmLost} not delivered within 30 s` });

  // The measured run: open loop, one send every 1000 / rate ms, scheduled from the start time.
  const total = Math.max(1, Math.round((config.durationMs / 1000) * config.ratePerSecond));
  const intervalMs = 1000 / config.ratePerSecond;
  const sentAt: number[] = new Array(total);
  const accepted = new Map<string, number>();
  const publishLatencies: number[] = [];
  let publishErrors = 0;
  let firstError: string | undefined;
  let lateSends = 0;
  const inFlight: Promise<void>[] = [];
  post({ type: 'measure-start' });
  const cpuBefore = process.threadCpuUsage();
  const start = nowMs();
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = () => {
      const now = nowMs();
      while (next < total && start + next * intervalMs <= now) {
        const index = next;
        next += 1;
        const at = nowMs();
        if (at - (start + index * intervalMs) > 50) lateSends += 1;
        sentAt[index] = at;
        inFlight.push(
          publish().then((answer) => {
            const id = eventIdOf(answer);
            if (id) {
              accepted.set(id, at);
              publishLatencies.push(nowMs() - at);
            } else {
              publishErrors += 1;
              firstError ??= `${answer.status} ${answer.body.slice(0, 200)}`;
            }
          }),
        );
      }
      if (next >= total) resolve();
      else setTimeout(tick, Math.max(0, start + next * intervalMs - nowMs()));
    };
    tick();
  });
  const lastSend = sentAt[total - 1] as number;
  await Promise.all(inFlight);
  await waitFor([...accepted.keys()], lastSend + DRAIN_MS);
  const cpu = process.threadCpuUsage(cpuBefore);
  post({ type: 'measure-end' });

  // Where the time goes, from the histories of every 10th event (after the measured window).
  const stages = { fanout: [] as number[], firstAttempt: [] as number[] };
  const sample = [...accepted.keys()].filter((_, index) => index % 10 === 0);
  for (const id of sample) {
    const answer = await send(agent, new URL(`/webhooks/events/${id}`, base), 'GET', config.adminToken);
    if (answer.status !== 200) continue;
    const history = JSON.parse(answer.body) as {
      envelope: { ts: string } | null;
      fanned_out_at?: string;
      deliveries: { attempts: { at: string }[] }[];
    };
    const written = history.envelope ? Date.parse(history.envelope.ts) : Number.NaN;
    if (history.fanned_out_at) stages.fanout.push(Date.parse(history.fanned_out_at) - written);
    const first = history.deliveries[0]?.attempts[0]?.at;
    if (first) stages.firstAttempt.push(Date.parse(first) - written);
  }

  const latencies: number[] = [];
  let lost = 0;
  for (const [id, at] of accepted) {
    const arrival = received.get(id);
    if (arrival === undefined || arrival > lastSend + DRAIN_MS) lost += 1;
    else latencies.push(arrival - at);
  }
  agent.destroy();
  await new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
  post({
    type: 'result',
    result: {
      latencies,
      publishLatencies,
      sent: total,
      accepted: accepted.size,
      publishErrors,
      firstError,
      lost,
      duplicates,
      sendWindowMs: lastSend - (sentAt[0] as number),
      lateSends,
      clientCpuMs: (cpu.user + cpu.system) / 1000,
      stages,
    },
  });
};

if (!isMainThread && (workerData as Partial<LoadConfig> | null)?.role === ROLE) {
  // A failure rejects here and ends the thread with an error, which the main thread reports.
  void runLoad(workerData as LoadConfig);
}

// ---------------------------------------------------------------------------------------------------------
// The benchmark (main thread): the stack, CPU samples, figures.

const bench: BenchModule = {
  name: 'webhooks-delivery',
  description:
    'event write → receiver 2xx latency through the local stack at 100 events/s for 60 s, open loop, one ' +
    'loopback endpoint, production retry policy; target here p95 ≤ 1 s (spec: 3 s)',
  run: async (ctx) => {
    const seconds = positiveNumber('WEBHOOK_BENCH_SECONDS', DEFAULT_SECONDS);
    const rate = positiveNumber('WEBHOOK_BENCH_RATE', DEFAULT_RATE);
    const { startLocalStack } = await import('../functions/composition/local/stack');
    const adminToken = randomSecret('adm_bench');
    const calls = new DynamoCallCounter();
    const options: LocalStackOptions = {
      port: 0,
      apiKey: randomSecret('key_bench'),
      adminToken,
      logLevel: 'SILENT',
      onAwsClients: (clients) => calls.instrument(clients.dynamoDb),
    };
    ctx.log('starting the local stack in memory (production retry policy, stream poll interval 200 ms)');
    const startedAt = nowMs();
    const stack = await startLocalStack(options);
    calls.mapTables(stack.resources.tableNames);
    ctx.log(`stack up at ${stack.url} in ${((nowMs() - startedAt) / 1000).toFixed(1)} s`);
    try {
      ctx.log(`publishing ${rate} events/s for ${seconds} s, open loop`);
      let stackCpu: NodeJS.CpuUsage | undefined;
      let javaBefore: number | undefined;
      let javaMs: number | undefined;
      let measuredMs = 0;
      let measureStart = 0;
      const config: LoadConfig = {
        role: ROLE,
        baseUrl: stack.url,
        adminToken,
        ratePerSecond: rate,
        durationMs: seconds * 1000,
      };
      const result = await new Promise<LoadResult>((resolve, reject) => {
        const worker = new Worker(new URL(import.meta.url), { workerData: config });
        let answered = false;
        worker.on('message', (message: LoadMessage) => {
          if (message.type === 'log') ctx.log(message.line);
          else if (message.type === 'measure-start') {
            stackCpu = process.threadCpuUsage();
            javaBefore = processTreeCpuMs(stack.dynamoDbSupervisorPid);
            measureStart = nowMs();
            calls.start();
          } else if (message.type === 'measure-end') {
            stackCpu = process.threadCpuUsage(stackCpu);
            calls.stop();
            const javaAfter = processTreeCpuMs(stack.dynamoDbSupervisorPid);
            javaMs = javaBefore !== undefined && javaAfter !== undefined ? javaAfter - javaBefore : undefined;
            measuredMs = nowMs() - measureStart;
          } else {
            answered = true;
            resolve(message.result);
          }
        });
        worker.once('error', reject);
        worker.once('exit', (code) => {
          if (!answered) reject(new Error(`the load thread exited with code ${code} without a result`));
        });
      });

      const name = 'webhooks-delivery';
      const delivered = result.latencies.length;
      ctx.log(
        `sent ${result.sent} in ${(result.sendWindowMs / 1000).toFixed(2)} s (${result.lateSends} late by > 50 ms), ` +
          `accepted ${result.accepted}, delivered ${delivered}, lost ${result.lost}, duplicates ${result.duplicates}, ` +
          `measured window ${(measuredMs / 1000).toFixed(1)} s`,
      );
      if (result.firstError) ctx.log(`first publish error: ${result.firstError}`);
      const perEvent = (ms: number) => ms / Math.max(1, result.sent);
      const results: BenchResult[] = [];
      if (delivered > 0) {
        const latency = summarize(result.latencies);
        results.push(
          { bench: name, metric: 'p50', value: latency.median, unit: 'ms' },
          { bench: name, metric: 'p95', value: latency.p95, unit: 'ms' },
          { bench: name, metric: 'p99', value: latency.p99, unit: 'ms' },
          { bench: name, metric: 'max', value: latency.max, unit: 'ms' },
        );
      }
      for (const [metric, samples] of [
        ['write→fan-out', result.stages.fanout],
        ['write→attempt 1', result.stages.firstAttempt],
      ] as const) {
        if (samples.length === 0) continue;
        const stage = summarize(samples);
        results.push(
          { bench: name, metric: `${metric} p50`, value: stage.median, unit: 'ms' },
          { bench: name, metric: `${metric} p95`, value: stage.p95, unit: 'ms' },
        );
      }
      if (result.publishLatencies.length > 0)
        results.push({
          bench: name,
          metric: 'publish p95',
          value: summarize(result.publishLatencies).p95,
          unit: 'ms',
        });
      results.push(
        { bench: name, metric: 'sent', value: result.sent, unit: 'count' },
        { bench: name, metric: 'delivered', value: delivered, unit: 'count' },
        { bench: name, metric: 'lost', value: result.lost, unit: 'count' },
        { bench: name, metric: 'publish errors', value: result.publishErrors, unit: 'count' },
        { bench: name, metric: 'duplicates', value: result.duplicates, unit: 'count' },
        {
          bench: name,
          metric: 'achieved rate',
          value: result.sendWindowMs > 0 ? ((result.sent - 1) * 1000) / result.sendWindowMs : result.sent,
          unit: 'events/s',
        },
      );
      if (stackCpu)
        results.push({
          bench: name,
          metric: 'stack cpu',
          value: perEvent((stackCpu.user + stackCpu.system) / 1000),
          unit: 'ms/event',
        });
      if (javaMs !== undefined)
        results.push({ bench: name, metric: 'ddb-local cpu', value: perEvent(javaMs), unit: 'ms/event' });
      results.push({
        bench: name,
        metric: 'load cpu',
        value: perEvent(result.clientCpuMs),
        unit: 'ms/event',
      });
      // What a delivered event costs DynamoDB: calls and consumed units per event sent (the stream reads of the
      // local stack's poller are DynamoDB Streams calls, not counted here: Lambda's event source mapping reads the
      // stream in AWS at no request charge).
      const usage = calls.perUnit(Math.max(1, result.sent));
      for (const row of usage.rows)
        ctx.log(
          `  ${row.key.padEnd(32)} ${row.calls.toFixed(3)} calls/event  ${row.read.toFixed(3)} RU  ${row.write.toFixed(3)} WU`,
        );
      results.push(
        { bench: name, metric: 'dynamodb calls', value: usage.total.calls, unit: 'calls/event' },
        { bench: name, metric: 'dynamodb read units', value: usage.total.readUnits, unit: 'RU/event' },
        { bench: name, metric: 'dynamodb write units', value: usage.total.writeUnits, unit: 'WU/event' },
      );
      return results;
    } finally {
      await stopBenchStack(stack, undefined, ctx);
    }
  },
};

export default bench;
