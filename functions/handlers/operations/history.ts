import { catalogHistoryQuerySchema } from '../../schemas/catalog-history';
import { catalogHistory, type HistoryDependencies } from '../../usecases/catalog/history';
import type { Operation } from '../middleware/http';
import { parseWith } from '../middleware/validation';

/** `GET /catalog/history?sku=…` or `?pair=…` (C30): the versions in which the entry changed, newest first. */
export const catalogHistoryOperation =
  (deps: HistoryDependencies): Operation =>
  async ({ event }) => {
    const query = parseWith(catalogHistoryQuerySchema, event.queryStringParameters ?? {}, 'query');
    const page = await catalogHistory(deps, {
      limit: query.limit,
      ...(query.sku === undefined ? {} : { sku: query.sku }),
      ...(query.pair === undefined ? {} : { pair: query.pair }),
      ...(query.pricelist === undefined ? {} : { pricelist: query.pricelist }),
      ...(query.currency === undefined ? {} : { currency: query.currency }),
      ...(query.cursor === undefined ? {} : { cursor: query.cursor }),
    });
    return { statusCode: 200, body: page };
  };
