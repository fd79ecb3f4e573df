import type { DeliveryAttemptOutcome } from '../../ports/metrics';
import type { AttemptRecord, DeliveryRepository } from '../../ports/webhooks';
import type { DeliveryMessage } from '../../schemas/envelope';

/** When an attempt got its answer: its start plus the HTTP exchange. */
const answeredAt = (attempt: AttemptRecord): number => Date.parse(attempt.at) + attempt.duration_ms;

/**
 * What one attempt of a delivery counts for in the delivery objectives (Limits: "at least 99.9 % of events
 * get 2xx in under 3 s at p95"):
 * - first-attempt success: every attempt 1 of a delivery (event × endpoint) counts once, a success when it
 *   was answered 2xx; a replay's attempts are operator actions and never count as first attempts;
 * - latency: a 2xx outside a replay measures the time from the start of attempt 1 to the 2xx (attempt 1's
 *   own exchange when it succeeded; for a later attempt, attempt 1's start is read from the delivery record).
 * Without attempt 1 in the record (expired with it), the success counts without a latency.
 */
export const deliveryAttemptOutcome = async (
  deliveries: Pick<DeliveryRepository, 'get'>,
  message: DeliveryMessage,
  attempt: AttemptRecord,
): Promise<DeliveryAttemptOutcome> => {
  const replay = message.replay_id !== undefined;
  const firstAttempt = message.attempt === 1 && !replay;
  const success = attempt.outcome === 'delivered';
  if (!success || replay) return { firstAttempt, success };
  if (firstAttempt) return { firstAttempt, success, msSinceFirstAttempt: attempt.duration_ms };
  const record = await deliveries.get(message.event_id, message.endpoint_id);
  const first = record?.attempts.find((candidate) => candidate.attempt === 1);
  if (!first) return { firstAttempt, success };
  return {
    firstAttempt,
    success,
    msSinceFirstAttempt: Math.max(0, answeredAt(attempt) - Date.parse(first.at)),
  };
};
