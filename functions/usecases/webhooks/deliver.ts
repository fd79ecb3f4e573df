import { SCHEDULER } from '../../definitions';
import { cloudSignedPath } from '../../domain/webhooks/destinations';
import { failingDecision } from '../../domain/webhooks/endpoint-health';
import {
  type EnvelopeVersion,
  isEnvelopeVersion,
  isOperationalEvent,
  LATEST_ENVELOPE_VERSION,
  renderEnvelope,
  topicOf,
} from '../../domain/webhooks/envelope';
import { signedRequestHeaders, type WebhookSigner } from '../../domain/webhooks/request-signing';
import {
  type AttemptOutcome,
  decideRetry,
  parseRetryAfterSeconds,
  type RetryDecision,
} from '../../domain/webhooks/retry-policy';
import { secretBytes } from '../../domain/webhooks/secret';
import {
  attemptTimeoutFor,
  delaySecondsUntil,
  type EffectiveLimits,
  effectiveLimits,
  hasLimits,
  MAX_PAUSE_SECONDS,
  MAX_PAUSE_SPREAD_SECONDS,
  nextDeferrals,
  slowAttemptMs,
  TICKET_GRACE_MS,
} from '../../domain/webhooks/throttle';
import type { WebhookResponse } from '../../ports/webhook-http';
import type { Admission, AttemptRecord, EndpointRecord, ReplayOutcome } from '../../ports/webhooks';
import type { DeliveryMessage, OutboxItem } from '../../schemas/envelope';
import { handTurnOn, type WebhookContext } from './context';
import { signingSecrets } from './endpoints';
import { clientCertificateOf } from './mtls';
import { sendWithAuth } from './outbound-auth';
import { announceIfCompleted } from './replay';

/** Raised when a message must come back later (another consumer holds the attempt): SQS redelivers it. */
export class DeliveryBusyError extends Error {
  constructor(message: DeliveryMessage) {
    super(
      `attempt ${message.attempt} of ${message.event_id}/${message.endpoint_id} is held by another consumer`,
    );
    this.name = 'DeliveryBusyError';
  }
}

/** Why a delivery waits without an attempt: its endpoint's rate, its in-flight cap, or a Retry-After pause. */
export type DeferReason = 'rate' | 'in_flight' | 'paused';

export type DeliveryResult =
  | { readonly kind: 'skipped'; readonly reason: 'duplicate' | 'no_delivery' | 'not_its_turn' }
  | { readonly kind: 'deferred'; readonly reason: DeferReason; readonly delaySeconds: number }
  | {
      readonly kind: 'attempted';
      readonly decision: RetryDecision;
      readonly attempt: AttemptRecord;
      /** An HTTP attempt was made (false: stopped without one, e.g. the endpoint was deleted). */
      readonly sent: boolean;
    };

type Deferred = Extract<DeliveryResult, { readonly kind: 'deferred' }>;

const EXCERPT_CHARS = 256;
/** A reserved start this close ahead is waited for in the function rather than through the queue. */
const IN_PROCESS_WAIT_MS = 1_000;

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

/**
 * What the attempt taught about its endpoint, for every delivery to it: a timeout lengthens its run of timeouts
 * (isolation caps it), an answer ends the run, and a 429 or 503 with `Retry-After` pauses the endpoint until then.
 * Written only when something changes, so a healthy endpoint's deliveries write nothing here.
 */
const noteEndpointHealth = async (
  ctx: WebhookContext,
  endpoint: EndpointRecord,
  response: WebhookResponse,
  now: Date,
  notedSlow: boolean,
): Promise<void> => {
  if (response.kind === 'network_error') {
    if (response.error === 'timeout' && !notedSlow) await ctx.endpoints.noteTimeout(endpoint.endpoint_id);
    return;
  }
  if (notedSlow || (endpoint.consecutive_timeouts ?? 0) > 0)
    await ctx.endpoints.clearTimeouts(endpoint.endpoint_id);
  const retryAfter = response.headers['retry-after'];
  if ((response.status === 429 || response.status === 503) && retryAfter !== undefined) {
    const seconds = parseRetryAfterSeconds(retryAfter, now);
    if (seconds !== undefined)
      await ctx.endpoints.pauseUntil(
        endpoint.endpoint_id,
        new Date(now.getTime() + Math.min(seconds, MAX_PAUSE_SECONDS) * 1000).toISOString(),
      );
  }
};

/**
 * The endpoint's run of failures (C32): a success ends it, the first failure starts it, and later failures warn
 * at 50, 75 and 90 % of `disable_after_days` and disable the endpoint at 100 %, each signal once (its key is the
 * run and the step; it is published before the step is recorded, so a crash in between repeats nothing).
 */
const noteFailingRun = async (
  ctx: WebhookContext,
  endpoint: EndpointRecord,
  item: OutboxItem,
  succeeded: boolean,
  now: Date,
): Promise<void> => {
  const id = endpoint.endpoint_id;
  if (succeeded) {
    if (endpoint.failing_since) await ctx.endpoints.clearFailing(id);
    return;
  }
  const since = endpoint.failing_since;
  if (!since) {
    await ctx.endpoints.noteFailing(id, now.toISOString());
    return;
  }
  const disableAfterDays = endpoint.disable_after_days ?? ctx.settings.disableAfterDays;
  const verdict = failingDecision({
    failingSince: since,
    warned: endpoint.failing_warned,
    now,
    disableAfterDays,
  });
  const tenant = endpoint.tenant !== undefined ? { tenant: endpoint.tenant } : {};
  if (verdict.kind === 'warn') {
    await ctx.operations.emit({
      type: 'operations.endpoint_failing',
      key: `endpoint_failing:${id}:${since}:${verdict.percent}`,
      data: {
        endpoint_id: id,
        failing_since: since,
        disable_after_days: disableAfterDays,
        share: verdict.percent,
      },
      ...tenant,
      traceId: item.trace_id,
    });
    await ctx.endpoints.noteWarned(id, since, verdict.percent);
  } else if (verdict.kind === 'disable') {
    await disableEndpoint(
      ctx,
      endpoint,
      item,
      'failing',
      `failing since ${since} (${disableAfterDays} days)`,
      now,
    );
  }
};

/**
 * Disables an endpoint the attempt found gone (410) or failing too long, announcing it once. The decision was made
 * from an eventually consistent read, so it is checked against a consistent one first (an operator may have
 * re-enabled it, or an answer ended the run); the signal, keyed by the endpoint's enable cycle (its `updated_at`)
 * and the run, is published before the conditional write, so a crash in between repeats nothing and concurrent
 * attempts publish one.
 */
const disableEndpoint = async (
  ctx: WebhookContext,
  seen: EndpointRecord,
  item: OutboxItem,
  reason: string,
  disabledReason: string,
  now: Date,
): Promise<void> => {
  const current = await ctx.endpoints.get(seen.endpoint_id);
  if (current?.status !== 'enabled' || current.failing_since !== seen.failing_since) return;
  await ctx.operations.emit({
    type: 'operations.endpoint_disabled',
    key: `endpoint_disabled:${current.endpoint_id}:${current.updated_at}:${reason}:${current.failing_since ?? '-'}`,
    data: { endpoint_id: current.endpoint_id, reason, event_id: item.event_id },
    ...(current.tenant !== undefined ? { tenant: current.tenant } : {}),
    traceId: item.trace_id,
  });
  const disabled = await ctx.endpoints.update(
    current.endpoint_id,
    { status: 'disabled', disabled_reason: disabledReason },
    now.toISOString(),
    { expected: current },
  );
  if (disabled) ctx.signal('endpoint_disabled', { endpoint_id: current.endpoint_id, reason });
};

const isReplayOutcome = (status: string): status is ReplayOutcome =>
  status === 'delivered' || status === 'dead' || status === 'stopped';

/** An ordered delivery ended (or can never start): the next open place of its key gets its turn. */
const closeTurn = async (ctx: WebhookContext, message: DeliveryMessage): Promise<void> => {
  if (message.order) await handTurnOn(ctx, message.endpoint_id, message.order, message.event_id);
};

/**
 * A replayed delivery ended: counted once on its replay, and when it was the replay's last, the replay is
 * announced as completed (`operations.replay_completed`, once: its key is the replay).
 */
const noteReplayEnded = async (
  ctx: WebhookContext,
  message: DeliveryMessage,
  outcome: ReplayOutcome,
): Promise<void> => {
  if (!message.replay_id) return;
  const tally = await ctx.replays.noteFinished(
    message.replay_id,
    message.event_id,
    message.endpoint_id,
    outcome,
  );
  await announceIfCompleted(ctx, message.replay_id, tally);
};

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
  /** Reads shared with the other messages of the batch (`batchReads`); absent: each read here. */
  reads: BatchReads = batchReads(ctx),
): Promise<DeliveryResult> => {
  // An ordered delivery starts only in its turn: while an earlier one of its key is open, this message is
  // dropped (no attempt used); the earlier one's end sends it again.
  if (message.order && !(await ctx.sequencer.isTurn(message.endpoint_id, message.order)))
    return { kind: 'skipped', reason: 'not_its_turn' };
  const started = ctx.clock.now();
  const leaseMs = ctx.policy.attemptTimeoutMs * 3 + 5_000;
  // Read once per batch and endpoint, eventually consistent: half the read units, and a change reaches deliveries
  // within DynamoDB's replication lag and the batch (the claim below is what guards against twice).
  const endpoint = await reads.endpoint(message.endpoint_id);

  // The endpoint's limits come first: a delivery over them waits without claiming (it uses no attempt) and
  // without reading the event.
  let admission: Extract<Admission, { kind: 'admitted' }> = { kind: 'admitted' };
  let limits: EffectiveLimits = {};
  if (endpoint?.status === 'enabled') {
    limits = effectiveLimits(endpoint.rate_limit, endpoint, ctx.policy.attemptTimeoutMs);
    const throttled = await throttle(ctx, message, endpoint, limits, started, leaseMs);
    if (throttled.kind !== 'admitted') return throttled;
    admission = throttled;
  }
  // The slot models the request in flight: freed once, as soon as the POST settled or whatever ends the attempt
  // first (an error included). Best effort: a release that fails leaves the slot to its lease.
  const held = admission;
  let released = false;
  const release = async (): Promise<void> => {
    if (released || held.slot === undefined || held.leaseUntilMs === undefined) return;
    released = true;
    try {
      await ctx.limiter.release(message.endpoint_id, held.slot, held.leaseUntilMs);
    } catch (error) {
      ctx.signal('slot_release_failed', {
        endpoint_id: message.endpoint_id,
        error: (error as Error).message,
      });
    }
  };

  try {
    // The attempt starts now (after any wait for its reserved start).
    const claimedAt = ctx.clock.now();
    // A first attempt's message from the fan-out carries the event (past its expiry, it is gone as the stored one
    // would be); an expunction since is what the claim reports.
    const carried = message.event;
    const [claim, item] = await Promise.all([
      ctx.deliveries.claim(
        message.event_id,
        message.endpoint_id,
        message.attempt,
        claimedAt.toISOString(),
        new Date(claimedAt.getTime() + leaseMs).toISOString(),
        message.order?.seq,
      ),
      carried
        ? carried.expires_at * 1000 > claimedAt.getTime()
          ? carried
          : undefined
        : ctx.events.get(message.event_id),
    ]);
    if (claim !== 'claimed' && claim !== 'expunged') await release();
    if (claim === 'missing') {
      // The record is gone (its history expired): it will never end, so its place is closed now.
      await closeTurn(ctx, message);
      return { kind: 'skipped', reason: 'no_delivery' };
    }
    if (claim === 'done') {
      // The consumer of an ended delivery died after recording its end: what follows the end is done now (its
      // part of a replay noted, its key's turn handed on).
      if (message.replay_id || message.order) {
        const stored = await ctx.deliveries.get(message.event_id, message.endpoint_id);
        if (stored && isReplayOutcome(stored.status)) {
          await noteReplayEnded(ctx, message, stored.status);
          await closeTurn(ctx, message);
        }
      }
      return { kind: 'skipped', reason: 'duplicate' };
    }
    if (claim === 'busy') throw new DeliveryBusyError(message);
    const result = await attempt(
      ctx,
      message,
      claim === 'expunged' && item
        ? { ...item, expunged_at: item.expunged_at ?? claimedAt.toISOString() }
        : item,
      endpoint,
      claimedAt,
      attemptTimeoutFor(limits, admission.slot, ctx.policy.attemptTimeoutMs),
      release,
    );
    if (result.kind === 'attempted' && result.decision.kind !== 'retry') await closeTurn(ctx, message);
    return result;
  } finally {
    await release();
  }
};

/**
 * The message of the delivery's next attempt (or its dead letter): no rate ticket, no count of waits, and no copy of
 * the event (a later attempt reads the stored one, which an expunction or a shorter retention may have changed).
 */
const chained = (message: DeliveryMessage): DeliveryMessage => {
  const { not_before: _ticket, deferrals: _deferrals, event: _event, ...rest } = message;
  return rest;
};

/** Reads the messages of one batch share. */
export interface BatchReads {
  endpoint(endpointId: string): Promise<EndpointRecord | undefined>;
}

/**
 * Each endpoint read once for a batch (its messages are mostly for few endpoints): eventually consistent, like the
 * read per message it replaces, so a change reaches the batch's later deliveries no later than it would have. A
 * failed read is not kept.
 */
export const batchReads = (ctx: Pick<WebhookContext, 'endpoints'>): BatchReads => {
  const endpoints = new Map<string, Promise<EndpointRecord | undefined>>();
  return {
    endpoint: (endpointId) => {
      let read = endpoints.get(endpointId);
      if (!read) {
        read = ctx.endpoints.get(endpointId, { consistent: false });
        endpoints.set(endpointId, read);
        read.catch(() => endpoints.delete(endpointId));
      }
      return read;
    },
  };
};

/** Sends the delivery's message again, for the same attempt, after `delaySeconds` (at most SQS's delay). */
const deferDelivery = async (
  ctx: WebhookContext,
  message: DeliveryMessage,
  next: Pick<DeliveryMessage, 'not_before' | 'deferrals'>,
  delaySeconds: number,
  reason: DeferReason,
): Promise<Deferred> => {
  const body: DeliveryMessage = {
    ...chained(message),
    // Still the first attempt's message: it keeps its copy of the event.
    ...(message.event !== undefined ? { event: message.event } : {}),
    ...(next.not_before !== undefined ? { not_before: next.not_before } : {}),
    ...(next.deferrals !== undefined && next.deferrals > 0 ? { deferrals: next.deferrals } : {}),
  };
  const delay = Math.min(SCHEDULER.maxQueueDelaySeconds, Math.max(1, delaySeconds));
  await ctx.queue.send('delivery', JSON.stringify(body), { delaySeconds: delay, group: message.endpoint_id });
  return { kind: 'deferred', reason, delaySeconds: delay };
};

/**
 * Applies the endpoint's pause, rate and in-flight cap to one delivery: `admitted` (maybe holding a slot), or
 * the delivery was sent back to wait (`deferred`) with its ticket when it reserved its start.
 */
const throttle = async (
  ctx: WebhookContext,
  message: DeliveryMessage,
  endpoint: EndpointRecord,
  limits: EffectiveLimits,
  now: Date,
  leaseMs: number,
): Promise<Extract<Admission, { kind: 'admitted' }> | Deferred> => {
  const nowMs = now.getTime();
  const deferrals = message.deferrals ?? 0;
  // A Retry-After paused the whole endpoint: wait until then, spread over as long again (at most a minute) so
  // the backlog does not arrive at once when it ends; a reservation made before the pause is given up (the rate
  // is counted again after it).
  const pausedUntil = endpoint.paused_until ? Date.parse(endpoint.paused_until) : Number.NaN;
  if (pausedUntil > nowMs) {
    const pause = delaySecondsUntil(pausedUntil, nowMs);
    return deferDelivery(
      ctx,
      message,
      { deferrals },
      pause + Math.floor(ctx.random() * Math.min(MAX_PAUSE_SPREAD_SECONDS, Math.max(2, pause))),
      'paused',
    );
  }
  // A delivery that reserved its start comes back up to a second early (an SQS delay is whole seconds) and
  // waits out the rest here, so the starts keep the rate's spacing instead of bunching on whole seconds.
  // A ticket is honoured only around its start: one that came back much later (it waited for a slot) is counted
  // against the rate again, so a backlog of old tickets cannot start at once.
  const issued = message.not_before ? Date.parse(message.not_before) : undefined;
  const ticketMs = issued !== undefined && nowMs - issued <= TICKET_GRACE_MS ? issued : undefined;
  if (ticketMs !== undefined && ticketMs > nowMs) {
    if (ticketMs - nowMs > IN_PROCESS_WAIT_MS)
      return deferDelivery(
        ctx,
        message,
        { not_before: message.not_before, deferrals },
        wholeSecondsBefore(ticketMs, nowMs),
        'rate',
      );
    await ctx.sleep(ticketMs - nowMs);
  }
  if (!hasLimits(limits)) return { kind: 'admitted' };
  const admit = (ticket: boolean) =>
    ctx.limiter.admit(endpoint.endpoint_id, {
      limits,
      nowMs: ctx.clock.now().getTime(),
      leaseMs,
      ticket,
      deferrals,
    });
  let admission = await admit(ticketMs !== undefined);
  if (admission.kind === 'reserved') {
    const waitMs = admission.startMs - ctx.clock.now().getTime();
    if (waitMs > IN_PROCESS_WAIT_MS)
      return deferDelivery(
        ctx,
        message,
        { not_before: new Date(admission.startMs).toISOString(), deferrals },
        wholeSecondsBefore(admission.startMs, ctx.clock.now().getTime()),
        'rate',
      );
    // Its start is within a second: wait for it here, then take a slot on the ticket (when a cap applies).
    await ctx.sleep(Math.max(0, waitMs));
    admission = await admit(true);
  }
  if (admission.kind === 'admitted') return admission;
  if (admission.kind === 'reserved') throw new Error('a ticket was counted against the rate');
  // Every slot is held. A configured cap is normal operation: come back soon (≤ 8 s, jittered so the waiting
  // deliveries spread); an isolated endpoint's backlog backs off further so it costs little. The ticket is not
  // kept: by the time it comes back it is stale.
  const waitSeconds = Math.max(1, Math.round(admission.waitSeconds * (0.5 + ctx.random())));
  return deferDelivery(ctx, message, { deferrals: nextDeferrals(deferrals) }, waitSeconds, 'in_flight');
};

/** Whole seconds of SQS delay that bring a message back at most a second before `atMs` (at least 1). */
const wholeSecondsBefore = (atMs: number, nowMs: number): number =>
  Math.max(1, Math.floor((atMs - nowMs) / 1000));

/**
 * The signature headers of an attempt (C13, C33), by the endpoint's scheme and algorithm: this service's
 * `X-Timestamp` and `X-Signature` or Standard Webhooks' three headers (the event id as `webhook-id`, so receivers
 * deduplicate retries and replays by it); HMAC with the endpoint's secrets (both during a rotation) or Ed25519 with
 * the service's active key (`v1a`), whose id goes in `X-Signature-Key-Id` for the JWKS lookup.
 */
const signatureHeaders = async (
  ctx: WebhookContext,
  endpoint: EndpointRecord,
  request: { eventId: string; body: Uint8Array; path: string; at: Date; started: Date },
): Promise<Record<string, string>> => {
  let signer: WebhookSigner;
  if (endpoint.signing_algorithm === 'ed25519') {
    const key = await ctx.senderSigner.current();
    // Registering an Ed25519 endpoint makes a key; none here is a fault of the deployment, retried like one.
    if (!key) throw new Error('no webhook signing key is active');
    signer = { algorithm: 'ed25519', kid: key.kid, privateKey: key.privateKey };
  } else {
    const secrets = (await signingSecrets(ctx, endpoint, request.started)).map(secretBytes);
    signer = { algorithm: 'hmac-sha256', secrets };
  }
  return signedRequestHeaders(signer, endpoint.signature_scheme ?? 'native', {
    id: request.eventId,
    at: request.at,
    path: request.path,
    body: request.body,
  });
};

/** One POST to an HTTP endpoint: its client certificate (mTLS) and outbound authentication (C34) with it. */
const postToUrl = async (
  ctx: WebhookContext,
  endpoint: EndpointRecord,
  url: string,
  headers: Readonly<Record<string, string>>,
  body: Uint8Array,
  timeoutMs: number,
): Promise<WebhookResponse> => {
  // Presented in the handshake; a receiver that requires one and gets none fails the attempt (a TLS error or the
  // status it answers), retried like any other failure.
  const clientCertificate = await clientCertificateOf(ctx, endpoint);
  // The endpoint's outbound authentication goes first, so no header of it can replace the service's own.
  return sendWithAuth(
    ctx,
    endpoint,
    (authHeaders, remainingMs) =>
      ctx.http.post({
        url,
        headers: { ...authHeaders, ...headers },
        body,
        timeoutMs: remainingMs,
        ...(clientCertificate ? { clientCertificate } : {}),
      }),
    timeoutMs,
  );
};

/** The claimed attempt: stop it, or sign and send it (HTTP or a cloud destination) and enqueue what comes next. */
const attempt = async (
  ctx: WebhookContext,
  message: DeliveryMessage,
  item: OutboxItem | undefined,
  endpoint: EndpointRecord | undefined,
  started: Date,
  timeoutMs: number,
  /** Frees the limiter slot: called once the POST settled (the slot is the request in flight). */
  settled: () => Promise<void>,
): Promise<DeliveryResult> => {
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
    await noteReplayEnded(ctx, message, 'stopped');
    return {
      kind: 'attempted',
      decision: { kind: 'stopped', reason, disableEndpoint: disable },
      attempt,
      sent: false,
    };
  };
  if (!item) return stop('event_expired');
  if (item.expunged_at) return stop('event_expunged');
  if (!endpoint) return stop('endpoint_deleted');
  if (endpoint.status !== 'enabled') return stop('endpoint_disabled');

  const version: EnvelopeVersion = isEnvelopeVersion(endpoint.version)
    ? endpoint.version
    : LATEST_ENVELOPE_VERSION;
  // One Ed25519 key signs for every endpoint: the signed body names its endpoint, so it cannot be replayed to another.
  const body = new TextEncoder().encode(
    JSON.stringify(
      renderEnvelope(
        item,
        version,
        message.attempt,
        endpoint.signing_algorithm === 'ed25519' ? endpoint.endpoint_id : undefined,
      ),
    ),
  );
  // HTTP to `<url>/<topic>`, or an SQS queue or EventBridge bus of the partner's (C34), whose signed path is `/<topic>`.
  const cloud = endpoint.destination;
  const url =
    cloud === undefined && endpoint.url !== undefined ? targetUrl(endpoint.url, item.type) : undefined;
  if (cloud === undefined && url === undefined) return stop('endpoint_has_no_destination');
  const parsed = url !== undefined ? new URL(url) : undefined;
  const signature = await signatureHeaders(ctx, endpoint, {
    eventId: item.event_id,
    body,
    path: parsed ? `${parsed.pathname}${parsed.search}` : cloudSignedPath(topicOf(item.type)),
    at: ctx.clock.now(),
    started,
  });
  const headers: Record<string, string> = {
    'Content-Type': 'application/json',
    'User-Agent': ctx.settings.userAgent,
    'X-Event-Id': item.event_id,
    ...signature,
    'X-Webhook-Producer': item.producer ?? 'pricing-service',
    'X-Attempt': String(message.attempt),
  };
  // An attempt still unanswered after `slowAttemptMs` counts as a timeout at once (isolation need not wait for
  // the whole timeout to learn that an endpoint hangs); noted once per attempt, ended by an answer.
  let slowNoted: Promise<void> | undefined;
  const slowTimer = setTimeout(() => {
    slowNoted = ctx.endpoints.noteTimeout(endpoint.endpoint_id).catch(() => undefined);
  }, slowAttemptMs(timeoutMs));
  const response = await (cloud !== undefined
    ? ctx.destinations.send({
        destination: cloud,
        endpointId: endpoint.endpoint_id,
        body,
        headers,
        eventId: item.event_id,
        eventType: item.type,
        producer: item.producer ?? 'pricing-service',
        attempt: message.attempt,
        ...(message.order ? { orderingKey: message.order.key } : {}),
        at: ctx.clock.now(),
        timeoutMs,
      })
    : postToUrl(ctx, endpoint, url ?? '', headers, body, timeoutMs)
  ).finally(() => clearTimeout(slowTimer));
  await Promise.all([slowNoted, settled()]);
  const finished = ctx.clock.now();
  await noteEndpointHealth(ctx, endpoint, response, finished, slowNoted !== undefined);
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
      : // What the client could say beyond the kind (no secret, header or URL: the port's contract).
        {
          error: response.error,
          ...(response.message ? { error_detail: response.message.slice(0, 200) } : {}),
        }),
    outcome: decision.kind,
    ...(decision.kind !== 'delivered' ? { reason: decision.reason } : {}),
    ...(nextAttemptAt ? { next_attempt_at: nextAttemptAt.toISOString() } : {}),
    ...(message.replay_id ? { replay_id: message.replay_id } : {}),
  };

  // What comes next is enqueued before the outcome is recorded (see above).
  if (decision.kind === 'retry' && nextAttemptAt) {
    const next: DeliveryMessage = { ...chained(message), attempt: message.attempt + 1 };
    const delaySeconds = Math.ceil(decision.delaySeconds);
    if (delaySeconds <= SCHEDULER.maxQueueDelaySeconds) {
      await ctx.queue.send('delivery', JSON.stringify(next), { delaySeconds, group: message.endpoint_id });
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
      JSON.stringify({ ...chained(message), dead_reason: decision.reason, dead_at: finished.toISOString() }),
    );
    // Never about the delivery of another signal (that would raise one more, without end).
    if (!isOperationalEvent(item.type))
      await ctx.operations.emit({
        type: 'operations.delivery_dead',
        key: `delivery_dead:${item.event_id}:${endpoint.endpoint_id}:${message.attempt}`,
        data: {
          event_id: item.event_id,
          endpoint_id: endpoint.endpoint_id,
          event_type: item.type,
          attempts: message.attempt,
          reason: decision.reason,
        },
        ...(endpoint.tenant !== undefined ? { tenant: endpoint.tenant } : {}),
        traceId: item.trace_id,
      });
  }
  if (decision.kind === 'stopped' && decision.disableEndpoint)
    await disableEndpoint(
      ctx,
      endpoint,
      item,
      decision.reason,
      `${decision.reason} (event ${item.event_id})`,
      finished,
    );
  else await noteFailingRun(ctx, endpoint, item, decision.kind === 'delivered', finished);
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
  if (decision.kind !== 'retry') await noteReplayEnded(ctx, message, decision.kind);
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
  return { kind: 'attempted', decision, attempt, sent: true };
};
