/**
 * The receiver kit's `verifyWebhook` (functions/receiver/verify.ts) on a 1 KB and a 64 KB JSON envelope, side by
 * side with the `standardwebhooks` package's `Webhook#verify` on the same bytes and the same 32-byte secret.
 * Reports per-operation median and p95 in µs, ops/s, and the ratios ours / standardwebhooks (< 1: ours is
 * faster). Target: verifyWebhook p95 ≤ 50 µs for 1 KB (and well inside the spec's 2–5 ms).
 *
 * Both do the whole job a receiver needs before deduplication: header checks, timestamp window, HMAC over the
 * raw bytes with a constant-time compare, and JSON parsing of the body (theirs with its default
 * `jsonParse: true`). Ours also hashes the body first (C13) and validates the envelope's fields and that its
 * `event_id` matches `X-Event-Id`. Also measured: ours with two secrets configured (a rotation), the worst case.
 * Synchronous timing around each call, like `webhooks-sign.bench.ts`.
 */
import { createHash } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { secretBytes } from '../functions/domain/webhooks/secret';
import { signatureHeader } from '../functions/domain/webhooks/signature';
import { verifyWebhook } from '../functions/receiver/verify';
import {
  type BenchModule,
  type BenchResult,
  microsecondResults,
  type Summary,
  summarize,
  timeSync,
} from './harness';
import { BENCH_EVENT_ID, catalogEventJson } from './webhook-body';

const SECRET = `whsec_${createHash('sha256').update('receiver-verify bench').digest('base64')}`;
const OLD_SECRET = `whsec_${createHash('sha256').update('receiver-verify bench: old').digest('base64')}`;
const EVENT_ID = BENCH_EVENT_ID;
const PATH = '/webhooks/v1/catalog';
const MICROSECONDS_PER_MS = 1000;

const SIZES = [
  { label: '1kb', bytes: 1024, iterations: 50_000, warmup: 10_000 },
  { label: '64kb', bytes: 64 * 1024, iterations: 5_000, warmup: 1_000 },
] as const;

const receiverVerify: BenchModule = {
  name: 'receiver-verify',
  description: 'receiver kit verifyWebhook vs standardwebhooks Webhook#verify, 1 KB and 64 KB JSON bodies',
  run: async (ctx) => {
    const results: BenchResult[] = [];
    for (const size of SIZES) {
      const text = catalogEventJson(size.bytes);
      const body = Buffer.from(text, 'utf8');
      // Both verify against the wall clock's window: sign with the current time (whole seconds for theirs).
      const signedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
      const timestamp = signedAt.toISOString();
      const ourHeaders = {
        'content-type': 'application/json',
        'user-agent': 'pricing-service-webhooks/1.0',
        'x-event-id': EVENT_ID,
        'x-timestamp': timestamp,
        'x-signature': signatureHeader({
          secrets: [secretBytes(SECRET)],
          timestamp,
          method: 'POST',
          path: PATH,
          body,
        }),
        'x-webhook-producer': 'catalog',
        'x-attempt': '1',
      };
      const ours = (secrets: readonly string[]) => () =>
        verifyWebhook({ body, method: 'POST', path: PATH, headers: ourHeaders, secrets, now: new Date() });

      const webhook = new Webhook(SECRET);
      const theirHeaders = {
        'webhook-id': EVENT_ID,
        'webhook-timestamp': String(signedAt.getTime() / 1000),
        'webhook-signature': webhook.sign(EVENT_ID, signedAt, body),
      };
      const theirs = () => webhook.verify(body, theirHeaders);

      // Both must accept before they are timed.
      if (ours([SECRET])().event_id !== EVENT_ID) throw new Error('verifyWebhook rejected its own request');
      if ((theirs() as { event_id?: string }).event_id !== EVENT_ID)
        throw new Error('standardwebhooks rejected');

      const scenarios = [
        [`receiver-verify.${size.label}.ours`, ours([SECRET])],
        [`receiver-verify.${size.label}.ours-rotation`, ours([OLD_SECRET, SECRET])],
        [`receiver-verify.${size.label}.standardwebhooks`, theirs],
      ] as const;
      const summaries = new Map<string, Summary>();
      for (const [bench, fn] of scenarios) {
        const summary = summarize(timeSync(fn, size.iterations, size.warmup));
        summaries.set(bench, summary);
        ctx.log(
          `${bench}: median ${(summary.median * MICROSECONDS_PER_MS).toFixed(2)} µs, ` +
            `p95 ${(summary.p95 * MICROSECONDS_PER_MS).toFixed(2)} µs`,
        );
        results.push(...microsecondResults(bench, summary));
      }
      const ourSummary = summaries.get(`receiver-verify.${size.label}.ours`);
      const theirSummary = summaries.get(`receiver-verify.${size.label}.standardwebhooks`);
      for (const metric of ['median', 'p95'] as const) {
        results.push({
          bench: `receiver-verify.${size.label}.ratio`,
          metric: `ours/standardwebhooks (${metric})`,
          value: (ourSummary?.[metric] ?? Number.NaN) / (theirSummary?.[metric] ?? Number.NaN),
          unit: '×',
        });
      }
    }
    return results;
  },
};

export default receiverVerify;
