import {
  JOURNAL_EXPORT_DEFAULT_PAGE,
  journalConsistencyQuerySchema,
  journalEntryPathSchema,
  journalEntryQuerySchema,
  journalExportQuerySchema,
  journalHeadsQuerySchema,
} from '../../schemas/audit';
import type { Journal } from '../../usecases/audit/journal';
import { HttpError } from '../middleware/errors';
import type { Operation } from '../middleware/http';
import { parseWith } from '../middleware/validation';

/**
 * The audit journal's read routes (admin). Errors (mapped in `middleware/domain-errors.ts`): an unknown entry or
 * head size is 404, a bad or inverted range 400, and an entry no signed head covers yet 409 `conflict` with
 * `index` and `sealed_size`: it will be provable once its slice closes.
 */
/** `GET /audit/journal/head`: the latest signed tree head; 404 before the first. */
export const getJournalHeadOperation =
  (journal: Journal): Operation =>
  async () => {
    const head = await journal.latestHead();
    if (!head) throw new HttpError('not_found', 'no tree head has been signed yet');
    return { statusCode: 200, body: head };
  };

/** `GET /audit/journal/heads?from=&limit=`: signed heads in tree size order. */
export const listJournalHeadsOperation =
  (journal: Journal): Operation =>
  async ({ event }) => {
    const query = parseWith(journalHeadsQuerySchema, event.queryStringParameters ?? {}, 'query');
    return {
      statusCode: 200,
      body: await journal.heads({
        ...(query.from === undefined ? {} : { from: query.from }),
        ...(query.limit === undefined ? {} : { limit: query.limit }),
      }),
    };
  };

/** `GET /audit/journal/entries/{index}?tree_size=`: the entry with its inclusion proof. */
export const getJournalEntryOperation =
  (journal: Journal): Operation =>
  async ({ event }) => {
    const { index } = parseWith(journalEntryPathSchema, event.pathParameters ?? {}, 'path');
    const query = parseWith(journalEntryQuerySchema, event.queryStringParameters ?? {}, 'query');
    return {
      statusCode: 200,
      body: await journal.entry(index, query.tree_size === undefined ? {} : { treeSize: query.tree_size }),
    };
  };

/** `GET /audit/journal/consistency?from=&to=`: the consistency proof between two signed heads. */
export const getJournalConsistencyOperation =
  (journal: Journal): Operation =>
  async ({ event }) => {
    const query = parseWith(journalConsistencyQuerySchema, event.queryStringParameters ?? {}, 'query');
    return { statusCode: 200, body: await journal.consistency(query.from, query.to) };
  };

/**
 * `GET /audit/journal/export?limit=&cursor=`: the document `npm run verify-journal` checks offline, by page (at
 * most 2 000 entries, so no page nears the 6 MB a response may carry), pinned to the head of its first page.
 */
export const exportJournalOperation =
  (journal: Journal): Operation =>
  async ({ event }) => {
    const query = parseWith(journalExportQuerySchema, event.queryStringParameters ?? {}, 'query');
    const body = await journal.exportPage({
      limit: query.limit ?? JOURNAL_EXPORT_DEFAULT_PAGE,
      ...(query.cursor ? { cursor: query.cursor } : {}),
    });
    return { statusCode: 200, body };
  };

/** Every journal operation by the `operation` name of its route. */
export const journalOperations = (journal: Journal): Readonly<Record<string, Operation>> => ({
  getJournalHead: getJournalHeadOperation(journal),
  listJournalHeads: listJournalHeadsOperation(journal),
  getJournalEntry: getJournalEntryOperation(journal),
  getJournalConsistency: getJournalConsistencyOperation(journal),
  exportJournal: exportJournalOperation(journal),
});
