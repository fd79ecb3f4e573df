/**
 * Patch change requests (C30): operations checked against the import schema of the entry they name, applied to
 * the catalog in force at creation (for the diff and guardrails) and, when others published since, rebased onto
 * the catalog in force at publication — unless another publication changed an entry the patch names.
 */
import type { z } from 'zod';
import {
  applyPatch,
  type PatchDocument,
  type PatchOperation,
  type PatchTargetType,
  type PatchValueCheck,
  patchConflicts,
} from '../../domain/change-control/patch';
import {
  fxOverrideSchema,
  fxRateSchema,
  overrideSchema,
  priceItemSchema,
  productSchema,
  promotionSchema,
  taxComponentSchema,
} from '../../schemas/catalog-document';
import { patchOperationsSchema } from '../../schemas/change-requests';
import { CatalogValidationError } from '../catalog/validate';

/** The import schema of each kind of entry a patch names. */
const VALUE_SCHEMAS: Readonly<Record<PatchTargetType, z.ZodType>> = {
  price_item: priceItemSchema,
  product: productSchema,
  promotion: promotionSchema,
  override: overrideSchema,
  fx_rate: fxRateSchema,
  fx_override: fxOverrideSchema,
  settlement_rate: fxRateSchema,
  tax_component: taxComponentSchema,
};

const relativePath = (path: readonly PropertyKey[]): string =>
  path.map((segment) => (typeof segment === 'number' ? `[${segment}]` : `.${String(segment)}`)).join('');

/** A value against its entry's import schema; the schema's output is what is stored. */
export const checkPatchValue: PatchValueCheck = (target, value) => {
  const parsed = VALUE_SCHEMAS[target.type].safeParse(value);
  if (parsed.success) return { value: parsed.data };
  return {
    problems: parsed.error.issues.map((issue) => ({
      path: relativePath(issue.path),
      message: issue.message,
    })),
  };
};

/**
 * Why an FX override expiring at `expiresAt` may not be proposed at `now` (both ISO 8601 UTC with ms), or
 * undefined: one that is not in force when submitted never would be (an expired one is only ever removed).
 */
export const expiredOverrideMessage = (expiresAt: string, now: string): string | undefined =>
  expiresAt > now
    ? undefined
    : `expires_at must be in the future (now ${now}): this override would never be in force`;

/**
 * `checkPatchValue` for a request submitted at `now`: an override `set` with an `expires_at` not after `now` is
 * refused too. (A patch rebased at publication is checked without it: an override that expired while the request
 * waited for approval is published and ignored, like any expired one.)
 */
export const checkPatchValueAt =
  (now: string): PatchValueCheck =>
  (target, value) => {
    const checked = checkPatchValue(target, value);
    if (target.type !== 'fx_override' || !('value' in checked)) return checked;
    const message = expiredOverrideMessage((checked.value as { expires_at: string }).expires_at, now);
    return message ? { problems: [{ path: '.expires_at', message }] } : checked;
  };

/** The operations of a patch's payload (`{ operations }`); a 400 naming the problem when it is malformed. */
export const patchOperationsOf = (payload: unknown): PatchOperation[] => {
  const operations =
    typeof payload === 'object' && payload !== null && 'operations' in payload
      ? payload.operations
      : undefined;
  const parsed = patchOperationsSchema.safeParse(operations);
  if (!parsed.success) {
    throw new CatalogValidationError(
      parsed.error.issues.map((issue) => ({
        path: `$.operations${relativePath(issue.path)}`,
        message: issue.message,
      })),
    );
  }
  return parsed.data.map((operation) => ({
    op: operation.op,
    path: operation.path,
    ...(operation.value === undefined ? {} : { value: operation.value }),
  }));
};

/**
 * The whole document a patch proposes: the operations applied to what is in force. Every refused operation is
 * a problem naming its index and path (`$.operations[2].value.base_price`); the result is then validated whole
 * by the caller, like any change.
 */
export const patchedDocument = (
  current: PatchDocument | undefined,
  operations: readonly PatchOperation[],
  check: PatchValueCheck = checkPatchValue,
): Record<string, unknown> => {
  if (!current) {
    throw new CatalogValidationError([
      {
        path: '$.kind',
        message:
          'nothing is published yet: the first change request must be a whole catalog (kind "catalog")',
      },
    ]);
  }
  const result = applyPatch(current, operations, check);
  if ('problems' in result) throw new CatalogValidationError(result.problems);
  return result.document;
};

/**
 * A patch reviewed against `base`, rebased onto `current` (what is in force at publication): the operations
 * are applied again to `current`, so entries others changed meanwhile are kept. Stale when another publication
 * changed an entry the patch names (approvers saw a different "before"), or when an operation no longer applies.
 */
export const rebasePatch = (
  operations: readonly PatchOperation[],
  base: PatchDocument,
  current: PatchDocument,
): { readonly document: Record<string, unknown> } | { readonly stale: string } => {
  const conflicts = patchConflicts(operations, base, current);
  if (conflicts.length > 0) {
    return { stale: `entries changed since this request by another publication: ${conflicts.join(', ')}` };
  }
  const result = applyPatch(current, operations, checkPatchValue);
  if ('problems' in result) {
    return {
      stale: `the patch no longer applies to what is in force: ${result.problems
        .slice(0, 3)
        .map((problem) => `${problem.path}: ${problem.message}`)
        .join('; ')}`,
    };
  }
  return { document: result.document };
};
