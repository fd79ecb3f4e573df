/**
 * How each kind of change request (C23) applies to the catalog: which sections of the import document its
 * payload may carry, and how the payload and what is in force make the whole proposed document.
 */
import { canonicalJson, type Json } from '../../domain/money/canonical';
import type { ChangeKind } from '../../ports/change-requests';
import type { CatalogDocument, catalogDocumentSchema } from '../../schemas/catalog-document';
import { CatalogValidationError, type Problem } from '../catalog/validate';
import { checkPatchValueAt, expiredOverrideMessage, patchedDocument, patchOperationsOf } from './patch';

type Section = keyof typeof catalogDocumentSchema.shape;

/**
 * The sections a kind replaces; `catalog` is a whole document (any section it leaves out is removed); `patch`
 * changes single entries (see `patch.ts`).
 */
export const KIND_SECTIONS: Readonly<Record<Exclude<ChangeKind, 'catalog' | 'patch'>, readonly Section[]>> = {
  pricelist: [
    'settings',
    'products',
    'pricelists',
    'overrides',
    'display_rules',
    'basket_policies',
    'fees',
    'availability',
    'limits',
  ],
  promotions: ['promotions'],
  tax_rules: ['tax_rules'],
  fx_rates: ['fx_rates', 'settlement_rates'],
  fx_policy: ['rate_policy'],
};

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The whole document a change proposes: the payload itself for `catalog`, the operations applied to what is in
 * force for `patch`, else what is in force with the kind's sections replaced by the payload's (a section the
 * payload leaves out is kept; `null` removes an optional one). The result is validated by the caller like any
 * import.
 */
export const proposedDocument = (
  kind: ChangeKind,
  payload: unknown,
  current: Readonly<Record<string, unknown>> | undefined,
  now: Date,
): unknown => {
  if (kind === 'catalog') return payload;
  if (kind === 'patch')
    return patchedDocument(current, patchOperationsOf(payload), checkPatchValueAt(now.toISOString()));
  if (!isObject(payload)) {
    throw new CatalogValidationError([{ path: '$.payload', message: 'must be an object' }]);
  }
  const allowed: readonly string[] = KIND_SECTIONS[kind];
  const problems = Object.keys(payload)
    .filter((key) => !allowed.includes(key))
    .map((key) => ({
      path: `$.payload.${key}`,
      message: `a ${kind} change may carry only ${allowed.join(', ')}`,
    }));
  if (Object.keys(payload).length === 0) {
    problems.push({
      path: '$.payload',
      message: `a ${kind} change carries at least one of ${allowed.join(', ')}`,
    });
  }
  if (!current) {
    problems.push({
      path: '$.kind',
      message: 'nothing is published yet: the first change request must be a whole catalog (kind "catalog")',
    });
  }
  if (problems.length > 0) throw new CatalogValidationError(problems);
  const { effective_from: _effective, ...base } = current ?? {};
  const proposed: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(payload)) {
    if (value === null) delete proposed[key];
    else proposed[key] = value;
  }
  return proposed;
};

/**
 * FX overrides a change adds or changes whose `expires_at` is not after `now`, as problems (a 400): an override
 * not in force when proposed never would be. An override carried exactly as it is in force is left alone: an
 * expired one stays in the document until a change removes it, and a change of anything else (a held rate tick
 * of kind `fx_rates`, say) carries it unchanged.
 */
export const expiredOverrideProblems = (
  current: Readonly<Record<string, unknown>> | undefined,
  proposed: CatalogDocument,
  now: Date,
): Problem[] => {
  const inForce = (current as Partial<CatalogDocument> | undefined)?.fx_rates?.overrides ?? [];
  const unchanged = new Set(inForce.map((override) => canonicalJson(override as Json)));
  return (proposed.fx_rates.overrides ?? []).flatMap((override, index) => {
    if (unchanged.has(canonicalJson(override as Json))) return [];
    const message = expiredOverrideMessage(override.expires_at, now.toISOString());
    return message ? [{ path: `$.fx_rates.overrides[${index}].expires_at`, message }] : [];
  });
};
