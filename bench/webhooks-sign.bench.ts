/**
 * Signs and verifies a 1 KB JSON webhook body with our scheme (C13: `signatureHeader` /
 * `verifySignatureHeader`, node:crypto HMAC-SHA-256 over timestamp, method, path and the body's SHA-256) and
 * with the `standardwebhooks` package (`Webhook#sign` / `Webhook#verify`: HMAC-SHA-256 over
 * `id.timestamp.body`, pure-JS SHA-256), same body, same 32-byte secret. Reports per-operation median and p95
 * in µs, ops/s, and the median time ratio ours / standardwebhooks for sign and for verify (< 1: ours is faster).
 *
 * Fairness notes: both verifies recompute the HMAC from the raw body and compare in constant time; ours also
 * hashes the body first (C13), theirs also checks the timestamp window. Theirs runs with `jsonParse: false`, so
 * neither parses the body. Synchronous timing around each call, like `pricing.bench.ts`.
 */
import { createHash } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { secretBytes } from '../functions/domain/webhooks/secret';
import { signatureHeader, verifySignatureHeader } from '../functions/domain/webhooks/signature';
import { type BenchModule, type BenchResult, type Summary, summarize } from './harness';

const ITERATIONS = 50_000;
const WARMUP = 10_000;
const BODY_BYTES = 1024;

const SECRET = `whsec_${createHash('sha256').update('webhooks-sign bench').digest('base64')}`;
const EVENT_ID = 'evt_01JQ4S6T1X5V8R2W3Y4Z5A6B7C';
const PATH = '/webhooks/v1/catalog';

/** A catalog event of exactly {@link BODY_BYTES} bytes of JSON. */
const jsonBody = (): string => {
  const event = {
    event_id: EVENT_ID,
    type: 'catalog.PriceListUpdated',
    version: '2026-11-01',
    ts: '2026-11-01T12:00:00.000Z',
    attempt: 1,
    trace_id: '4bf92f3577b34da6a3ce929d0e0e4736',
    pricelist_version: 42,
    fx_version: 'fx_2026-11-01T11:45:00Z',
    tax_rule_version: 7,
    data: {
      version: 42,
      effective_from: '2026-11-01T12:00:00.000Z',
      changed: Array.from({ length: 12 }, (_, index) => ({ sku_id: `sku_${index}`, price: `${index}.99` })),
      note: '',
    },
  };
  const padding = BODY_BYTES - Buffer.byteLength(JSON.stringify(event));
  if (padding < 0) throw new Error('bench body template is larger than 1 KB');
  event.data.note = 'x'.repeat(padding);
  return JSON.stringify(event);
};

const timeSync = (fn: () => unknown): number[] => {
  for (let i = 0; i < WARMUP; i += 1) fn();
  const samples: number[] = [];
  for (let i = 0; i < ITERATIONS; i += 1) {
    const start = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - start) / 1e6);
  }
  return samples;
};

const MICROSECONDS_PER_MS = 1000;

const rows = (bench: string, summary: Summary): BenchResult[] => [
  { bench, metric: 'median', value: summary.median * MICROSECONDS_PER_MS, unit: 'µs' },
  { bench, metric: 'p95', value: summary.p95 * MICROSECONDS_PER_MS, unit: 'µs' },
  { bench, metric: 'ops/s', value: 1000 / summary.mean, unit: 'ops/s' },
];

const webhooksSign: BenchModule = {
  name: 'webhooks-sign',
  description: 'sign and verify a 1 KB JSON body: ours (C13, node:crypto) vs the standardwebhooks package',
  run: async (ctx) => {
    const body = jsonBody();
    const bodyBytes = new TextEncoder().encode(body);
    const key = secretBytes(SECRET);
    const timestamp = '2026-11-01T12:00:00.000Z';
    const request = { timestamp, method: 'POST', path: PATH, body: bodyBytes };
    const ours = {
      sign: () => signatureHeader({ ...request, secrets: [key] }),
      verify: (header: string) => verifySignatureHeader({ ...request, header, secrets: [key] }),
    };

    const webhook = new Webhook(SECRET);
    // Their verify checks the timestamp against the wall clock (±5 min): sign with the current time.
    const signedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
    const theirs = {
      sign: () => webhook.sign(EVENT_ID, signedAt, body),
      verify: (signature: string) =>
        webhook.verify(
          body,
          {
            'webhook-id': EVENT_ID,
            'webhook-timestamp': String(signedAt.getTime() / 1000),
            'webhook-signature': signature,
          },
          { jsonParse: false },
        ),
    };

    const ourHeader = ours.sign();
    const theirHeader = theirs.sign();
    if (!ours.verify(ourHeader)) throw new Error('our signature does not verify');
    theirs.verify(theirHeader); // throws when it does not verify
    ctx.log(
      `body ${bodyBytes.length} bytes; ours ${ourHeader.slice(0, 16)}…, standardwebhooks ${theirHeader.slice(0, 16)}…`,
    );

    const scenarios = [
      ['webhooks-sign.ours.sign', () => ours.sign()],
      ['webhooks-sign.standardwebhooks.sign', () => theirs.sign()],
      ['webhooks-sign.ours.verify', () => ours.verify(ourHeader)],
      ['webhooks-sign.standardwebhooks.verify', () => theirs.verify(theirHeader)],
    ] as const;
    const summaries = new Map<string, Summary>();
    const results: BenchResult[] = [];
    for (const [bench, fn] of scenarios) {
      const summary = summarize(timeSync(fn));
      summaries.set(bench, summary);
      ctx.log(`${bench}: median ${(summary.median * MICROSECONDS_PER_MS).toFixed(2)} µs`);
      results.push(...rows(bench, summary));
    }
    const ratio = (op: 'sign' | 'verify'): BenchResult => {
      const ourMedian = summaries.get(`webhooks-sign.ours.${op}`)?.median ?? Number.NaN;
      const theirMedian = summaries.get(`webhooks-sign.standardwebhooks.${op}`)?.median ?? Number.NaN;
      return {
        bench: `webhooks-sign.ratio.${op}`,
        metric: 'ours/standardwebhooks (median)',
        value: ourMedian / theirMedian,
        unit: '×',
      };
    };
    results.push(ratio('sign'), ratio('verify'));
    return results;
  },
};

export default webhooksSign;
