/**
 * Patch change requests and price history over HTTP on the local stack (C30): `admin` opens a patch that sets one
 * price, `alice` and `bob` approve it, and it publishes a new `pricelist_version` in which only that item differs
 * (the exported catalogs of both versions compared), with one `catalog.PriceListUpdated` event, a signed release
 * and a journal entry, and the CHF list derived from that list follows it in the same publication;
 * `GET /catalog/history?sku=…` shows both versions with their change requests. A rate patch
 * publishes a new `fx_version` only and shows in `?pair=…`. An FX override patch publishes after two approvals;
 * quotes and prices then convert at it and flag it in `fx_conversions[].override`. Refused operations are a 400
 * naming their index and path, and store nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../functions/composition/local/stack';
import { dec } from '../../functions/domain/money/decimal';
import { step } from '../../functions/domain/money/rounding';
import type { CatalogDocument } from '../../functions/schemas/catalog-document';
import { adminRequest, type HttpAnswer, TEST_REVIEWERS } from '../support/change-requests';
import { startDemoStack } from '../support/demo-stack';

const API_KEY = 'key_patch_requests_0123456789ab';
const ADMIN_TOKEN = 'adm_patch_requests_0123456789ab';
const [ALICE, BOB] = TEST_REVIEWERS as [(typeof TEST_REVIEWERS)[0], (typeof TEST_REVIEWERS)[0]];

const PRICELIST = 'PL-EU-EUR-2026W47';
const SKU = 'GAME-STARFALL-PS5';

let stack: LocalStack;
const startedAt = new Date(Date.now() - 1_000);

beforeAll(async () => {
  stack = await startDemoStack({ apiKey: API_KEY, adminToken: ADMIN_TOKEN });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const as = (token: string) => (method: string, path: string, body?: unknown) =>
  adminRequest(stack.url, token, method, path, body);
const admin = as(ADMIN_TOKEN);

interface Versions {
  readonly pricelist_version: number;
  readonly fx_version: string;
  readonly tax_rule_version: number;
}

const currentVersions = async (): Promise<Versions> => {
  const response = await fetch(`${stack.url}/admin/catalog/export`, {
    headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  expect(response.status).toBe(200);
  const [pricelist, fx, tax] = String(response.headers.get('x-catalog-versions')).split(',');
  return { pricelist_version: Number(pricelist), fx_version: String(fx), tax_rule_version: Number(tax) };
};

const exported = async (versions: Versions): Promise<CatalogDocument> => {
  const query = new URLSearchParams({
    pricelist_version: String(versions.pricelist_version),
    fx_version: versions.fx_version,
    tax_rule_version: String(versions.tax_rule_version),
  });
  const answer = await admin('GET', `/admin/catalog/export?${query}`);
  expect(answer.status).toBe(200);
  return answer.body as unknown as CatalogDocument;
};

/** Opens a patch as admin and has alice, then bob, approve it; returns the opened and the published request. */
const patchAndApprove = async (operations: unknown[], note: string) => {
  const opened = await admin('POST', '/admin/change-requests', { kind: 'patch', operations, note });
  expect(opened.status, JSON.stringify(opened.body)).toBe(201);
  const crId = String(opened.body.cr_id);
  const acknowledge = (opened.body.guardrails as { code: string }[]).map((finding) => finding.code);
  const first = await as(ALICE.token)('POST', `/admin/change-requests/${crId}/approve`, { acknowledge });
  expect(first.body.status).toBe('pending_approval');
  const second = await as(BOB.token)('POST', `/admin/change-requests/${crId}/approve`, { acknowledge });
  expect(second.status, JSON.stringify(second.body)).toBe(200);
  return { opened, published: second };
};

const catalogEvents = async (): Promise<{ event_id: string; type: string }[]> => {
  const now = new Date(Date.now() + 1_000);
  const listed = await admin(
    'GET',
    `/webhooks/events?from=${startedAt.toISOString()}&to=${now.toISOString()}&limit=200`,
  );
  expect(listed.status).toBe(200);
  return (listed.body.items as { event_id: string; type: string }[]).filter((event) =>
    event.type.startsWith('catalog.'),
  );
};

const history = (query: string): Promise<HttpAnswer> => admin('GET', `/catalog/history?${query}`);

/** `GET /catalog/prices` with `explain=true`, as the storefront key. */
const explainedPrice = async (query: string): Promise<Record<string, unknown>> => {
  const response = await fetch(`${stack.url}/catalog/prices?${query}&explain=true`, {
    headers: { 'x-api-key': API_KEY },
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
};

interface Step {
  readonly rule: string;
  readonly input: Record<string, unknown>;
}

describe('a patch that sets one price', () => {
  let before: Versions;
  let crId: string;

  it('publishes a new pricelist_version in which only that item differs, after two approvals', async () => {
    before = await currentVersions();
    const eventsBefore = new Set((await catalogEvents()).map((event) => event.event_id));
    const previous = await exported(before);
    const item = previous.pricelists
      .find((list) => list.pricelist_id === PRICELIST)
      ?.items.find((entry) => entry.sku_id === SKU);
    if (!item) throw new Error(`the demo catalog prices ${SKU} in ${PRICELIST}`);
    const chfQuery = `sku=${SKU}&currency=CHF&region=CH`;
    const chfBefore = await explainedPrice(chfQuery);
    const { opened, published } = await patchAndApprove(
      [{ op: 'set', path: `/pricelists/${PRICELIST}/items/${SKU}`, value: { ...item, base_price: '64.99' } }],
      'weekend price',
    );
    crId = String(opened.body.cr_id);
    expect(opened.body).toMatchObject({
      kind: 'patch',
      status: 'pending_approval',
      author: 'admin',
      summary: { sections_changed: ['pricelists'], prices_changed: 1, prices_added: 0, prices_removed: 0 },
    });
    expect((opened.body.diff as { prices: { changed: unknown[] } }).prices.changed).toEqual([
      {
        pricelist_id: PRICELIST,
        sku_id: SKU,
        currency: 'EUR',
        from: item.base_price,
        to: '64.99',
        move_percent: expect.any(String),
      },
    ]);
    expect(published.body).toMatchObject({
      status: 'published',
      publication: {
        versions: {
          pricelist_version: before.pricelist_version + 1,
          fx_version: before.fx_version,
          tax_rule_version: before.tax_rule_version,
        },
      },
      journal_index: expect.any(Number),
    });
    const after = await currentVersions();
    expect(after).toEqual({ ...before, pricelist_version: before.pricelist_version + 1 });

    // The exported catalogs of both versions: only that item differs.
    const expected = structuredClone(previous);
    const changed = expected.pricelists
      .find((list) => list.pricelist_id === PRICELIST)
      ?.items.find((entry) => entry.sku_id === SKU);
    if (changed) changed.base_price = '64.99';
    expect(await exported(after)).toEqual(expected);

    // The CHF list derives from the EUR list: the same publication moved its price, from the new EUR price.
    const chfAfter = await explainedPrice(chfQuery);
    expect(chfAfter.pricelist_version).toBe(after.pricelist_version);
    expect(chfAfter.unit_price).not.toBe(chfBefore.unit_price);
    const derivation = (chfAfter.explain as { steps: Step[] }).steps.find(
      (entry) => entry.rule === 'derived_list',
    );
    const clientRate = (chfAfter.fx_conversions as { client_rate: string }[])[0]?.client_rate ?? '';
    expect(derivation?.input).toMatchObject({
      parent_pricelist_id: PRICELIST,
      unit_price: step(dec('64.99').times(clientRate)).toString(),
    });

    // One catalog event: the price list's.
    const fresh = (await catalogEvents()).filter((event) => !eventsBefore.has(event.event_id));
    expect(fresh.map((event) => event.type)).toEqual(['catalog.PriceListUpdated']);

    // The signed release.
    expect((await admin('GET', `/audit/releases/${crId}`)).body.payloadType).toBe(
      'application/vnd.pricing.release+json',
    );
  });

  it('shows both versions in GET /catalog/history?sku=…, newest first, with their change requests', async () => {
    const answer = await history(`sku=${SKU}&pricelist=${PRICELIST}`);
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const items = answer.body.items as Record<string, unknown>[];
    expect(items).toHaveLength(2);
    expect(answer.body.cursor).toBeUndefined();
    const [latest, first] = items;
    expect(latest).toMatchObject({
      sku_id: SKU,
      pricelist_id: PRICELIST,
      currency: 'EUR',
      change: 'changed',
      value: { sku_id: SKU, base_price: '64.99' },
      pricelist_version: before.pricelist_version + 1,
      effective_from: expect.any(String),
      change_request: {
        cr_id: crId,
        kind: 'patch',
        author: 'admin',
        note: 'weekend price',
        approvers: [
          { by: 'alice', at: expect.any(String) },
          { by: 'bob', at: expect.any(String) },
        ],
      },
      release: {
        journal_entry_id: `release:${crId}`,
        url: `/audit/releases/${crId}`,
        journal_index: expect.any(Number),
      },
    });
    expect(first).toMatchObject({
      change: 'added',
      pricelist_version: 1,
      change_request: {
        kind: 'catalog',
        author: 'local-bootstrap',
        approvers: [{ by: 'local-operator-1' }, { by: 'local-operator-2' }],
      },
      release: { journal_entry_id: expect.stringMatching(/^release:cr_/) },
    });

    // Without the filter the SKU's other price lists show too (their version 1 only); pages follow the cursor.
    const all = await history(`sku=${SKU}`);
    expect((all.body.items as { pricelist_version: number }[])[0]?.pricelist_version).toBe(
      before.pricelist_version + 1,
    );
    const inUsd = await history(`sku=${SKU}&currency=USD`);
    expect((inUsd.body.items as { currency: string }[]).map((item) => item.currency)).toEqual(['USD']);
    const paged = await history(`sku=${SKU}&pricelist=${PRICELIST}&limit=1`);
    expect(paged.body.items).toEqual([latest]);
    const next = await history(
      `sku=${SKU}&pricelist=${PRICELIST}&limit=1&cursor=${String(paged.body.cursor)}`,
    );
    expect(next.body.items).toEqual([first]);
  });
});

describe('a rate patch', () => {
  it('publishes a new fx_version only, and shows in GET /catalog/history?pair=…', async () => {
    const before = await currentVersions();
    const rate = (await exported(before)).fx_rates.rates.find((entry) => entry.pair === 'EUR→USD');
    if (!rate) throw new Error('the demo catalog has EUR→USD');
    const next = (Number(rate.rate) + 0.0012).toFixed(4);
    const { opened, published } = await patchAndApprove(
      [{ op: 'set', path: '/fx_rates/rates/EUR-USD', value: { ...rate, rate: next } }],
      'ECB fix',
    );
    const fxNumber = Number(before.fx_version.slice(3)) + 1;
    expect(published.body).toMatchObject({
      status: 'published',
      publication: {
        versions: { ...before, fx_version: `fx-${fxNumber}` },
      },
    });
    for (const pair of ['EUR-USD', encodeURIComponent('EUR→USD')]) {
      const answer = await history(`pair=${pair}`);
      expect(answer.status).toBe(200);
      const items = answer.body.items as Record<string, unknown>[];
      expect(items[0]).toMatchObject({
        pair: 'EUR→USD',
        rate_set: 'display',
        change: 'changed',
        value: { pair: 'EUR→USD', rate: next },
        fx_version: `fx-${fxNumber}`,
        change_request: {
          cr_id: opened.body.cr_id,
          kind: 'patch',
          approvers: [{ by: 'alice' }, { by: 'bob' }],
        },
      });
      expect(items.at(-1)).toMatchObject({ change: 'added', fx_version: 'fx-1', value: { rate: rate.rate } });
    }
  });
});

describe('an FX override patch', () => {
  const quoteJpy = async (explain = false) => {
    const response = await fetch(`${stack.url}/pricing/quote`, {
      method: 'POST',
      headers: { 'x-api-key': API_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({
        items: [{ sku_id: SKU, quantity: 1 }],
        region: 'JP',
        currency: 'JPY',
        buyer_type: 'consumer',
        ...(explain ? { explain: true } : {}),
      }),
    });
    expect(response.status).toBe(201);
    return (await response.json()) as Record<string, unknown>;
  };
  type Conversion = Record<string, unknown> & { override?: Record<string, unknown> };
  const conversionsOf = (body: Record<string, unknown>) => body.fx_conversions as Conversion[];

  it('publishes after two approvals; quotes and prices then show it in fx_conversions and are priced at it', async () => {
    const before = await quoteJpy();
    const [published] = conversionsOf(before);
    expect(published).toMatchObject({ pair: 'EUR→JPY', reference_rate: '178.46', fx_markup_bps: 200 });
    expect(published?.override).toBeUndefined();

    const expiresAt = new Date(Date.now() + 3_600_000).toISOString();
    const versions = await currentVersions();
    const { opened, published: approved } = await patchAndApprove(
      [
        {
          op: 'set',
          path: '/fx_rates/overrides/EUR-JPY',
          value: { rate: '180.00', expires_at: expiresAt, reason: 'provider feed frozen' },
        },
      ],
      'manual JPY rate',
    );
    expect((opened.body.diff as { fx_rates: unknown[] }).fx_rates).toEqual([
      {
        pair: 'EUR→JPY',
        from: '178.46',
        to: '180.00',
        move_percent: '0.86',
        set: 'override',
        expires_at: expiresAt,
      },
    ]);
    const fxNumber = Number(versions.fx_version.slice(3)) + 1;
    expect(approved.body).toMatchObject({
      status: 'published',
      publication: { versions: { ...versions, fx_version: `fx-${fxNumber}` } },
    });

    const after = await quoteJpy(true);
    expect(after.fx_version).toBe(`fx-${fxNumber}`);
    const override = {
      pair: 'EUR→JPY',
      rate: '180.00',
      expires_at: expiresAt,
      reason: 'provider feed frozen',
    };
    expect(conversionsOf(after)).toEqual([
      {
        pair: 'EUR→JPY',
        from: 'EUR',
        to: 'JPY',
        reference_rate: '180',
        fx_markup_bps: 200,
        // 180 × 1.02
        client_rate: '183.6',
        rate_timestamp: expect.any(String),
        fx_version: `fx-${fxNumber}`,
        source: 'manual_override',
        override,
      },
    ]);
    expect(after.fx_rate).toBe('183.6');
    // The line was converted at that client rate (the explained conversion), so its price moved with it.
    const steps = (after.explain as { steps: { rule: string; input: Conversion; output: Conversion }[] })
      .steps;
    const conversion = steps.find((step) => step.rule === 'fx_conversion');
    expect(conversion?.output).toMatchObject({ client_rate: '183.6', override });
    expect(conversion?.output.unit_price).toBe(
      step(dec(String(conversion?.input.unit_price)).times(dec('183.6'))).toString(),
    );
    const [line] = after.items_priced as { unit_price: string }[];
    expect(line?.unit_price).not.toBe((before.items_priced as { unit_price: string }[])[0]?.unit_price);

    // The storefront price shows it too.
    const price = await fetch(`${stack.url}/catalog/prices?sku=${SKU}&region=JP&currency=JPY`, {
      headers: { 'x-api-key': API_KEY },
    });
    const priceBody = (await price.json()) as Record<string, unknown>;
    expect(conversionsOf(priceBody)[0]).toMatchObject({ reference_rate: '180', override });
    expect(priceBody.unit_price).toBe(line?.unit_price);

    // And the pair's history.
    const history = await admin('GET', '/catalog/history?pair=EUR-JPY');
    expect((history.body.items as Record<string, unknown>[])[0]).toMatchObject({
      pair: 'EUR→JPY',
      rate_set: 'override',
      change: 'added',
      value: override,
      change_request: { cr_id: opened.body.cr_id, kind: 'patch' },
    });
  });

  it('refuses a set whose expires_at is not in the future with a 400 naming the path', async () => {
    const answer = await admin('POST', '/admin/change-requests', {
      kind: 'patch',
      operations: [
        {
          op: 'set',
          path: '/fx_rates/overrides/EUR-USD',
          value: { rate: '1.2', expires_at: '2020-01-01T00:00:00.000Z', reason: 'too late' },
        },
      ],
    });
    expect(answer.status).toBe(400);
    expect(answer.body.problems).toEqual([
      {
        path: '$.operations[0].value.expires_at',
        message: expect.stringMatching(
          /^set \/fx_rates\/overrides\/EUR-USD: expires_at must be in the future/,
        ),
      },
    ]);
  });
});

describe('refusals', () => {
  it('answers 400 naming the operation index and path, and stores nothing', async () => {
    const listed = async () =>
      ((await admin('GET', '/admin/change-requests?limit=200')).body.items as unknown[]).length;
    const count = await listed();
    const versions = await currentVersions();
    const answer = await admin('POST', '/admin/change-requests', {
      kind: 'patch',
      operations: [
        { op: 'remove', path: '/promotions/PROMO-THAT-IS-NOT' },
        { op: 'set', path: `/pricelists/${PRICELIST}/items/${SKU}` },
        { op: 'set', path: `/pricelists/${PRICELIST}/items/0`, value: { base_price: 'cheap' } },
        { op: 'set', path: '/settings/pricing_strategy', value: 'mixed' },
      ],
    });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('invalid_request');
    const problems = answer.body.problems as {
      path: string;
      message: string;
    }[];
    expect(problems.map((problem) => problem.path)).toEqual([
      '$.operations[0]',
      '$.operations[1].value',
      '$.operations[2].value.base_price',
      '$.operations[2].value.base_currency',
      '$.operations[2].value.tax_class',
      '$.operations[2].value.pricing_model',
      '$.operations[3].path',
    ]);
    expect(problems[0]?.message).toContain('remove /promotions/PROMO-THAT-IS-NOT: nothing to remove');
    expect(await listed()).toBe(count);
    expect(await currentVersions()).toEqual(versions);

    // The body's shape: a patch carries operations, the other kinds a payload.
    expect((await admin('POST', '/admin/change-requests', { kind: 'patch', payload: {} })).status).toBe(400);
    expect(
      (await admin('POST', '/admin/change-requests', { kind: 'promotions', operations: [] })).status,
    ).toBe(400);
  });

  it('GET /catalog/history needs exactly one of sku and pair, and an operator', async () => {
    for (const query of [
      '',
      `sku=${SKU}&pair=EUR-USD`,
      'pair=EUR-EUR',
      'pair=EUR-USD&pricelist=x',
      'sku=x&cursor=!!',
    ]) {
      expect((await history(query)).status, query).toBe(400);
    }
    expect((await history('sku=NOT-A-SKU')).body).toEqual({ items: [] });
    const byCaller = await fetch(`${stack.url}/catalog/history?sku=${SKU}`, {
      headers: { 'x-api-key': API_KEY },
    });
    expect(byCaller.status).toBe(403);
  });
});
