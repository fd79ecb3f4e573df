import type { DeliveryStatus } from '../../functions/domain/webhooks/envelope';
import type { DeliveryRecord } from '../../functions/ports/webhooks';

/**
 * A delivery of event `evt_<minute>` (its id padded to `width` digits) to `endpointId`, created `minute` minutes
 * after 2026-11-22T10:00Z: the listings' tests write such deliveries in time order.
 */
export const deliveryRecord = (
  minute: number,
  endpointId: string,
  status: DeliveryStatus = 'pending',
  width = 4,
): DeliveryRecord => {
  const ts = new Date(Date.parse('2026-11-22T10:00:00.000Z') + minute * 60_000).toISOString();
  const eventId = `evt_${String(minute).padStart(width, '0')}`;
  return {
    event_id: eventId,
    endpoint_id: endpointId,
    event_type: 'payout.processed',
    ts_id: `${ts}#${eventId}`,
    status,
    created_at: ts,
    updated_at: ts,
    last_attempt: 0,
    completed_attempt: 0,
    attempts: [],
    expires_at: 1_900_000_000,
  };
};
