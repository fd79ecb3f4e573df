import { createHash } from 'node:crypto';
import { EventBridgeClient, PutEventsCommand } from '@aws-sdk/client-eventbridge';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { AssumeRoleCommand, STSClient } from '@aws-sdk/client-sts';
import {
  type CloudDestination,
  eventBusAddressOf,
  messageAttributesOf,
  messageGroupOf,
  type QueueAddress,
  queueAddressOf,
} from '../../domain/webhooks/destinations';
import type { NetworkErrorKind } from '../../domain/webhooks/retry-policy';
import type { CloudDeliveryRequest, CloudDestinationSender } from '../../ports/webhook-destinations';
import type { WebhookResponse } from '../../ports/webhook-http';
import { isInsideAllowedCidrs } from '../http/egress-address';
import { type EgressPolicy, networkErrorKindOf } from '../http/guarded-http-client';

export interface CloudDestinationOptions {
  /** The service's region: STS is called there (its regional endpoint). */
  readonly region: string;
  /**
   * Where a queue that is not an Amazon SQS URL may be, with `emulatorQueues` (the local stack's fauxqs): its host a
   * loopback name or an address inside `allowedCidrs` (never merely a public one), over http only with `allowHttp`.
   */
  readonly egress: EgressPolicy;
  /** Queues of an emulator are reached at all (the local stack only): never in AWS. */
  readonly emulatorQueues?: boolean;
  /** The local stack's twin of STS and EventBridge; absent in AWS. */
  readonly stsEndpoint?: string;
  readonly eventBridgeEndpoint?: string;
  /** The service's own credentials for STS; absent: the default chain (the function's role). */
  readonly credentials?: { readonly accessKeyId: string; readonly secretAccessKey: string };
  /** How long an assumed session lasts (900 s to the role's maximum; default 1 h). */
  readonly sessionSeconds?: number;
  readonly now?: () => number;
}

/** Assumed credentials are used until this long before they expire, then assumed again. */
const CREDENTIALS_MARGIN_MS = 5 * 60_000;
/** A dropped session's clients are closed this long after (longer than any attempt that may be using them). */
const CLIENT_LINGER_MS = 2 * 60_000;
/** Assumed sessions kept (one per role and external id): the least recently assumed is dropped beyond it. */
const MAX_SESSIONS = 500;

interface Session {
  readonly expiresAtMs: number;
  readonly credentials: {
    readonly accessKeyId: string;
    readonly secretAccessKey: string;
    readonly sessionToken: string;
  };
  readonly clients: Map<string, SQSClient | EventBridgeClient>;
}

/** A refusal or failure of one AWS call, with the call's name (never a credential, never the body). */
class CloudCallError extends Error {
  constructor(
    readonly kind: NetworkErrorKind,
    message: string,
  ) {
    super(message);
    this.name = 'CloudCallError';
  }
}

/**
 * AWS's answers that mean the session's credentials are no good any more (the role's trust or the role itself
 * changed, the session expired): the cached session is dropped and the next attempt assumes the role again. Other
 * refusals (throttling, a missing queue, a rejected event, the network) keep it: assuming again cannot help them.
 */
const CREDENTIAL_ERRORS = new Set([
  'AccessDenied',
  'AccessDeniedException',
  'ExpiredToken',
  'ExpiredTokenException',
  'InvalidClientTokenId',
  'UnrecognizedClientException',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
]);

/** What an SDK error says, as the attempt history shows it: the call, AWS's error code, its HTTP status. */
const describeFailure = (call: string, error: unknown, aborted: boolean): CloudCallError => {
  if (error instanceof CloudCallError) return error;
  const failure = error as {
    name?: string;
    code?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number };
    cause?: { code?: string };
  };
  if (aborted || failure.name === 'AbortError' || failure.name === 'TimeoutError')
    return new CloudCallError('timeout', `${call}: no answer within the attempt's time`);
  const code = failure.code ?? failure.cause?.code;
  // The same reading of Node's network codes as the HTTP deliveries'.
  const network = code !== undefined ? networkErrorKindOf({ code }) : 'other';
  if (network !== 'other') return new CloudCallError(network, `${call}: ${code}`);
  const status = failure.$metadata?.httpStatusCode;
  return new CloudCallError(
    'other',
    `${call}: ${failure.name ?? 'Error'}${status !== undefined ? ` (HTTP ${status})` : ''}`,
  );
};

const withoutSdkLogging = <T extends { middlewareStack: { remove(name: string): boolean } }>(
  client: T,
): T => {
  client.middlewareStack.remove('loggerMiddleware');
  return client;
};

/**
 * SQS and EventBridge destinations in the partner's account (C34), through `sts:AssumeRole` with the destination's
 * external id. A session per role and external id is kept until 5 minutes before it expires; a refusal with cached
 * credentials drops them (the partner may have changed the role's trust), so the next attempt assumes afresh.
 * Every call makes one try (the SDK's own retries are off): the delivery's retry schedule is the only one, so an
 * SQS destination's attempts count exactly as an HTTP endpoint's do.
 */
export class AwsCloudDestinations implements CloudDestinationSender {
  private readonly sessions = new Map<string, Promise<Session>>();
  private readonly sts: STSClient;
  private readonly now: () => number;

  constructor(private readonly options: CloudDestinationOptions) {
    this.now = options.now ?? Date.now;
    this.sts = withoutSdkLogging(
      new STSClient({
        region: options.region,
        maxAttempts: 1,
        ...(options.stsEndpoint ? { endpoint: options.stsEndpoint } : {}),
        ...(options.credentials ? { credentials: options.credentials } : {}),
      }),
    );
  }

  async send(request: CloudDeliveryRequest): Promise<WebhookResponse> {
    const started = performance.now();
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), request.timeoutMs);
    let call = 'sts:AssumeRole';
    try {
      const target = this.targetOf(request.destination);
      const { session, entry } = await this.session(request, abort.signal);
      call = target.kind === 'sqs' ? 'sqs:SendMessage' : 'events:PutEvents';
      let id: string;
      try {
        id =
          target.kind === 'sqs'
            ? await this.sendMessage(session, target.queueUrl, target.address, request, abort.signal)
            : await this.putEvent(session, target.region, request, abort.signal);
      } catch (error) {
        // Credentials refused that were good: assume again next time (the trust or the role may be new).
        if (CREDENTIAL_ERRORS.has((error as { name?: string }).name ?? ''))
          this.drop(sessionKey(request.destination), entry);
        throw error;
      }
      return {
        kind: 'response',
        status: 200,
        headers: {},
        excerpt: `${target.kind === 'sqs' ? 'MessageId' : 'EventId'} ${id}`,
        durationMs: performance.now() - started,
      };
    } catch (error) {
      const failure = describeFailure(call, error, abort.signal.aborted);
      return {
        kind: 'network_error',
        error: failure.kind,
        message: failure.message,
        durationMs: performance.now() - started,
      };
    } finally {
      clearTimeout(timer);
    }
  }

  /** Where the destination is, or a refusal: an unknown address, or an emulator's queue egress does not allow. */
  private targetOf(
    destination: CloudDestination,
  ): { kind: 'sqs'; queueUrl: string; address: QueueAddress } | { kind: 'eventbridge'; region: string } {
    if (destination.type === 'eventbridge') {
      const bus = eventBusAddressOf(destination.event_bus_arn);
      if (!bus) throw new CloudCallError('other', 'not an event bus ARN');
      return { kind: 'eventbridge', region: bus.region };
    }
    const address = queueAddressOf(destination.queue_url);
    if (!address) throw new CloudCallError('other', 'not a queue URL');
    if (address.region !== undefined) return { kind: 'sqs', queueUrl: destination.queue_url, address };
    // An emulator's queue (the local stack's): never in AWS, where the role's signed requests would go to any host.
    if (!this.options.emulatorQueues)
      throw new CloudCallError('address_not_allowed', 'not an Amazon SQS queue URL');
    const url = new URL(destination.queue_url);
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const loopbackName = host === 'localhost' || host.endsWith('.localhost');
    const literal = loopbackName ? '127.0.0.1' : host;
    if (url.protocol === 'http:' && !this.options.egress.allowHttp)
      throw new CloudCallError('scheme_not_allowed', 'an http queue URL is not allowed');
    if (!isInsideAllowedCidrs(literal, this.options.egress.allowedCidrs))
      throw new CloudCallError(
        'address_not_allowed',
        'the queue is neither in Amazon SQS nor an allowed address',
      );
    const origin = `${url.protocol}//${loopbackName ? `127.0.0.1${url.port ? `:${url.port}` : ''}` : url.host}`;
    return { kind: 'sqs', queueUrl: `${origin}${url.pathname}`, address };
  }

  /** The role's session: cached, shared by concurrent attempts, assumed again shortly before it expires. */
  private async session(
    request: CloudDeliveryRequest,
    signal: AbortSignal,
  ): Promise<{ session: Session; entry: Promise<Session> }> {
    const key = sessionKey(request.destination);
    const cached = this.sessions.get(key);
    if (cached) {
      // Another attempt's assumption is waited for only within this attempt's own time.
      const session = await untilAborted(cached, signal).catch(() => undefined);
      if (signal.aborted)
        throw new CloudCallError('timeout', "sts:AssumeRole: no answer within the attempt's time");
      if (session && session.expiresAtMs - CREDENTIALS_MARGIN_MS > this.now())
        return { session, entry: cached };
      this.drop(key, cached);
    }
    const assumed = this.assume(request, signal);
    this.sessions.set(key, assumed);
    // A failed assumption is not kept: the next attempt asks again.
    assumed.catch(() => this.drop(key, assumed));
    if (this.sessions.size > MAX_SESSIONS) {
      const [oldestKey, oldest] = this.sessions.entries().next().value ?? [];
      if (oldestKey !== undefined && oldest !== undefined) this.drop(oldestKey, oldest);
    }
    return { session: await assumed, entry: assumed };
  }

  /**
   * Forgets a session (only if it is still the one cached) and closes its clients' connections once the attempts
   * that may still be using them are over.
   */
  private drop(key: string, entry: Promise<Session>): void {
    if (this.sessions.get(key) !== entry) return;
    this.sessions.delete(key);
    entry.then(
      (session) => {
        setTimeout(() => {
          for (const client of session.clients.values()) client.destroy();
        }, CLIENT_LINGER_MS).unref();
      },
      () => undefined,
    );
  }

  private async assume(request: CloudDeliveryRequest, signal: AbortSignal): Promise<Session> {
    const { destination } = request;
    const answer = await this.sts.send(
      new AssumeRoleCommand({
        RoleArn: destination.role_arn,
        ExternalId: destination.external_id,
        // The partner's CloudTrail names the endpoint that acted.
        RoleSessionName: `pricing-${request.endpointId}`.slice(0, 64),
        DurationSeconds: this.options.sessionSeconds ?? 3600,
      }),
      { abortSignal: signal },
    );
    const credentials = answer.Credentials;
    if (!credentials?.AccessKeyId || !credentials.SecretAccessKey || !credentials.SessionToken)
      throw new CloudCallError('other', 'sts:AssumeRole: no credentials in the answer');
    return {
      expiresAtMs: credentials.Expiration?.getTime() ?? this.now() + 900_000,
      credentials: {
        accessKeyId: credentials.AccessKeyId,
        secretAccessKey: credentials.SecretAccessKey,
        sessionToken: credentials.SessionToken,
      },
      clients: new Map(),
    };
  }

  private client<T extends SQSClient | EventBridgeClient>(session: Session, key: string, create: () => T): T {
    let client = session.clients.get(key) as T | undefined;
    if (!client) {
      client = withoutSdkLogging(create());
      session.clients.set(key, client);
    }
    return client;
  }

  private async sendMessage(
    session: Session,
    queueUrl: string,
    address: QueueAddress,
    request: CloudDeliveryRequest,
    signal: AbortSignal,
  ): Promise<string> {
    const region = address.region ?? this.options.region;
    const emulator = address.region === undefined ? new URL(queueUrl).origin : undefined;
    const sqs = this.client(
      session,
      `sqs ${region} ${emulator ?? ''}`,
      () =>
        new SQSClient({
          region,
          maxAttempts: 1,
          credentials: session.credentials,
          ...(emulator ? { endpoint: emulator } : {}),
        }),
    );
    const answer = await sqs.send(
      new SendMessageCommand({
        QueueUrl: queueUrl,
        MessageBody: new TextDecoder().decode(request.body),
        MessageAttributes: messageAttributesOf(request.headers),
        ...(address.fifo
          ? {
              MessageGroupId: messageGroupOf(request.endpointId, request.orderingKey),
              // A resent attempt (its answer lost) is the same message within SQS's 5-minute window.
              MessageDeduplicationId: createHash('sha256')
                .update(`${request.eventId}\n${request.attempt}`)
                .digest('hex'),
            }
          : {}),
      }),
      { abortSignal: signal },
    );
    return answer.MessageId ?? '';
  }

  private async putEvent(
    session: Session,
    region: string,
    request: CloudDeliveryRequest,
    signal: AbortSignal,
  ): Promise<string> {
    const { destination } = request;
    if (destination.type !== 'eventbridge') throw new CloudCallError('other', 'not an event bus');
    const events = this.client(
      session,
      `events ${region}`,
      () =>
        new EventBridgeClient({
          region,
          maxAttempts: 1,
          credentials: session.credentials,
          ...(this.options.eventBridgeEndpoint ? { endpoint: this.options.eventBridgeEndpoint } : {}),
        }),
    );
    const answer = await events.send(
      new PutEventsCommand({
        Entries: [
          {
            EventBusName: destination.event_bus_arn,
            Source: request.producer,
            DetailType: request.eventType,
            Detail: new TextDecoder().decode(request.body),
            Time: request.at,
          },
        ],
      }),
      { abortSignal: signal },
    );
    const entry = answer.Entries?.[0];
    if ((answer.FailedEntryCount ?? 0) > 0 || !entry?.EventId)
      throw new CloudCallError(
        'other',
        `events:PutEvents: ${entry?.ErrorCode ?? 'the entry was not accepted'}`,
      );
    return entry.EventId;
  }
}

/** `promise`, or a rejection as soon as `signal` aborts. */
const untilAborted = <T>(promise: Promise<T>, signal: AbortSignal): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    if (signal.aborted) return reject(new Error('aborted'));
    const onAbort = () => reject(new Error('aborted'));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });

const sessionKey = (destination: CloudDestination): string =>
  `${destination.role_arn}\n${destination.external_id}`;
