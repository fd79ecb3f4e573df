import type { CloudDestination } from '../domain/webhooks/destinations';
import type { WebhookResponse } from './webhook-http';

/** One attempt of a delivery to an SQS queue or an EventBridge bus in the partner's account (C34). */
export interface CloudDeliveryRequest {
  readonly destination: CloudDestination;
  /** The endpoint whose delivery this is (the assumed role's session is named after it). */
  readonly endpointId: string;
  /** The envelope as signed: the message body, or the event's `detail`. */
  readonly body: Uint8Array;
  /** What an HTTP delivery sends as headers (signature, event id, attempt): message attributes on SQS. */
  readonly headers: Readonly<Record<string, string>>;
  readonly eventId: string;
  readonly eventType: string;
  /** The event's producer: the EventBridge event's `source`. */
  readonly producer: string;
  /** The attempt's number: with the event id, a FIFO queue's deduplication id (a resent attempt is one message). */
  readonly attempt: number;
  /** An ordered endpoint's key: a FIFO queue's message group. */
  readonly orderingKey?: string;
  readonly at: Date;
  /** The whole attempt, the role's assumption included. */
  readonly timeoutMs: number;
}

/**
 * Sends one attempt as the partner's role: assumes it with the destination's external id (credentials cached until
 * shortly before they expire), then SendMessage or PutEvents. Never throws: a refusal (the role's trust, the
 * queue's policy, throttling) is a `network_error` whose message names the call and AWS's error code; an accepted
 * message is a 200 `response` whose excerpt names the message or event id.
 */
export interface CloudDestinationSender {
  send(request: CloudDeliveryRequest): Promise<WebhookResponse>;
}
