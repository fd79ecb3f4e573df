import { OPERATIONAL_EVENT_TYPES, type OperationalEventType } from '../../domain/webhooks/envelope';
import type { EventStore } from '../../ports/webhooks';
import { retentionDaysFor, type WebhookSettings } from './context';
import { NO_VERSIONS, outboxItemOf } from './events';

/**
 * One of the service's own signals (C32), published as an event of topic `operations` through the same pipeline
 * as every other event: endpoints subscribed to `operations` get it signed, retried and replayable.
 */
export interface OperationalSignal {
  readonly type: OperationalEventType;
  /**
   * What makes the signal one: its event id is `ops:<key>`, so emitting it again (a retried step, a redelivered
   * message, a rerun after a crash) publishes nothing twice.
   */
  readonly key: string;
  /** Identifiers only, as every payload. */
  readonly data: Readonly<Record<string, string | number | boolean | null>>;
  readonly tenant?: string;
  readonly traceId: string;
}

/** Publishes operational signals (a function that may write the events table). */
export interface OperationalSignals {
  emit(signal: OperationalSignal): Promise<void>;
}

/** The event id of a signal: `ops:` and its key, within the producer id alphabet (C25). */
export const operationalEventId = (key: string): string =>
  `ops:${key}`.replace(/[^A-Za-z0-9_.:-]/g, '-').slice(0, 128);

export const operationalSignals = (ctx: {
  readonly clock: { now(): Date };
  readonly events: Pick<EventStore, 'put'>;
  readonly settings: Pick<WebhookSettings, 'bodyTtlDays' | 'tenantRetentionDays'>;
}): OperationalSignals => ({
  emit: async (signal) => {
    if (!(OPERATIONAL_EVENT_TYPES as readonly string[]).includes(signal.type))
      throw new Error(`not an operational event type: ${signal.type}`);
    const item = outboxItemOf(
      {
        type: signal.type,
        data: signal.data,
        producer: 'operations',
        ...(signal.tenant !== undefined ? { tenant: signal.tenant } : {}),
        trace_id: signal.traceId,
        versions: NO_VERSIONS,
        event_id: operationalEventId(signal.key),
      },
      ctx.clock.now(),
      retentionDaysFor(ctx.settings, signal.tenant),
    );
    // False: emitted before (the same key); nothing more to do.
    await ctx.events.put(item);
  },
});
