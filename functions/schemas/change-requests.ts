/**
 * Change requests over HTTP (C20, C23): what `POST /admin/change-requests` and its approve/reject routes take,
 * and what they answer. The payload is in the import format; it is validated as a whole document by the use case.
 */
import { z } from 'zod';
import { GUARDRAIL_CODES, type GuardrailCode } from '../domain/change-control/guardrails';
import { CHANGE_KINDS, type ChangeKind } from '../ports/change-requests';
import { isoTimestamp } from './envelope';
import { versionsSchema } from './responses';

const kindSchema = z
  .enum(CHANGE_KINDS as [ChangeKind, ...ChangeKind[]])
  .describe(
    '`catalog`: a whole import document; `pricelist`: settings, products, pricelists, overrides, display_rules, ' +
      'basket_policies, fees, availability, limits; `promotions`; `tax_rules`; `fx_rates`: fx_rates and ' +
      'settlement_rates; `fx_policy`: rate_policy.',
  );
const statusSchema = z.enum(['pending_approval', 'approved', 'published', 'rejected', 'stale']);
const guardrailCodeSchema = z.enum(GUARDRAIL_CODES as [GuardrailCode, ...GuardrailCode[]]);
const comment = z.string().trim().min(1).max(2000);

export const crIdSchema = z.string().regex(/^cr_[0-9A-HJKMNP-TV-Z]{26}$/, 'a change request id (cr_…)');

export const createChangeRequestSchema = z.strictObject({
  kind: kindSchema,
  payload: z
    .unknown()
    .refine((value) => value !== undefined, 'required')
    .describe(
      "The change in the import format: a whole document for `catalog`, else only the kind's sections.",
    ),
  effective_from: isoTimestamp.optional().describe('In force from (default: when published).'),
  note: comment.optional().describe('Why the change is made; shown to approvers.'),
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
