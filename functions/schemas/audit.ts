/**
 * The audit journal's HTTP API (`/audit/journal/…`): query and path parameters, and response bodies (the source
 * of their OpenAPI description). Sizes and indexes are non-negative integers; hashes are lowercase hex SHA-256.
 */
import * as z from 'zod';
import { TREE_HEAD_PAYLOAD_TYPE } from '../domain/audit/journal-verify';
import { isoTimestamp } from './envelope';

const count = z.coerce.number().int().min(0);
const pageSize = z.coerce.number().int().min(1).max(200);

/** `GET /audit/journal/heads?from=&limit=` */
export const journalHeadsQuerySchema = z.strictObject({
  from: count.optional().describe('The smallest tree size to list (default 0).'),
  limit: pageSize.optional().describe('Heads per page, 1–200 (default 100).'),
});

/** `GET /audit/journal/entries/{index}` */
export const journalEntryPathSchema = z.strictObject({
  index: count.describe('The entry index, from 0.'),
});

/** `GET /audit/journal/entries/{index}?tree_size=` */
export const journalEntryQuerySchema = z.strictObject({
  tree_size: count
    .optional()
    .describe('Prove inclusion in the signed head of this size (default: the latest head).'),
});

/** `GET /audit/journal/consistency?from=&to=` */
export const journalConsistencyQuerySchema = z.strictObject({
  from: count.describe('Tree size of the older signed head.'),
  to: count.describe('Tree size of the newer signed head (not less than from).'),
});

const hashHex = z.string().regex(/^[0-9a-f]{64}$/, '64 lowercase hex digits');

const treeHeadEnvelopeSchema = z
  .object({
    payloadType: z.literal(TREE_HEAD_PAYLOAD_TYPE),
    payload: z.string().describe('Base64 of the JCS of { log_id, tree_size, root_hash, timestamp }.'),
    signatures: z
      .array(z.object({ keyid: z.string().describe('The kid of a key in GET /keys.'), sig: z.string() }))
      .describe('ECDSA P-256 (DER, Base64) over the DSSE PAE.'),
  })
  .describe('DSSE envelope of the head.');

export const signedTreeHeadSchema = z
  .object({
    log_id: z.string(),
    tree_size: z.number().int().min(0),
    root_hash: hashHex.describe('RFC 9162 Merkle tree hash of the first tree_size entries.'),
    timestamp: isoTimestamp,
    envelope: treeHeadEnvelopeSchema,
  })
  .describe('A signed tree head.');

export const journalEntrySchema = z
  .object({
    index: z.number().int().min(0),
    entry_id: z.string(),
    type: z.string(),
    at: isoTimestamp,
    data: z.unknown(),
  })
  .describe('A journal entry; its leaf is the UTF-8 of the JCS of exactly these five fields.');

const proofSchema = z.array(hashHex).describe('RFC 9162 proof: hashes from the bottom of the tree up.');

export const journalHeadsPageResponseSchema = z.object({
  heads: z.array(signedTreeHeadSchema),
  next: z.number().int().optional().describe('`from` of the next page, when there is one.'),
});

export const journalEntryResponseSchema = z.object({
  entry: journalEntrySchema,
  leaf_hash: hashHex,
  inclusion: z.object({ tree_size: z.number().int().min(1), proof: proofSchema }),
  head: signedTreeHeadSchema,
});

export const journalConsistencyResponseSchema = z.object({
  from_head: signedTreeHeadSchema,
  to_head: signedTreeHeadSchema,
  proof: proofSchema,
});

/** Entries per export page at most (a page stays far below API Gateway's and Lambda's 6 MB). */
export const JOURNAL_EXPORT_MAX_PAGE = 2_000;
export const JOURNAL_EXPORT_DEFAULT_PAGE = 1_000;

/** `GET /audit/journal/export?limit=&cursor=` */
export const journalExportQuerySchema = z.strictObject({
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(JOURNAL_EXPORT_MAX_PAGE)
    .optional()
    .describe(`Entries per page, 1–${JOURNAL_EXPORT_MAX_PAGE} (default ${JOURNAL_EXPORT_DEFAULT_PAGE}).`),
  cursor: z.string().max(2_048).optional().describe('`next_cursor` of the previous page.'),
});

export const journalExportResponseSchema = z.object({
  log_id: z.string(),
  tree_size: count.describe(
    'The signed head the export is pinned to (the latest when its first page was read): every page lists entries and heads up to it.',
  ),
  entries: z
    .array(journalEntrySchema)
    .describe(
      'This page of the entries the pinned head covers, in index order; the pages together are all of them.',
    ),
  heads: z
    .array(signedTreeHeadSchema)
    .describe(
      "The signed heads whose tree size falls in this page's entries (the first page also those of size 0), in tree size order; the pages together are every head up to the pinned one.",
    ),
  next_cursor: z.string().optional().describe('Present when more pages follow: pass it as `cursor`.'),
});
