/**
 * Four-eyes publication over HTTP on the local stack (demo catalog): the author cannot approve, one approval
 * does not publish, a second distinct approver does, the same approver twice counts once, a rejected request
 * never publishes; no route writes catalog data except through a change request; every publication has a
 * DSSE-signed release that an independent verifier (written here from the DSSE specification) accepts with the
 * JWKS, and one changed byte fails it.
 */
import { createPublicKey, verify } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../functions/composition/local/stack';
import { ROUTES } from '../../functions/definitions';
import type { CatalogDocument } from '../../functions/schemas/catalog-document';
import { adminRequest, type HttpAnswer, priceChangeOf, TEST_REVIEWERS } from '../support/change-requests';
import { demoCatalogWithoutRatePolicy, startDemoStack } from '../support/demo-stack';

const API_KEY = 'key_change_requests_0123456789';
const ADMIN_TOKEN = 'adm_change_requests_0123456789';
const [ALICE, BOB] = TEST_REVIEWERS as [(typeof TEST_REVIEWERS)[0], (typeof TEST_REVIEWERS)[0]];

let stack: LocalStack;

beforeAll(async () => {
  stack = await startDemoStack({ apiKey: API_KEY, adminToken: ADMIN_TOKEN });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const as = (token: string) => (method: string, path: string, body?: unknown) =>
  adminRequest(stack.url, token, method, path, body);
const admin = (method: string, path: string, body?: unknown) => as(ADMIN_TOKEN)(method, path, body);

const revision = async (): Promise<number> => {
  const response = await fetch(`${stack.url}/admin/catalog/export`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  expect(response.status).toBe(200);
  return Number(response.headers.get('x-catalog-revision'));
};

const basePrice = async (sku: string): Promise<string> => {
  const exported = await admin('GET', '/admin/catalog/export');
  const document = exported.body as unknown as CatalogDocument;
  return document.pricelists[0]?.items.find((item) => item.sku_id === sku)?.base_price ?? '';
};

/** A pricelist change: the first item of the primary list at `price`. */
const priceChange = async (price: string) =>
  priceChangeOf((await admin('GET', '/admin/catalog/export')).body as unknown as CatalogDocument, price);

const open = async (price: string, note = 'price change'): Promise<{ sku: string; opened: HttpAnswer }> => {
  const change = await priceChange(price);
  const opened = await admin('POST', '/admin/change-requests', {
    kind: 'pricelist',
    payload: change.payload,
    note,
  });
  expect(opened.status, JSON.stringify(opened.body)).toBe(201);
  return { sku: change.sku, opened };
};

// ------------------------------------------------------------------------------------- independent verifier

/** DSSE v1 PAE, from the specification: "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body. */
const independentPae = (type: string, body: Buffer): Buffer =>
  Buffer.concat([Buffer.from(`DSSEv1 ${Buffer.byteLength(type)} ${type} ${body.length} `, 'utf8'), body]);

interface Envelope {
  payloadType: string;
  payload: string;
  signatures: { keyid: string; sig: string }[];
}

const verifyRelease = (envelope: Envelope, jwks: { keys: Record<string, string>[] }): boolean =>
  envelope.signatures.some((signature) => {
    const jwk = jwks.keys.find((key) => key.kid === signature.keyid);
    if (!jwk) return false;
    const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y }, format: 'jwk' });
    const message = independentPae(envelope.payloadType, Buffer.from(envelope.payload, 'base64'));
    return verify('sha256', message, key, Buffer.from(signature.sig, 'base64'));
  });

const jwks = async () =>
  (await (await fetch(`${stack.url}/keys`)).json()) as { keys: Record<string, string>[] };

// ------------------------------------------------------------------------------------------------ the tests

describe('the local stack records the demo catalog as an approved change request', () => {
  it('has a published change request from version 1 authored and approved by built-in operators', async () => {
    const listed = await admin('GET', '/admin/change-requests?status=published');
    const items = listed.body.items as Record<string, unknown>[];
    const seed = items.at(-1) as Record<string, unknown>;
    expect(seed).toMatchObject({
      kind: 'catalog',
      status: 'published',
      author: 'local-bootstrap',
      publication: {
        revision: 1,
        versions: { pricelist_version: 1, fx_version: 'fx-1', tax_rule_version: 1 },
      },
    });
    expect((seed.approvals as { by: string }[]).map((approval) => approval.by)).toEqual([
      'local-operator-1',
      'local-operator-2',
    ]);
    const release = await admin('GET', `/audit/releases/${String(seed.cr_id)}`);
    expect(verifyRelease(release.body as unknown as Envelope, await jwks())).toBe(true);
  });
});

describe('four-eyes', () => {
  it('refuses the author, needs acknowledgements, counts an approver once, publishes on the second distinct approval', async () => {
    const before = await revision();
    const { sku, opened } = await open('999.99');
    const crId = String(opened.body.cr_id);
    expect(opened.body).toMatchObject({ status: 'pending_approval', author: 'admin' });
    expect((opened.body.guardrails as { code: string }[]).map((finding) => finding.code)).toContain(
      'price_move',
    );
    const diff = opened.body.diff as { prices: { changed: Record<string, string>[] } };
    expect(diff.prices.changed).toEqual([
      expect.objectContaining({
        sku_id: sku,
        to: '999.99',
        move_percent: expect.stringMatching(/^\d+\.\d{2}$/),
      }),
    ]);

    const byAuthor = await admin('POST', `/admin/change-requests/${crId}/approve`, {
      acknowledge: ['price_move'],
    });
    expect(byAuthor.status).toBe(403);
    expect(byAuthor.body.error).toBe('forbidden');

    const unacknowledged = await as(ALICE.token)('POST', `/admin/change-requests/${crId}/approve`, {});
    expect(unacknowledged.status).toBe(422);
    expect(unacknowledged.body.missing_acknowledgements ?? unacknowledged.body).toBeDefined();

    const first = await as(ALICE.token)('POST', `/admin/change-requests/${crId}/approve`, {
      acknowledge: ['price_move'],
      comment: 'agreed with the supplier',
    });
    expect(first.status).toBe(200);
    expect(first.body.status).toBe('pending_approval');
    expect(await revision()).toBe(before);

    const again = await as(ALICE.token)('POST', `/admin/change-requests/${crId}/approve`, {
      acknowledge: ['price_move'],
    });
    expect(again.status).toBe(200);
    expect((again.body.approvals as unknown[]).length).toBe(1);
    expect(again.body.status).toBe('pending_approval');
    expect(await revision()).toBe(before);
    expect(await basePrice(sku)).not.toBe('999.99');

    const second = await as(BOB.token)('POST', `/admin/change-requests/${crId}/approve`, {
      acknowledge: ['price_move'],
    });
    expect(second.status).toBe(200);
    expect(second.body).toMatchObject({ status: 'published', publication: { revision: before + 1 } });
    expect(await revision()).toBe(before + 1);
    expect(await basePrice(sku)).toBe('999.99');

    const late = await as(BOB.token)('POST', `/admin/change-requests/${crId}/reject`, {
      comment: 'too late',
    });
    expect(late.status).toBe(409);
  });

  it('never publishes a rejected request', async () => {
    const before = await revision();
    const { sku, opened } = await open('1.00');
    const crId = String(opened.body.cr_id);
    const rejected = await as(ALICE.token)('POST', `/admin/change-requests/${crId}/reject`, {
      comment: 'not agreed',
    });
    expect(rejected.status).toBe(200);
    expect(rejected.body).toMatchObject({
      status: 'rejected',
      rejection: { by: 'alice', comment: 'not agreed' },
    });
    for (const reviewer of [ALICE, BOB]) {
      const approval = await as(reviewer.token)('POST', `/admin/change-requests/${crId}/approve`, {
        acknowledge: ['price_move', 'below_min_price'],
      });
      expect(approval.status).toBe(409);
    }
    expect(await revision()).toBe(before);
    expect(await basePrice(sku)).not.toBe('1.00');
  });

  it('an import opens a change request and publishes nothing by itself', async () => {
    const before = await revision();
    const opened = await admin('POST', '/admin/catalog/import', demoCatalogWithoutRatePolicy());
    expect(opened.status).toBe(202);
    expect(opened.body).toMatchObject({ kind: 'catalog', status: 'pending_approval' });
    expect(await revision()).toBe(before);
  });
});

describe('no route writes catalog data except through a change request', () => {
  it('walks every route with a changed catalog as body: the catalog revision never moves', async () => {
    const { payload } = await priceChange('555.55');
    const pending = await open('555.55', 'route walk');
    const crId = String(pending.opened.body.cr_id);
    const changedDocument = { ...demoCatalogWithoutRatePolicy(), ...payload };
    const before = await revision();
    const walked: string[] = [];
    for (const route of ROUTES) {
      const path = route.path.replace(/\{[^}]+\}/g, (name) =>
        name === '{cr_id}' ? crId : name === '{index}' ? '0' : 'x',
      );
      const headers: Record<string, string> =
        route.auth === 'api_key'
          ? { 'x-api-key': API_KEY }
          : route.auth === 'none'
            ? {}
            : { authorization: `Bearer ${ADMIN_TOKEN}` };
      const response = await fetch(`${stack.url}${path}`, {
        method: route.method,
        headers: { ...headers, 'content-type': 'application/json' },
        ...(route.method === 'GET' || route.method === 'DELETE'
          ? {}
          : {
              body: JSON.stringify(
                route.operation === 'createChangeRequest'
                  ? { kind: 'catalog', payload: changedDocument }
                  : changedDocument,
              ),
            }),
      });
      await response.arrayBuffer();
      expect(response.status, `${route.method} ${route.path}`).toBeLessThan(500);
      expect(await revision(), `${route.method} ${route.path}`).toBe(before);
      walked.push(`${route.method} ${route.path}`);
    }
    expect(walked).toHaveLength(ROUTES.length);
    // The change request itself still publishes, once two operators other than its author approve it.
    for (const reviewer of [ALICE, BOB]) {
      await as(reviewer.token)('POST', `/admin/change-requests/${crId}/approve`, {
        acknowledge: ['price_move'],
      });
    }
    expect(await revision()).toBe(before + 1);
  });
});

describe('release signatures (DSSE)', () => {
  it('verifies with an independent DSSE verifier and the JWKS; one changed byte fails it', async () => {
    const { opened } = await open('61.50', 'release check');
    const crId = String(opened.body.cr_id);
    for (const reviewer of [ALICE, BOB]) {
      await as(reviewer.token)('POST', `/admin/change-requests/${crId}/approve`, {
        acknowledge: ['price_move'],
      });
    }
    const release = (await admin('GET', `/audit/releases/${crId}`)).body as unknown as Envelope;
    expect(release.payloadType).toBe('application/vnd.pricing.release+json');
    const keys = await jwks();
    expect(verifyRelease(release, keys)).toBe(true);

    const payload = JSON.parse(Buffer.from(release.payload, 'base64').toString('utf8')) as Record<
      string,
      unknown
    >;
    const published = (await admin('GET', `/admin/change-requests/${crId}`)).body;
    expect(payload).toEqual({
      cr_id: crId,
      kind: 'pricelist',
      versions: (published.publication as { versions: unknown }).versions,
      content_sha256: published.payload_sha256,
      author: 'admin',
      approvers: ['alice', 'bob'],
      effective_from: (published.publication as { effective_from: string }).effective_from,
    });

    const bytes = Buffer.from(release.payload, 'base64');
    for (const position of [0, Math.floor(bytes.length / 2), bytes.length - 1]) {
      const altered = Buffer.from(bytes);
      altered[position] = (altered[position] ?? 0) ^ 0x01;
      expect(verifyRelease({ ...release, payload: altered.toString('base64') }, keys)).toBe(false);
    }
    expect(verifyRelease({ ...release, payloadType: `${release.payloadType} ` }, keys)).toBe(false);

    const unpublished = await open('62.50', 'no release yet');
    const missing = await admin('GET', `/audit/releases/${String(unpublished.opened.body.cr_id)}`);
    expect(missing.status).toBe(404);
  });
});
