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
import {
  type BenchModule,
  type BenchResult,
  microsecondResults,
  type Summary,
  summarize,
  timeSync,
} from './harness';
import { BENCH_EVENT_ID, catalogEventJson } from './webhook-body';

const ITERATIONS = 50_000;
const WARMUP = 10_000;
const BODY_BYTES = 1024;

const SECRET = `whsec_${createHash('sha256').update('webhooks-sign bench').digest('base64')}`;
const EVENT_ID = BENCH_EVENT_ID;
const PATH = '/webhooks/v1/catalog';

const MICROSECONDS_PER_MS = 1000;

const webhooksSign: BenchModule = {
  name: 'webhooks-sign',
  description: 'sign and verify a 1 KB JSON body: ours (C13, node:crypto) vs the standardwebhooks package',
  run: async (ctx) => {
    // 12 changed prices, as this benchmark has always signed.
    const body = catalogEventJson(BODY_BYTES, 12);
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
      const summary = summarize(timeSync(fn, ITERATIONS, WARMUP));
      summaries.set(bench, summary);
      ctx.log(`${bench}: median ${(summary.median * MICROSECONDS_PER_MS).toFixed(2)} µs`);
      results.push(...microsecondResults(bench, summary));
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
