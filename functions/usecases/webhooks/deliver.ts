import { SCHEDULER } from '../../definitions';
import {
  type EnvelopeVersion,
  isEnvelopeVersion,
  LATEST_ENVELOPE_VERSION,
  renderEnvelope,
  topicOf,
} from '../../domain/webhooks/envelope';
import { type AttemptOutcome, decideRetry, type RetryDecision } from '../../domain/webhooks/retry-policy';
import { secretBytes } from '../../domain/webhooks/secret';
import { signatureHeader } from '../../domain/webhooks/signature';
import type { WebhookResponse } from '../../ports/webhook-http';
import type { AttemptRecord } from '../../ports/webhooks';
import type { DeliveryMessage } from '../../schemas/envelope';
import type { WebhookContext } from './context';
import { signingSecrets } from './endpoints';
import { clientCertificateOf } from './mtls';

/** Raised when a message must come back later (another consumer holds the attempt): SQS redelivers it. */
export class DeliveryBusyError extends Error {
  constructor(message: DeliveryMessage) {
    super(
      `attempt ${message.attempt} of ${message.event_id}/${message.endpoint_id} is held by another consumer`,
    );
    this.name = 'DeliveryBusyError';
  }
}

export type DeliveryResult =
  | { readonly kind: 'skipped'; readonly reason: 'duplicate' | 'no_delivery' }
  | { readonly kind: 'attempted'; readonly decision: RetryDecision; readonly attempt: AttemptRecord };

const EXCERPT_CHARS = 256;

/** `<base>/<topic>` (C12): the base URL without a trailing slash, then the topic. */
export const targetUrl = (base: string, type: string): string =>
  `${base.replace(/\/+$/, '')}/${topicOf(type)}`;

const outcomeOf = (response: WebhookResponse): AttemptOutcome =>
  response.kind === 'response'
    ? {
        kind: 'response',
        status: response.status,
        ...(response.headers['retry-after'] !== undefined
          ? { retryAfter: response.headers['retry-after'] }
          : {}),
      }
    : { kind: 'network_error', error: response.error };

/** Schedule name for a retry longer than SQS can delay: ≤ 64 characters of EventBridge's alphabet. */
export const retryScheduleName = (message: DeliveryMessage, attempt: number): string =>
  `r-${message.event_id.slice(4)}-${message.endpoint_id.slice(4)}-${attempt}`;

/**
 * One attempt of one delivery (C13, C14): claim the attempt, sign and POST the envelope as the endpoint's
 * pinned version sees it, then enqueue what comes next (delayed message, scheduled message, or the DLQ) and
 * only then record the outcome, so a consumer that dies anywhere loses nothing: the message comes back, the
 * lease runs out, the attempt is made again (a duplicate the receiver's dedup absorbs).
 */
export const deliverAttempt = async (
  ctx: WebhookContext,
  message: DeliveryMessage,
): Promise<DeliveryResult> => {
  const started = ctx.clock.now();
  const leaseUntil = new Date(started.getTime() + ctx.policy.attemptTimeoutMs * 3 + 5_000).toISOString();
  const claim = await ctx.deliveries.claim(
    message.event_id,
    message.endpoint_id,
    message.attempt,
    started.toISOString(),
    leaseUntil,
  );
  if (claim === 'missing') return { kind: 'skipped', reason: 'no_delivery' };
  if (claim === 'done') return { kind: 'skipped', reason: 'duplicate' };
  if (claim === 'busy') throw new DeliveryBusyError(message);

  const [item, endpoint] = await Promise.all([
    ctx.events.get(message.event_id),
    // Read per delivery, so eventually consistent: half the read units, and a change reaches deliveries within
    // DynamoDB's replication lag (usually well under a second; the claim above is what guards against twice).
    ctx.endpoints.get(message.endpoint_id, { consistent: false }),
  ]);
  const stop = async (reason: string, disable = false): Promise<DeliveryResult> => {
    const attempt: AttemptRecord = {
      attempt: message.attempt,
      at: started.toISOString(),
      duration_ms: 0,
      error: reason,
      outcome: 'stopped',
      reason,
      ...(message.replay_id ? { replay_id: message.replay_id } : {}),
    };
    await ctx.deliveries.recordAttempt(
      message.event_id,
      message.endpoint_id,
      attempt,
      { status: 'stopped', stop_reason: reason },
      ctx.clock.now().toISOString(),
    );
    ctx.signal('delivery_stopped', { event_id: message.event_id, endpoint_id: message.endpoint_id, reason });
    return { kind: 'attempted', decision: { kind: 'stopped', reason, disableEndpoint: disable }, attempt };
  };
  if (!item) return stop('event_expired');
  if (!endpoint) return stop('endpoint_deleted');
  if (endpoint.status !== 'enabled') return stop('endpoint_disabled');

  const version: EnvelopeVersion = isEnvelopeVersion(endpoint.version)
    ? endpoint.version
    : LATEST_ENVELOPE_VERSION;
  const body = new TextEncoder().encode(JSON.stringify(renderEnvelope(item, version, message.attempt)));
  const url = targetUrl(endpoint.url, item.type);
  const parsed = new URL(url);
  const timestamp = ctx.clock.now().toISOString();
  const secrets = (await signingSecrets(ctx, endpoint, started)).map(secretBytes);
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': ctx.settings.userAgent,
    'X-Event-Id': item.event_id,
    'X-Timestamp': timestamp,
    'X-Signature': signatureHeader({
      secrets,
      timestamp,
      method: 'POST',
      path: `${parsed.pathname}${parsed.search}`,
      body,
    }),
    'X-Webhook-Producer': item.producer ?? 'pricing-service',
    'X-Attempt': String(message.attempt),
  };
  // The endpoint's client certificate (mTLS), presented in the handshake; a receiver that requires one and
  // gets none fails the attempt (a TLS error or the status it answers), retried like any other failure.
  const clientCertificate = await clientCertificateOf(ctx, endpoint);
  const response = await ctx.http.post({
    url,
    headers,
    body,
    timeoutMs: ctx.policy.attemptTimeoutMs,
    ...(clientCertificate ? { clientCertificate } : {}),
  });
  const finished = ctx.clock.now();
  const decision = decideRetry({
    policy: ctx.policy,
    attempt: message.attempt - message.round_start + 1,
    outcome: outcomeOf(response),
    random: ctx.random,
    now: finished,
  });

  const nextAttemptAt =
    decision.kind === 'retry' ? new Date(finished.getTime() + decision.delaySeconds * 1000) : undefined;
  const attempt: AttemptRecord = {
    attempt: message.attempt,
    at: started.toISOString(),
    duration_ms: Math.round(response.durationMs),
    ...(response.kind === 'response'
      ? {
          http_status: response.status,
          ...(response.excerpt ? { response_excerpt: response.excerpt.slice(0, EXCERPT_CHARS) } : {}),
        }
      : { error: response.error }),
    outcome: decision.kind,
    ...(decision.kind !== 'delivered' ? { reason: decision.reason } : {}),
    ...(nextAttemptAt ? { next_attempt_at: nextAttemptAt.toISOString() } : {}),
    ...(message.replay_id ? { replay_id: message.replay_id } : {}),
  };

  // What comes next is enqueued before the outcome is recorded (see above).
  if (decision.kind === 'retry' && nextAttemptAt) {
    const next: DeliveryMessage = { ...message, attempt: message.attempt + 1 };
    const delaySeconds = Math.ceil(decision.delaySeconds);
    if (delaySeconds <= SCHEDULER.maxQueueDelaySeconds) {
      await ctx.queue.send('delivery', JSON.stringify(next), { delaySeconds });
    } else {
      await ctx.scheduler.scheduleOnce({
        name: retryScheduleName(message, next.attempt),
        at: nextAttemptAt,
        queue: 'delivery',
        body: JSON.stringify(next),
      });
    }
  } else if (decision.kind === 'dead') {
    await ctx.queue.send(
      'deliveryDlq',
      JSON.stringify({ ...message, dead_reason: decision.reason, dead_at: finished.toISOString() }),
    );
  }
  if (decision.kind === 'stopped' && decision.disableEndpoint) {
    await ctx.endpoints.update(
      endpoint.endpoint_id,
      { status: 'disabled', disabled_reason: `${decision.reason} (event ${item.event_id})` },
      finished.toISOString(),
    );
    ctx.signal('endpoint_disabled', { endpoint_id: endpoint.endpoint_id, reason: decision.reason });
  }
  await ctx.deliveries.recordAttempt(
    message.event_id,
    message.endpoint_id,
    attempt,
    {
      status:
        decision.kind === 'delivered'
          ? 'delivered'
          : decision.kind === 'retry'
            ? 'retrying'
            : decision.kind === 'dead'
              ? 'dead'
              : 'stopped',
      ...(nextAttemptAt ? { next_attempt_at: nextAttemptAt.toISOString() } : {}),
      ...(decision.kind === 'stopped' || decision.kind === 'dead' ? { stop_reason: decision.reason } : {}),
    },
    finished.toISOString(),
  );
  if (decision.kind === 'dead')
    ctx.signal('delivery_dead', {
      event_id: message.event_id,
      endpoint_id: message.endpoint_id,
      reason: decision.reason,
      attempts: message.attempt,
    });
  else if (decision.kind === 'stopped')
    ctx.signal('delivery_stopped', {
      event_id: message.event_id,
      endpoint_id: message.endpoint_id,
      reason: decision.reason,
    });
  return { kind: 'attempted', decision, attempt };
};
