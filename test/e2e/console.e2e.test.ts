/**
 * The operator console and the partner portal in a real browser (headless Chromium through playwright-core) against
 * the local stack, as a user would drive them: the four-eyes flow with three operators, an endpoint registered, its
 * secret rotated and a test event seen in its history, a failed delivery replayed from the deliveries page, a receipt
 * verified in the page (and a tampered one shown invalid), and a partner who cannot reach another partner's events
 * by any URL. Every page is checked with axe-core and photographed at desktop and phone widths.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../functions/composition/local/stack';
import type { RetryPolicy } from '../../functions/domain/webhooks/retry-policy';
import { receiptResponseSchema } from '../../functions/schemas/responses';
import { endpointWithSecretResponseSchema } from '../../functions/schemas/webhooks';
import { buildWebApps, WEB_SECURITY_HEADERS } from '../../lib/web-build';
import { checkPage, launchBrowser } from '../support/browser';
import { adminRequest } from '../support/change-requests';
import { demoCatalogWithoutRatePolicy } from '../support/demo-stack';
import { startReceiver, type TestReceiver } from '../support/webhook-receiver';

const API_KEY = 'key_console_0123456789abcdef';
const OPERATORS = {
  ann: { name: 'ann', token: 'adm_console_ann_0123456789ab', roles: ['author', 'endpoint_admin', 'auditor'] },
  carol: { name: 'carol', token: 'adm_console_carol_0123456789', roles: ['approver', 'auditor'] },
  dave: { name: 'dave', token: 'adm_console_dave_01234567890', roles: ['approver', 'auditor'] },
} as const;
const POLICY: RetryPolicy = {
  backoffSeconds: [1],
  dailyRetryDays: 0,
  jitter: { min: 0.8, max: 1.2 },
  attemptTimeoutMs: 2_000,
};
const PRICELIST = 'PL-EU-EUR-2026W47';
const SKU = 'GAME-STARFALL-PS5';

let stack: LocalStack;
let receiver: TestReceiver;
let browser: Browser;
let webDir: string;
/** Paths under the receiver that fail (500) until removed. */
const failing = new Set<string>();

beforeAll(async () => {
  webDir = mkdtempSync(path.join(tmpdir(), 'console-web-'));
  await buildWebApps(webDir);
  stack = await startLocalStack({
    port: 0,
    apiKey: API_KEY,
    adminToken: 'adm_console_admin_0123456789',
    admins: Object.values(OPERATORS).map((operator) => ({ ...operator, roles: [...operator.roles] })),
    logLevel: 'SILENT',
    seedCatalog: demoCatalogWithoutRatePolicy(),
    rateLimit: { requestsPerSecond: 100_000, burst: 100_000 },
    streamPollIntervalMs: 50,
    webhooks: { policy: POLICY },
    web: { dir: webDir, headers: WEB_SECURITY_HEADERS },
  });
  receiver = await startReceiver((request) =>
    [...failing].some((prefix) => request.path.startsWith(prefix))
      ? { kind: 'respond', status: 500 }
      : { kind: 'respond', status: 204 },
  );
  browser = await launchBrowser();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await stack?.stop();
  rmSync(webDir, { recursive: true, force: true });
});

const as = (token: string) => (method: string, route: string, body?: unknown) =>
  adminRequest(stack.url, token, method, route, body);
const ann = as(OPERATORS.ann.token);

const newPage = async (): Promise<Page> => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  return page;
};

const signIn = async (page: Page, app: 'console' | 'portal', token: string): Promise<void> => {
  await page.goto(`${stack.url}/${app}/`);
  await page.getByLabel(app === 'console' ? 'Operator token' : 'Partner key').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Sign out' }).waitFor();
};

/** The text of a test id now ('' while the page does not show it). */
const textOf = async (page: Page, testId: string): Promise<string> => {
  const element = page.getByTestId(testId);
  return (await element.count()) > 0 ? ((await element.first().textContent()) ?? '') : '';
};

/** Waits until the test id's text satisfies `wanted`, reloading the page's data with `refresh` between looks. */
const eventually = async (
  check: () => Promise<boolean>,
  refresh?: () => Promise<void>,
  timeoutMs = 30_000,
) => {
  for (const deadline = Date.now() + timeoutMs; ; ) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error('the page never showed it');
    await refresh?.();
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
};

describe('the console and the portal in a browser', () => {
  it('serves the pages with security headers', async () => {
    const answer = await fetch(`${stack.url}/console/`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-security-policy')).toContain("script-src 'self'");
    expect(answer.headers.get('x-frame-options')).toBe('DENY');
    expect((await fetch(`${stack.url}/portal`, { redirect: 'manual' })).status).toBe(301);
  });

  it('signs in with the keyboard, announces a refused credential, and passes axe', async () => {
    const page = await newPage();
    for (const app of ['console', 'portal'] as const) {
      await page.goto(`${stack.url}/${app}/`);
      await checkPage(page, `${app}-sign-in`);
      // Keyboard only: from the top of the page, the field is reached with Tab (past the skip link), Enter submits.
      const field = page.getByLabel(app === 'console' ? 'Operator token' : 'Partner key');
      let tabs = 0;
      while (
        !(await field.evaluate((element) => element.ownerDocument.activeElement === element)) &&
        tabs < 5
      ) {
        await page.keyboard.press('Tab');
        tabs += 1;
      }
      expect(await field.evaluate((element) => element.ownerDocument.activeElement === element)).toBe(true);
      expect(tabs).toBeGreaterThan(0);
      await page.keyboard.type('not-a-valid-credential');
      await page.keyboard.press('Enter');
      await page.getByRole('alert').waitFor();
      expect(await page.getByRole('alert').textContent()).toContain('401');
    }
  });

  it('four eyes: the author cannot approve, one approval does not publish, the second does', async () => {
    const exported = await ann('GET', `/admin/catalog/export`);
    const pricelist = (
      exported.body.pricelists as { pricelist_id: string; items: { sku_id: string }[] }[]
    ).find((entry) => entry.pricelist_id === PRICELIST);
    const item = pricelist?.items.find((entry) => entry.sku_id === SKU);
    const opened = await ann('POST', '/admin/change-requests', {
      kind: 'patch',
      note: 'weekend price',
      operations: [
        { op: 'set', path: `/pricelists/${PRICELIST}/items/${SKU}`, value: { ...item, base_price: '64.99' } },
      ],
    });
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    const crId = String(opened.body.cr_id);

    // The author: the request with its diff, and no approve button.
    const author = await newPage();
    await signIn(author, 'console', OPERATORS.ann.token);
    await checkPage(author, 'console-change-requests');
    await author.getByRole('link', { name: crId }).click();
    await author.getByRole('heading', { name: `Change requests: ${crId}` }).waitFor();
    expect(await author.getByRole('table', { name: 'Price rows: old → new' }).textContent()).toContain(
      '64.99',
    );
    expect(await textOf(author, 'cannot-review')).toContain('You wrote this change');
    expect(await author.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    await checkPage(author, 'console-change-request');

    // The first approver: approved, not published.
    const carol = await newPage();
    await signIn(carol, 'console', OPERATORS.carol.token);
    await carol.goto(`${stack.url}/console/#/change-requests/${crId}`);
    await carol.getByRole('button', { name: 'Approve' }).click();
    await carol.getByText('Approved (1 of 2)').waitFor();
    // Once the page has read the request again: still pending, and no second approval offered to the same person.
    await eventually(async () => (await textOf(carol, 'cannot-review')).includes('You approved it'));
    expect(await textOf(carol, 'cr-status')).toBe('pending_approval');
    expect(await carol.getByRole('button', { name: 'Approve' }).count()).toBe(0);

    // The second approver publishes and sees the new versions and the release.
    const dave = await newPage();
    await signIn(dave, 'console', OPERATORS.dave.token);
    await dave.goto(`${stack.url}/console/#/change-requests/${crId}`);
    await dave.getByRole('button', { name: 'Approve' }).click();
    await dave.getByText(/^Published: price list \d+/).waitFor();
    await eventually(async () => (await textOf(dave, 'cr-status')) === 'published');
    expect(await textOf(dave, 'cr-versions')).toMatch(/price list \d+, FX .+, tax \d+/);
    const stored = await ann('GET', `/admin/change-requests/${crId}`);
    expect(stored.body).toMatchObject({ status: 'published', approvals: [{ by: 'carol' }, { by: 'dave' }] });
    await checkPage(dave, 'console-change-request-published');
  });

  it('registers an endpoint, rotates its secret and sees a test event in its history', async () => {
    const page = await newPage();
    await signIn(page, 'console', OPERATORS.ann.token);
    await page.getByRole('link', { name: 'Endpoints' }).click();
    await page.getByLabel('URL').fill(`${receiver.baseUrl}/console-endpoint`);
    await page.getByLabel('Topics').fill('catalog, payout');
    await checkPage(page, 'console-endpoints');
    await page.getByRole('button', { name: 'Register' }).click();
    const firstSecret = (await page.getByTestId('secret').first().textContent()) ?? '';
    expect(firstSecret).toMatch(/^whsec_/);
    await page.getByRole('link', { name: /^ep_/ }).first().click();
    await page.getByRole('button', { name: 'Rotate the secret' }).click();
    const rotated = (await page.getByTestId('secret').textContent()) ?? '';
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(firstSecret);
    // Its settings: a rate limit and an ordering, saved through PATCH.
    await page.getByLabel('Deliveries per second').fill('5');
    await page.getByLabel('Ordering key').fill('endpoint');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved.').waitFor();
    const endpointId =
      (await page.getByRole('heading', { level: 1 }).textContent())?.replace('Endpoints: ', '') ?? '';
    const stored = await ann('GET', `/webhooks/endpoints/${endpointId}`);
    expect(stored.body).toMatchObject({ rate_limit: { per_second: 5 }, ordering: { key: 'endpoint' } });
    await checkPage(page, 'console-endpoint');
    await page.getByLabel('Type', { exact: true }).selectOption('payout.processed');
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.getByRole('heading', { name: /^Deliveries: evt_/ }).waitFor();
    const eventId =
      (await page.getByRole('heading', { level: 1 }).textContent())?.replace('Deliveries: ', '') ?? '';
    await eventually(
      async () => (await page.getByText('delivered', { exact: true }).count()) > 0,
      () => page.getByRole('button', { name: 'Refresh' }).click(),
    );
    expect(receiver.requests.some((request) => request.envelope.event_id === eventId)).toBe(true);
    await checkPage(page, 'console-event');
  });

  it('replays a failed delivery from the deliveries page and shows it delivered', async () => {
    const created = await ann('POST', '/webhooks/endpoints', {
      url: `${receiver.baseUrl}/failing`,
      topics: ['replayme'],
    });
    const endpoint = endpointWithSecretResponseSchema.parse(created.body);
    failing.add('/webhooks/v1/failing');
    const published = await ann('POST', '/webhooks/events', { type: 'replayme.changed', data: { n: 1 } });
    const eventId = String(published.body.event_id);
    for (const deadline = Date.now() + 30_000; ; ) {
      const shown = await ann('GET', `/webhooks/events/${eventId}`);
      const delivery = (shown.body.deliveries as { endpoint_id: string; status: string }[] | undefined)?.find(
        (entry) => entry.endpoint_id === endpoint.endpoint_id,
      );
      if (delivery?.status === 'dead') break;
      if (Date.now() > deadline) throw new Error('the delivery never died');
      await new Promise((resolve) => setTimeout(resolve, 300));
    }
    failing.delete('/webhooks/v1/failing');

    const page = await newPage();
    await signIn(page, 'console', OPERATORS.ann.token);
    await page.getByRole('link', { name: 'Deliveries' }).click();
    await page.getByRole('button', { name: 'Dead letters' }).click();
    await page.getByLabel(`Select ${eventId}`).check();
    await checkPage(page, 'console-deliveries');
    await page.getByRole('button', { name: 'Replay selected (1)' }).click();
    await eventually(async () =>
      /1 delivered, 0 in progress, 0 dead — done/.test(await textOf(page, 'replay-progress')),
    );
    await page.goto(`${stack.url}/console/#/deliveries/${eventId}`);
    await page.getByTestId('delivery-status').waitFor();
    expect(await textOf(page, 'delivery-status')).toBe('delivered');
  });

  it('verifies a receipt in the page, and shows a tampered one invalid', async () => {
    const caller = (route: string, body: unknown) =>
      fetch(`${stack.url}${route}`, {
        method: 'POST',
        headers: {
          'x-api-key': API_KEY,
          'content-type': 'application/json',
          'idempotency-key': crypto.randomUUID(),
        },
        body: JSON.stringify(body),
      }).then(async (answer) => ({
        status: answer.status,
        body: (await answer.json()) as Record<string, unknown>,
      }));
    const quote = await caller('/pricing/quote', {
      items: [{ sku_id: SKU, quantity: 1 }],
      region: 'DE',
      currency: 'EUR',
      buyer_type: 'consumer',
    });
    expect(quote.status, JSON.stringify(quote.body)).toBe(201);
    const committed = await caller('/pricing/commit', {
      quote_id: quote.body.quote_id,
      signature: quote.body.signature,
    });
    expect(committed.status, JSON.stringify(committed.body)).toBe(201);
    const receipt = receiptResponseSchema.parse(committed.body);

    const page = await newPage();
    await signIn(page, 'console', OPERATORS.carol.token);
    await page.goto(`${stack.url}/console/#/receipts/${receipt.receipt_id}`);
    await page.getByRole('button', { name: 'Verify the signature' }).click();
    await eventually(async () => (await textOf(page, 'receipt-verdict')) !== '');
    expect(await textOf(page, 'receipt-verdict')).toMatch(/^Signature valid \(key .+\)\.$/);
    await checkPage(page, 'console-receipt');

    // The same receipt with its total changed on the way: the page says it is not what was signed.
    await page.route(`**/admin/receipts/${receipt.receipt_id}`, async (route) => {
      const answer = await route.fetch();
      const body = (await answer.json()) as { computed_totals: { total: string } };
      body.computed_totals.total = '0.01';
      await route.fulfill({ response: answer, json: body });
    });
    await page.reload();
    await page.getByRole('button', { name: 'Verify the signature' }).click();
    await eventually(async () => (await textOf(page, 'receipt-verdict')).startsWith('Signature invalid'));
    expect(await textOf(page, 'receipt-verdict')).toContain('changed');
  });

  it('shows the catalog and the objectives', async () => {
    const page = await newPage();
    await signIn(page, 'console', OPERATORS.ann.token);
    await page.getByRole('link', { name: 'Catalog' }).click();
    await page.getByLabel('SKU').fill(SKU);
    await page.getByRole('button', { name: 'Show history' }).click();
    await page.getByRole('table', { name: 'Versions, newest first' }).waitFor();
    // The price history as figures and as a chart (its points also in a table for screen readers).
    expect(await page.getByRole('table', { name: 'Versions, newest first' }).textContent()).toContain(
      '64.99',
    );
    await page.getByRole('img', { name: new RegExp(`^Price of ${SKU}: \\d+ points$`) }).waitFor();
    // The SKU in every region and currency displayed, each price explained.
    const prices = page.getByRole('table', { name: `Prices of ${SKU} across regions and currencies` });
    await prices.waitFor();
    expect(await prices.textContent()).toContain('EUR');
    await prices.getByText('Explain').first().click();
    expect(await prices.textContent()).toMatch(/base · /);
    await checkPage(page, 'console-catalog');
    await page.getByRole('link', { name: 'Objectives' }).click();
    await page.getByRole('table', { name: /^Objectives from/ }).waitFor();
    const objectives = (await page.getByRole('table', { name: /^Objectives from/ }).textContent()) ?? '';
    expect(objectives).toContain('Burn rate');
    // Receipts were signed in this run: the ratio objective has a measured burn (0 misses), not a dash.
    expect(objectives).toMatch(/signed_receipts[\s\S]*?0\.00×/);
    await checkPage(page, 'console-objectives');
  });

  it("the portal: a partner sees its own endpoint and events, never another partner's by any URL", async () => {
    const register = async (name: string) =>
      endpointWithSecretResponseSchema.parse(
        (await ann('POST', '/webhooks/endpoints', { url: `${receiver.baseUrl}/${name}`, topics: ['portal'] }))
          .body,
      );
    const a = await register('portal-a');
    const b = await register('portal-b');
    // B's own test event: A must never see it.
    const partnerB = await fetch(`${stack.url}/partner/endpoint/test`, {
      method: 'POST',
      headers: { authorization: `Bearer ${b.partner_key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'payout.processed' }),
    });
    expect(partnerB.status).toBe(202);
    const bEvent = String(((await partnerB.json()) as { event_id: string }).event_id);
    expect(bEvent).toMatch(/^evt_/);

    const page = await newPage();
    await signIn(page, 'portal', a.partner_key ?? '');
    expect(await page.getByText(a.endpoint_id).count()).toBeGreaterThan(0);
    await checkPage(page, 'portal-endpoint');
    await page.getByRole('button', { name: 'Send a test event' }).click();
    await page.getByRole('heading', { name: /^Deliveries: evt_/ }).waitFor();
    await eventually(
      async () => (await textOf(page, 'delivery-status')) === 'delivered',
      () => page.getByRole('button', { name: 'Refresh' }).click(),
    );
    await checkPage(page, 'portal-delivery');
    await page.getByRole('link', { name: 'Deliveries' }).click();
    await page.getByRole('table').waitFor();
    await checkPage(page, 'portal-deliveries');
    await page.getByRole('link', { name: 'How to verify' }).click();
    // The guide's own receivers (docs/receiving-webhooks.md, section 9) and the published vectors.
    expect(await page.getByRole('region', { name: 'Python' }).textContent()).toContain('def verify_webhook(');
    expect(await page.getByRole('region', { name: 'TypeScript' }).textContent()).toContain('verifyWebhook');
    expect(await page.getByRole('region', { name: 'Signature vectors' }).textContent()).toContain(
      'canonical_string',
    );
    await checkPage(page, 'portal-verify');

    // Typing B's event into the URL: not found, and nothing of it shown.
    await page.goto(`${stack.url}/portal/#/deliveries/${bEvent}`);
    await page.getByRole('alert').waitFor();
    expect(await page.getByRole('alert').textContent()).toContain('404');
    expect(await page.content()).not.toContain(b.endpoint_id);
    // Nor an operator route, with the partner key the page holds.
    const operatorRoute = await page.evaluate(async (eventId) => {
      const session = JSON.parse(sessionStorage.getItem('pricing-session') ?? '{}') as { token: string };
      const answer = await fetch(`/webhooks/events/${eventId}`, {
        headers: { authorization: `Bearer ${session.token}` },
      });
      return answer.status;
    }, bEvent);
    expect(operatorRoute).toBe(401);
  });
});
