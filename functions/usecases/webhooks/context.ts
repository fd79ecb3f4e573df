import { DEFAULT_DPOP_WINDOW_SECONDS } from '../../domain/webhooks/dpop';
import { DEFAULT_DISABLE_AFTER_DAYS } from '../../domain/webhooks/endpoint-health';
import type { RetryPolicy } from '../../domain/webhooks/retry-policy';
import type { Clock } from '../../ports/clock';
import type { MessageQueue } from '../../ports/queue';
import type { OneTimeScheduler } from '../../ports/scheduler';
import type { DataCipher } from '../../ports/signing';
import type { CloudDestinationSender } from '../../ports/webhook-destinations';
import type { WebhookHttpClient } from '../../ports/webhook-http';
import type {
  DeliveryRepository,
  DeliverySequencer,
  EndpointLimiter,
  EndpointRepository,
  EndpointStatsStore,
  EventStore,
  OrderPlace,
  ReplayRepository,
  SenderKeyStore,
} from '../../ports/webhooks';
import type { OperationalSignals } from './operational-events';
import type { OAuthTokenCache } from './outbound-auth';
import type { SenderKeySigner } from './sender-keys';

/** Lifetimes and horizons of the delivery pipeline; the defaults are the production values. */
export interface WebhookSettings {
  /** Event bodies expire after this many days (spec: stored to a minimum, with a TTL). */
  readonly bodyTtlDays: number;
  /** Delivery records (the attempt history) are kept longer than bodies. */
  readonly historyTtlDays: number;
  /** Replaying an event older than this needs `force` (C15: the receiver kit's dedup memory). */
  readonly replayHorizonDays: number;
  /** The sweeper fans out events whose fan-out is not recorded after this long. */
  readonly sweepAfterSeconds: number;
  /** How long a rotated-out secret is still sent (C12). */
  readonly previousSecretHours: number;
  /** Sent as `User-Agent`. */
  readonly userAgent: string;
  /** How far a DPoP proof's `iat` may be from the clock, both ways (partner callbacks, RFC 9449). */
  readonly dpopProofWindowSeconds: number;
  /** An endpoint failing continuously this long is disabled, unless it sets its own (C32). */
  readonly disableAfterDays: number;
  /**
   * Shorter body retention for the events of some tenants (days by tenant, below `bodyTtlDays`): an event of such a
   * tenant keeps its body at most this long, whatever its endpoints allow (C32 retention).
   */
  readonly tenantRetentionDays: Readonly<Record<string, number>>;
  /**
   * How long an instance reuses the list of webhook signing keys (C33): a rotation's key is published a day before
   * it signs, so only an emergency rotation (active at once) waits up to this long to take over.
   */
  readonly senderKeyCacheSeconds: number;
  /**
   * SQS destinations may be queues of an emulator (any `http(s)://<host>/<account>/<name>`, the local stack's fauxqs);
   * otherwise only Amazon SQS queue URLs are accepted.
   */
  readonly emulatorQueues: boolean;
}

/** Days an event's body is kept when it is written: the service's retention, or its tenant's when shorter. */
export const retentionDaysFor = (
  settings: Pick<WebhookSettings, 'bodyTtlDays' | 'tenantRetentionDays'>,
  tenant: string | undefined,
): number => {
  const own =
    tenant !== undefined && Object.hasOwn(settings.tenantRetentionDays, tenant)
      ? settings.tenantRetentionDays[tenant]
      : undefined;
  return own !== undefined ? Math.min(settings.bodyTtlDays, own) : settings.bodyTtlDays;
};

export const DEFAULT_WEBHOOK_SETTINGS: WebhookSettings = {
  bodyTtlDays: 30,
  historyTtlDays: 90,
  replayHorizonDays: 7,
  sweepAfterSeconds: 60,
  previousSecretHours: 24,
  userAgent: 'pricing-webhooks/1.0',
  dpopProofWindowSeconds: DEFAULT_DPOP_WINDOW_SECONDS,
  disableAfterDays: DEFAULT_DISABLE_AFTER_DAYS,
  tenantRetentionDays: {},
  senderKeyCacheSeconds: 60,
  emulatorQueues: false,
};

/** What the webhook use cases need: stores, queue and scheduler, the data cipher, the HTTP client, time. */
export interface WebhookContext {
  readonly clock: Clock;
  readonly events: EventStore;
  readonly endpoints: EndpointRepository;
  readonly deliveries: DeliveryRepository;
  readonly replays: ReplayRepository;
  readonly limiter: EndpointLimiter;
  /** The per-key queues of ordered endpoints (C31 `ordering`). */
  readonly sequencer: DeliverySequencer;
  /** The service's Ed25519 signing keys (C33), and the signer an instance keeps (the active key, decrypted once). */
  readonly senderKeys: SenderKeyStore;
  readonly senderSigner: SenderKeySigner;
  /** OAuth 2.0 access tokens of endpoints with client credentials (C34), kept by this instance. */
  readonly tokens: OAuthTokenCache;
  readonly stats: EndpointStatsStore;
  readonly queue: MessageQueue;
  readonly scheduler: OneTimeScheduler;
  readonly cipher: DataCipher;
  readonly http: WebhookHttpClient;
  /** SQS queues and EventBridge buses in partners' accounts (C34). */
  readonly destinations: CloudDestinationSender;
  /**
   * Whom a partner's role trusts for those destinations: the service's account, as `arn:aws:iam::<account>:root`
   * (in it only the deliver function's role may assume partner roles, and only with an external id the service made).
   */
  readonly trustPrincipal: string;
  readonly policy: RetryPolicy;
  readonly settings: WebhookSettings;
  /** Waits (a delivery's reserved start less than a second ahead). */
  readonly sleep: (ms: number) => Promise<void>;
  /** Uniform in [0, 1): the backoff jitter. */
  readonly random: () => number;
  readonly randomBytes: (size: number) => Uint8Array;
  /** The service's own signals as events of topic `operations` (C32): a dead delivery, an endpoint disabled. */
  readonly operations: OperationalSignals;
  /** Operational signals (a dead delivery, an endpoint disabled): logs and metrics. */
  readonly signal: (name: WebhookSignal, fields: Readonly<Record<string, unknown>>) => void;
}

export type WebhookSignal =
  | 'delivery_dead'
  | 'endpoint_disabled'
  | 'delivery_stopped'
  | 'fanout_swept'
  | 'order_head_woken'
  | 'order_turn_handed_on'
  | 'slot_release_failed'
  | 'stats_not_recorded';

export const epochSeconds = (at: Date, plusDays = 0): number =>
  Math.floor(at.getTime() / 1000) + Math.round(plusDays * 86_400);

/**
 * Closes a place of an ordered endpoint's key and sends the next open place's message, whose turn it now is
 * (C31 `ordering`). Repeating it is harmless: a closed place stays closed, and a second message for the next
 * delivery's attempt is dropped by its claim.
 */
export const handTurnOn = async (
  ctx: Pick<WebhookContext, 'sequencer' | 'queue'>,
  endpointId: string,
  place: OrderPlace,
  eventId: string,
): Promise<void> => {
  const next = await ctx.sequencer.close(endpointId, place, eventId);
  if (next) await ctx.queue.send('delivery', JSON.stringify(next), { group: next.endpoint_id });
};
