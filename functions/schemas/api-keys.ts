/** Caller keys (C26): what operators send and get back on `/admin/api-keys`. */
import * as z from 'zod';
import { CALLER_SCOPES } from '../domain/access/principals';
import { DEFAULT_ROTATION_OVERLAP_HOURS, MAX_ROTATION_OVERLAP_HOURS } from '../usecases/access/api-keys';
import { MAX_CUSTOMER_GROUPS } from './catalog-api';
import { customerGroup, identifier } from './catalog-document';

const scope = z.enum(CALLER_SCOPES);
const keyId = z.string().regex(/^ak_[A-Za-z0-9_]{1,40}$/, 'a key id (ak_…)');

export const createApiKeySchema = z.strictObject({
  tenant: identifier,
  scopes: z.array(scope).min(1).max(CALLER_SCOPES.length),
  channels: z.array(identifier).max(20).optional(),
  customer_groups: z
    .array(customerGroup)
    .max(MAX_CUSTOMER_GROUPS)
    .optional()
    .describe(
      `C29: the customer groups (at most ${MAX_CUSTOMER_GROUPS}) requests with this key may name for their ` +
        'buyer; a price read or quote naming any other is refused (403). None (the default): it may name none.',
    ),
  description: z.string().max(200).optional(),
});

export const rotateApiKeySchema = z.strictObject({
  /** How long the current secret keeps working; 0 ends it at once (a leaked key). */
  overlap_hours: z
    .number()
    .int()
    .min(0)
    .max(MAX_ROTATION_OVERLAP_HOURS)
    .default(DEFAULT_ROTATION_OVERLAP_HOURS),
});

export const apiKeyPathSchema = z.strictObject({ key_id: keyId.describe('The key id (`ak_…`).') });

export const listApiKeysQuerySchema = z.strictObject({
  tenant: identifier.optional().describe("Only this tenant's keys."),
  limit: z.coerce.number().int().min(1).max(200).optional().describe('Page size (default 50).'),
  cursor: z.string().max(2048).optional().describe('The `cursor` of the previous page.'),
});

export const apiKeyResponseSchema = z.strictObject({
  key_id: keyId,
  tenant: identifier,
  scopes: z.array(scope),
  channels: z.array(identifier),
  customer_groups: z.array(customerGroup),
  description: z.string().optional(),
  status: z.enum(['active', 'revoked']),
  created_at: z.string(),
  created_by: z.string(),
  rotated_at: z.string().optional(),
  previous_valid_until: z.string().optional(),
  revoked_at: z.string().optional(),
  revoked_by: z.string().optional(),
});

export const apiKeyWithSecretResponseSchema = apiKeyResponseSchema.extend({
  key: z.string().describe('The secret (`mck_…`), in this answer only; stored as its SHA-256.'),
});

export const apiKeysPageResponseSchema = z.strictObject({
  items: z.array(apiKeyResponseSchema),
  cursor: z.string().optional(),
});
