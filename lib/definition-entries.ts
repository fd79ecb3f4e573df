import {
  BUCKETS,
  type BucketDefinition,
  type BucketId,
  KEYS,
  type KeyDefinition,
  type KeyId,
  QUEUES,
  type QueueDefinition,
  type QueueId,
  type ServiceTableId,
  serviceTables,
  TABLES,
  type TableDefinition,
  type TableId,
} from '../functions/definitions';

/**
 * Typed views over `functions/definitions`: the CDK iterates these, so a table, queue, bucket or key added to
 * the definitions is deployed without touching `lib/`.
 */
const entriesOf = <Id extends string, Definition>(
  record: Readonly<Record<Id, Definition>>,
): [Id, Definition][] => Object.entries(record) as [Id, Definition][];

export type { ServiceTableId };

/** `serviceTables()` with the `TABLES` key of each definition (the id the composition root uses). */
export const serviceTableEntries = (): [ServiceTableId, TableDefinition][] => {
  const service = new Set<TableDefinition>(serviceTables());
  return entriesOf<TableId, TableDefinition>(TABLES).filter(([, definition]) => service.has(definition)) as [
    ServiceTableId,
    TableDefinition,
  ][];
};

export const queueEntries = (): [QueueId, QueueDefinition][] => entriesOf<QueueId, QueueDefinition>(QUEUES);

export const bucketEntries = (): [BucketId, BucketDefinition][] =>
  entriesOf<BucketId, BucketDefinition>(BUCKETS);

export const keyEntries = (): [KeyId, KeyDefinition][] => entriesOf<KeyId, KeyDefinition>(KEYS);

/** The `QUEUES` key of the queue whose definition `id` is given (dead-letter references use definition ids). */
export const queueIdOf = (definitionId: string): QueueId => {
  const entry = queueEntries().find(([, definition]) => definition.id === definitionId);
  if (!entry) throw new Error(`unknown queue definition: ${definitionId}`);
  return entry[0];
};

/** A record with the same keys and each value mapped (keeps the key type, unlike `Object.fromEntries`). */
export const mapRecord = <Key extends string, Value, Mapped>(
  record: Readonly<Record<Key, Value>>,
  map: (value: Value, key: Key) => Mapped,
): Record<Key, Mapped> =>
  Object.fromEntries(entriesOf<Key, Value>(record).map(([key, value]) => [key, map(value, key)])) as Record<
    Key,
    Mapped
  >;
