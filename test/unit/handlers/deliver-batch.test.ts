import type { SQSEvent, SQSRecord } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import type { ServiceDependencies } from '../../../functions/composition/dependencies';
import { createDeliverHandler } from '../../../functions/handlers/deliver';

/** Enough of the dependencies for messages that fail before any delivery: a logger and metrics. */
const handlerWithLog = () => {
  const lines: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const logger = {
    info: (message: string, fields: Record<string, unknown>) =>
      lines.push({ level: 'info', message, fields }),
    warn: (message: string, fields: Record<string, unknown>) =>
      lines.push({ level: 'warn', message, fields }),
  };
  let flushes = 0;
  const deps = {
    createLogger: () => logger,
    metrics: { recorder: () => ({ flush: () => (flushes += 1), deliveryAttempted: () => undefined }) },
  } as unknown as ServiceDependencies;
  return { handler: createDeliverHandler(deps), lines, flushes: () => flushes };
};

const record = (messageId: string, body: string): SQSRecord =>
  ({ messageId, body, attributes: { ApproximateReceiveCount: '2' } }) as unknown as SQSRecord;

describe('deliver (Powertools batch processing)', () => {
  it('reports each undeliverable message on its own, even when the whole batch fails', async () => {
    const { handler, lines, flushes } = handlerWithLog();
    const event: SQSEvent = {
      Records: [record('m1', 'not json'), record('m2', JSON.stringify({ event_id: 'evt_1' }))],
    };
    const response = await handler(event, {});
    expect(response.batchItemFailures.map((failure) => failure.itemIdentifier).sort()).toEqual(['m1', 'm2']);
    expect(lines.map((line) => [line.level, line.message, line.fields.message_id])).toEqual(
      expect.arrayContaining([
        ['warn', 'delivery message failed', 'm1'],
        ['warn', 'delivery message failed', 'm2'],
      ]),
    );
    expect(lines.every((line) => line.fields.receive_count === '2')).toBe(true);
    expect(flushes()).toBe(1);
  });

  it('answers an empty batch with no failures', async () => {
    const { handler } = handlerWithLog();
    expect(await handler({ Records: [] }, {})).toEqual({ batchItemFailures: [] });
  });
});
