/**
 * The partition load model (issue "Scale past one partition"): an instrumented DynamoDB client records, for every
 * request the real code paths send, the capacity DynamoDB consumed (`ReturnConsumedCapacity: INDEXES`, which
 * DynamoDB Local answers like DynamoDB) and the partition key each unit landed on — the base table's key from the
 * request, an index's key from the item as stored before and after a write (read with a client of its own, so the
 * reads are not counted). Counts are kept per phase (one kind of operation: a price read, a quote…); scaled to a
 * goal rate per phase they give each key's read and write units per second, compared with DynamoDB's
 * per-partition limits (3 000 read units and 1 000 write units per second).
 */
import {
  type AttributeValue,
  type ConsumedCapacity,
  type DynamoDBClient,
  GetItemCommand,
} from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { TABLES, type TableId } from '../functions/definitions';

/** DynamoDB's per-partition throughput limits (base table and each GSI partition). */
export const PARTITION_LIMITS = { read: 3_000, write: 1_000 } as const;

export type UnitKind = keyof typeof PARTITION_LIMITS;

/** Where units land: a table or one of its indexes, and one partition key value. */
export interface PartitionKeyRef {
  readonly table: TableId;
  readonly index?: string;
  readonly key: string;
}

export const keyName = (ref: PartitionKeyRef): string =>
  `${ref.table}${ref.index ? `/${ref.index}` : ''} ${ref.key}`;

/**
 * Units consumed per key and kind during one phase, and how many operations the phase counted. `halves` says in
 * which half of the phase's operations a key was touched (bit 1: the first, bit 2: the second): a key touched in
 * both is shared by operations (a pointer, a status, a day, an endpoint) and its load grows with the rate; a key
 * of one half only belongs to one entity (a quote, an event, an idempotency key).
 */
export interface PhaseUsage {
  operations: number;
  readonly units: Map<string, { ref: PartitionKeyRef; read: number; write: number; halves: number }>;
}

type Item = Record<string, unknown>;
type Input = Record<string, unknown>;

const READS = new Set(['GetItem', 'BatchGetItem', 'Query', 'Scan', 'TransactGetItems']);
const WRITES = new Set(['PutItem', 'UpdateItem', 'DeleteItem', 'BatchWriteItem', 'TransactWriteItems']);

interface TableShape {
  readonly id: TableId;
  readonly partitionKey: string;
  readonly sortKey?: string;
  readonly indexes: ReadonlyMap<string, string>;
}

const shapeOf = (id: TableId): TableShape => {
  const table = TABLES[id] as (typeof TABLES)[TableId] & {
    readonly sortKey?: { readonly name: string };
    readonly globalSecondaryIndexes?: readonly {
      readonly name: string;
      readonly partitionKey: { name: string };
    }[];
  };
  return {
    id,
    partitionKey: table.partitionKey.name,
    ...(table.sortKey ? { sortKey: table.sortKey.name } : {}),
    indexes: new Map(
      (table.globalSecondaryIndexes ?? []).map((index) => [index.name, index.partitionKey.name]),
    ),
  };
};

const text = (value: unknown): string => (value === undefined ? '(none)' : String(value));

const ATTRIBUTE_TYPES = new Set(['S', 'N', 'B', 'SS', 'NS', 'BS', 'M', 'L', 'NULL', 'BOOL']);

/**
 * A record as plain values: requests reach the middleware in AttributeValue form from the base client and in
 * plain form from the document client (which marshals just before serializing).
 */
const plainOf = (record: unknown): Item => {
  if (typeof record !== 'object' || record === null) return {};
  const values = Object.values(record);
  const marshalled =
    values.length > 0 &&
    values.every(
      (value) =>
        typeof value === 'object' &&
        value !== null &&
        Object.keys(value).length === 1 &&
        ATTRIBUTE_TYPES.has(Object.keys(value)[0] ?? ''),
    );
  return marshalled ? unmarshall(record as Record<string, AttributeValue>) : (record as Item);
};

/** The partition key value a query's key condition names (`#pk = :pk`, with its names and values). */
const queriedKey = (input: Input, attribute: string): string => {
  const condition = String(input.KeyConditionExpression ?? '');
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = plainOf(input.ExpressionAttributeValues ?? {});
  for (const [, name = '', placeholder = ''] of condition.matchAll(
    /(#?[A-Za-z0-9_]+)\s*=\s*(:[A-Za-z0-9_]+)/g,
  )) {
    if ((names[name] ?? name) === attribute) return text(values[placeholder]);
  }
  return '(unknown)';
};

/**
 * Records the consumed capacity of every request sent through `client` into the current phase (none: nothing is
 * recorded). `raw` is a client of the same engine, uninstrumented, for the reads that find an index's keys.
 */
export class PartitionRecorder {
  readonly phases = new Map<string, PhaseUsage>();
  /** Requests whose units could not be attributed (the model's own failures, never the request's). */
  readonly errors: string[] = [];
  #phase: PhaseUsage | undefined;
  #half = 1;
  #tables = new Map<string, TableShape>();

  constructor(private readonly raw: DynamoDBClient) {}

  /**
   * The physical names of the tables (the stack's, known once it has provisioned them). Only the service's: the
   * local twins' own tables (stream checkpoints, schedules) do not exist in AWS.
   */
  mapTables(tableNames: Readonly<Record<TableId, string>>): void {
    this.#tables = new Map(
      (Object.keys(tableNames) as TableId[])
        .filter((id) => TABLES[id].scope === 'service')
        .map((id) => [tableNames[id], shapeOf(id)] as const),
    );
  }

  /** Starts counting into `name` (a new phase); `stop` ends it. */
  start(name: string): PhaseUsage {
    const usage: PhaseUsage = { operations: 0, units: new Map() };
    this.phases.set(name, usage);
    this.#phase = usage;
    this.#half = 1;
    return usage;
  }

  /** The phase's second half of operations begins (once the first half's work has ended). */
  secondHalf(): void {
    this.#half = 2;
  }

  stop(): void {
    this.#phase = undefined;
  }

  /** Adds units on a key to the current phase (also the planted hot key of the model's test). */
  add(ref: PartitionKeyRef, kind: UnitKind, units: number): void {
    const phase = this.#phase;
    if (!phase || units <= 0) return;
    const name = keyName(ref);
    const entry = phase.units.get(name) ?? { ref, read: 0, write: 0, halves: 0 };
    entry[kind] += units;
    entry.halves |= this.#half;
    phase.units.set(name, entry);
  }

  /** Installs the recording middleware on `client`. */
  instrument(client: DynamoDBClient): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const operation = String(context.commandName ?? '').replace(/Command$/, '');
        const input = args.input as Input;
        if (!this.#phase || !(READS.has(operation) || WRITES.has(operation))) return next(args);
        input.ReturnConsumedCapacity = 'INDEXES';
        let targets: ReturnType<PartitionRecorder['targetsOf']> = [];
        let before: (Item | undefined)[] = [];
        try {
          targets = this.targetsOf(operation, input);
          before = WRITES.has(operation) ? await this.storedIndexKeys(targets) : [];
        } catch (error) {
          this.errors.push(`${operation} (before): ${(error as Error).message}`);
        }
        const result = await next(args);
        try {
          const after = WRITES.has(operation) ? await this.storedIndexKeys(targets) : [];
          const consumed = (result.output as { ConsumedCapacity?: ConsumedCapacity | ConsumedCapacity[] })
            .ConsumedCapacity;
          this.attribute(operation, input, targets, [consumed ?? []].flat(), before, after);
        } catch (error) {
          // A measurement must never fail the request it measures: the error is kept for the report.
          this.errors.push(`${operation}: ${(error as Error).message}`);
        }
        return result;
      },
      // After the document client's marshalling (same step, normal priority): inputs and outputs in AttributeValue form.
      { step: 'initialize', priority: 'low', name: 'partitionRecorder' },
    );
  }

  /** The items a request touches, per table: their primary keys (as sent) and the item written, if any. */
  private targetsOf(operation: string, input: Input): { table: TableShape; key: Item; item?: Item }[] {
    const shapeNamed = (name: unknown) => this.#tables.get(String(name));
    const keyOf = (shape: TableShape, source: Item): Item =>
      Object.fromEntries(
        [shape.partitionKey, shape.sortKey]
          .filter((name): name is string => name !== undefined && source[name] !== undefined)
          .map((name) => [name, source[name]]),
      );
    const one = (tableName: unknown, source: unknown, written?: unknown) => {
      const shape = shapeNamed(tableName);
      if (!shape || typeof source !== 'object' || source === null) return [];
      return [
        { table: shape, key: keyOf(shape, plainOf(source)), ...(written ? { item: plainOf(written) } : {}) },
      ];
    };
    switch (operation) {
      case 'GetItem':
      case 'UpdateItem':
      case 'DeleteItem':
        return one(input.TableName, input.Key);
      case 'PutItem':
        return one(input.TableName, input.Item, input.Item);
      case 'BatchGetItem':
        return Object.entries((input.RequestItems ?? {}) as Record<string, { Keys?: unknown[] }>).flatMap(
          ([table, request]) => (request.Keys ?? []).flatMap((key) => one(table, key)),
        );
      case 'BatchWriteItem':
        return Object.entries((input.RequestItems ?? {}) as Record<string, Record<string, Item>[]>).flatMap(
          ([table, requests]) =>
            requests.flatMap((request) => {
              const put = request.PutRequest as { Item?: unknown } | undefined;
              const remove = request.DeleteRequest as { Key?: unknown } | undefined;
              return put ? one(table, put.Item, put.Item) : one(table, remove?.Key);
            }),
        );
      case 'TransactWriteItems':
      case 'TransactGetItems':
        return ((input.TransactItems ?? []) as Record<string, Record<string, unknown>>[]).flatMap((entry) => {
          const [kind, request] = Object.entries(entry)[0] ?? [];
          if (!request) return [];
          return kind === 'Put'
            ? one(request.TableName, request.Item, request.Item)
            : one(request.TableName, request.Key);
        });
      default:
        return [];
    }
  }

  /** For writes on tables with indexes: each target's index partition keys as stored (before or after). */
  private async storedIndexKeys(
    targets: readonly { table: TableShape; key: Item }[],
  ): Promise<(Item | undefined)[]> {
    return Promise.all(
      targets.map(async ({ table, key }) => {
        if (table.indexes.size === 0 || Object.keys(key).length === 0) return undefined;
        const stored = await this.raw.send(
          new GetItemCommand({
            TableName: [...this.#tables].find(([, shape]) => shape === table)?.[0],
            Key: marshall(key),
            ConsistentRead: true,
          }),
        );
        return stored.Item ? unmarshall(stored.Item) : undefined;
      }),
    );
  }

  private attribute(
    operation: string,
    input: Input,
    targets: readonly { table: TableShape; key: Item; item?: Item }[],
    consumed: readonly ConsumedCapacity[],
    before: readonly (Item | undefined)[],
    after: readonly (Item | undefined)[],
  ): void {
    const kind: UnitKind = READS.has(operation) ? 'read' : 'write';
    for (const capacity of consumed) {
      const table = this.#tables.get(String(capacity.TableName));
      if (!table) continue;
      const mine = targets
        .map((target, position) => ({ ...target, position }))
        .filter((target) => target.table === table);
      const tableUnits =
        capacity.Table?.CapacityUnits ??
        (capacity.GlobalSecondaryIndexes ? 0 : (capacity.CapacityUnits ?? 0));
      // The base table: a query's partition, a scan's whole (small) table, else each item's key, evenly.
      if (operation === 'Query' && !input.IndexName) {
        this.add({ table: table.id, key: queriedKey(input, table.partitionKey) }, kind, tableUnits);
      } else if (operation === 'Scan') {
        this.add(
          { table: table.id, ...(input.IndexName ? { index: String(input.IndexName) } : {}), key: '(scan)' },
          kind,
          capacity.CapacityUnits ?? 0,
        );
      } else if (mine.length > 0) {
        for (const target of mine) {
          const key = target.key[table.partitionKey];
          this.add({ table: table.id, key: text(key) }, kind, tableUnits / mine.length);
        }
      }
      for (const [index, units] of Object.entries(capacity.GlobalSecondaryIndexes ?? {})) {
        const indexKey = table.indexes.get(index);
        if (!indexKey) continue;
        const used = units.CapacityUnits ?? 0;
        if (operation === 'Query') {
          this.add({ table: table.id, index, key: queriedKey(input, indexKey) }, kind, used);
          continue;
        }
        // A write's index units go to the index key the item had and the one it has now (a move is a delete
        // there and a put here), evenly over the items of the request.
        const keys = mine.flatMap((target) => {
          const values = new Set(
            [before[target.position], after[target.position] ?? target.item]
              .map((item) => item?.[indexKey])
              .filter((value) => value !== undefined)
              .map(text),
          );
          return [...values].map((value) => ({ value, share: 1 / values.size / mine.length }));
        });
        for (const { value, share } of keys)
          this.add({ table: table.id, index, key: value }, kind, used * share);
      }
    }
  }
}

/** A key named `<family>#<n>`: one shard of a sharded key. */
const SHARD_MEMBER = /^(.*)#(\d+)$/;

/** One key's load at the goal rates. */
export interface KeyLoad {
  readonly name: string;
  readonly ref: PartitionKeyRef;
  /** Units per second at the goals, and their share of the per-partition limit (1 = 100 %). */
  readonly readPerSecond: number;
  readonly writePerSecond: number;
  readonly share: number;
  /** The phase that puts the most load on it. */
  readonly mostFrom: string;
  /** A key of one entity (touched in one half of its phase only): its load is its own, whatever the rate. */
  readonly perEntity: boolean;
}

/**
 * How many keys a sharded family (`<prefix>#<n>`) of a table or index has, when the service fixes it; undefined
 * for a family of unknown size.
 */
export type FamilySizes = (ref: PartitionKeyRef) => number | undefined;

/**
 * Each key's units per second when every phase runs at its goal rate (operations per second), all together. A
 * shared key carries units per operation × the rate, summed over phases. A key of one entity carries what its
 * entity consumed in the phase, counted as if within one second (an event's deliveries, a quote's commit: the
 * worst case). The members of a sharded family (names ending `#<n>`) carry its mean over the family's declared
 * size (`familySizes`), else over the members seen. Hottest first.
 */
export const loadAtGoals = (
  phases: ReadonlyMap<string, PhaseUsage>,
  goals: Readonly<Record<string, number>>,
  familySizes: FamilySizes = () => undefined,
): KeyLoad[] => {
  const keys = new Map<
    string,
    { ref: PartitionKeyRef; read: number; write: number; by: Map<string, number>; perEntity: boolean }
  >();
  for (const [phase, usage] of phases) {
    const rate = goals[phase];
    if (rate === undefined || usage.operations === 0) continue;
    for (const [name, units] of usage.units) {
      // A member of a sharded family is shared by the family's operations, whichever half hashed to it.
      const shared = units.halves === 3 || SHARD_MEMBER.test(name);
      const entry = keys.get(name) ?? {
        ref: units.ref,
        read: 0,
        write: 0,
        by: new Map(),
        perEntity: !shared,
      };
      const scale = shared ? rate / usage.operations : 1;
      const read = units.read * scale;
      const write = units.write * scale;
      entry.read += read;
      entry.write += write;
      entry.perEntity &&= !shared;
      entry.by.set(
        phase,
        (entry.by.get(phase) ?? 0) + read / PARTITION_LIMITS.read + write / PARTITION_LIMITS.write,
      );
      keys.set(name, entry);
    }
  }
  // A sharded family (`yes#0` … `yes#15`, `pointer#0` …): its members share its load evenly at the goal rates,
  // whatever the few operations of a run happened to hash where. Reported as one row per family.
  // The family's size: declared, else the members seen or the highest shard number seen + 1 (a short run misses
  // some members, and possibly the highest: a family of unknown size may look smaller, and hotter, than it is).
  const families = new Map<string, { members: string[]; size: number; read: number; write: number }>();
  for (const [name, entry] of keys) {
    const match = name.match(SHARD_MEMBER);
    if (!match?.[1]) continue;
    const group = families.get(match[1]) ?? { members: [], size: 0, read: 0, write: 0 };
    group.members.push(name);
    group.size = Math.max(
      group.size,
      group.members.length,
      Number(match[2]) + 1,
      familySizes(entry.ref) ?? 0,
    );
    group.read += entry.read;
    group.write += entry.write;
    families.set(match[1], group);
  }
  for (const [family, group] of families) {
    if (group.size < 2) continue;
    const first = keys.get(group.members[0] as string);
    if (!first) continue;
    for (const member of group.members) keys.delete(member);
    keys.set(`${family}#* (${group.size} keys)`, {
      ...first,
      read: group.read / group.size,
      write: group.write / group.size,
    });
  }
  return [...keys]
    .map(([name, entry]) => ({
      name,
      ref: entry.ref,
      readPerSecond: entry.read,
      writePerSecond: entry.write,
      share: Math.max(entry.read / PARTITION_LIMITS.read, entry.write / PARTITION_LIMITS.write),
      mostFrom: [...entry.by].sort((left, right) => right[1] - left[1])[0]?.[0] ?? '',
      perEntity: entry.perEntity,
    }))
    .sort((left, right) => right.share - left.share);
};

/** The keys over `ceiling` (a share of the per-partition limit) at the goals. */
export const overCeiling = (loads: readonly KeyLoad[], ceiling = 0.5): KeyLoad[] =>
  loads.filter((load) => load.share > ceiling);
