/**
 * Change requests on in-memory stores with a catalog already published: the seed document goes in as a `catalog`
 * change request approved by `alice` and `bob`, then tests open patches, approve them twice and read what is in
 * force. One harness per test (`beforeEach`).
 */
import { codesToAcknowledge } from '../../functions/domain/change-control/guardrails';
import type { CatalogDocument } from '../../functions/schemas/catalog-document';
import { currentCatalog } from '../../functions/usecases/catalog/import';
import {
  approveChangeRequest,
  type ChangeRequestDependencies,
  type ChangeRequestView,
  createChangeRequest,
} from '../../functions/usecases/change-requests/change-requests';
import { InMemoryCatalogRepository, ManualClock } from '../unit/catalog-api/support';
import { minimalDocument } from './catalog-document';
import { type MemoryChangeRequestStore, memoryChangeRequestDependencies } from './memory-change-requests';

export interface ChangeRequestHarness {
  readonly repository: InMemoryCatalogRepository;
  readonly clock: ManualClock;
  readonly deps: ChangeRequestDependencies & { readonly store: MemoryChangeRequestStore };
  /** `alice`, then a second later `bob`, approve with every guardrail acknowledged: it publishes. */
  readonly approveTwice: (created: ChangeRequestView) => Promise<ChangeRequestView>;
  /** `admin` opens a patch change request (C30). */
  readonly patch: (operations: unknown[], note?: string) => Promise<ChangeRequestView>;
  /** The catalog in force as one document (the three parts joined). */
  readonly inForce: () => Promise<CatalogDocument>;
}

/** A harness whose catalog in force is `seed` (the minimal document by default), published a minute ago. */
export const changeRequestHarness = async (
  seed: CatalogDocument = minimalDocument(),
): Promise<ChangeRequestHarness> => {
  const repository = new InMemoryCatalogRepository();
  const clock = new ManualClock();
  const deps = memoryChangeRequestDependencies(repository, clock);
  const approveTwice = async (created: ChangeRequestView) => {
    const acknowledge = codesToAcknowledge(created.guardrails);
    await approveChangeRequest(deps, created.cr_id, { by: 'alice', acknowledge });
    clock.advance(1_000);
    return approveChangeRequest(deps, created.cr_id, { by: 'bob', acknowledge });
  };
  await approveTwice(
    await createChangeRequest(deps, { kind: 'catalog', payload: seed, note: 'seed' }, 'bootstrap'),
  );
  clock.advance(60_000);
  return {
    repository,
    clock,
    deps,
    approveTwice,
    patch: (operations, note = 'patch') =>
      createChangeRequest(deps, { kind: 'patch', payload: { operations }, note }, 'admin'),
    inForce: async () => {
      const current = await currentCatalog(repository);
      if (!current) throw new Error('nothing published');
      return {
        ...(current.parts.commercial.content as object),
        ...(current.parts.fx.content as object),
        ...(current.parts.tax.content as object),
      } as CatalogDocument;
    },
  };
};
