import { afterAll, beforeAll, expect } from 'vitest';
import { type LocalStack, startLocalStack } from '../../functions/composition/local/stack';
import type { RetryPolicy } from '../../functions/domain/webhooks/retry-policy';
import { endpointWithSecretResponseSchema } from '../../functions/schemas/webhooks';
import type { WebhookSettings } from '../../functions/usecases/webhooks/context';
import { operatorCalls } from './stack-with-receiver';
import { type Reaction, type ReceivedRequest, startReceiver, type TestReceiver } from './webhook-receiver';

/** A shortened retry policy: a 2 s attempt timeout, retries after 2, 4, 8 and 16 s, no daily retries. */
export const DELIVERY_WORLD_POLICY: RetryPolicy = {
  backoffSeconds: [2, 4, 8, 16],
  dailyRetryDays: 0,
  jitter: { min: 0.8, max: 1.2 },
  attemptTimeoutMs: 2_000,
};

/**
 * An in-memory local stack with a shortened retry policy and one loopback receiver whose answers the test decides
 * by path, started before the file's tests and stopped after them; helpers to register endpoints under
 * `<receiver>/<path>`, publish `<topic>.changed` events and read what reached a path.
 */
export const deliveryWorld = (options: {
  readonly apiKey: string;
  readonly adminToken: string;
  /** Default `DELIVERY_WORLD_POLICY`. */
  readonly policy?: RetryPolicy;
  /** Shorter lifetimes than production's (e.g. `disableAfterDays` in seconds' worth of a day). */
  readonly settings?: Partial<WebhookSettings>;
  readonly react: (request: ReceivedRequest) => Reaction;
}) => {
  const started: { stack?: LocalStack; receiver?: TestReceiver } = {};
  beforeAll(async () => {
    started.stack = await startLocalStack({
      port: 0,
      apiKey: options.apiKey,
      adminToken: options.adminToken,
      logLevel: 'SILENT',
      streamPollIntervalMs: 50,
      webhooks: {
        policy: options.policy ?? DELIVERY_WORLD_POLICY,
        ...(options.settings ? { settings: options.settings } : {}),
      },
      rateLimit: { requestsPerSecond: 100_000, burst: 100_000 },
    });
    started.receiver = await startReceiver(options.react);
  }, 60_000);
  afterAll(async () => {
    await started.receiver?.close();
    await started.stack?.stop();
  });
  const stack = (): LocalStack => {
    if (!started.stack) throw new Error('the stack is not started (outside a test?)');
    return started.stack;
  };
  const receiver = (): TestReceiver => {
    if (!started.receiver) throw new Error('the receiver is not started (outside a test?)');
    return started.receiver;
  };

  const admin = operatorCalls(() => stack().url, options.adminToken);

  return {
    admin,
    receiver,
    stack,
    /** The stack's base URL. */
    url: (): string => stack().url,
    register: async (path: string, topic: string, extra: Record<string, unknown> = {}) => {
      const created = await admin('POST', '/webhooks/endpoints', {
        url: `${receiver().baseUrl}/${path}`,
        topics: [topic],
        ...extra,
      });
      expect(created.status, JSON.stringify(created.body)).toBe(201);
      return endpointWithSecretResponseSchema.parse(created.body);
    },
    /** Publishes one `<topic>.changed` event and returns its id and when it was published. */
    publish: async (topic: string, seq: number) => {
      const publishedAt = Date.now();
      const answer = await admin('POST', '/webhooks/events', { type: `${topic}.changed`, data: { seq } });
      expect(answer.status, JSON.stringify(answer.body)).toBe(202);
      return { eventId: String(answer.body.event_id), publishedAt };
    },
    requestsTo: (path: string): ReceivedRequest[] =>
      receiver().requests.filter((request) => request.path.startsWith(`/webhooks/v1/${path}/`)),
  };
};

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
