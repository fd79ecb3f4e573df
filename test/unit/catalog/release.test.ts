import { describe, expect, it } from 'vitest';
import type { CatalogPartKind, CatalogRepository, StoredPart } from '../../../functions/ports/catalog';
import { CatalogReader } from '../../../functions/usecases/catalog/reader';
import {
  type CatalogRelease,
  splitDocument,
  toPricingCatalog,
} from '../../../functions/usecases/catalog/release';
import { minimalDocument } from '../../support/catalog-document';

const release = (): CatalogRelease => {
  const parts = splitDocument(
    minimalDocument({
      fees: [
        {
          effective_from: '2026-01-01T00:00:00.000Z',
          cross_border: { percent: '1', domestic_regions: ['DE'] },
        },
        {
          effective_from: '2026-12-01T00:00:00.000Z',
          cross_border: { percent: '2', domestic_regions: ['DE'] },
        },
      ],
      basket_policies: [
        { policy_id: 'default', rounding_scope: 'line', promo_stack_mode: 'best_single' },
        { policy_id: 'partner', tenant: 'partner', rounding_scope: 'basket', promo_stack_mode: 'stack_all' },
      ],
    }),
  );
  const from = '2026-01-01T00:00:00.000Z';
  return {
    commercial: { version: 1, effective_from: from, content: parts.commercial },
    fx: { version: 1, effective_from: from, content: parts.fx },
    tax: { version: 1, effective_from: from, content: parts.tax },
  };
};

describe('toPricingCatalog', () => {
  it('builds one snapshot per release, basket policy and fee schedule in force, and reuses it', () => {
    const r = release();
    const november = toPricingCatalog(r, { at: new Date('2026-11-22T00:00:00.000Z') });
    expect(toPricingCatalog(r, { at: new Date('2026-11-30T00:00:00.000Z') })).toBe(november);
    const december = toPricingCatalog(r, { at: new Date('2026-12-02T00:00:00.000Z') });
    expect(december).not.toBe(november);
    expect(december.fees?.cross_border?.percent).toBe('2');
    const partner = toPricingCatalog(r, { tenant: 'partner', at: new Date('2026-11-22T00:00:00.000Z') });
    expect(partner.basket_policy.rounding_scope).toBe('basket');
    expect(november.basket_policy.rounding_scope).toBe('line');
  });

  it('shares one snapshot among every tenant without a policy of its own, however many are named', () => {
    const r = release();
    const at = new Date('2026-11-22T00:00:00.000Z');
    const shared = toPricingCatalog(r, { at });
    for (let index = 0; index < 50; index += 1)
      expect(toPricingCatalog(r, { tenant: `unknown-${index}`, at })).toBe(shared);
    expect(toPricingCatalog(r, { tenant: 'partner', at })).toBe(
      toPricingCatalog(r, { tenant: 'partner', at }),
    );
    expect(toPricingCatalog(r, { tenant: 'partner', at })).not.toBe(shared);
  });
});

describe('CatalogReader.release', () => {
  it('returns the same release object for the same versions, loading each part once', async () => {
    const parts = splitDocument(minimalDocument());
    const loads: string[] = [];
    const repository: Pick<CatalogRepository, 'part'> = {
      part: async (kind: CatalogPartKind, version: number): Promise<StoredPart> => {
        loads.push(`${kind}:${version}`);
        return {
          kind,
          version,
          effective_from: '2026-01-01T00:00:00.000Z',
          content_sha256: 'sha256:x',
          content: parts[kind],
        };
      },
    };
    const reader = new CatalogReader(repository as CatalogRepository, { now: () => new Date() });
    const first = await reader.release({ commercial: 1, fx: 1, tax: 1 });
    expect(await reader.release({ commercial: 1, fx: 1, tax: 1 })).toBe(first);
    const other = await reader.release({ commercial: 1, fx: 1, tax: 2 });
    expect(other).not.toBe(first);
    expect(other.commercial).toBe(first.commercial);
    expect(loads).toEqual(['commercial:1', 'fx:1', 'tax:1', 'tax:2']);
  });
});
