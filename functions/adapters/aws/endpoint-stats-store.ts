import { type DynamoDBDocumentClient, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  type AttemptTally,
  emptyTally,
  STATS_SHARDS,
  STATUS_CLASSES,
  type StatusClass,
  statsKey,
} from '../../domain/webhooks/endpoint-stats';
import type { EndpointStatsStore } from '../../ports/webhooks';

const classAttribute = (statusClass: StatusClass): string => `c_${statusClass}`;
const latencyAttribute = (index: number): string => `l_${index}`;

/**
 * Stats slots in DynamoDB (table `endpoint-stats`): one item per endpoint shard (`<endpoint_id>#<0…7>`, a write to
 * one at random) and 5-minute slot, counters `c_<class>` and `l_<bucket>` grown with `ADD` (so concurrent deliver
 * instances never lose a count), expiring by TTL. A read queries the shards and returns their slots.
 */
export class DynamoEndpointStatsStore implements EndpointStatsStore {
  constructor(
    private readonly documents: DynamoDBDocumentClient,
    private readonly tableName: string,
    private readonly random: () => number = Math.random,
  ) {}

  async add(endpointId: string, slot: string, tally: AttemptTally, expiresAt: number): Promise<void> {
    const additions: [string, number][] = [
      ...STATUS_CLASSES.map((statusClass): [string, number] => [
        classAttribute(statusClass),
        tally.by_class[statusClass],
      ]),
      ...tally.latency.map((count, index): [string, number] => [latencyAttribute(index), count]),
    ].filter(([, count]) => count > 0);
    if (additions.length === 0) return;
    await this.documents.send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { endpoint_id: statsKey(endpointId, Math.floor(this.random() * STATS_SHARDS)), slot },
        UpdateExpression: `SET expires_at = :expires ADD ${additions.map((_, index) => `#a${index} :a${index}`).join(', ')}`,
        ExpressionAttributeNames: Object.fromEntries(additions.map(([name], index) => [`#a${index}`, name])),
        ExpressionAttributeValues: {
          ':expires': expiresAt,
          ...Object.fromEntries(additions.map(([, count], index) => [`:a${index}`, count])),
        },
      }),
    );
  }

  async read(endpointId: string, fromSlot: string, toSlot: string): Promise<AttemptTally[]> {
    const shards = await Promise.all(
      Array.from({ length: STATS_SHARDS }, (_, shard) =>
        this.readShard(statsKey(endpointId, shard), fromSlot, toSlot),
      ),
    );
    return shards.flat();
  }

  private async readShard(key: string, fromSlot: string, toSlot: string): Promise<AttemptTally[]> {
    const tallies: AttemptTally[] = [];
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.documents.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'endpoint_id = :id AND #slot BETWEEN :from AND :to',
          ExpressionAttributeNames: { '#slot': 'slot' },
          ExpressionAttributeValues: { ':id': key, ':from': fromSlot, ':to': toSlot },
          ...(start ? { ExclusiveStartKey: start } : {}),
        }),
      );
      for (const item of page.Items ?? []) {
        const count = (name: string): number => (typeof item[name] === 'number' ? (item[name] as number) : 0);
        const empty = emptyTally();
        tallies.push({
          by_class: Object.fromEntries(
            STATUS_CLASSES.map((statusClass) => [statusClass, count(classAttribute(statusClass))]),
          ) as Record<StatusClass, number>,
          latency: empty.latency.map((_, index) => count(latencyAttribute(index))),
        });
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return tallies;
  }
}
