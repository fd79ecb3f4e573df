import { type DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import * as z from 'zod';
import { MAX_TICKS, trimTicks } from '../../domain/rates/aggregate';
import { INITIAL_BREAKER } from '../../domain/rates/protection';
import type { PairState, RateStateStore, SaveResult, TickRetention } from '../../ports/rates';
import { canonicalPair } from '../../schemas/rate-policy';
import { conditionalFailure } from './dynamo-errors';

/**
 * FX ingestion state per pair on the rate-state table (`pair`, `sk`): one item per pair (`sk = state`) with a
 * `version` number and the state as JSON in `body`. Every write is conditional on the version read, so of two
 * runs that read the same state only one can write what follows from it (and publish the tick it claims).
 * Ticks are trimmed to the TWAP window on every write, and never more than `MAX_TICKS` are kept.
 */

const STATE_SK = 'state';

const tick = z.strictObject({ rate: z.string(), observed_at: z.string(), source: z.string().optional() });
const breaker = z.union([
  z.strictObject({ status: z.literal('closed'), failures: z.array(z.string()) }),
  z.strictObject({ status: z.literal('open'), opened_at: z.string() }),
  z.strictObject({ status: z.literal('half_open'), since: z.string() }),
]);
const body = z.strictObject({
  last_slot: z.number().int().optional(),
  breaker,
  ticks: z.array(tick),
  last_published: z
    .strictObject({
      rate: z.string(),
      source: z.string(),
      effective_from: z.string(),
      observed_at: z.string(),
      fx_version: z.string(),
    })
    .optional(),
  held: z
    .strictObject({
      rate: z.string(),
      last_rate: z.string(),
      move_bps: z.string(),
      source: z.string(),
      observed_at: z.string(),
      slot: z.number().int(),
      cr_id: z.string().optional(),
    })
    .optional(),
  work: z
    .strictObject({
      run_id: z.string(),
      lease_until: z.string(),
      slot: z.number().int(),
      trace_id: z.string(),
      publication: z
        .strictObject({
          pair: z.string(),
          rate: z.string(),
          source: z.string(),
          method: z.enum(['provider', 'median', 'twap']),
          precision: z.number().int(),
          effective_from: z.string(),
          observed_at: z.string(),
        })
        .optional(),
      previous_rate: z.string().optional(),
      move_bps: z.string().optional(),
      open_change_request: z.boolean().optional(),
      journal: z.array(z.strictObject({ entry_id: z.string(), type: z.string(), data: z.unknown() })),
    })
    .optional(),
});

export class RateStateCorruptError extends Error {
  constructor(pair: string, options?: { cause?: unknown }) {
    super(`the stored rate state of ${pair} is not readable`, options);
    this.name = 'RateStateCorruptError';
  }
}

export class DynamoRateStateStore implements RateStateStore {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async get(pair: string): Promise<PairState> {
    const key = canonicalPair(pair);
    const result = await this.documents.send(
      new GetCommand({ TableName: this.tableName, Key: { pair: key, sk: STATE_SK }, ConsistentRead: true }),
    );
    if (!result.Item) return { pair: key, version: 0, breaker: INITIAL_BREAKER, ticks: [] };
    let parsed: z.infer<typeof body>;
    try {
      parsed = body.parse(JSON.parse(String(result.Item.body)));
    } catch (error) {
      throw new RateStateCorruptError(key, { cause: error });
    }
    return { ...parsed, pair: key, version: Number(result.Item.version) } as PairState;
  }

  async put(state: PairState, retention?: TickRetention): Promise<SaveResult> {
    const key = canonicalPair(state.pair);
    const { pair: _pair, version, ...rest } = state;
    const ticks = retention ? trimTicks(rest.ticks, retention) : rest.ticks.slice(-MAX_TICKS);
    const next = version + 1;
    try {
      await this.documents.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { pair: key, sk: STATE_SK, version: next, body: JSON.stringify({ ...rest, ticks }) },
          ...(version === 0
            ? {
                ConditionExpression: 'attribute_not_exists(#pair)',
                ExpressionAttributeNames: { '#pair': 'pair' },
              }
            : {
                ConditionExpression: '#version = :expected',
                ExpressionAttributeNames: { '#version': 'version' },
                ExpressionAttributeValues: { ':expected': version },
              }),
        }),
      );
    } catch (error) {
      if (conditionalFailure(error) === 'condition') return { saved: false };
      throw error;
    }
    return { saved: true, state: { ...state, pair: key, version: next, ticks } };
  }
}
