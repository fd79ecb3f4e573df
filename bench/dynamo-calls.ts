/**
 * Counts the DynamoDB requests a bench's stack sends, by table and operation, with the capacity DynamoDB (Local)
 * reports as consumed (`ReturnConsumedCapacity: TOTAL`, added to every request while counting): what a delivered
 * event costs in calls and units, the figures `docs/capacity.md` prices.
 */
import type { ConsumedCapacity, DynamoDBClient } from '@aws-sdk/client-dynamodb';

const COUNTED = new Set([
  'GetItem',
  'BatchGetItem',
  'Query',
  'Scan',
  'PutItem',
  'UpdateItem',
  'DeleteItem',
  'BatchWriteItem',
  'TransactWriteItems',
  'TransactGetItems',
]);

export interface CallCount {
  calls: number;
  readUnits: number;
  writeUnits: number;
}

export class DynamoCallCounter {
  readonly counts = new Map<string, CallCount>();
  #counting = false;
  #tableIds = new Map<string, string>();

  /** Names the tables by their ids (`deliveries`, not the physical name). */
  mapTables(tableNames: Readonly<Record<string, string>>): void {
    this.#tableIds = new Map(Object.entries(tableNames).map(([id, name]) => [name, id]));
  }

  start(): void {
    this.counts.clear();
    this.#counting = true;
  }

  stop(): void {
    this.#counting = false;
  }

  instrument(client: DynamoDBClient): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const operation = String(context.commandName ?? '').replace(/Command$/, '');
        if (!this.#counting || !COUNTED.has(operation)) return next(args);
        const input = args.input as Record<string, unknown>;
        input.ReturnConsumedCapacity = 'TOTAL';
        const result = await next(args);
        const consumed = (result.output as { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] })
          .ConsumedCapacity;
        const tables = [consumed ?? []].flat();
        const table =
          typeof input.TableName === 'string'
            ? (this.#tableIds.get(input.TableName) ?? input.TableName)
            : tables.map((entry) => this.#tableIds.get(entry.TableName ?? '') ?? '?').join('+');
        const key = `${table} ${operation}`;
        const count = this.counts.get(key) ?? { calls: 0, readUnits: 0, writeUnits: 0 };
        count.calls += 1;
        for (const entry of tables) {
          // DynamoDB reports read and write units apart; DynamoDB Local may give only the total.
          const read = entry.ReadCapacityUnits;
          const write = entry.WriteCapacityUnits;
          if (read !== undefined || write !== undefined) {
            count.readUnits += read ?? 0;
            count.writeUnits += write ?? 0;
          } else if (/Get|Query|Scan/.test(operation)) count.readUnits += entry.CapacityUnits ?? 0;
          else count.writeUnits += entry.CapacityUnits ?? 0;
        }
        this.counts.set(key, count);
        return result;
      },
      { step: 'initialize', priority: 'low', name: 'dynamoCallCounter' },
    );
  }

  /** Every table and operation's calls and units per `per` (a delivered event), busiest first, and the totals. */
  perUnit(per: number): {
    rows: { key: string; calls: number; read: number; write: number }[];
    total: CallCount;
  } {
    const rows = [...this.counts.entries()]
      .map(([key, count]) => ({
        key,
        calls: count.calls / per,
        read: count.readUnits / per,
        write: count.writeUnits / per,
      }))
      .sort((a, b) => b.calls - a.calls);
    const total = rows.reduce(
      (sum, row) => ({
        calls: sum.calls + row.calls,
        readUnits: sum.readUnits + row.read,
        writeUnits: sum.writeUnits + row.write,
      }),
      { calls: 0, readUnits: 0, writeUnits: 0 },
    );
    return { rows, total };
  }
}
