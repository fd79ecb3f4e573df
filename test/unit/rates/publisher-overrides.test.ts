/**
 * Automatic rate publication keeps the manual FX overrides: a tick replaces published rates only, so the new
 * fx version carries every override as it was (in force or expired), and a held tick's change request carries
 * them unchanged too (an expired one is not refused: the request does not change it).
 */
import { beforeEach, describe, expect, it } from 'vitest';
import type { CatalogDocument } from '../../../functions/schemas/catalog-document';
import { currentCatalog } from '../../../functions/usecases/catalog/import';
import type { FxPart } from '../../../functions/usecases/catalog/release';
import type { ChangeRequestView } from '../../../functions/usecases/change-requests/change-requests';
import { CatalogRatePublisher, ChangeRequestHeldTicks } from '../../../functions/usecases/rates/publisher';
import { minimalDocument } from '../../support/catalog-document';
import { type ChangeRequestHarness, changeRequestHarness } from '../../support/change-request-harness';
import type { InMemoryCatalogRepository, ManualClock } from '../catalog-api/support';

const OVERRIDES: NonNullable<CatalogDocument['fx_rates']['overrides']> = [
  { pair: 'EUR→USD', rate: '1.1000', expires_at: '2026-11-22T18:00:00.000Z', reason: 'ECB feed delayed' },
  { pair: 'GBP→EUR', rate: '1.17', expires_at: '2026-11-22T12:30:00.000Z', reason: 'manual fix' },
];

let harness: ChangeRequestHarness;
let repository: InMemoryCatalogRepository;
let clock: ManualClock;
let deps: ChangeRequestHarness['deps'];
const approveTwice = (created: ChangeRequestView) => harness.approveTwice(created);

const fxInForce = async (): Promise<FxPart> => {
  const current = await currentCatalog(repository);
  if (!current) throw new Error('nothing published');
  return current.parts.fx.content as FxPart;
};

beforeEach(async () => {
  const document = minimalDocument();
  harness = await changeRequestHarness({
    ...document,
    fx_rates: {
      ...document.fx_rates,
      rates: [
        ...document.fx_rates.rates,
        { pair: 'EUR→GBP', rate: '0.8500', source: 'ecb', method: 'provider', precision: 4 },
      ],
      overrides: OVERRIDES,
    },
  });
  ({ repository, clock, deps } = harness);
  // The GBP→EUR override has expired by now; the EUR→USD one is in force.
  clock.advance(3_600_000);
});

describe('CatalogRatePublisher', () => {
  it('publishes provider rates as a new fx version that keeps every override as it was', async () => {
    const publisher = new CatalogRatePublisher(repository, clock);
    const { fx_version } = await publisher.publish({
      rates: [
        {
          pair: 'EUR→USD',
          rate: '1.0861',
          source: 'ecb',
          method: 'provider',
          precision: 4,
          effective_from: clock.now().toISOString(),
        },
      ],
      traceId: 'trace-publisher-overrides',
    });
    expect(fx_version).toBe('fx-2');
    const fx = await fxInForce();
    expect(fx.fx_rates.rates.find((rate) => rate.pair === 'EUR→USD')?.rate).toBe('1.0861');
    expect(fx.fx_rates.overrides).toEqual(OVERRIDES);
  });
});

describe('ChangeRequestHeldTicks', () => {
  it('opens an fx_rates change request that carries the overrides unchanged, and publishes them', async () => {
    const held = new ChangeRequestHeldTicks(deps);
    const { cr_id } = await held.open({
      pair: 'EUR→GBP',
      proposed_rate: '0.9100',
      last_rate: '0.8500',
      move_bps: '705',
      source: 'ecb',
      observed_at: clock.now().toISOString(),
      trace_id: 'trace-held-overrides',
    });
    const created = await deps.store.get(cr_id);
    expect(created?.summary.fx_rates_changed).toBe(1);
    if (!created) throw new Error('no change request');
    await approveTwice(created);
    const fx = await fxInForce();
    expect(fx.fx_rates.rates.find((rate) => rate.pair === 'EUR→GBP')?.rate).toBe('0.9100');
    expect(fx.fx_rates.overrides).toEqual(OVERRIDES);
  });
});
