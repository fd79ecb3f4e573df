import {
  type AttemptTally,
  addAttempt,
  type EndpointStats,
  emptyTally,
  endpointStats,
  STATS_RETENTION_DAYS,
  STATS_WINDOWS,
  type StatsWindow,
  slotOf,
  sumTallies,
} from '../../domain/webhooks/endpoint-stats';
import type { AttemptRecord } from '../../ports/webhooks';
import { epochSeconds, type WebhookContext } from './context';
import { EndpointNotFoundError } from './endpoints';

/** `GET /webhooks/endpoints/{id}/stats?window=…`: the window's figures and its bounds. */
export interface EndpointStatsView extends EndpointStats {
  readonly endpoint_id: string;
  readonly window: StatsWindow;
  readonly from: string;
  readonly to: string;
}

/**
 * An endpoint's attempts over the last hour, day or week (C32): success rate, latency p50/p95 and counts by
 * status class, summed from its 5-minute slots (the window is read as the slots that overlap it).
 */
export const endpointStatsOf = async (
  ctx: Pick<WebhookContext, 'clock' | 'endpoints' | 'stats'>,
  endpointId: string,
  window: StatsWindow,
): Promise<EndpointStatsView> => {
  if (!(await ctx.endpoints.get(endpointId, { consistent: false })))
    throw new EndpointNotFoundError(endpointId);
  const to = ctx.clock.now();
  const from = new Date(to.getTime() - STATS_WINDOWS[window] * 1000);
  const tallies = await ctx.stats.read(endpointId, slotOf(from), slotOf(to));
  return {
    endpoint_id: endpointId,
    window,
    from: from.toISOString(),
    to: to.toISOString(),
    ...endpointStats(sumTallies(tallies)),
  };
};

/**
 * Counts a batch's HTTP attempts into their endpoints' slots: one addition per endpoint and slot, so a batch of ten
 * attempts to one endpoint is one write. Figures: a failure is signalled and never fails the deliveries (which are
 * recorded already).
 */
export const recordAttemptStats = async (
  ctx: Pick<WebhookContext, 'clock' | 'stats' | 'signal'>,
  attempts: readonly { readonly endpointId: string; readonly attempt: AttemptRecord }[],
): Promise<void> => {
  if (attempts.length === 0) return;
  const groups = new Map<string, { endpointId: string; slot: string; tally: AttemptTally }>();
  for (const { endpointId, attempt } of attempts) {
    const slot = slotOf(new Date(attempt.at));
    const key = `${endpointId}#${slot}`;
    const group = groups.get(key) ?? { endpointId, slot, tally: emptyTally() };
    groups.set(key, { ...group, tally: addAttempt(group.tally, attempt) });
  }
  const expiresAt = epochSeconds(ctx.clock.now(), STATS_RETENTION_DAYS);
  try {
    await Promise.all(
      [...groups.values()].map((group) =>
        ctx.stats.add(group.endpointId, group.slot, group.tally, expiresAt),
      ),
    );
  } catch (error) {
    ctx.signal('stats_not_recorded', { attempts: attempts.length, error: (error as Error).message });
  }
};
