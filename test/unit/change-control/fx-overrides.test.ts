/**
 * Manual FX rate overrides through change requests, on in-memory stores: a patch sets one at
 * `/fx_rates/overrides/<FROM>-<TO>` (its move against the published rate diffed and guarded like a rate change),
 * two approvals publish a new `fx_version` carrying it, the engine then prices at it, and removing it is a patch
 * too. An override already expired when submitted is refused (400 naming the path), whatever the kind; one
 * expired after publication stays until removed and is carried unchanged by other changes. The import schema
 * refuses an override of an unpublished pair and two overrides of one pair.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { diffCatalog } from '../../../functions/domain/change-control/diff';
import { historyChanges } from '../../../functions/domain/change-control/history';
import { mergeChange } from '../../../functions/domain/change-control/merge';
import { parsePatchPath, patchPathOf } from '../../../functions/domain/change-control/patch';
import { priceBasket } from '../../../functions/domain/pricing/basket';
import type { CatalogDocument } from '../../../functions/schemas/catalog-document';
import { catalogHistory } from '../../../functions/usecases/catalog/history';
import { currentCatalog } from '../../../functions/usecases/catalog/import';
import { toPricingCatalog } from '../../../functions/usecases/catalog/release';
import { validateCatalogDocument } from '../../../functions/usecases/catalog/validate';
import {
  type ChangeRequestView,
  createChangeRequest,
} from '../../../functions/usecases/change-requests/change-requests';
import { type ChangeRequestHarness, changeRequestHarness } from '../../support/change-request-harness';
import type { InMemoryCatalogRepository, ManualClock } from '../catalog-api/support';
import { edited, fxRate } from './documents';

type FxOverride = NonNullable<CatalogDocument['fx_rates']['overrides']>[number];

const LATER = '2026-11-22T18:00:00.000Z';
const override = (pair: string, rate: string, expires_at = LATER): FxOverride => ({
  pair,
  rate,
  expires_at,
  reason: 'ECB feed delayed',
});

let harness: ChangeRequestHarness;
let repository: InMemoryCatalogRepository;
let clock: ManualClock;
let deps: ChangeRequestHarness['deps'];
const approveTwice = (created: ChangeRequestView) => harness.approveTwice(created);
const patch = (operations: unknown[]) => harness.patch(operations, 'override');

const setOverride = (path: string, value: Record<string, unknown>) => ({ op: 'set', path, value });

const inForce = () => harness.inForce();

/** What a US buyer pays for one `sku_game` (59.99 EUR, converted to USD) at `at`, and the conversion shown. */
const usPrice = async (at: Date) => {
  const current = await currentCatalog(repository);
  if (!current) throw new Error('nothing published');
  const release = {
    commercial: current.parts.commercial,
    fx: current.parts.fx,
    tax: current.parts.tax,
  } as Parameters<typeof toPricingCatalog>[0];
  return priceBasket(
    toPricingCatalog(release, { at }),
    { items: [{ sku_id: 'sku_game', quantity: 1 }], region: 'US', currency: 'USD', buyer_type: 'consumer' },
    { at: at.toISOString() },
  );
};

const refusal = async (promise: Promise<unknown>) => {
  try {
    await promise;
  } catch (error) {
    return error as { name: string; problems: readonly { path: string; message: string }[] };
  }
  throw new Error('expected a refusal');
};

beforeEach(async () => {
  harness = await changeRequestHarness();
  ({ repository, clock, deps } = harness);
});

describe('the patch path of an override', () => {
  it('names the pair canonically, in the direction given, and renders back', () => {
    for (const path of ['/fx_rates/overrides/EUR-USD', '/fx_rates/overrides/EUR%E2%86%92USD']) {
      expect(parsePatchPath(path)).toEqual({ type: 'fx_override', pair: 'EUR→USD' });
    }
    expect(parsePatchPath('/fx_rates/overrides/USD-EUR')).toEqual({ type: 'fx_override', pair: 'USD→EUR' });
    expect(patchPathOf({ type: 'fx_override', pair: 'EUR→USD' })).toBe('/fx_rates/overrides/EUR-USD');
    for (const path of ['/fx_rates/overrides', '/fx_rates/overrides/EUR-EUR', '/fx_rates/override/EUR-USD']) {
      expect(parsePatchPath(path), path).toHaveProperty('error');
    }
  });
});

describe('a patch that sets an override', () => {
  it('is diffed as a move against the published rate, publishes a new fx_version, and prices at it', async () => {
    const before = await usPrice(clock.now());
    expect(before.fx_conversions?.[0]).toMatchObject({ reference_rate: '1.0842' });
    const created = await patch([
      setOverride('/fx_rates/overrides/EUR-USD', {
        rate: '1.1000',
        expires_at: LATER,
        reason: 'ECB feed delayed',
      }),
    ]);
    expect(created.summary).toMatchObject({ sections_changed: ['fx_rates'], fx_rates_changed: 1 });
    expect(created.diff?.fx_rates).toEqual([
      {
        pair: 'EUR→USD',
        from: '1.0842',
        to: '1.1000',
        move_percent: '1.46',
        set: 'override',
        expires_at: LATER,
      },
    ]);
    expect(created.guardrails).toEqual([]);
    const published = await approveTwice(created);
    expect(published.publication?.versions).toEqual({
      pricelist_version: 1,
      fx_version: 'fx-2',
      tax_rule_version: 1,
    });
    expect((await inForce()).fx_rates.overrides).toEqual([
      { pair: 'EUR→USD', rate: '1.1000', expires_at: LATER, reason: 'ECB feed delayed' },
    ]);
    const after = await usPrice(clock.now());
    expect(after.fx_conversions?.[0]).toMatchObject({
      reference_rate: '1.1',
      override: { pair: 'EUR→USD', rate: '1.1000', expires_at: LATER },
    });
    // At its expiry the published rate is back, in the same fx_version.
    const expired = await usPrice(new Date(LATER));
    expect(expired.versions.fx_version).toBe('fx-2');
    expect(expired.fx_conversions?.[0]).toMatchObject({ reference_rate: '1.0842' });
    expect(expired.fx_conversions?.[0]?.override).toBeUndefined();

    // The history of the pair shows the override as its own rate set.
    const page = await catalogHistory(
      { repository, changeRequests: deps.store },
      { pair: 'EUR-USD', limit: 10 },
    );
    expect(page.items[0]).toMatchObject({
      pair: 'EUR→USD',
      rate_set: 'override',
      change: 'added',
      fx_version: 'fx-2',
      change_request: { cr_id: created.cr_id, kind: 'patch' },
    });
  });

  it('in the opposite direction of the published pair is diffed against the inverse published rate', async () => {
    const created = await patch([
      setOverride('/fx_rates/overrides/USD-EUR', { rate: '0.8', expires_at: LATER, reason: 'manual' }),
    ]);
    // 1 / 1.0842 at 9 decimals; 0.8 is 13.26 % above it: beyond the 5 % rate guardrail.
    expect(created.diff?.fx_rates).toEqual([
      {
        pair: 'USD→EUR',
        from: '0.922339052',
        to: '0.8',
        move_percent: '-13.26',
        set: 'override',
        expires_at: LATER,
      },
    ]);
    expect(created.guardrails).toEqual([
      {
        code: 'rate_move',
        path: 'fx_rates.overrides[USD→EUR]',
        message: 'override rate USD→EUR moves -13.26 % (0.922339052 → 0.8), beyond 5 %',
      },
    ]);
    const published = await approveTwice(created);
    expect(published.status).toBe('published');
    // USD → EUR … not asked here; EUR → USD uses it inverted: 1 / 0.8.
    expect((await usPrice(clock.now())).fx_conversions?.[0]).toMatchObject({
      reference_rate: '1.25',
      override: { pair: 'USD→EUR' },
    });
  });

  it('is removed by a patch, diffed as the move back to the published rate', async () => {
    await approveTwice(
      await patch([setOverride('/fx_rates/overrides/EUR-USD', override('EUR→USD', '1.1000'))]),
    );
    const removal = await patch([{ op: 'remove', path: '/fx_rates/overrides/EUR-USD' }]);
    expect(removal.diff?.fx_rates).toEqual([
      { pair: 'EUR→USD', from: '1.1000', to: '1.0842', move_percent: '-1.44', set: 'override' },
    ]);
    await approveTwice(removal);
    expect((await inForce()).fx_rates.overrides).toEqual([]);
    expect((await usPrice(clock.now())).fx_conversions?.[0]?.override).toBeUndefined();
    // Nothing left to remove.
    const again = await refusal(patch([{ op: 'remove', path: '/fx_rates/overrides/EUR-USD' }]));
    expect(again.problems[0]?.message).toBe(
      'remove /fx_rates/overrides/EUR-USD: nothing to remove: there is no such entry',
    );
  });
});

describe('refusals', () => {
  it('a set whose expires_at is not in the future at submission is a 400 naming the path', async () => {
    for (const expires_at of [clock.now().toISOString(), '2026-11-22T11:00:00.000Z']) {
      const refused = await refusal(
        patch([setOverride('/fx_rates/overrides/EUR-USD', { rate: '1.1', expires_at, reason: 'late' })]),
      );
      expect(refused).toMatchObject({
        name: 'CatalogValidationError',
        problems: [
          {
            path: '$.operations[0].value.expires_at',
            message: expect.stringMatching(
              /^set \/fx_rates\/overrides\/EUR-USD: expires_at must be in the future/,
            ),
          },
        ],
      });
    }
    expect(await deps.store.list({ limit: 50 })).toMatchObject({ items: [expect.anything()] });
  });

  it('the value is checked by the override schema (reason at most 200 characters, a rate, an instant)', async () => {
    const refused = await refusal(
      patch([
        setOverride('/fx_rates/overrides/EUR-USD', {
          rate: '-1',
          expires_at: 'tomorrow',
          reason: 'x'.repeat(201),
          note: 'no such field',
        }),
      ]),
    );
    expect(refused.problems.map((problem) => problem.path).sort()).toEqual([
      '$.operations[0].value',
      '$.operations[0].value.expires_at',
      '$.operations[0].value.rate',
      '$.operations[0].value.reason',
    ]);
  });

  it('an override of a pair not published in either direction, or a second one of a pair, is refused', async () => {
    const unpublished = await refusal(
      patch([setOverride('/fx_rates/overrides/EUR-GBP', override('EUR→GBP', '0.85'))]),
    );
    expect(unpublished.problems).toEqual([
      {
        path: '$.fx_rates.overrides[0].pair',
        message: 'no published rate for EUR→GBP in either direction: an override replaces one',
      },
    ]);
    const twice = await refusal(
      patch([
        setOverride('/fx_rates/overrides/EUR-USD', override('EUR→USD', '1.1')),
        setOverride('/fx_rates/overrides/USD-EUR', override('USD→EUR', '0.9')),
      ]),
    );
    expect(twice.problems).toEqual([
      {
        path: '$.fx_rates.overrides[1].pair',
        message: 'one override per pair: USD→EUR (in either direction) is also at [0]',
      },
    ]);
  });

  it('a whole-section fx_rates change carries overrides; a new one already expired is refused', async () => {
    const { fx_rates } = await inForce();
    const refused = await refusal(
      createChangeRequest(
        deps,
        {
          kind: 'fx_rates',
          payload: {
            fx_rates: { ...fx_rates, overrides: [override('EUR→USD', '1.1', '2026-11-01T00:00:00.000Z')] },
          },
        },
        'admin',
      ),
    );
    expect(refused.problems).toEqual([
      {
        path: '$.fx_rates.overrides[0].expires_at',
        message: expect.stringContaining('must be in the future'),
      },
    ]);
    const created = await createChangeRequest(
      deps,
      { kind: 'fx_rates', payload: { fx_rates: { ...fx_rates, overrides: [override('EUR→USD', '1.1')] } } },
      'admin',
    );
    await approveTwice(created);
    expect((await inForce()).fx_rates.overrides).toEqual([override('EUR→USD', '1.1')]);
  });

  it('an override that expired after publication is carried unchanged by other changes until removed', async () => {
    await approveTwice(
      await patch([setOverride('/fx_rates/overrides/EUR-USD', override('EUR→USD', '1.1000'))]),
    );
    clock.advance(24 * 3_600_000);
    const { fx_rates } = await inForce();
    // A rate change of kind fx_rates (as a held tick opens) keeps the expired override as it is.
    const tick = await createChangeRequest(
      deps,
      {
        kind: 'fx_rates',
        payload: { fx_rates: { ...fx_rates, rates: [fxRate('EUR→USD', '1.0850')] } },
      },
      'system:fx-ingestion',
    );
    expect(tick.diff?.fx_rates).toEqual([
      { pair: 'EUR→USD', from: '1.0842', to: '1.0850', move_percent: '0.07', set: 'display' },
    ]);
    await approveTwice(tick);
    expect((await inForce()).fx_rates.overrides).toEqual([override('EUR→USD', '1.1000')]);
    // Expired: prices use the published rate.
    expect((await usPrice(clock.now())).fx_conversions?.[0]).toMatchObject({ reference_rate: '1.085' });
  });
});

describe('overrides in the merge, the diff and the history', () => {
  const base = edited((document) => {
    document.fx_rates.rates = [fxRate('EUR→USD', '1.0842'), fxRate('EUR→GBP', '0.85')];
  });
  const withOverrides = (overrides: FxOverride[]) =>
    edited((document) => {
      document.fx_rates.overrides = overrides;
    }, base);

  it('merge per pair: an override of one pair never conflicts with one of another', () => {
    const proposed = withOverrides([override('EUR→USD', '1.1')]);
    const current = withOverrides([override('EUR→GBP', '0.86')]);
    expect(mergeChange(withOverrides([]), proposed, current)).toEqual({
      merged: withOverrides([override('EUR→GBP', '0.86'), override('EUR→USD', '1.1')]),
    });
    expect(mergeChange(withOverrides([]), proposed, withOverrides([override('EUR→USD', '1.2')]))).toEqual({
      conflicts: ['fx_rates.overrides[EUR→USD]'],
    });
  });

  it('a changed expiry with the same rate is diffed again against the published rate', () => {
    const diff = diffCatalog(
      withOverrides([override('EUR→USD', '1.1')]),
      withOverrides([override('EUR→USD', '1.1', '2026-11-23T00:00:00.000Z')]),
    );
    expect(diff.fx_rates).toEqual([
      {
        pair: 'EUR→USD',
        from: '1.0842',
        to: '1.1',
        move_percent: '1.46',
        set: 'override',
        expires_at: '2026-11-23T00:00:00.000Z',
      },
    ]);
  });

  it('history: the override is an entry of the pair with scope override', () => {
    const before = validateCatalogDocument(withOverrides([]));
    const after = validateCatalogDocument(withOverrides([override('EUR→USD', '1.1')]));
    expect(historyChanges('fx', before, after)).toEqual([
      { subject: 'pair:EUR-USD', scope: 'override', change: 'added', value: override('EUR→USD', '1.1') },
    ]);
  });
});
