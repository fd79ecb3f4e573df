/**
 * The finance export on the local stack, driven as a user would: checkouts over HTTP, the stream exporting each
 * signed document to the receipts bucket (fauxqs), the day's manifest once the (injected) clock closes the day,
 * the journal entry of its Merkle root, and `npm run receipts -- export` verifying it all, then catching one
 * change at a time.
 */
import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
} from '@aws-sdk/client-s3';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CliIo } from '../../bin/admin-client';
import { run } from '../../bin/receipts';
import { DynamoJournalStore } from '../../functions/adapters/aws/journal-store';
import { localRuntimeOf, writeLocalRuntime } from '../../functions/adapters/local/runtime-file';
import type { LocalStack } from '../../functions/composition/local/stack';
import { canonicalJson } from '../../functions/domain/money/canonical';
import { Decimal } from '../../functions/domain/money/decimal';
import { type JsonObject, type Jwk, verifyReceipt } from '../../functions/domain/receipts/receipt';
import type { Clock } from '../../functions/ports/clock';
import { allowedQuantity, demoCatalogWithoutRatePolicy, startDemoStack } from '../support/demo-stack';
import { eventually } from '../support/engines';

const API_KEY = 'key_e2e_export_0123456789';
/** The demo tenant's payment provider: chargebacks need its key, never the storefront's. */
const PSP_KEY = 'key_e2e_export_psp_0123456789';
const ADMIN_TOKEN = 'adm_e2e_export_0123456789';
const demo = demoCatalogWithoutRatePolicy();

// The stack's clock runs from a fixed morning, far from midnight, so every document of the test is of one day.
const DAY = '2026-12-03';
const startedAt = Date.now();
let offsetMs = 0;
const clock: Clock = {
  now: () => new Date(Date.parse(`${DAY}T09:00:00.000Z`) + (Date.now() - startedAt) + offsetMs),
};

let stack: LocalStack;
let keys: Jwk[];
let bucket: string;
let dataDir: string;
const outDirs: string[] = [];
const receipts: JsonObject[] = [];
const refunds: JsonObject[] = [];

type Json = JsonObject & Record<string, unknown>;

const call = async (method: string, route: string, body?: unknown) => {
  const response = await fetch(`${stack.url}${route}`, {
    method,
    headers: {
      'x-api-key':
        route === '/pricing/refund' && (body as { kind?: string } | undefined)?.kind === 'chargeback'
          ? PSP_KEY
          : API_KEY,
      'content-type': 'application/json',
      // A refund requires its Idempotency-Key.
      ...(route === '/pricing/refund' ? { 'idempotency-key': randomUUID() } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Json };
};

/** Flat or tiered SKUs sellable in a region (a refund of one unit is then exactly one line). */
const skusFor = (region: string): string[] =>
  (demo.pricelists[0]?.items ?? [])
    .filter((item) => item.pricing_model !== 'bundle')
    .map((item) => item.sku_id)
    .filter(
      (sku) =>
        demo.products
          .find((product) => product.sku_id === sku)
          ?.region_policies?.find((policy) => policy.region === region)?.sellable !== false,
    );

const checkout = async (
  region: string,
  currency: string,
  sku: string,
  quantity: number,
): Promise<JsonObject> => {
  const quoted = await call('POST', '/pricing/quote', {
    items: [{ sku_id: sku, quantity }],
    region,
    currency,
    buyer_type: 'consumer',
  });
  expect(quoted.status).toBe(201);
  const committed = await call('POST', '/pricing/commit', {
    quote_id: quoted.body.quote_id,
    signature: quoted.body.signature,
  });
  expect(committed.status).toBe(201);
  return committed.body;
};

const s3 = () => stack.clients.s3;
const listKeys = async (prefix: string): Promise<string[]> => {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3().send(
      new ListObjectsV2Command({
        Bucket: bucket,
        Prefix: prefix,
        ...(token ? { ContinuationToken: token } : {}),
      }),
    );
    keys.push(...(page.Contents ?? []).map((object) => object.Key as string));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys;
};
const bytesOf = async (key: string) =>
  Buffer.from(
    (await (
      await s3().send(new GetObjectCommand({ Bucket: bucket, Key: key }))
    ).Body?.transformToByteArray()) ?? new Uint8Array(),
  );
const putBytes = (key: string, body: Uint8Array) =>
  s3().send(
    new PutObjectCommand({
      Bucket: bucket,
      Key: key,
      Body: body,
      ContentType: 'application/json',
      Metadata: { sha256: createHash('sha256').update(body).digest('hex') },
    }),
  );

const sha256 = (...parts: Uint8Array[]) => {
  const hash = createHash('sha256');
  for (const part of parts) hash.update(part);
  return hash.digest();
};
/** RFC 9162 §2.1.1 MTH, straight from the RFC, over the 32-byte digests as entries. */
const mth = (entries: readonly Uint8Array[]): Buffer => {
  if (entries.length === 0) return sha256();
  if (entries.length === 1) return sha256(Uint8Array.of(0), entries[0] as Uint8Array);
  let k = 1;
  while (k * 2 < entries.length) k *= 2;
  return sha256(Uint8Array.of(1), mth(entries.slice(0, k)), mth(entries.slice(k)));
};

/** Runs `npm run receipts -- export` for DAY in-process, as the user would (no flags besides dates and --out). */
const exportCli = async (): Promise<{ code: number; stdout: string; stderr: string; out: string }> => {
  const out = mkdtempSync(path.join(tmpdir(), 'receipts-out-'));
  outDirs.push(out);
  let stdout = '';
  let stderr = '';
  const io: CliIo = {
    env: { DATA_DIR: dataDir },
    cwd: process.cwd(),
    fetch: (url, init) => fetch(url, init),
    readFile: (file) => readFile(file, 'utf8'),
    writeFile: (file, content) => writeFile(file, content, 'utf8'),
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
  };
  const code = await run(['export', '--from', DAY, '--to', DAY, '--out', out], io, () => clock.now());
  return { code, stdout, stderr, out };
};

const key = (id: unknown) => `receipts/dt=${DAY}/${String(id)}.json`;
const manifestKey = `manifests/dt=${DAY}.json`;

beforeAll(async () => {
  stack = await startDemoStack({
    apiKey: API_KEY,
    chargebackKey: PSP_KEY,
    adminToken: ADMIN_TOKEN,
    clock,
    exportIntervalMs: 500,
  });
  bucket = stack.resources.bucketNames.receipts;
  keys = ((await (await fetch(`${stack.url}/keys`)).json()) as { keys: Jwk[] }).keys;
  dataDir = mkdtempSync(path.join(tmpdir(), 'receipts-data-'));
  await writeLocalRuntime(dataDir, localRuntimeOf(stack));

  // 100 commits in three currencies (two decimals, two with charm pricing, none), then 10 refunds.
  const plan = [
    ...Array.from({ length: 40 }, (_, i) => ({ region: 'DE', currency: 'EUR', i })),
    ...Array.from({ length: 35 }, (_, i) => ({ region: 'US', currency: 'USD', i })),
    ...Array.from({ length: 25 }, (_, i) => ({ region: 'JP', currency: 'JPY', i })),
  ];
  for (let start = 0; start < plan.length; start += 10) {
    receipts.push(
      ...(await Promise.all(
        plan.slice(start, start + 10).map(({ region, currency, i }) => {
          const skus = skusFor(region);
          const sku = skus[i % skus.length] as string;
          return checkout(region, currency, sku, allowedQuantity(demo, sku, 2 + (i % 3)));
        }),
      )),
    );
  }
  const refundPlan = [
    { index: 0, kind: 'return' },
    { index: 1, kind: 'return' },
    { index: 2, kind: 'chargeback' },
    { index: 40, kind: 'return' },
    { index: 41, kind: 'return' },
    { index: 42, kind: 'chargeback' },
    { index: 75, kind: 'return' },
    { index: 76, kind: 'return' },
    { index: 77, kind: 'return' },
    { index: 0, kind: 'return' },
  ] as const;
  for (const { index, kind } of refundPlan) {
    const receipt = receipts[index] as Json;
    const line = ((receipt.basket as Json).items as Json[])[0] as Json;
    const refunded = await call('POST', '/pricing/refund', {
      receipt_id: receipt.receipt_id,
      kind,
      lines: [{ sku_id: line.sku_id, quantity: 1 }],
    });
    expect(refunded.status).toBe(201);
    refunds.push(refunded.body);
  }
  await eventually(async () => ((await listKeys('receipts/')).length >= 110 ? true : undefined), {
    timeoutMs: 60_000,
    intervalMs: 200,
  });
}, 180_000);

afterAll(async () => {
  await stack?.stop();
  for (const dir of [dataDir, ...outDirs]) if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Per currency from the API's own answers: receipts gross, returns paid back, chargebacks, net. */
const expectedTotals = () => {
  const totals = new Map<
    string,
    {
      receipts: number;
      gross: Decimal;
      refunds: Decimal;
      refundsCount: number;
      chargebacks: Decimal;
      chargebacksCount: number;
      decimals: number;
    }
  >();
  const of = (currency: string, amount: string) => {
    const entry = totals.get(currency) ?? {
      receipts: 0,
      gross: new Decimal(0),
      refunds: new Decimal(0),
      refundsCount: 0,
      chargebacks: new Decimal(0),
      chargebacksCount: 0,
      decimals: 0,
    };
    entry.decimals = Math.max(entry.decimals, amount.split('.')[1]?.length ?? 0);
    totals.set(currency, entry);
    return entry;
  };
  for (const receipt of receipts) {
    const computed = receipt.computed_totals as Json;
    const entry = of(String(computed.currency), String(computed.total));
    entry.receipts += 1;
    entry.gross = entry.gross.plus(String(computed.total));
  }
  for (const refund of refunds) {
    const entry = of(String(refund.currency), String(refund.net));
    if (refund.kind === 'chargeback') {
      entry.chargebacksCount += 1;
      entry.chargebacks = entry.chargebacks.plus(String(refund.net));
    } else {
      entry.refundsCount += 1;
      entry.refunds = entry.refunds.plus(String(refund.net));
    }
  }
  return Object.fromEntries(
    [...totals.entries()]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([currency, entry]) => [
        currency,
        {
          receipts: entry.receipts,
          gross: entry.gross.toFixed(entry.decimals),
          refunds_count: entry.refundsCount,
          refunds: entry.refunds.toFixed(entry.decimals),
          chargebacks_count: entry.chargebacksCount,
          chargebacks: entry.chargebacks.toFixed(entry.decimals),
          net: entry.gross.minus(entry.refunds).minus(entry.chargebacks).toFixed(entry.decimals),
        },
      ]),
  );
};

describe('finance export on the local stack', () => {
  it('exports exactly one object per receipt and refund: 110, each the signed document as RFC 8785 bytes', async () => {
    expect(receipts).toHaveLength(100);
    expect(refunds).toHaveLength(10);
    expect(refunds.filter((refund) => refund.kind === 'chargeback').length).toBeGreaterThanOrEqual(1);
    const listed = await listKeys('receipts/');
    expect(listed.sort()).toEqual(
      [...receipts.map((r) => key(r.receipt_id)), ...refunds.map((r) => key(r.refund_id))].sort(),
    );
    for (const document of [receipts[7], refunds[2]] as JsonObject[]) {
      const id = document.refund_id ?? document.receipt_id;
      const stored = JSON.parse((await bytesOf(key(id))).toString('utf8')) as JsonObject;
      // A receipt's answer carries its lifecycle (status, refunds); the export is the signed document.
      const { refunds: _refunds, status: _status, ...answer } = document;
      expect({ ...stored, status: undefined }).toEqual({ ...answer, status: undefined });
      expect((await bytesOf(key(id))).toString('utf8')).toBe(canonicalJson(stored));
      expect(verifyReceipt(stored, keys)).toEqual({ valid: true });
    }
  });

  it('a stream record delivered twice leaves one object with the same bytes', async () => {
    const receipt = receipts[10] as Json;
    const before = await bytesOf(key(receipt.receipt_id));
    const item = (
      await stack.clients.documents.send(
        new GetCommand({
          TableName: stack.resources.tableNames.receipts,
          Key: { receipt_id: receipt.receipt_id },
        }),
      )
    ).Item as Record<string, unknown>;
    const record = {
      eventID: '1',
      eventName: 'INSERT',
      eventSource: 'aws:dynamodb',
      dynamodb: { NewImage: marshall(item), SequenceNumber: '1', StreamViewType: 'NEW_AND_OLD_IMAGES' },
    };
    const answer = await stack.invoke('exporter', { Records: [record, { ...record, eventID: '2' }] });
    expect(answer).toEqual({ batchItemFailures: [] });
    expect((await listKeys('receipts/')).length).toBe(110);
    expect(await bytesOf(key(receipt.receipt_id))).toEqual(before);
  });

  it('a backfill over the day finds every document exported already and writes nothing', async () => {
    expect(await stack.invoke('exporter', { reexport: { from: DAY, to: DAY } })).toEqual({
      ok: true,
      from: DAY,
      to: DAY,
      scanned: 100,
      created: [],
      existing: 110,
    });
    expect(await stack.invoke('exporter', { reexport: { from: DAY } })).toMatchObject({
      ok: false,
      error: 'invalid_request',
    });
    expect((await listKeys('receipts/')).length).toBe(110);
  });

  it('refuses the manifest of a day that is not closed yet', async () => {
    expect(await stack.invoke('exporter', { manifest_date: DAY })).toMatchObject({
      ok: false,
      error: 'day_not_closed',
    });
    expect(await stack.invoke('exporter', { manifest_date: '2026-12-32' })).toMatchObject({
      ok: false,
      error: 'invalid_request',
    });
    // The closed days before it get none: nothing was exported before this day, there is nothing to attest.
    await stack.invoke('exporter', {});
    expect(await listKeys('manifests/')).toEqual([]);
    // The export of an open day verifies its documents one by one and says the day is open.
    const open = await exportCli();
    expect(open.stderr).toBe('');
    expect(open.code).toBe(0);
    expect(open.stdout).toContain(`${DAY}: 110 documents (open: its manifest comes`);
  });

  it('once the day is closed, the hourly run writes its manifest: 110 objects, their digests and Merkle root, journaled', async () => {
    // Midnight UTC plus the grace: the scheduled run (every 500 ms here) builds the manifest.
    offsetMs = Date.parse('2026-12-04T00:16:00.000Z') - clock.now().getTime();
    const manifestBytes = await eventually(
      async () => ((await listKeys(manifestKey)).length > 0 ? bytesOf(manifestKey) : undefined),
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const manifest = JSON.parse(manifestBytes.toString('utf8')) as {
      date: string;
      count: number;
      tree_size: number;
      merkle_root: string;
      objects: { key: string; sha256: string; type: string; id: string }[];
      totals: unknown;
    } & JsonObject;
    expect([manifest.date, manifest.count, manifest.tree_size, manifest.objects.length]).toEqual([
      DAY,
      110,
      110,
      110,
    ]);
    expect(verifyReceipt(manifest, keys)).toEqual({ valid: true });
    const keysInOrder = manifest.objects.map((object) => object.key);
    expect(keysInOrder).toEqual([...keysInOrder].sort());
    for (const object of manifest.objects) {
      expect(
        createHash('sha256')
          .update(await bytesOf(object.key))
          .digest('hex'),
      ).toBe(object.sha256);
    }
    expect(
      manifest.objects
        .filter((object) => object.type === 'chargeback')
        .map((object) => object.id)
        .sort(),
    ).toEqual(
      refunds
        .filter((refund) => refund.kind === 'chargeback')
        .map((refund) => String(refund.refund_id))
        .sort(),
    );
    const root = mth(manifest.objects.map((object) => Buffer.from(object.sha256, 'hex'))).toString('hex');
    expect(manifest.merkle_root).toBe(root);
    expect(manifest.totals).toEqual(expectedTotals());

    const journal = new DynamoJournalStore(stack.clients.documents, stack.resources.tableNames.journal);
    const index = await journal.indexOf(`receipts-manifest:${DAY}`);
    expect(index).toBeDefined();
    const entry = (await journal.entry(index as number))?.entry;
    expect(entry?.type).toBe('receipts_manifest');
    expect(entry?.data).toMatchObject({
      date: DAY,
      count: 110,
      merkle_root: root,
      manifest_sha256: createHash('sha256').update(manifestBytes).digest('hex'),
    });
    expect(await listKeys(`summaries/dt=${DAY}.csv`)).toEqual([`summaries/dt=${DAY}.csv`]);
  });

  it('keeps the receipt key set beside the receipts, write-once: the JWKS of GET /keys, which verifies them', async () => {
    const stored = await listKeys('keys/');
    expect(stored).toHaveLength(1);
    const [jwksKey = ''] = stored;
    const body = await bytesOf(jwksKey);
    expect(jwksKey).toBe(`keys/jwks-${createHash('sha256').update(body).digest('hex')}.json`);
    const pinned = JSON.parse(body.toString('utf8')) as { keys: Jwk[] };
    expect(pinned.keys).toEqual(keys);
    for (const receipt of receipts.slice(0, 5))
      expect(verifyReceipt(receipt, pinned.keys)).toEqual({ valid: true });
  });

  it('`receipts -- export` verifies every object and prints the totals the API answers add up to', async () => {
    const result = await exportCli();
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const report = JSON.parse(readFileSync(path.join(result.out, 'export-report.json'), 'utf8')) as {
      totals: unknown;
      problems: string[];
      days: { documents: number; count: number }[];
    };
    expect(report.problems).toEqual([]);
    expect(report.days).toMatchObject([{ documents: 110, count: 110 }]);
    expect(report.totals).toEqual(expectedTotals());
    for (const [currency, figures] of Object.entries(expectedTotals())) {
      expect(result.stdout).toContain(
        `  ${currency}  gross ${figures.gross} (${figures.receipts} receipts)  refunds ${figures.refunds} ` +
          `(${figures.refunds_count})  chargebacks ${figures.chargebacks} (${figures.chargebacks_count})  ` +
          `net ${figures.net}\n`,
      );
    }
    // Same key layout under --out: 110 documents, the manifest and the summary.
    expect(readdirSync(path.join(result.out, 'receipts', `dt=${DAY}`))).toHaveLength(110);
    expect(readFileSync(path.join(result.out, manifestKey))).toEqual(await bytesOf(manifestKey));
    expect(readdirSync(path.join(result.out, 'summaries'))).toEqual([`dt=${DAY}.csv`]);
  });

  /** Changes the bucket, runs the export, puts the bucket back. */
  const withChange = async (change: () => Promise<void>, restore: () => Promise<void>) => {
    await change();
    try {
      return await exportCli();
    } finally {
      await restore();
    }
  };

  it('one byte changed in one object: the export names that object and exits non-zero', async () => {
    const target = key((refunds[4] as Json).refund_id);
    const original = await bytesOf(target);
    const changed = Buffer.from(original);
    const at = changed.indexOf('"net":"') + 8;
    changed[at] = changed[at] === 0x31 ? 0x32 : 0x31;
    const result = await withChange(
      () => putBytes(target, changed).then(() => undefined),
      () => putBytes(target, original).then(() => undefined),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`  ${target}: sha256 does not match the manifest\n`);
    expect(result.stderr).toContain(`  ${target}: hash does not match its content\n`);
    expect(result.stdout).toContain(`${DAY}: 109 documents`);
  });

  it('a missing object is named', async () => {
    const target = key((receipts[3] as Json).receipt_id);
    const original = await bytesOf(target);
    const result = await withChange(
      () =>
        s3()
          .send(new DeleteObjectCommand({ Bucket: bucket, Key: target }))
          .then(() => undefined),
      () => putBytes(target, original).then(() => undefined),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`  ${target}: in the manifest but missing from the bucket\n`);
  });

  it('an object the manifest does not list is named', async () => {
    const extra = key('rcpt_EXTRA');
    const result = await withChange(
      () => putBytes(extra, new TextEncoder().encode('{"receipt_id":"rcpt_EXTRA"}')).then(() => undefined),
      () =>
        s3()
          .send(new DeleteObjectCommand({ Bucket: bucket, Key: extra }))
          .then(() => undefined),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`  ${extra}: in the bucket but not in the manifest\n`);
  });

  it('a document whose signature does not verify is named', async () => {
    const target = key((receipts[50] as Json).receipt_id);
    const original = await bytesOf(target);
    const document = JSON.parse(original.toString('utf8')) as Json;
    const signature = Buffer.from(String(document.signature), 'base64');
    signature[signature.length - 1] = (signature[signature.length - 1] as number) ^ 0xff;
    const forged = new TextEncoder().encode(
      canonicalJson({ ...document, signature: signature.toString('base64') }),
    );
    const result = await withChange(
      () => putBytes(target, forged).then(() => undefined),
      () => putBytes(target, original).then(() => undefined),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`  ${target}: signature does not verify\n`);
  });

  it('a manifest whose Merkle root is not the root of its objects is named', async () => {
    const original = await bytesOf(manifestKey);
    const manifest = JSON.parse(original.toString('utf8')) as Json;
    const forged = new TextEncoder().encode(canonicalJson({ ...manifest, merkle_root: 'f'.repeat(64) }));
    const result = await withChange(
      () => putBytes(manifestKey, forged).then(() => undefined),
      () => putBytes(manifestKey, original).then(() => undefined),
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`  ${manifestKey}: merkle_root does not match the objects' digests`);
    expect(result.stderr).toContain(`  ${manifestKey}: the manifest's hash does not match its content\n`);
  });

  it('after the changes are undone, the export verifies again', async () => {
    const result = await exportCli();
    expect([result.code, result.stderr]).toEqual([0, '']);
  });
});
