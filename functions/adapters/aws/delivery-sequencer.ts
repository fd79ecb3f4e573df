import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  GetCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { DeliverySequencer, OrderHead, OrderPlace } from '../../ports/webhooks';
import { type DeliveryMessage, deliveryMessageSchema } from '../../schemas/envelope';
import { KeyedTurns } from '../../shared/concurrency';
import { cancellationCodes, conditionalFailure } from './dynamo-errors';

/** Numbering attempts before giving up (each lost one re-reads the key's counter: another instance numbered). */
const MAX_TRIES = 25;
/** The counter's item of a key: number 0 (open deliveries are numbered from 1). */
const COUNTER = 0;

interface PlaceItem {
  readonly order_key: string;
  readonly seq: number;
  readonly event_id: string;
  readonly message: string;
  readonly head_seen_at?: string;
  readonly woken_at?: string;
  readonly woken_attempt?: number;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The per-key queues of ordered endpoints in DynamoDB (table `delivery-order`, C31 `ordering`). Partition
 * `<endpoint_id>#<key>`; item 0 holds the key's next number (`next_seq`); every open delivery has an item at its
 * number holding the message its turn sends. Numbering is one transaction of three writes: the counter moves on
 * only if it still holds the number read, the open item is created, and the delivery record takes its place
 * unless this round numbered it already. So numbers are handed out without gaps, each open item exists from the
 * moment its number does, and a repeated fan-out or replay never numbers a delivery twice. A delivery's turn is
 * a consistent query for a lower open number; closing deletes its item and reads the next one.
 */
export class DynamoDeliverySequencer implements DeliverySequencer {
  /** Next number per key as this instance last wrote it: the common case needs no read before numbering. */
  private readonly next = new Map<string, { value: number; stored: boolean }>();
  private readonly turns = new KeyedTurns();

  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly deliveriesTableName: string,
  ) {}

  async enqueue(input: Parameters<DeliverySequencer['enqueue']>[0]): Promise<number> {
    const partition = `${input.endpointId}#${input.key}`;
    // One numbering per key at a time in this instance: only other instances race for the counter.
    const turn = this.turns.take(partition);
    try {
      await turn.ready;
      return await this.number(partition, input);
    } finally {
      turn.done();
    }
  }

  private async number(
    partition: string,
    input: Parameters<DeliverySequencer['enqueue']>[0],
  ): Promise<number> {
    let expected = this.next.get(partition) ?? (await this.readNext(partition));
    for (let tries = 0; tries < MAX_TRIES; tries += 1) {
      const seq = expected.value;
      const message: DeliveryMessage = { ...input.message, order: { key: input.key, seq } };
      try {
        await this.documents.send(
          new TransactWriteCommand({
            TransactItems: [
              {
                Update: {
                  TableName: this.tableName,
                  Key: { order_key: partition, seq: COUNTER },
                  UpdateExpression: 'SET next_seq = :after, expires_at = :counterExpires',
                  ConditionExpression: expected.stored ? 'next_seq = :seq' : 'attribute_not_exists(next_seq)',
                  ExpressionAttributeValues: {
                    ':after': seq + 1,
                    // The counter lives as long as the key's latest open item; expired, the key's numbers
                    // continue from its last open item (see readNext).
                    ':counterExpires': input.expiresAt,
                    ...(expected.stored ? { ':seq': seq } : {}),
                  },
                },
              },
              {
                Put: {
                  TableName: this.tableName,
                  Item: {
                    order_key: partition,
                    seq,
                    event_id: input.eventId,
                    message: JSON.stringify(message),
                    expires_at: input.expiresAt,
                  },
                  ConditionExpression: 'attribute_not_exists(seq)',
                },
              },
              {
                Update: {
                  TableName: this.deliveriesTableName,
                  Key: { event_id: input.eventId, endpoint_id: input.endpointId },
                  UpdateExpression: 'SET order_key = :key, order_seq = :seq, ordered_by = :round',
                  ConditionExpression:
                    'attribute_exists(event_id) AND (attribute_not_exists(ordered_by) OR ordered_by <> :round)',
                  ExpressionAttributeValues: { ':key': input.key, ':seq': seq, ':round': input.round },
                },
              },
            ],
          }),
        );
        this.next.set(partition, { value: seq + 1, stored: true });
        return seq;
      } catch (error) {
        const codes = cancellationCodes(error);
        if (!codes) throw error;
        if (codes[2] === 'ConditionalCheckFailed') {
          // Numbered by this round already (a repeated fan-out or replay), or the record is gone.
          const numbered = await this.numberedIn(input.eventId, input.endpointId, input.round);
          if (numbered !== undefined) return numbered;
          throw new Error(`no delivery ${input.eventId}/${input.endpointId} to number`);
        }
        if (
          codes[0] === 'ConditionalCheckFailed' ||
          codes[1] === 'ConditionalCheckFailed' ||
          codes.includes('TransactionConflict')
        ) {
          // Another instance numbered first (or was numbering): read the counter again after a short, growing,
          // jittered pause, so racing instances take turns instead of colliding again.
          this.next.delete(partition);
          await sleep(Math.floor(Math.random() * 10 * Math.min(tries + 1, 8)));
          expected = await this.readNext(partition);
          continue;
        }
        throw error;
      }
    }
    throw new Error(`could not number a delivery of ${partition} after ${MAX_TRIES} tries`);
  }

  async isTurn(endpointId: string, place: OrderPlace): Promise<boolean> {
    if (place.seq <= 1) return true;
    const earlier = await this.documents.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'order_key = :key AND seq BETWEEN :first AND :before',
        ExpressionAttributeValues: {
          ':key': `${endpointId}#${place.key}`,
          ':first': 1,
          ':before': place.seq - 1,
        },
        ProjectionExpression: 'seq',
        ConsistentRead: true,
        Limit: 1,
      }),
    );
    return (earlier.Items ?? []).length === 0;
  }

  async close(endpointId: string, place: OrderPlace, eventId: string): Promise<DeliveryMessage | undefined> {
    const partition = `${endpointId}#${place.key}`;
    try {
      // Only the delivery's own item: a stale message of a key numbered afresh never closes another's place.
      await this.documents.send(
        new DeleteCommand({
          TableName: this.tableName,
          Key: { order_key: partition, seq: place.seq },
          ConditionExpression: 'attribute_not_exists(seq) OR event_id = :event',
          ExpressionAttributeValues: { ':event': eventId },
        }),
      );
    } catch (error) {
      if (conditionalFailure(error) === 'condition') return undefined;
      throw error;
    }
    const later = await this.documents.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'order_key = :key AND seq > :seq',
        ExpressionAttributeValues: { ':key': partition, ':seq': place.seq },
        ConsistentRead: true,
        Limit: 1,
      }),
    );
    const [next] = (later.Items ?? []) as PlaceItem[];
    return next ? deliveryMessageSchema.parse(JSON.parse(next.message)) : undefined;
  }

  async heads(limit: number): Promise<{ heads: OrderHead[]; complete: boolean }> {
    const lowest = new Map<string, PlaceItem>();
    let read = 0;
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.documents.send(
        new ScanCommand({
          TableName: this.tableName,
          // Open items only (the counters are number 0).
          FilterExpression: 'seq > :counter',
          ExpressionAttributeValues: { ':counter': COUNTER },
          // Not the message (it may carry a whole event): read only for the few heads woken.
          ProjectionExpression: 'order_key, seq, event_id, head_seen_at, woken_at, woken_attempt',
          Limit: Math.min(1_000, limit - read),
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      read += page.ScannedCount ?? 0;
      for (const item of (page.Items ?? []) as PlaceItem[]) {
        const known = lowest.get(item.order_key);
        if (!known || item.seq < known.seq) lowest.set(item.order_key, item);
      }
      start = page.LastEvaluatedKey;
    } while (start && read < limit);
    const heads = [...lowest.values()].map((item): OrderHead => {
      // `<endpoint_id>#<key>`: endpoint ids (`ep_` ULIDs) hold no `#`, keys may.
      const split = item.order_key.indexOf('#');
      return {
        endpointId: item.order_key.slice(0, split),
        place: { key: item.order_key.slice(split + 1), seq: item.seq },
        eventId: item.event_id,
        ...(item.head_seen_at ? { headSeenAt: item.head_seen_at } : {}),
        ...(item.woken_at && item.woken_attempt !== undefined
          ? { woken: { at: item.woken_at, attempt: item.woken_attempt } }
          : {}),
      };
    });
    return { heads, complete: start === undefined };
  }

  async messageOf(endpointId: string, place: OrderPlace): Promise<DeliveryMessage | undefined> {
    const stored = await this.documents.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { order_key: `${endpointId}#${place.key}`, seq: place.seq },
        ConsistentRead: true,
      }),
    );
    const item = stored.Item as PlaceItem | undefined;
    return item ? deliveryMessageSchema.parse(JSON.parse(item.message)) : undefined;
  }

  async markHeadSeen(endpointId: string, place: OrderPlace, eventId: string, at: string): Promise<void> {
    // Only its first sighting.
    await this.notePlace(endpointId, place, eventId, 'SET head_seen_at = :at', { ':at': at }, 'head_seen_at');
  }

  async markHeadWoken(
    endpointId: string,
    place: OrderPlace,
    eventId: string,
    wake: { readonly at: string; readonly attempt: number },
  ): Promise<void> {
    await this.notePlace(endpointId, place, eventId, 'SET woken_at = :at, woken_attempt = :attempt', {
      ':at': wake.at,
      ':attempt': wake.attempt,
    });
  }

  /**
   * A watchdog's note on a place: only on the delivery's own open item (never re-creating a closed one), and, with
   * `unlessSet`, only while that attribute is absent.
   */
  private async notePlace(
    endpointId: string,
    place: OrderPlace,
    eventId: string,
    update: string,
    values: Record<string, unknown>,
    unlessSet?: string,
  ): Promise<void> {
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { order_key: `${endpointId}#${place.key}`, seq: place.seq },
          UpdateExpression: update,
          ConditionExpression: `event_id = :event${unlessSet ? ` AND attribute_not_exists(${unlessSet})` : ''}`,
          ExpressionAttributeValues: { ...values, ':event': eventId },
        }),
      );
    } catch (error) {
      if (conditionalFailure(error) !== 'condition') throw error;
    }
  }

  /** The key's next number: its counter, or (the counter expired) one past its last open item, or 1. */
  private async readNext(partition: string): Promise<{ value: number; stored: boolean }> {
    const counter = await this.documents.send(
      new GetCommand({
        TableName: this.tableName,
        Key: { order_key: partition, seq: COUNTER },
        ConsistentRead: true,
      }),
    );
    const stored = counter.Item?.next_seq;
    if (typeof stored === 'number') return { value: stored, stored: true };
    const last = await this.documents.send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'order_key = :key AND seq > :counter',
        ExpressionAttributeValues: { ':key': partition, ':counter': COUNTER },
        ProjectionExpression: 'seq',
        ScanIndexForward: false,
        ConsistentRead: true,
        Limit: 1,
      }),
    );
    const [item] = (last.Items ?? []) as PlaceItem[];
    return { value: item ? item.seq + 1 : 1, stored: false };
  }

  private async numberedIn(eventId: string, endpointId: string, round: string): Promise<number | undefined> {
    const record = await this.documents.send(
      new GetCommand({
        TableName: this.deliveriesTableName,
        Key: { event_id: eventId, endpoint_id: endpointId },
        ProjectionExpression: 'order_seq, ordered_by',
        ConsistentRead: true,
      }),
    );
    const item = record.Item as { order_seq?: number; ordered_by?: string } | undefined;
    return item?.ordered_by === round && typeof item.order_seq === 'number' ? item.order_seq : undefined;
  }
}
