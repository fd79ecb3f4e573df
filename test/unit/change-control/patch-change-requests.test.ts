/**
 * Patch change requests (C30) through the change-request use cases, on in-memory stores: created against what is
 * in force (diff and guardrails of the whole result), refused with every problem before anything is stored,
 * published after two approvals as a new version of the changed part only, rebased onto publications made
 * since (stale when one changed an entry the patch names), and found in the history with its change request.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { codesToAcknowledge } from '../../../functions/domain/change-control/guardrails';
import type { CatalogDocument } from '../../../functions/schemas/catalog-document';
import { catalogHistory } from '../../../functions/usecases/catalog/history';
import {
  approveChangeRequest,
  type ChangeRequestView,
} from '../../../functions/usecases/change-requests/change-requests';
import { type ChangeRequestHarness, changeRequestHarness } from '../../support/change-request-harness';
import type { InMemoryCatalogRepository } from '../catalog-api/support';

let harness: ChangeRequestHarness;
let repository: InMemoryCatalogRepository;
let deps: ChangeRequestHarness['deps'];
const approveTwice = (created: ChangeRequestView) => harness.approveTwice(created);
const patch = (operations: unknown[], note = 'patch') => harness.patch(operations, note);

const priceItem = (sku_id: string, base_price: string) => ({
  sku_id,
  base_price,
  base_currency: 'EUR',
  tax_class: 'standard',
  pricing_model: 'flat',
});

const setPrice = (sku: string, price: string) => ({
  op: 'set',
  path: `/pricelists/pl_eur/items/${sku}`,
  value: priceItem(sku, price),
});

const inForce = () => harness.inForce();

beforeEach(async () => {
  harness = await changeRequestHarness();
  ({ repository, deps } = harness);
});

describe('a patch change request', () => {
  it('is diffed against what is in force and publishes a new pricelist_version only, after two approvals', async () => {
    const before = await inForce();
    const created = await patch([setPrice('sku_game', '49.99')], 'launch price');
    expect(created).toMatchObject({
      kind: 'patch',
      status: 'pending_approval',
      summary: { sections_changed: ['pricelists'], prices_changed: 1, prices_added: 0, fx_rates_changed: 0 },
      guardrails: [],
    });
    expect(created.diff?.prices.changed).toEqual([
      {
        pricelist_id: 'pl_eur',
        sku_id: 'sku_game',
        currency: 'EUR',
        from: '59.99',
        to: '49.99',
        move_percent: '-16.67',
      },
    ]);
    const published = await approveTwice(created);
    expect(published).toMatchObject({
      status: 'published',
      publication: {
        revision: 2,
        versions: { pricelist_version: 2, fx_version: 'fx-1', tax_rule_version: 1 },
      },
    });
    expect(published.release?.payloadType).toBe('application/vnd.pricing.release+json');
    expect(published.journal_index).toBe(1);
    // The exported catalogs of both versions differ in that item only.
    const after = await inForce();
    const expected = structuredClone(before) as unknown as CatalogDocument;
    const item = expected.pricelists[0]?.items.find((entry) => entry.sku_id === 'sku_game');
    if (item) item.base_price = '49.99';
    expect(after).toEqual(expected);
  });

  it('a guardrail it trips (a move beyond 25 %) needs each approver to acknowledge it', async () => {
    const created = await patch([setPrice('sku_game', '99.99')]);
    expect(codesToAcknowledge(created.guardrails)).toEqual(['price_move']);
    await expect(approveChangeRequest(deps, created.cr_id, { by: 'alice' })).rejects.toMatchObject({
      reason: 'guardrails_not_acknowledged',
    });
  });

  it('a set of the current value proposes nothing: empty diff, and its publication pins what is in force', async () => {
    const created = await patch([setPrice('sku_game', '59.99')]);
    expect(created.summary).toEqual({
      sections_changed: [],
      prices_added: 0,
      prices_removed: 0,
      prices_changed: 0,
      tax_rates_changed: 0,
      fx_rates_changed: 0,
    });
    const published = await approveTwice(created);
    expect(published.publication?.versions).toEqual({
      pricelist_version: 1,
      fx_version: 'fx-1',
      tax_rule_version: 1,
    });
  });

  it('a rate patch publishes a new fx_version only', async () => {
    const created = await patch([
      {
        op: 'set',
        path: '/fx_rates/rates/EUR-USD',
        value: { rate: '1.0900', source: 'ecb', method: 'provider', precision: 4 },
      },
    ]);
    expect(created.diff?.fx_rates).toEqual([
      { pair: 'EUR→USD', from: '1.0842', to: '1.0900', move_percent: '0.53', set: 'display' },
    ]);
    const published = await approveTwice(created);
    expect(published.publication?.versions).toEqual({
      pricelist_version: 1,
      fx_version: 'fx-2',
      tax_rule_version: 1,
    });
  });

  it('is refused with every problem, naming the operation index and path, and nothing is stored', async () => {
    await expect(
      patch([
        setPrice('sku_game', '49.99'),
        { op: 'set', path: '/pricelists/pl_eur/items/sku_shirt' },
        { op: 'remove', path: '/promotions/none' },
        { op: 'set', path: '/pricelists/pl_eur/items/sku_shirt', value: { ...priceItem('sku_shirt', 'x') } },
        { op: 'set', path: '/pricelists/pl_eur/7', value: {} },
      ]),
    ).rejects.toMatchObject({
      name: 'CatalogValidationError',
      problems: [
        {
          path: '$.operations[1].value',
          message: 'set /pricelists/pl_eur/items/sku_shirt: a set needs a value',
        },
        {
          path: '$.operations[2]',
          message: 'remove /promotions/none: nothing to remove: there is no such entry',
        },
        {
          path: '$.operations[3].value.base_price',
          message: expect.stringMatching(/^set \/pricelists\/pl_eur\/items\/sku_shirt: /),
        },
        {
          path: '$.operations[4].path',
          message: expect.stringMatching(/^set \/pricelists\/pl_eur\/7: unknown path/),
        },
      ],
    });
    expect(deps.store.records.size).toBe(1);
  });

  it('is refused when the resulting document is invalid as a whole (a price for a SKU with no product)', async () => {
    await expect(patch([setPrice('sku_ghost', '1.00')])).rejects.toMatchObject({
      problems: [expect.objectContaining({ message: 'no product sku_ghost' })],
    });
    expect(deps.store.records.size).toBe(1);
  });
});

describe('a patch published after others published', () => {
  it('is rebased: what others published meanwhile on other entries stays', async () => {
    const mine = await patch([setPrice('sku_game', '49.99')]);
    await approveTwice(await patch([setPrice('sku_shirt', '21.00')]));
    const published = await approveTwice(mine);
    expect(published.status).toBe('published');
    const document = (await inForce()) as unknown as CatalogDocument;
    expect(document.pricelists[0]?.items.map((item) => [item.sku_id, item.base_price])).toEqual([
      ['sku_game', '49.99'],
      ['sku_shirt', '21.00'],
    ]);
  });

  it('is stale when another publication changed an entry it names', async () => {
    const mine = await patch([setPrice('sku_game', '49.99')]);
    await approveTwice(await patch([setPrice('sku_game', '54.99')]));
    const outcome = await approveTwice(mine);
    expect(outcome).toMatchObject({
      status: 'stale',
      stale_reason:
        'entries changed since this request by another publication: /pricelists/pl_eur/items/sku_game',
    });
    expect(outcome.publication).toBeUndefined();
  });
});

describe('the history of a patched price', () => {
  it('shows each version with its change request, approvers and release', async () => {
    const created = await patch([setPrice('sku_game', '49.99')], 'launch price');
    const published = await approveTwice(created);
    const page = await catalogHistory(
      { repository, changeRequests: deps.store },
      { sku: 'sku_game', limit: 10 },
    );
    expect(page.items).toHaveLength(2);
    expect(page.items[0]).toMatchObject({
      sku_id: 'sku_game',
      pricelist_id: 'pl_eur',
      change: 'changed',
      value: { base_price: '49.99' },
      pricelist_version: 2,
      revision: 2,
      change_request: {
        cr_id: created.cr_id,
        kind: 'patch',
        status: 'published',
        author: 'admin',
        note: 'launch price',
        approvers: [
          { by: 'alice', at: expect.any(String) },
          { by: 'bob', at: expect.any(String) },
        ],
      },
      release: {
        journal_entry_id: `release:${created.cr_id}`,
        cr_id: created.cr_id,
        url: `/audit/releases/${created.cr_id}`,
        journal_index: published.journal_index,
        release_sha256: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      },
    });
    expect(page.items[1]).toMatchObject({
      change: 'added',
      pricelist_version: 1,
      change_request: { kind: 'catalog', author: 'bootstrap' },
    });
  });
});
