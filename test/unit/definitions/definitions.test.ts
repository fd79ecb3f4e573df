import { existsSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FUNCTION_FACTORIES } from '../../../functions/composition/functions';
import {
  API_GATEWAY_TIMEOUT_SECONDS,
  BUCKETS,
  type BucketDefinition,
  EVENT_SOURCE_MAPPINGS,
  type EventSourceMappingDefinition,
  FUNCTIONS,
  type FunctionDefinition,
  QUEUES,
  type QueueDefinition,
  queueById,
  ROUTES,
  type RouteDefinition,
  routeKey,
  TABLES,
  type TableDefinition,
  VISIBILITY_TIMEOUT_FACTOR,
  visibilityTimeoutSeconds,
} from '../../../functions/definitions';

const repositoryRoot = path.resolve(import.meta.dirname, '../../..');
const queues: readonly [string, QueueDefinition][] = Object.entries(QUEUES);
const tables: readonly [string, TableDefinition][] = Object.entries(TABLES);
const functions: readonly [string, FunctionDefinition][] = Object.entries(FUNCTIONS);
const mappings: readonly EventSourceMappingDefinition[] = Object.values(EVENT_SOURCE_MAPPINGS);
const routes: readonly RouteDefinition[] = ROUTES;

const hasKey = <T extends object>(record: T, key: PropertyKey): key is keyof T => Object.hasOwn(record, key);

describe('queues', () => {
  it("every work queue's dead-letter queue exists and is terminal", () => {
    for (const [, queue] of queues.filter(([, candidate]) => candidate.deadLetter !== undefined)) {
      const deadLetter = queueById(queue.deadLetter?.queue ?? '');
      expect(deadLetter.terminal, `${queue.id} → ${deadLetter.id}`).toBe(true);
      expect(deadLetter.deadLetter).toBeUndefined();
    }
  });

  it('every queue is either a work queue with a dead-letter queue or terminal', () => {
    for (const [, queue] of queues) {
      expect(queue.terminal === true || queue.deadLetter !== undefined, queue.id).toBe(true);
    }
  });

  it('queue ids and environment variables are unique', () => {
    expect(new Set(queues.map(([, queue]) => queue.id)).size).toBe(queues.length);
    expect(new Set(queues.map(([, queue]) => queue.envVar)).size).toBe(queues.length);
  });

  it(`visibility timeout covers ${VISIBILITY_TIMEOUT_FACTOR} × the consumer's timeout`, () => {
    for (const mapping of mappings) {
      if (mapping.kind !== 'sqs') continue;
      const consumer = FUNCTIONS[mapping.function];
      expect(visibilityTimeoutSeconds(mapping.queue), mapping.id).toBeGreaterThanOrEqual(
        6 * consumer.timeoutSeconds,
      );
    }
  });
});

describe('function timeouts', () => {
  it('no function behind a route runs longer than API Gateway waits for it', () => {
    const routed = new Set(ROUTES.map((route: RouteDefinition) => route.function));
    expect(routed.size).toBeGreaterThan(0);
    for (const functionId of routed) {
      expect(FUNCTIONS[functionId].timeoutSeconds, functionId).toBeLessThanOrEqual(
        API_GATEWAY_TIMEOUT_SECONDS,
      );
    }
  });
});

describe('event source mappings', () => {
  it('every mapping references an existing function', () => {
    for (const mapping of mappings) expect(hasKey(FUNCTIONS, mapping.function), mapping.id).toBe(true);
  });

  it('every queue mapping reads an existing queue', () => {
    for (const mapping of mappings) {
      if (mapping.kind === 'sqs') expect(hasKey(QUEUES, mapping.queue), mapping.id).toBe(true);
    }
  });

  it('every stream mapping reads an existing table that has a stream, and its on-failure queue is terminal', () => {
    for (const mapping of mappings) {
      if (mapping.kind !== 'dynamodb-stream') continue;
      expect(hasKey(TABLES, mapping.table), mapping.id).toBe(true);
      const table: TableDefinition = TABLES[mapping.table];
      expect(table.stream, mapping.id).toBeDefined();
      expect(hasKey(QUEUES, mapping.onFailureQueue), mapping.id).toBe(true);
      const onFailure: QueueDefinition = QUEUES[mapping.onFailureQueue];
      expect(onFailure.terminal, mapping.id).toBe(true);
    }
  });

  it('mapping ids are unique', () => {
    expect(new Set(mappings.map((mapping) => mapping.id)).size).toBe(mappings.length);
  });
});

describe('finance export', () => {
  it('the receipts bucket is write-once in compliance mode for at least 7 years', () => {
    const lock = (BUCKETS.receipts as BucketDefinition).objectLock;
    expect(lock?.mode).toBe('COMPLIANCE');
    expect(lock?.retentionDays).toBeGreaterThanOrEqual(Math.ceil(7 * 365.25));
  });

  it("the exporter consumes the receipts table's stream from its start, into its own terminal on-failure queue", () => {
    const mapping = EVENT_SOURCE_MAPPINGS.receiptsToExporter;
    expect(mapping).toMatchObject({
      kind: 'dynamodb-stream',
      table: 'receipts',
      function: 'exporter',
      startingPosition: 'TRIM_HORIZON',
      bisectBatchOnError: true,
      reportBatchItemFailures: true,
      onFailureQueue: 'receiptsStreamFailures',
    });
    expect(mapping.maxRetryAttempts).toBeGreaterThan(0);
    expect(TABLES.receipts.stream).toBe('NEW_AND_OLD_IMAGES');
    expect(QUEUES.receiptsStreamFailures).toMatchObject({
      id: 'receipts-stream-failures',
      terminal: true,
      retentionDays: 14,
    });
    // No other mapping shares the queue: its depth alarm names one consumer.
    const sharing = mappings.filter(
      (candidate) =>
        candidate.kind === 'dynamodb-stream' && candidate.onFailureQueue === 'receiptsStreamFailures',
    );
    expect(sharing).toHaveLength(1);
  });
});

describe('tables', () => {
  it('table ids and environment variables are unique', () => {
    expect(new Set(tables.map(([, table]) => table.id)).size).toBe(tables.length);
    expect(new Set(tables.map(([, table]) => table.envVar)).size).toBe(tables.length);
  });
});

describe('functions', () => {
  it("each function's key is its id", () => {
    for (const [key, definition] of functions) expect(definition.id).toBe(key);
  });

  it('FUNCTION_FACTORIES has exactly the FUNCTIONS ids', () => {
    expect(Object.keys(FUNCTION_FACTORIES).sort()).toEqual(Object.keys(FUNCTIONS).sort());
  });

  it.each(functions.map(([id, definition]) => [id, definition.entry] as const))(
    '%s: its entry file %s exists',
    (_id, entry) => {
      expect(existsSync(path.join(repositoryRoot, entry))).toBe(true);
    },
  );

  it.each(functions.map(([id, definition]) => [id, definition.entry] as const))(
    '%s: %s exports a function `handler` and imports without AWS environment variables',
    async (_id, entry) => {
      const module: unknown = await import(pathToFileURL(path.join(repositoryRoot, entry)).href);
      expect(typeof module === 'object' && module !== null && 'handler' in module).toBe(true);
      const exported = (module as { handler?: unknown }).handler;
      expect(typeof exported).toBe('function');
    },
  );
});

describe('routes', () => {
  it("every route's function exists", () => {
    for (const candidate of routes) {
      expect(hasKey(FUNCTIONS, candidate.function), routeKey(candidate.method, candidate.path)).toBe(true);
    }
  });

  it('method + path pairs are unique', () => {
    const keys = routes.map((candidate) => routeKey(candidate.method, candidate.path));
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('paths start with a slash and parameter segments are whole segments', () => {
    for (const candidate of routes) {
      expect(candidate.path.startsWith('/'), candidate.path).toBe(true);
      for (const segment of candidate.path.split('/').filter((part) => part.length > 0)) {
        const braces = (segment.match(/[{}]/g) ?? []).length;
        expect(braces === 0 || /^\{[a-z_][a-z0-9_]*\}$/.test(segment), candidate.path).toBe(true);
      }
    }
  });
});
