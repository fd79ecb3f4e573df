/**
 * Trust boundaries over HTTP on the local stack (issue 15): the authorization matrix of docs/security.md sent in
 * full (every route × every kind of credential, no 5xx, nothing written by a refused request), tenant-bound
 * caller keys, their lifecycle, four-eyes with distinct humans, and the partner's view of the catalog.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../functions/composition/local/stack';
import {
  type Access,
  CREDENTIALS,
  type CredentialKind,
  parseAuthorizationMatrix,
  ROUTES,
  type RouteDefinition,
  TABLES,
  type TableDefinition,
  type TableId,
} from '../../functions/definitions';
import type { CatalogDocument } from '../../functions/schemas/catalog-document';
import type { TestOperator } from '../support/change-requests';
import { startDemoStack } from '../support/demo-stack';

const TENANT_A = 'demo';
const TENANT_B = 'retail-partner-nordic';
const STORE_A = 'key_tb_store_a_0123456789';
const STORE_B = 'key_tb_store_b_0123456789';
const PRICES_A = 'key_tb_prices_a_0123456789';
const PSP_A = 'key_tb_psp_a_0123456789';
const ADMIN = 'adm_tb_admin_0123456789abcdef';

const operator = (name: string, roles: TestOperator['roles'], machine = false): TestOperator => ({
  name,
  token: `adm_tb_${name}_${randomUUID().replaceAll('-', '')}`,
  roles,
  ...(machine ? { machine: true } : {}),
});
const ANN = operator('ann', ['author']);
/** A second session of the author: the same person with another token (and the approver role). */
const ANN_AGAIN = { ...operator('ann', ['approver']), name: 'ann' };
const CAROL = operator('carol', ['approver']);
const DAVE = operator('dave', ['approver']);
const ERIN = operator('erin', ['endpoint_admin']);
const FAY = operator('fay', ['auditor']);
const FX_BOT = operator('fx-bot', ['author'], true);
const OPERATORS: readonly TestOperator[] = [
  { name: 'admin', token: ADMIN, roles: ['author', 'endpoint_admin', 'auditor'] },
  ANN,
  ANN_AGAIN,
  CAROL,
  DAVE,
  ERIN,
  FAY,
  FX_BOT,
];

let stack: LocalStack;
let partnerA: { endpointId: string; key: string };
let partnerB: { endpointId: string; key: string };

interface Answer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

const send = async (
  method: string,
  route: string,
  headers: Record<string, string>,
  body?: unknown,
): Promise<Answer> => {
  const response = await fetch(`${stack.url}${route}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  let parsed: Record<string, unknown> = {};
  try {
    parsed = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    parsed = { text };
  }
  return { status: response.status, body: parsed };
};

const asKey = (key: string) => ({ 'x-api-key': key });
const asBearer = (token: string) => ({ authorization: `Bearer ${token}` });
const as = (who: TestOperator) => asBearer(who.token);

const registerPartner = async (tenant: string) => {
  const created = await send('POST', '/webhooks/endpoints', as(ERIN), {
    url: 'http://127.0.0.1:9/webhooks/v1',
    tenant,
    topics: ['payout'],
  });
  expect(created.status, JSON.stringify(created.body)).toBe(201);
  return { endpointId: String(created.body.endpoint_id), key: String(created.body.partner_key) };
};

beforeAll(async () => {
  stack = await startDemoStack({
    apiKey: STORE_A,
    chargebackKey: PSP_A,
    adminToken: ADMIN,
    admins: OPERATORS,
    ratePolicy: true,
    // One FX run at start, none while the matrix counts what refused requests wrote.
    ratesIntervalMs: 3_600_000,
    callerKeyCacheSeconds: 0,
    callerKeys: [
      {
        key: STORE_B,
        tenant: TENANT_B,
        scopes: ['prices:read', 'quotes:write', 'receipts:read', 'refunds:write'],
      },
      { key: PRICES_A, tenant: TENANT_A, scopes: ['prices:read'] },
    ],
  });
  partnerA = await registerPartner(TENANT_A);
  partnerB = await registerPartner(TENANT_B);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const headersFor = (kind: CredentialKind): Record<string, string> => {
  switch (kind) {
    case 'none':
      return {};
    case 'storefront_a':
      return asKey(STORE_A);
    case 'storefront_b':
      return asKey(STORE_B);
    case 'scopeless_a':
      return asKey(PRICES_A);
    case 'chargeback_a':
      return asKey(PSP_A);
    case 'partner_a':
      return asBearer(partnerA.key);
    case 'partner_b':
      return asBearer(partnerB.key);
    case 'author':
      return as(ANN);
    case 'approver':
      return as(CAROL);
    case 'endpoint_admin':
      return as(ERIN);
    case 'auditor':
      return as(FAY);
    case 'machine':
      return as(FX_BOT);
  }
};

/** Well-formed ids of nothing: an allowed request is then refused by the route itself, never written. */
const DUMMY_PARAMETERS: Readonly<Record<string, string>> = {
  receipt_id: 'rcpt_01JD8ZK4Q7000000000000000Z',
  cr_id: 'cr_01JD8ZK4Q7000000000000000Z',
  endpoint_id: 'ep_01JD8ZK4Q7000000000000000Z',
  event_id: 'evt_01JD8ZK4Q7000000000000000Z',
  replay_id: 'rpl_01JD8ZK4Q7000000000000000Z',
  key_id: 'ak_01JD8ZK4Q7000000000000000Z',
  index: '999999',
};

const requestOf = (route: RouteDefinition) => {
  const concrete = route.path.replace(/\{(\w+)\}/g, (_match, name: string) => DUMMY_PARAMETERS[name] ?? 'x');
  const refund = route.operation === 'refund';
  const body =
    route.method === 'GET' || route.method === 'DELETE'
      ? undefined
      : refund
        ? { receipt_id: DUMMY_PARAMETERS.receipt_id, kind: 'return', lines: [{ sku_id: 'X', quantity: 1 }] }
        : {};
  return {
    path: concrete,
    body,
    headers: (route.method === 'POST' ? { 'idempotency-key': randomUUID() } : {}) as Record<string, string>,
  };
};

/** Items per service table (what a refused request must leave as it was). */
const tableCounts = async (): Promise<Record<string, number>> => {
  const counts: Record<string, number> = {};
  for (const [id, table] of Object.entries(TABLES) as [TableId, TableDefinition][]) {
    if (table.scope !== 'service') continue;
    const name = stack.resources.tableNames[id];
    let count = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const page = await stack.clients.documents.send(
        new ScanCommand({ TableName: name, Select: 'COUNT', ...(start ? { ExclusiveStartKey: start } : {}) }),
      );
      count += page.Count ?? 0;
      start = page.LastEvaluatedKey;
    } while (start);
    counts[id] = count;
  }
  return counts;
};

describe('the authorization matrix of docs/security.md, over HTTP', () => {
  const documented = parseAuthorizationMatrix(
    readFileSync(path.resolve(import.meta.dirname, '../../docs/security.md'), 'utf8'),
  );
  const cells = ROUTES.flatMap((route) =>
    CREDENTIALS.map((credential) => {
      const expected = documented.get(`${route.method} ${route.path}`)?.get(credential.kind);
      return { route, credential: credential.kind, expected };
    }),
  );

  it('documents every route for every credential', () => {
    for (const cell of cells) expect(cell.expected, `${cell.route.path} × ${cell.credential}`).toBeDefined();
  });

  it('refuses exactly the documented cells (401 or 403), writing nothing and never answering 5xx', async () => {
    const refused = cells.filter((cell) => cell.expected !== 'allowed');
    expect(refused.length).toBeGreaterThan(200);
    const before = await tableCounts();
    for (const { route, credential, expected } of refused) {
      const request = requestOf(route);
      const answer = await send(
        route.method,
        request.path,
        { ...headersFor(credential), ...request.headers },
        request.body,
      );
      expect(
        answer.status,
        `${route.method} ${route.path} × ${credential}: ${JSON.stringify(answer.body)}`,
      ).toBe(expected as Access);
      expect(answer.body.error).toBe(expected === 401 ? 'unauthorized' : 'forbidden');
    }
    expect(await tableCounts()).toEqual(before);
  }, 240_000);

  it('lets the documented cells through to the route (no 401, 403 or 5xx)', async () => {
    for (const { route, credential, expected } of cells.filter((cell) => cell.expected === 'allowed')) {
      const request = requestOf(route);
      const answer = await send(
        route.method,
        request.path,
        { ...headersFor(credential), ...request.headers },
        request.body,
      );
      const label = `${route.method} ${route.path} × ${credential}: ${answer.status} ${JSON.stringify(answer.body)}`;
      expect([401, 403], label).not.toContain(answer.status);
      expect(answer.status < 500 || (route.operation === 'deepHealth' && answer.status === 503), label).toBe(
        true,
      );
      expect(expected).toBe('allowed');
    }
  }, 240_000);
});

const quoteBody = (extra: Record<string, unknown> = {}) => ({
  items: [{ sku_id: 'GAME-STARFALL-PS5', quantity: 1 }],
  region: 'US',
  currency: 'USD',
  buyer_type: 'consumer',
  ...extra,
});

describe('caller keys are bound to their tenant (C26)', () => {
  let quoteA: Record<string, unknown>;
  let receiptA: Record<string, unknown>;

  beforeAll(async () => {
    const quoted = await send('POST', '/pricing/quote', asKey(STORE_A), quoteBody());
    expect(quoted.status, JSON.stringify(quoted.body)).toBe(201);
    quoteA = quoted.body;
    const committed = await send('POST', '/pricing/commit', asKey(STORE_A), {
      quote_id: quoteA.quote_id,
      signature: quoteA.signature,
    });
    expect(committed.status, JSON.stringify(committed.body)).toBe(201);
    receiptA = committed.body;
  });

  it("records the key's tenant on the quote and the receipt", () => {
    expect((quoteA.basket as { tenant?: string }).tenant).toBe(TENANT_A);
    expect((receiptA.basket as { tenant?: string }).tenant).toBe(TENANT_A);
  });

  it("refuses a body naming another tenant (403) and prices a key's own tenant from the key", async () => {
    const asOther = await send('POST', '/pricing/quote', asKey(STORE_B), quoteBody({ tenant: TENANT_A }));
    expect(asOther.status).toBe(403);
    expect(asOther.body.error).toBe('forbidden');
    const own = await send('POST', '/pricing/quote', asKey(STORE_B), quoteBody({ tenant: TENANT_B }));
    expect(own.status).toBe(201);
    // B's own basket policy (basket rounding, best single promotion) applies without the body saying so.
    const implicit = await send('POST', '/pricing/quote', asKey(STORE_B), quoteBody());
    expect(implicit.status).toBe(201);
    expect(implicit.body.rounding_scope).toBe('basket');
    expect(quoteA.rounding_scope).toBe('line');
    const price = await send(
      'GET',
      `/catalog/prices?sku=GAME-STARFALL-PS5&currency=USD&region=US&tenant=${TENANT_A}`,
      asKey(STORE_B),
    );
    expect(price.status).toBe(403);
  });

  it("answers another tenant's quote and receipt as not found (commit, read, refund)", async () => {
    const commit = await send('POST', '/pricing/commit', asKey(STORE_B), {
      quote_id: quoteA.quote_id,
      signature: quoteA.signature,
    });
    expect(commit.status).toBe(404);
    const read = await send('GET', `/receipts/${String(receiptA.receipt_id)}`, asKey(STORE_B));
    expect(read.status).toBe(404);
    const unknown = await send('GET', `/receipts/${DUMMY_PARAMETERS.receipt_id}`, asKey(STORE_B));
    expect(read.body.error).toBe(unknown.body.error);
    const refund = await send(
      'POST',
      '/pricing/refund',
      { ...asKey(STORE_B), 'idempotency-key': randomUUID() },
      {
        receipt_id: receiptA.receipt_id,
        kind: 'return',
        lines: [{ sku_id: 'GAME-STARFALL-PS5', quantity: 1 }],
      },
    );
    expect(refund.status).toBe(404);
    const mine = await send('GET', `/receipts/${String(receiptA.receipt_id)}`, asKey(STORE_A));
    expect(mine.status).toBe(200);
    expect(mine.body.refunds).toEqual([]);
  });

  it("records a chargeback only with the payment provider's key, never the storefront's", async () => {
    const body = {
      receipt_id: receiptA.receipt_id,
      kind: 'chargeback',
      lines: [{ sku_id: 'GAME-STARFALL-PS5', quantity: 1 }],
    };
    const byStore = await send(
      'POST',
      '/pricing/refund',
      { ...asKey(STORE_A), 'idempotency-key': randomUUID() },
      body,
    );
    expect(byStore.status).toBe(403);
    const byPsp = await send(
      'POST',
      '/pricing/refund',
      { ...asKey(PSP_A), 'idempotency-key': randomUUID() },
      body,
    );
    expect(byPsp.status, JSON.stringify(byPsp.body)).toBe(201);
    expect(byPsp.body.kind).toBe('chargeback');
    // The payment provider's key reads no receipt and returns nothing.
    expect((await send('GET', `/receipts/${String(receiptA.receipt_id)}`, asKey(PSP_A))).status).toBe(403);
  });
});

describe('caller keys bound the customer groups a request names (C29)', () => {
  const GOLD_PRICE = '/catalog/prices?sku=GAME-IRONVALE-PS5&currency=EUR&region=DE';
  const goldQuote = (groups?: string[]) =>
    quoteBody({
      items: [{ sku_id: 'GAME-IRONVALE-PS5', quantity: 1 }],
      region: 'DE',
      currency: 'EUR',
      ...(groups ? { customer_groups: groups } : {}),
    });
  const issue = async (extra: Record<string, unknown>) => {
    const issued = await send(
      'POST',
      '/admin/api-keys',
      { ...as(ERIN), 'idempotency-key': randomUUID() },
      { tenant: TENANT_A, scopes: ['prices:read', 'quotes:write'], ...extra },
    );
    expect(issued.status, JSON.stringify(issued.body)).toBe(201);
    return issued.body;
  };
  const quote = (key: string, groups?: string[]) =>
    send('POST', '/pricing/quote', { ...asKey(key), 'idempotency-key': randomUUID() }, goldQuote(groups));

  it('lets a key name its own groups, refuses any other (403, nothing written), and a key without groups names none', async () => {
    const gold = await issue({ customer_groups: ['b2b-gold', 'b2b-gold'] });
    expect(gold.customer_groups).toEqual(['b2b-gold']);
    const plain = await issue({});
    expect(plain.customer_groups).toEqual([]);
    const listed = await send('GET', `/admin/api-keys?tenant=${TENANT_A}`, as(FAY));
    expect(
      (listed.body.items as { key_id: string; customer_groups: string[] }[]).find(
        (item) => item.key_id === gold.key_id,
      )?.customer_groups,
    ).toEqual(['b2b-gold']);
    const goldKey = String(gold.key);
    const plainKey = String(plain.key);

    const everyone = await send('GET', GOLD_PRICE, asKey(plainKey));
    expect(everyone.status).toBe(200);
    const priced = await send('GET', `${GOLD_PRICE}&customer_groups=b2b-gold`, asKey(goldKey));
    expect(priced.status, JSON.stringify(priced.body)).toBe(200);
    expect(priced.body.customer_group).toBe('b2b-gold');
    expect(Number(priced.body.unit_price)).toBeLessThan(Number(everyone.body.unit_price));
    expect((await send('GET', GOLD_PRICE, asKey(goldKey))).body).toEqual(everyone.body);
    const quoted = await quote(goldKey, ['b2b-gold']);
    expect(quoted.status, JSON.stringify(quoted.body)).toBe(201);
    expect(quoted.body.basket).toMatchObject({ customer_groups: ['b2b-gold'] });
    expect((await quote(plainKey)).status).toBe(201);
    // The demo storefront key names b2b-gold (the README's examples); a configured key without groups names none.
    expect((await send('GET', `${GOLD_PRICE}&customer_groups=b2b-gold`, asKey(STORE_A))).status).toBe(200);

    const before = await tableCounts();
    const refusals = [
      await send('GET', `${GOLD_PRICE}&customer_groups=b2b-gold`, asKey(plainKey)),
      await send('GET', `${GOLD_PRICE}&customer_groups=b2b-gold,vip`, asKey(goldKey)),
      await send('GET', `${GOLD_PRICE}&customer_groups=b2b-gold`, asKey(PRICES_A)),
      await quote(plainKey, ['b2b-gold']),
      await quote(goldKey, ['vip', 'b2b-gold']),
    ];
    for (const refused of refusals) {
      expect(refused.status, JSON.stringify(refused.body)).toBe(403);
      expect(refused.body.error).toBe('forbidden');
      expect(refused.body.trace_id).toBeDefined();
    }
    expect(refusals.map((refused) => refused.body.error_description)).toEqual([
      'this key may not name the customer groups b2b-gold; it may name none',
      'this key may not name the customer groups vip; it may name b2b-gold',
      'this key may not name the customer groups b2b-gold; it may name none',
      'this key may not name the customer groups b2b-gold; it may name none',
      'this key may not name the customer groups vip; it may name b2b-gold',
    ]);
    expect(await tableCounts()).toEqual(before);

    // Rotation keeps the groups.
    const rotated = await send(
      'POST',
      `/admin/api-keys/${String(gold.key_id)}/rotate`,
      { ...as(ERIN), 'idempotency-key': randomUUID() },
      { overlap_hours: 0 },
    );
    expect(rotated.body.customer_groups).toEqual(['b2b-gold']);
    expect((await quote(String(rotated.body.key), ['b2b-gold'])).status).toBe(201);
  });
});

describe('caller key lifecycle: issued once, rotated with an overlap or at once, revoked', () => {
  it('issues a key shown once, lists it without its secret, rotates and revokes it', async () => {
    const issued = await send(
      'POST',
      '/admin/api-keys',
      { ...as(ERIN), 'idempotency-key': randomUUID() },
      { tenant: TENANT_B, scopes: ['prices:read'], description: 'kiosk' },
    );
    expect(issued.status, JSON.stringify(issued.body)).toBe(201);
    const first = String(issued.body.key);
    expect(first).toMatch(/^mck_[A-Za-z0-9_-]{43}$/);
    expect(issued.body).toMatchObject({
      tenant: TENANT_B,
      scopes: ['prices:read'],
      status: 'active',
      created_by: 'erin',
    });
    const keyId = String(issued.body.key_id);
    const price = (key: string) =>
      send('GET', '/catalog/prices?sku=GAME-STARFALL-PS5&currency=USD&region=US', asKey(key));
    expect((await price(first)).status).toBe(200);
    // A quote needs quotes:write, which this key lacks.
    expect((await send('POST', '/pricing/quote', asKey(first), quoteBody())).status).toBe(403);

    const listed = await send('GET', `/admin/api-keys?tenant=${TENANT_B}`, as(FAY));
    expect(listed.status).toBe(200);
    expect(JSON.stringify(listed.body)).not.toContain(first);
    expect((listed.body.items as { key_id: string }[]).map((item) => item.key_id)).toContain(keyId);

    const rotated = await send(
      'POST',
      `/admin/api-keys/${keyId}/rotate`,
      { ...as(ERIN), 'idempotency-key': randomUUID() },
      { overlap_hours: 1 },
    );
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const second = String(rotated.body.key);
    expect(rotated.body.previous_valid_until).toBeDefined();
    expect((await price(first)).status).toBe(200);
    expect((await price(second)).status).toBe(200);

    // The emergency form: the current secret stops now, and so does the one still in its overlap.
    const emergency = await send(
      'POST',
      `/admin/api-keys/${keyId}/rotate`,
      { ...as(ERIN), 'idempotency-key': randomUUID() },
      { overlap_hours: 0 },
    );
    expect(emergency.status).toBe(200);
    const third = String(emergency.body.key);
    expect((await price(first)).status).toBe(401);
    expect((await price(second)).status).toBe(401);
    expect((await price(third)).status).toBe(200);

    // Nothing stores a secret in clear: the idempotency record of the issue is sealed.
    const raw = JSON.stringify(
      (
        await stack.clients.documents.send(
          new ScanCommand({ TableName: stack.resources.tableNames.idempotency }),
        )
      ).Items,
    );
    for (const secret of [first, second, third]) expect(raw).not.toContain(secret);
    const keysRaw = JSON.stringify(
      (await stack.clients.documents.send(new ScanCommand({ TableName: stack.resources.tableNames.apiKeys })))
        .Items,
    );
    for (const secret of [first, second, third]) expect(keysRaw).not.toContain(secret);

    const revoked = await send('DELETE', `/admin/api-keys/${keyId}`, as(ERIN));
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ status: 'revoked', revoked_by: 'erin' });
    expect((await price(third)).status).toBe(401);
    // An auditor reads keys but issues none.
    expect(
      (
        await send(
          'POST',
          '/admin/api-keys',
          { ...as(FAY), 'idempotency-key': randomUUID() },
          { tenant: TENANT_A, scopes: ['prices:read'] },
        )
      ).status,
    ).toBe(403);
  });
});

describe('four-eyes counts distinct humans (C27)', () => {
  it('never publishes on the author, a second session of the author, an auditor or a machine; two approvers publish', async () => {
    const exported = (await send('GET', '/admin/catalog/export', as(FAY)))
      .body as unknown as CatalogDocument & {
      effective_from?: string;
    };
    // The commercial part (what a `pricelist` change carries) with the first item's price changed.
    const {
      effective_from: _from,
      fx_rates: _fx,
      settlement_rates: _settlement,
      rate_policy: _policy,
      tax_rules: _tax,
      promotions: _promotions,
      ...commercial
    } = exported;
    const [primary, ...others] = commercial.pricelists;
    const [first, ...items] = primary?.items ?? [];
    if (!primary || !first) throw new Error('the demo catalog has a primary price list');
    const moved = first.base_price === '49.99' ? '48.99' : '49.99';
    const opened = await send(
      'POST',
      '/admin/change-requests',
      { ...as(ANN), 'idempotency-key': randomUUID() },
      {
        kind: 'pricelist',
        payload: {
          ...commercial,
          pricelists: [{ ...primary, items: [{ ...first, base_price: moved }, ...items] }, ...others],
        },
        note: 'four-eyes',
      },
    );
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    expect(opened.body.author).toBe('ann');
    const crId = String(opened.body.cr_id);
    const acknowledge = [
      ...new Set(
        ((opened.body.guardrails as { code: string }[] | undefined) ?? []).map((finding) => finding.code),
      ),
    ];
    const approve = (who: TestOperator) =>
      send(
        'POST',
        `/admin/change-requests/${crId}/approve`,
        { ...as(who), 'idempotency-key': randomUUID() },
        { acknowledge },
      );

    const bySecondSession = await approve(ANN_AGAIN);
    expect(bySecondSession.status).toBe(403);
    expect(bySecondSession.body.error_description).toMatch(/author/);
    expect((await approve(ANN)).status).toBe(403);
    expect((await approve(FX_BOT)).status).toBe(403);
    expect((await approve(FAY)).status).toBe(403);
    expect((await send('GET', `/admin/change-requests/${crId}`, as(FAY))).body.status).toBe(
      'pending_approval',
    );

    const once = await approve(CAROL);
    expect(once.status).toBe(200);
    expect(once.body.status).toBe('pending_approval');
    const twice = await approve(DAVE);
    expect(twice.status, JSON.stringify(twice.body)).toBe(200);
    expect(twice.body.status).toBe('published');
    expect((twice.body.approvals as { by: string }[]).map((approval) => approval.by)).toEqual([
      'carol',
      'dave',
    ]);
  });
});

describe("the partner's view (snapshot projection, partner keys)", () => {
  const snapshot = (key: string, asOf = new Date().toISOString()) =>
    send('GET', `/catalog/snapshot?as_of=${encodeURIComponent(asOf)}`, asBearer(key));

  it("gives each partner its tenant's view, never internal data", async () => {
    const internal = (await send('GET', '/admin/catalog/export', as(FAY))).body;
    for (const field of ['settlement_rates', 'rate_policy']) expect(internal[field]).toBeDefined();
    const ofA = await snapshot(partnerA.key);
    const ofB = await snapshot(partnerB.key);
    for (const answer of [ofA, ofB]) {
      expect(answer.status).toBe(200);
      const text = JSON.stringify(answer.body);
      for (const secret of [
        'settlement_rates',
        'rate_policy',
        'player_blocks',
        'blocked_banks',
        'blocked_tokens',
        'player_01JD8ZK4Q7',
        'SABRRUMM',
      ])
        expect(text).not.toContain(secret);
    }
    const policies = (answer: Answer) =>
      (answer.body.catalog as { basket_policies: { policy_id: string }[] }).basket_policies.map(
        (policy) => policy.policy_id,
      );
    // Tenant B's own policy is in B's view only: A's partner finds no data of B.
    expect(policies(ofA)).toEqual(['BP-DEFAULT']);
    expect(JSON.stringify(ofA.body)).not.toContain(TENANT_B);
    expect(policies(ofB)).toEqual(['BP-DEFAULT', 'BP-RETAIL-PARTNER-NORDIC']);
    // What is scheduled is not the partner's to see yet.
    const future = await snapshot(partnerA.key, new Date(Date.now() + 86_400_000).toISOString());
    expect(future.status).toBe(400);
  });

  it('rotates a partner key with an overlap, and refuses the keys of a disabled endpoint', async () => {
    const partner = await registerPartner(TENANT_A);
    const rotated = await send(
      'POST',
      `/webhooks/endpoints/${partner.endpointId}/rotate-partner-key`,
      { ...as(ERIN), 'idempotency-key': randomUUID() },
      { overlap_hours: 1 },
    );
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    const next = String(rotated.body.partner_key);
    expect(next).not.toBe(partner.key);
    expect((await snapshot(partner.key)).status).toBe(200);
    expect((await snapshot(next)).status).toBe(200);
    const immediate = await send(
      'POST',
      `/webhooks/endpoints/${partner.endpointId}/rotate-partner-key`,
      { ...as(ERIN), 'idempotency-key': randomUUID() },
      { overlap_hours: 0 },
    );
    const last = String(immediate.body.partner_key);
    expect((await snapshot(next)).status).toBe(401);
    expect((await snapshot(partner.key)).status).toBe(401);
    expect((await snapshot(last)).status).toBe(200);
    const disabled = await send('PATCH', `/webhooks/endpoints/${partner.endpointId}`, as(ERIN), {
      status: 'disabled',
    });
    expect(disabled.status).toBe(200);
    expect((await snapshot(last)).status).toBe(401);
    expect((await send('GET', '/partner/events', asBearer(last))).status).toBe(401);
  });
});
