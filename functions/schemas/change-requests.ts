/**
 * Change requests over HTTP (C20, C23): what `POST /admin/change-requests` and its approve/reject routes take,
 * and what they answer. The payload is in the import format; it is validated as a whole document by the use case.
 */
import * as z from 'zod';
import { GUARDRAIL_CODES, type GuardrailCode } from '../domain/change-control/guardrails';
import { CHANGE_KINDS, type ChangeKind } from '../ports/change-requests';
import { isoTimestamp } from './envelope';
import { versionsSchema } from './responses';

const kindSchema = z
  .enum(CHANGE_KINDS as [ChangeKind, ...ChangeKind[]])
  .describe(
    '`catalog`: a whole import document; `pricelist`: settings, products, pricelists, overrides, display_rules, ' +
      'basket_policies, fees, availability, limits; `promotions`; `tax_rules`; `fx_rates`: fx_rates (rates, ' +
      'markup_rules, overrides) and settlement_rates; `fx_policy`: rate_policy; `patch`: `operations` on single ' +
      'entries named by id (C30).',
  );
const statusSchema = z.enum(['pending_approval', 'approved', 'published', 'rejected', 'stale']);
const guardrailCodeSchema = z.enum(GUARDRAIL_CODES as [GuardrailCode, ...GuardrailCode[]]);
const comment = z.string().trim().min(1).max(2000);

export const crIdSchema = z.string().regex(/^cr_[0-9A-HJKMNP-TV-Z]{26}$/, 'a change request id (cr_…)');

/** Most operations one patch may carry. */
export const MAX_PATCH_OPERATIONS = 500;

export const patchOperationSchema = z.strictObject({
  op: z.enum(['set', 'remove']),
  path: z
    .string()
    .min(2)
    .max(1000)
    .describe(
      'An entry named by ids, never by array index: `/pricelists/<pricelist_id>/items/<sku_id>`, ' +
        '`/products/<sku_id>`, `/promotions/<promo_id>`, `/overrides/<override_id>`, ' +
        '`/fx_rates/rates/<FROM>-<TO>` (e.g. `EUR-USD`; `EUR→USD` percent-encoded also names it), ' +
        '`/fx_rates/overrides/<FROM>-<TO>` (a manual rate override: `{ rate, expires_at, reason }`, `expires_at` ' +
        'in the future), `/settlement_rates/<FROM>-<TO>`, `/tax_rules/<region>/rates/<tax_class>/<name>`. ' +
        'Segments are percent-decoded.',
    ),
  value: z
    .unknown()
    .optional()
    .describe(
      '`set` only: the entry in the import format (a price item, product, promotion, override, rate, FX ' +
        "override or tax component); its id (an FX override's pair) may be left out (the path's is used) but " +
        'may not differ.',
    ),
});

export type PatchOperationInput = z.infer<typeof patchOperationSchema>;

export const patchOperationsSchema = z.array(patchOperationSchema).min(1).max(MAX_PATCH_OPERATIONS);

export const createChangeRequestSchema = z
  .strictObject({
    kind: kindSchema,
    payload: z
      .unknown()
      .optional()
      .describe(
        "The change in the import format: a whole document for `catalog`, else only the kind's sections. " +
          'Required for every kind but `patch`.',
      ),
    operations: patchOperationsSchema
      .optional()
      .describe(
        'Kind `patch` only (and required there): applied in order to the catalog in force; a refused ' +
          'operation is a 400 naming its index and path.',
      ),
    effective_from: isoTimestamp.optional().describe('In force from (default: when published).'),
    note: comment.optional().describe('Why the change is made; shown to approvers.'),
  })
  .superRefine((body, ctx) => {
    if (body.kind === 'patch') {
      if (body.operations === undefined) {
        ctx.addIssue({ code: 'custom', path: ['operations'], message: 'required for kind patch' });
      }
      if (body.payload !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: ['payload'],
          message: 'a patch carries operations, not a payload',
        });
      }
      return;
    }
    if (body.payload === undefined) ctx.addIssue({ code: 'custom', path: ['payload'], message: 'required' });
    if (body.operations !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['operations'], message: 'only kind patch carries operations' });
    }
  });

export const approveChangeRequestSchema = z.strictObject({
  comment: comment.optional(),
  acknowledge: z
    .array(guardrailCodeSchema)
    .max(GUARDRAIL_CODES.length)
    .optional()
    .describe('Guardrails this approver acknowledges; every one the change trips is required.'),
});

export const rejectChangeRequestSchema = z.strictObject({ comment });

export const changeRequestPathSchema = z.strictObject({ cr_id: crIdSchema });

export const listChangeRequestsQuerySchema = z.strictObject({
  status: statusSchema.optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.string().min(1).max(2048).optional(),
});

const approvalSchema = z.object({
  by: z.string(),
  at: isoTimestamp,
  comment: z.string().optional(),
  acknowledged: z.array(guardrailCodeSchema),
});

const dsseEnvelopeSchema = z.object({
  payloadType: z.string(),
  payload: z.string().describe('Base64 of the JCS release payload.'),
  signatures: z.array(z.object({ keyid: z.string(), sig: z.string() })),
});

export const changeRequestResponseSchema = z.object({
  cr_id: crIdSchema,
  kind: kindSchema,
  status: statusSchema,
  author: z.string(),
  note: z.string().optional(),
  effective_from: isoTimestamp.optional(),
  created_at: isoTimestamp,
  updated_at: isoTimestamp,
  base: z
    .object({
      revision: z.number().int().positive(),
      versions: z.object({ commercial: z.number(), fx: z.number(), tax: z.number() }),
    })
    .optional()
    .describe('The publication the change was reviewed against.'),
  payload_sha256: z.string(),
  approvals: z.array(approvalSchema),
  rejection: z.object({ by: z.string(), at: isoTimestamp, comment: z.string() }).optional(),
  guardrails: z.array(z.object({ code: guardrailCodeSchema, path: z.string(), message: z.string() })),
  summary: z.object({
    sections_changed: z.array(z.string()),
    prices_added: z.number().int(),
    prices_removed: z.number().int(),
    prices_changed: z.number().int(),
    tax_rates_changed: z.number().int(),
    fx_rates_changed: z.number().int(),
  }),
  diff: z
    .record(z.string(), z.unknown())
    .optional()
    .describe('Added, removed and changed prices (with the move in percent), products, tax rates, FX rates.'),
  publication: z
    .object({
      revision: z.number().int().positive(),
      versions: versionsSchema,
      effective_from: isoTimestamp,
      published_at: isoTimestamp,
    })
    .optional(),
  release: dsseEnvelopeSchema.optional(),
  journal_index: z.number().int().nonnegative().optional(),
  stale_reason: z.string().optional(),
  version: z.number().int().positive(),
});

export const changeRequestsPageResponseSchema = z.object({
  items: z.array(changeRequestResponseSchema),
  cursor: z.string().optional(),
});

export const releaseResponseSchema = dsseEnvelopeSchema.describe(
  'DSSE envelope: payloadType application/vnd.pricing.release+json, signed over PAE with the key in GET /keys.',
);
