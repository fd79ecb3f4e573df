/**
 * Exports larger than one response (Lambda's 6 MB) on the local stack, through the CLIs as an operator runs them:
 * a catalog of more than 6 MB of JSON goes in through an upload link (`npm run catalog -- import`, above the
 * API's 256 KB request bodies), is published by two approvers, comes back out through a download link
 * (`npm run catalog -- export`: a 303 past 5 MB) equal to what went in, and is imported again from the exported
 * file; a journal of more than 6 MB is exported by pages and verified by `npm run verify-journal`.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { largeDocument } from '../../bench/large-catalog.bench';
import type { LocalStack } from '../../functions/composition/local/stack';
import { adminRequest, TEST_REVIEWERS } from '../support/change-requests';
import { startDemoStack } from '../support/demo-stack';
import { runScript } from '../support/run-script';

const API_KEY = 'key_large_exports_0123456789';
const ADMIN_TOKEN = 'adm_large_exports_0123456789';
const SIX_MB = 6 * 1024 * 1024;

let stack: LocalStack;
let scratch: string;

beforeAll(async () => {
  stack = await startDemoStack({ apiKey: API_KEY, adminToken: ADMIN_TOKEN });
  scratch = mkdtempSync(path.join(tmpdir(), 'large-exports-'));
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

const catalogCli = (...args: string[]) =>
  runScript('bin/catalog.ts', args, {
    API_URL: stack.url,
    ADMIN_TOKEN,
    API_AUTH: '',
    DATA_DIR: path.join(scratch, 'no-data'),
  });

/** Approves a change request by both reviewers, acknowledging whatever guardrails it raised. */
const publish = async (crId: string) => {
  const request = await adminRequest(stack.url, ADMIN_TOKEN, 'GET', `/admin/change-requests/${crId}`);
  const acknowledge = [
    ...new Set(((request.body.guardrails ?? []) as { code: string }[]).map((finding) => finding.code)),
  ];
  for (const reviewer of TEST_REVIEWERS) {
    const approved = await adminRequest(
      stack.url,
      reviewer.token,
      'POST',
      `/admin/change-requests/${crId}/approve`,
      {
        acknowledge,
      },
    );
    expect(approved.status, JSON.stringify(approved.body)).toBeLessThan(300);
  }
  const done = await adminRequest(stack.url, ADMIN_TOKEN, 'GET', `/admin/change-requests/${crId}`);
  expect(done.body.status).toBe('published');
};

const crIdOf = (stdout: string): string => {
  const match = /"cr_id":\s*"(cr_[0-9A-Z]{26})"/.exec(stdout);
  if (!match?.[1]) throw new Error(`no cr_id in ${stdout.slice(0, 500)}`);
  return match[1];
};

describe('a catalog larger than 6 MB', () => {
  it('goes in by an upload link, out by a download link equal to what went in, and in again from the export', async () => {
    const { document } = largeDocument(13_500);
    const file = path.join(scratch, 'large-catalog.json');
    writeFileSync(file, JSON.stringify(document));
    expect(readFileSync(file).byteLength).toBeGreaterThan(SIX_MB);

    // Import: above a request body, so the CLI uploads the file and imports it by its upload id.
    const imported = await catalogCli('import', file);
    expect(imported.code, imported.stderr).toBe(0);
    await publish(crIdOf(imported.stdout));

    // Export: past 5 MB the API answers a 303 to a download link.
    const answer = await fetch(`${stack.url}/admin/catalog/export`, {
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      redirect: 'manual',
    });
    expect(answer.status).toBe(303);
    const link = (await answer.json()) as {
      url: string;
      bytes: number;
      content_type: string;
      versions: string;
    };
    expect(answer.headers.get('location')).toBe(link.url);
    expect(link.content_type).toBe('application/gzip');
    expect(answer.headers.get('x-catalog-versions')).toBe(link.versions);
    // The link needs no credentials and serves the gzip document.
    const downloaded = await fetch(link.url);
    expect(downloaded.status).toBe(200);
    const gzipped = Buffer.from(await downloaded.arrayBuffer());
    expect(gzipped.byteLength).toBe(link.bytes);
    const fromLink = JSON.parse(gunzipSync(gzipped).toString('utf8')) as typeof document;

    const out = path.join(scratch, 'exported.json');
    const exported = await catalogCli('export', '--out', out);
    expect(exported.code, exported.stderr).toBe(0);
    const fromCli = JSON.parse(readFileSync(out, 'utf8')) as typeof document & { effective_from?: string };
    expect(readFileSync(out).byteLength).toBeGreaterThan(SIX_MB);
    expect(fromCli).toEqual(fromLink);
    const { effective_from: _from, ...content } = fromCli;
    expect(content.products).toEqual(document.products);
    expect(content.pricelists.map((list) => list.items.length)).toEqual(
      document.pricelists.map((list) => list.items.length),
    );

    // The same release exported twice is one stored object: the same link target.
    const again = (await (
      await fetch(`${stack.url}/admin/catalog/export?delivery=link`, {
        headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        redirect: 'manual',
      })
    ).json()) as { url: string };
    expect(new URL(again.url).pathname).toBe(new URL(link.url).pathname);

    // The export imports again (by upload as well): a change request over the same release.
    const reimported = await catalogCli('import', out);
    expect(reimported.code, reimported.stderr).toBe(0);
    const reopened = await adminRequest(
      stack.url,
      ADMIN_TOKEN,
      'GET',
      `/admin/change-requests/${crIdOf(reimported.stdout)}`,
    );
    expect(reopened.body.status).toBe('pending_approval');
  }, 300_000);

  it('refuses an import by an upload id that holds nothing, and an upload that is not JSON, naming upload_id', async () => {
    const missing = await adminRequest(stack.url, ADMIN_TOKEN, 'POST', '/admin/catalog/import', {
      upload_id: 'upl_01M8BH27G0334MSZKEQXWRX6VZ',
    });
    expect(missing.status).toBe(400);
    expect(missing.body.problems).toEqual([
      { path: '$.upload_id', message: 'nothing was uploaded under this id (or its upload expired)' },
    ]);
    const url = (answer: { body: Record<string, unknown> }) => String(answer.body.url);
    const upload = await adminRequest(stack.url, ADMIN_TOKEN, 'POST', '/admin/catalog/uploads', {
      bytes: 'not json at all'.length,
    });
    expect(upload.status).toBe(201);
    // The size is signed into the link (S3 refuses another length); a size past the limit is refused here.
    expect(url(upload)).toMatch(/X-Amz-SignedHeaders=content-length%3Bhost/);
    const tooLarge = await adminRequest(stack.url, ADMIN_TOKEN, 'POST', '/admin/catalog/uploads', {
      bytes: 32 * 1024 * 1024 + 1,
    });
    expect(tooLarge.status).toBe(400);
    // No checksum of an empty body is signed into the link (the SDK's default would make S3 refuse any upload).
    expect(url(upload)).not.toMatch(/x-amz-checksum-/i);
    const put = await fetch(url(upload), {
      method: 'PUT',
      body: 'not json at all',
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(put.status).toBe(200);
    const unreadable = await adminRequest(stack.url, ADMIN_TOKEN, 'POST', '/admin/catalog/import', {
      upload_id: upload.body.upload_id,
    });
    expect(unreadable.status).toBe(400);
    expect(unreadable.body.error_description).toBe(
      '$.upload_id: the uploaded file cannot be read: the file is not JSON',
    );
    // A small gzip that decompresses past the limit: 413, stopped while decompressing, before any parsing.
    const bomb = gzipSync(Buffer.alloc(32 * 1024 * 1024 + 1, 0x20));
    const bombUpload = await adminRequest(stack.url, ADMIN_TOKEN, 'POST', '/admin/catalog/uploads', {
      bytes: bomb.byteLength,
    });
    expect(
      (
        await fetch(url(bombUpload), {
          method: 'PUT',
          body: bomb,
          headers: { 'content-type': 'application/gzip' },
        })
      ).status,
    ).toBe(200);
    const tooMuch = await adminRequest(stack.url, ADMIN_TOKEN, 'POST', '/admin/catalog/import', {
      upload_id: bombUpload.body.upload_id,
    });
    expect(tooMuch.status).toBe(413);
    expect(tooMuch.body.error).toBe('payload_too_large');
    const malformed = await adminRequest(stack.url, ADMIN_TOKEN, 'POST', '/admin/catalog/import', {
      upload_id: 'upl_nope',
    });
    expect(malformed.status).toBe(400);
  });
});

describe('a journal larger than 6 MB', () => {
  it('is exported by pages and verified by npm run verify-journal', async () => {
    // Entries of about 8 KB each, appended as the service appends them.
    const filler = 'x'.repeat(8_000);
    for (let index = 0; index < 820; index += 1)
      await stack.deps.journal.append({
        entry_id: `large-export-${randomUUID()}`,
        type: 'test.filler',
        data: { index, filler },
      });
    await stack.deps.journal.closeSliceIfDue({ force: true });

    let bytes = 0;
    let pages = 0;
    let cursor: string | undefined;
    do {
      const response = await fetch(
        `${stack.url}/audit/journal/export?limit=500${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
        { headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
      );
      expect(response.status).toBe(200);
      const text = await response.text();
      expect(Buffer.byteLength(text)).toBeLessThan(SIX_MB);
      bytes += Buffer.byteLength(text);
      pages += 1;
      cursor = (JSON.parse(text) as { next_cursor?: string }).next_cursor;
    } while (cursor);
    expect(bytes).toBeGreaterThan(SIX_MB);
    expect(pages).toBeGreaterThan(1);

    const verified = await runScript('bin/verify-journal.ts', ['--from-api', stack.url], {
      ADMIN_TOKEN,
      API_AUTH: '',
      DATA_DIR: path.join(scratch, 'no-data'),
    });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toMatch(/OK/);
  }, 300_000);
});
