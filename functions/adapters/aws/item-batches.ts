import {
  BatchGetCommand,
  type BatchGetCommandInput,
  BatchWriteCommand,
  type BatchWriteCommandInput,
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
} from '@aws-sdk/lib-dynamodb';

/** The primary key of an item: its partition key and, for tables with one, its sort key. */
export type ItemKey = Readonly<Record<string, string | number>>;
export type Item = Record<string, unknown>;

interface Waiting<Output> {
  readonly table: string;
  readonly key: ItemKey;
  /** The table and key values: the same for a requested key and for the item that answers it. */
  readonly id: string;
  readonly resolve: (output: Output) => void;
  readonly reject: (error: unknown) => void;
}

interface Read extends Waiting<Item | undefined> {
  readonly consistent: boolean;
}

interface Write extends Waiting<void> {
  readonly item: Item;
}

/** BatchGetItem takes at most 100 keys, BatchWriteItem 25 items; what is left unprocessed is retried. */
const READ_BATCH = 100;
const WRITE_BATCH = 25;
const MAX_ROUNDS = 8;

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

const keyNames = (key: ItemKey): string[] => Object.keys(key).sort();

const idOf = (table: string, names: readonly string[], item: Readonly<Record<string, unknown>>): string =>
  JSON.stringify([table, ...names.map((name) => item[name])]);

/** The first waiting calls, up to `limit` distinct keys (a key asked for twice counts once). */
const takeBatch = <Call extends { readonly id: string }>(queue: Call[], limit: number): Call[] => {
  const ids = new Set<string>();
  let taken = 0;
  for (const call of queue) {
    if (!ids.has(call.id) && ids.size === limit) break;
    ids.add(call.id);
    taken += 1;
  }
  return queue.splice(0, taken);
};

/**
 * Single-item reads and writes of one DynamoDB client, grouped into batch calls, with one read call and one
 * write call in flight at a time. Every read asked for before a read call can leave (in the same turn of the
 * event loop, or while the previous read call is in flight) goes out in the next `BatchGetItem`, across tables,
 * a key asked for twice being read once; writes likewise go out in the next `BatchWriteItem` (a key written
 * twice: the last write wins). Alone, a read is one `GetItem` and a write one `PutItem`. Under load one round
 * trip carries many requests' reads or writes; idle, nothing waits beyond the current turn of the event loop.
 *
 * A read joins only a call that has not been sent yet, so a consistent read sees whatever was written before it
 * was asked for, as if it had gone out alone: the catalog pointer read beside the price entries still
 * guarantees that a read after a publication never shows the old version. A table gets `ConsistentRead` when
 * any of its reads in the batch asks for it (a stronger read for the others, never a weaker one).
 */
export class ItemBatches {
  private readonly reads: Read[] = [];
  private readonly writes: Write[] = [];
  private reading = false;
  private writing = false;
  private scheduled = false;

  constructor(private readonly documents: DynamoDBDocumentClient) {}

  get(
    table: string,
    key: ItemKey,
    options: { readonly consistent?: boolean } = {},
  ): Promise<Item | undefined> {
    return new Promise((resolve, reject) => {
      const id = idOf(table, keyNames(key), key);
      this.reads.push({ table, key, id, consistent: options.consistent ?? false, resolve, reject });
      this.schedule();
    });
  }

  /** Writes a whole item (its key attributes included) as a put. */
  put(table: string, key: ItemKey, item: Item): Promise<void> {
    return new Promise((resolve, reject) => {
      this.writes.push({ table, key, id: idOf(table, keyNames(key), key), item, resolve, reject });
      this.schedule();
    });
  }

  /** Calls leave once the current turn of the event loop is over, so that each carries its peers. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.dispatch();
    });
  }

  private dispatch(): void {
    const next = (): void => {
      if (this.reads.length > 0 || this.writes.length > 0) this.schedule();
    };
    if (!this.reading && this.reads.length > 0) {
      this.reading = true;
      this.settle<Item | undefined, Read>(takeBatch(this.reads, READ_BATCH), (batch) =>
        this.readAll(batch),
      ).finally(() => {
        this.reading = false;
        next();
      });
    }
    if (!this.writing && this.writes.length > 0) {
      this.writing = true;
      this.settle<void, Write>(takeBatch(this.writes, WRITE_BATCH), (batch) => this.writeAll(batch)).finally(
        () => {
          this.writing = false;
          next();
        },
      );
    }
  }

  private async settle<Output, Call extends Waiting<Output>>(
    batch: readonly Call[],
    send: (batch: readonly Call[]) => Promise<(call: Call) => Output>,
  ): Promise<void> {
    try {
      const outputOf = await send(batch);
      for (const call of batch) call.resolve(outputOf(call));
    } catch (error) {
      for (const call of batch) call.reject(error);
    }
  }

  private async readAll(batch: readonly Read[]): Promise<(read: Read) => Item | undefined> {
    const first = batch[0];
    if (first && batch.every((read) => read.id === first.id)) {
      const result = await this.documents.send(
        new GetCommand({
          TableName: first.table,
          Key: first.key,
          ...(batch.some((read) => read.consistent) ? { ConsistentRead: true } : {}),
        }),
      );
      return () => result.Item;
    }
    const tables = new Map<string, { names: string[]; keys: Map<string, ItemKey>; consistent: boolean }>();
    for (const read of batch) {
      let table = tables.get(read.table);
      if (!table) {
        table = { names: keyNames(read.key), keys: new Map(), consistent: false };
        tables.set(read.table, table);
      }
      if (!table.keys.has(read.id)) table.keys.set(read.id, read.key);
      table.consistent ||= read.consistent;
    }
    let pending: NonNullable<BatchGetCommandInput['RequestItems']> = {};
    for (const [name, table] of tables)
      pending[name] = {
        Keys: [...table.keys.values()],
        ...(table.consistent ? { ConsistentRead: true } : {}),
      };
    const found = new Map<string, Item>();
    for (let round = 0; Object.keys(pending).length > 0; round += 1) {
      if (round >= MAX_ROUNDS) throw new Error('batch read: keys left unprocessed after retries');
      if (round > 0) await pause(25 * 2 ** round);
      const result = await this.documents.send(new BatchGetCommand({ RequestItems: pending }));
      for (const [name, items] of Object.entries(result.Responses ?? {})) {
        const names = tables.get(name)?.names;
        if (names) for (const item of items) found.set(idOf(name, names, item), item);
      }
      pending = result.UnprocessedKeys ?? {};
    }
    return (read) => found.get(read.id);
  }

  private async writeAll(batch: readonly Write[]): Promise<() => void> {
    // One put per key, the last one asked for (DynamoDB refuses a batch that names a key twice).
    const last = new Map(batch.map((write) => [write.id, write]));
    const only = last.size === 1 ? batch.at(-1) : undefined;
    if (only) {
      await this.documents.send(new PutCommand({ TableName: only.table, Item: only.item }));
      return () => undefined;
    }
    let pending: NonNullable<BatchWriteCommandInput['RequestItems']> = {};
    for (const write of last.values()) {
      const requests = pending[write.table] ?? [];
      requests.push({ PutRequest: { Item: write.item } });
      pending[write.table] = requests;
    }
    for (let round = 0; Object.keys(pending).length > 0; round += 1) {
      if (round >= MAX_ROUNDS) throw new Error('batch write: items left unprocessed after retries');
      if (round > 0) await pause(25 * 2 ** round);
      const result = await this.documents.send(new BatchWriteCommand({ RequestItems: pending }));
      pending = result.UnprocessedItems ?? {};
    }
    return () => undefined;
  }
}

const byClient = new WeakMap<DynamoDBDocumentClient, ItemBatches>();

/**
 * The grouped calls of a client: every adapter built on the same client shares them, so that reads of
 * different tables (the catalog pointer, the price projection) travel in one `BatchGetItem`.
 */
export const itemBatchesOf = (documents: DynamoDBDocumentClient): ItemBatches => {
  let batches = byClient.get(documents);
  if (!batches) {
    batches = new ItemBatches(documents);
    byClient.set(documents, batches);
  }
  return batches;
};
