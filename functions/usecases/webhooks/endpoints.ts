import { createHash } from 'node:crypto';
import { ServiceError } from '../../domain/errors';
import { externalIdFrom, queueAddressOf } from '../../domain/webhooks/destinations';
import { jwkThumbprint, publicDpopJwk } from '../../domain/webhooks/dpop';
import { LATEST_ENVELOPE_VERSION } from '../../domain/webhooks/envelope';
import { summaryOf } from '../../domain/webhooks/outbound-auth';
import { generateSecret } from '../../domain/webhooks/secret';
import type { ExactlyOnce } from '../../ports/idempotency';
import type {
  EndpointChanges,
  EndpointRecord,
  EndpointSecrets,
  Page,
  RetiringSecret,
} from '../../ports/webhooks';
import type {
  CreateEndpointRequest,
  DestinationInput,
  DpopJwkInput,
  UpdateEndpointRequest,
} from '../../schemas/webhooks';
import { newId } from '../../shared/ids';
import { CONFLICT, type RetryPolicy, retryOnConflict } from '../../shared/retry';
import type { WebhookContext } from './context';
import { type MtlsSummary, mtlsSummary, storedMtls, validateClientCertificate } from './mtls';
import { sealAuth } from './outbound-auth';
import { sealedJson } from './sealed-json';
import { ensureSenderKey } from './sender-keys';

export class EndpointNotFoundError extends ServiceError {
  constructor(endpointId: string) {
    super('not_found', `no endpoint ${endpointId}`);
    this.name = 'EndpointNotFoundError';
  }
}

/**
 * An endpoint as the API shows it: never a secret, never its ciphertext, never the partner key's hash; of its
 * client certificate only a summary (never the key, nor the PEM).
 */
export type EndpointView = Omit<
  EndpointRecord,
  'secret_ciphertext' | 'partner_key_sha256' | 'previous_partner_key_sha256' | 'mtls'
> & {
  readonly mtls?: MtlsSummary;
};

/** The view in a fixed key order (DynamoDB does not keep the order of an item's attributes). */
export const endpointView = (record: EndpointRecord): EndpointView => ({
  endpoint_id: record.endpoint_id,
  ...(record.url !== undefined ? { url: record.url } : {}),
  ...(record.destination !== undefined ? { destination: record.destination } : {}),
  topics: record.topics,
  ...(record.event_types !== undefined ? { event_types: record.event_types } : {}),
  ...(record.filter !== undefined ? { filter: record.filter } : {}),
  ...(record.rate_limit !== undefined ? { rate_limit: record.rate_limit } : {}),
  ...(record.ordering !== undefined ? { ordering: record.ordering } : {}),
  ...(record.disable_after_days !== undefined ? { disable_after_days: record.disable_after_days } : {}),
  ...(record.retention_days !== undefined ? { retention_days: record.retention_days } : {}),
  ...(record.signature_scheme !== undefined ? { signature_scheme: record.signature_scheme } : {}),
  ...(record.signing_algorithm !== undefined ? { signing_algorithm: record.signing_algorithm } : {}),
  ...(record.auth !== undefined ? { auth: record.auth } : {}),
  ...(record.description !== undefined ? { description: record.description } : {}),
  ...(record.tenant !== undefined ? { tenant: record.tenant } : {}),
  version: record.version,
  status: record.status,
  ...(record.disabled_reason !== undefined ? { disabled_reason: record.disabled_reason } : {}),
  ...(record.previous_secret_expires_at !== undefined
    ? { previous_secret_expires_at: record.previous_secret_expires_at }
    : {}),
  ...(record.dpop_jwk !== undefined ? { dpop_jwk: record.dpop_jwk } : {}),
  ...(record.dpop_jkt !== undefined ? { dpop_jkt: record.dpop_jkt } : {}),
  ...(record.mtls !== undefined ? { mtls: mtlsSummary(record.mtls) } : {}),
  ...(record.consecutive_timeouts ? { consecutive_timeouts: record.consecutive_timeouts } : {}),
  ...(record.paused_until !== undefined ? { paused_until: record.paused_until } : {}),
  ...(record.failing_since !== undefined ? { failing_since: record.failing_since } : {}),
  created_at: record.created_at,
  updated_at: record.updated_at,
});

/**
 * A validated DPoP key as stored: its RFC 7638 members (never `kid`, `alg`, `use`, and never a private member,
 * which the schema refuses) and its thumbprint; `null` removes both (callbacks need no proof any more).
 */
const dpopChanges = (jwk: DpopJwkInput | null): Pick<EndpointChanges, 'dpop_jwk' | 'dpop_jkt'> => {
  if (jwk === null) return { dpop_jwk: undefined, dpop_jkt: undefined };
  const key = publicDpopJwk(jwk);
  return { dpop_jwk: key, dpop_jkt: jwkThumbprint(key) };
};

/** The partner key's stored form: its SHA-256, hex. */
export const partnerKeyHash = (partnerKey: string): string =>
  createHash('sha256').update(partnerKey, 'utf8').digest('hex');

/** The signing secrets, sealed (a rotation writes a new ciphertext); each decrypted once per instance. */
const sealedSecrets = sealedJson<EndpointSecrets>('webhook-endpoint-secret', 500);

const encryptSecrets = (ctx: Pick<WebhookContext, 'cipher'>, endpointId: string, secrets: EndpointSecrets) =>
  sealedSecrets.seal(ctx, endpointId, secrets);

const secretsOf = (ctx: Pick<WebhookContext, 'cipher'>, record: EndpointRecord): Promise<EndpointSecrets> =>
  sealedSecrets.open(ctx, record.endpoint_id, record.secret_ciphertext);

/** Rotated-out secrets kept besides the current one at most (rotations in quick succession): 5 signatures. */
export const MAX_RETIRING_SECRETS = 4;

/** The rotated-out secrets still within their overlap at `now`, the most recent first. */
const retiringSecrets = (secrets: EndpointSecrets, now: Date): RetiringSecret[] =>
  [...(secrets.previous ? [secrets.previous] : []), ...(secrets.earlier ?? [])]
    .filter((retiring) => Date.parse(retiring.expires_at) > now.getTime())
    .slice(0, MAX_RETIRING_SECRETS);

/** The secrets to sign with now: the current one, then each rotated-out one while its overlap lasts. */
export const signingSecrets = async (
  ctx: Pick<WebhookContext, 'cipher'>,
  record: EndpointRecord,
  now: Date,
): Promise<string[]> => {
  const secrets = await secretsOf(ctx, record);
  return [secrets.current, ...retiringSecrets(secrets, now).map((retiring) => retiring.secret)];
};

/**
 * `POST /webhooks/endpoints`: the signing secret and the partner key (for the resync routes) are returned once,
 * here; the secret is stored encrypted, the partner key only as its SHA-256.
 */
export type CreatedEndpoint = EndpointView & { readonly secret: string; readonly partner_key: string };

/**
 * A cloud destination as stored (C34): the partner's queue or bus and role, the external id the service makes for
 * the endpoint (kept when the destination changes: the role's trust names it), and the principal to trust.
 */
const storedDestination = (
  ctx: Pick<WebhookContext, 'randomBytes' | 'trustPrincipal'>,
  input: DestinationInput,
  current: EndpointRecord | undefined,
): EndpointRecord['destination'] => {
  if (input.type === 'http') return undefined;
  const external_id =
    current?.destination?.external_id ?? current?.external_id ?? externalIdFrom(ctx.randomBytes(24));
  const principal = ctx.trustPrincipal;
  return input.type === 'sqs'
    ? { type: 'sqs', queue_url: input.queue_url, role_arn: input.role_arn, external_id, principal }
    : {
        type: 'eventbridge',
        event_bus_arn: input.event_bus_arn,
        role_arn: input.role_arn,
        external_id,
        principal,
      };
};

/**
 * A queue URL that is not Amazon SQS's (an emulator's) only where the deployment says so (the local stack): in AWS the
 * service would otherwise send the partner role's signed requests, session token included, to any host.
 */
const checkQueueUrl = (
  ctx: Pick<WebhookContext, 'settings'>,
  destination: DestinationInput | undefined,
): void => {
  if (destination?.type !== 'sqs' || ctx.settings.emulatorQueues) return;
  if (queueAddressOf(destination.queue_url)?.region === undefined)
    throw fieldRefused(
      '$.destination.queue_url',
      'an Amazon SQS queue URL: https://sqs.<region>.amazonaws.com/<account>/<name>',
    );
};

/** A 400 naming the request's field (the endpoint as stored decides it, so the schema alone cannot). */
const fieldRefused = (path: string, message: string): ServiceError =>
  new ServiceError('invalid_request', `${path.slice(2)}: ${message}`, {
    details: { problems: [{ path, message }] },
  });

export const createEndpoint = async (
  ctx: Pick<
    WebhookContext,
    'clock' | 'endpoints' | 'cipher' | 'randomBytes' | 'senderKeys' | 'settings' | 'trustPrincipal'
  >,
  request: CreateEndpointRequest,
  once?: ExactlyOnce<CreatedEndpoint>,
): Promise<CreatedEndpoint> => {
  const now = ctx.clock.now();
  const endpointId = newId('ep', now);
  // Checked first: a refused certificate costs no encryption.
  const mtls = request.mtls !== undefined ? validateClientCertificate(request.mtls, now) : undefined;
  checkQueueUrl(ctx, request.destination);
  // An endpoint signed with Ed25519 needs the service's key to exist before its first delivery.
  if (request.signing_algorithm === 'ed25519') await ensureSenderKey(ctx);
  const secret = generateSecret(ctx.randomBytes);
  const destination =
    request.destination !== undefined ? storedDestination(ctx, request.destination, undefined) : undefined;
  const partnerKey = `pk_${Buffer.from(ctx.randomBytes(32)).toString('base64url')}`;
  const record: EndpointRecord = {
    endpoint_id: endpointId,
    ...(request.url !== undefined ? { url: request.url } : {}),
    ...(destination !== undefined ? { destination, external_id: destination.external_id } : {}),
    topics: [...new Set(request.topics ?? [])].sort(),
    ...(request.event_types !== undefined ? { event_types: [...new Set(request.event_types)].sort() } : {}),
    ...(request.filter !== undefined ? { filter: request.filter } : {}),
    ...(request.rate_limit !== undefined ? { rate_limit: request.rate_limit } : {}),
    ...(request.ordering !== undefined ? { ordering: request.ordering } : {}),
    ...(request.disable_after_days !== undefined ? { disable_after_days: request.disable_after_days } : {}),
    ...(request.retention_days !== undefined ? { retention_days: request.retention_days } : {}),
    ...(request.signature_scheme !== undefined && request.signature_scheme !== 'native'
      ? { signature_scheme: request.signature_scheme }
      : {}),
    ...(request.signing_algorithm === 'ed25519' ? { signing_algorithm: request.signing_algorithm } : {}),
    ...(request.auth !== undefined
      ? { auth_ciphertext: await sealAuth(ctx, endpointId, request.auth), auth: summaryOf(request.auth) }
      : {}),
    ...(request.description !== undefined ? { description: request.description } : {}),
    ...(request.tenant !== undefined ? { tenant: request.tenant } : {}),
    version: request.version ?? LATEST_ENVELOPE_VERSION,
    status: 'enabled',
    secret_ciphertext: await encryptSecrets(ctx, endpointId, { current: secret }),
    partner_key_sha256: partnerKeyHash(partnerKey),
    ...(request.dpop_jwk !== undefined ? dpopChanges(request.dpop_jwk) : {}),
    ...(mtls !== undefined ? { mtls: await storedMtls(ctx, endpointId, mtls) } : {}),
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
  };
  const created: CreatedEndpoint = { ...endpointView(record), secret, partner_key: partnerKey };
  // The endpoint and the request's answer are one write: a retry after a crash gets this endpoint and its
  // secret, never a second endpoint (which would receive every event twice).
  await ctx.endpoints.create(record, await once?.completion(created));
  return created;
};

export const getEndpoint = async (ctx: Pick<WebhookContext, 'endpoints'>, endpointId: string) => {
  const record = await ctx.endpoints.get(endpointId);
  if (!record) throw new EndpointNotFoundError(endpointId);
  return endpointView(record);
};

export const listEndpoints = async (
  ctx: Pick<WebhookContext, 'endpoints'>,
  limit: number,
  cursor?: string,
): Promise<Page<EndpointView>> => {
  const page = await ctx.endpoints.list(limit, cursor);
  return { items: page.items.map(endpointView), ...(page.cursor ? { cursor: page.cursor } : {}) };
};

/**
 * `PATCH`: re-enabling clears the reason it was disabled; `dpop_jwk` sets (or, `null`, removes) the DPoP key;
 * `mtls` replaces (or, `null`, removes) the client certificate.
 */
export const updateEndpoint = async (
  ctx: Pick<
    WebhookContext,
    'clock' | 'endpoints' | 'cipher' | 'senderKeys' | 'randomBytes' | 'settings' | 'trustPrincipal'
  >,
  endpointId: string,
  request: UpdateEndpointRequest,
): Promise<EndpointView> => {
  const now = ctx.clock.now();
  const mtls = request.mtls ? validateClientCertificate(request.mtls, now) : request.mtls;
  checkQueueUrl(ctx, request.destination);
  // An endpoint signed with Ed25519 needs the service's key to exist before its first delivery.
  if (request.signing_algorithm === 'ed25519') await ensureSenderKey(ctx);
  // What the change means depends on where deliveries go now: then the endpoint is read first, and the change is
  // written only if it is still the one read (a concurrent change is read again), so two changes cannot combine
  // into an endpoint with both a url and a queue, or credentials on a queue.
  if (request.url !== undefined || request.destination !== undefined || request.auth || request.mtls)
    return rotating(ctx, endpointId, async (current) => {
      refuseForDestination(request, current);
      const updated = await ctx.endpoints.update(
        endpointId,
        await endpointChanges(ctx, endpointId, request, mtls, current),
        now.toISOString(),
        { expected: current },
      );
      return updated ? endpointView(updated) : CONFLICT;
    });
  const updated = await ctx.endpoints.update(
    endpointId,
    await endpointChanges(ctx, endpointId, request, mtls, undefined),
    now.toISOString(),
  );
  if (!updated) throw new EndpointNotFoundError(endpointId);
  return endpointView(updated);
};

/** What a PATCH may not do to the endpoint as it is. */
const refuseForDestination = (request: UpdateEndpointRequest, current: EndpointRecord): void => {
  if (request.destination === undefined && current.destination !== undefined) {
    // An SQS or EventBridge endpoint has no url, outbound auth nor certificate: moving it is a change of destination.
    if (request.url !== undefined)
      throw fieldRefused(
        '$.url',
        'the endpoint delivers to a cloud destination: give destination {"type": "http"} with it',
      );
    if (request.auth) throw fieldRefused('$.auth', 'not for a cloud destination');
    if (request.mtls) throw fieldRefused('$.mtls', 'not for a cloud destination');
  }
  // Outbound credentials (static header values, OAuth tokens) are sent to the endpoint's origin: moving it to
  // another origin without giving them again would hand them to whoever runs the new one.
  if (
    request.url !== undefined &&
    request.auth === undefined &&
    current.auth_ciphertext !== undefined &&
    (current.url === undefined || new URL(current.url).origin !== new URL(request.url).origin)
  )
    throw fieldRefused('$.auth', 'required when the url changes origin');
};

/** The stored changes of a PATCH (`current`: the endpoint as read, when the change depends on it). */
const endpointChanges = async (
  ctx: Pick<WebhookContext, 'cipher' | 'randomBytes' | 'settings' | 'trustPrincipal'>,
  endpointId: string,
  request: UpdateEndpointRequest,
  mtls: ReturnType<typeof validateClientCertificate> | null | undefined,
  current: EndpointRecord | undefined,
): Promise<EndpointChanges> => {
  const moved =
    request.destination !== undefined ? storedDestination(ctx, request.destination, current) : undefined;
  const destination: EndpointChanges =
    request.destination === undefined
      ? {}
      : moved === undefined
        ? { destination: undefined }
        : {
            destination: moved,
            external_id: moved.external_id,
            // What only HTTP uses goes with it.
            url: undefined,
            auth: undefined,
            auth_ciphertext: undefined,
            mtls: undefined,
          };
  return {
    ...(request.url !== undefined ? { url: request.url } : {}),
    ...destination,
    ...(request.topics !== undefined ? { topics: [...new Set(request.topics)].sort() } : {}),
    // `null` (or an empty list for event types) removes the restriction.
    ...(request.event_types === null || request.event_types?.length === 0
      ? { event_types: undefined }
      : request.event_types !== undefined
        ? { event_types: [...new Set(request.event_types)].sort() }
        : {}),
    ...(request.filter === null
      ? { filter: undefined }
      : request.filter !== undefined
        ? { filter: request.filter }
        : {}),
    ...(request.rate_limit === null
      ? { rate_limit: undefined }
      : request.rate_limit !== undefined
        ? { rate_limit: request.rate_limit }
        : {}),
    ...(request.ordering === null
      ? { ordering: undefined }
      : request.ordering !== undefined
        ? { ordering: request.ordering }
        : {}),
    ...(request.disable_after_days === null
      ? { disable_after_days: undefined }
      : request.disable_after_days !== undefined
        ? { disable_after_days: request.disable_after_days }
        : {}),
    ...(request.retention_days === null
      ? { retention_days: undefined }
      : request.retention_days !== undefined
        ? { retention_days: request.retention_days }
        : {}),
    ...(request.auth === null
      ? { auth_ciphertext: undefined, auth: undefined }
      : request.auth !== undefined
        ? { auth_ciphertext: await sealAuth(ctx, endpointId, request.auth), auth: summaryOf(request.auth) }
        : {}),
    // "hmac-sha256" is the default: stored as no algorithm at all.
    ...(request.signing_algorithm === 'hmac-sha256'
      ? { signing_algorithm: undefined }
      : request.signing_algorithm !== undefined
        ? { signing_algorithm: request.signing_algorithm }
        : {}),
    // "native" is the default: stored as no scheme at all.
    ...(request.signature_scheme === 'native'
      ? { signature_scheme: undefined }
      : request.signature_scheme !== undefined
        ? { signature_scheme: request.signature_scheme }
        : {}),
    ...(request.description !== undefined ? { description: request.description } : {}),
    ...(request.version !== undefined ? { version: request.version } : {}),
    ...(request.status !== undefined ? { status: request.status } : {}),
    // Re-enabled: what was learned about its failures starts afresh.
    ...(request.status === 'enabled'
      ? {
          disabled_reason: undefined,
          failing_since: undefined,
          failing_warned: undefined,
          consecutive_timeouts: undefined,
          paused_until: undefined,
        }
      : {}),
    ...(request.status === 'disabled' ? { disabled_reason: 'disabled_by_operator' } : {}),
    ...(request.dpop_jwk !== undefined ? dpopChanges(request.dpop_jwk) : {}),
    // `null` removes the certificate: deliveries present none any more.
    ...(mtls === null ? { mtls: undefined } : {}),
    ...(mtls ? { mtls: await storedMtls(ctx, endpointId, mtls) } : {}),
  };
};

export const deleteEndpoint = async (ctx: Pick<WebhookContext, 'endpoints'>, endpointId: string) => {
  if (!(await ctx.endpoints.delete(endpointId))) throw new EndpointNotFoundError(endpointId);
};

/**
 * `POST /webhooks/endpoints/{id}/rotate-secret` (C12): a new secret, returned once; the old one is still sent
 * beside it for `previousSecretHours`, so a receiver can switch without a gap. A secret rotated out by an
 * earlier rotation whose overlap has not ended is still sent until its own end (at most
 * `MAX_RETIRING_SECRETS` rotated-out secrets; the oldest beyond that are dropped).
 */
export type RotatedEndpoint = EndpointView & { readonly secret: string };

/** Rotations of one endpoint racing each other: each re-reads and tries again (5 attempts, 5 ms doubling). */
const ROTATION_RETRY: RetryPolicy = { attempts: 5, baseMs: 5, capMs: 80 };

/** Runs a rotation against the endpoint's record as read now, again while a concurrent change wins. */
const rotating = <T>(
  ctx: Pick<WebhookContext, 'clock' | 'endpoints'>,
  endpointId: string,
  attempt: (record: EndpointRecord, now: Date) => Promise<T | typeof CONFLICT>,
): Promise<T> =>
  retryOnConflict(
    ROTATION_RETRY,
    async () => {
      const record = await ctx.endpoints.get(endpointId);
      if (!record) throw new EndpointNotFoundError(endpointId);
      return attempt(record, ctx.clock.now());
    },
    () => new EndpointConflictError(endpointId),
  );

export const rotateSecret = async (
  ctx: Pick<WebhookContext, 'clock' | 'endpoints' | 'cipher' | 'randomBytes' | 'settings'>,
  endpointId: string,
  once?: ExactlyOnce<RotatedEndpoint>,
  /** How long the old secret is still sent; 0 (an emergency: it leaked) drops every old secret at once. */
  overlapHours: number = ctx.settings.previousSecretHours,
): Promise<RotatedEndpoint> => {
  return rotating(ctx, endpointId, async (record, now) => {
    const secret = generateSecret(ctx.randomBytes);
    let changes: EndpointChanges;
    if (overlapHours === 0) {
      changes = {
        secret_ciphertext: await encryptSecrets(ctx, endpointId, { current: secret }),
        previous_secret_expires_at: undefined,
      };
    } else {
      const stored = await secretsOf(ctx, record);
      const earlier = retiringSecrets(stored, now).slice(0, MAX_RETIRING_SECRETS - 1);
      const expiresAt = new Date(now.getTime() + overlapHours * 3_600_000).toISOString();
      changes = {
        secret_ciphertext: await encryptSecrets(ctx, endpointId, {
          current: secret,
          previous: { secret: stored.current, expires_at: expiresAt },
          ...(earlier.length > 0 ? { earlier } : {}),
        }),
        // The last of the rotated-out secrets to stop being sent.
        previous_secret_expires_at: expiresAt,
      };
    }
    // Conditional on the record read (a concurrent rotation would otherwise drop a secret still in its
    // overlap), and one write with the request's answer: a retry after a crash gets this secret, and the
    // endpoint is not rotated a second time.
    const at = now.toISOString();
    const rotated: RotatedEndpoint = {
      ...endpointView({ ...record, ...changes, updated_at: at } as EndpointRecord),
      secret,
    };
    const updated = await ctx.endpoints.update(endpointId, changes, at, {
      expected: record,
      completion: await once?.completion(rotated),
    });
    return updated ? rotated : CONFLICT;
  });
};

/** A new partner key, shown once; the previous one is accepted for `overlapHours` (0: refused at once). */
export type RotatedPartnerKey = EndpointView & { readonly partner_key: string };

/** `POST /webhooks/endpoints/{id}/rotate-partner-key`: conditional on the record read, one write with the answer. */
export const rotatePartnerKey = async (
  ctx: Pick<WebhookContext, 'clock' | 'endpoints' | 'randomBytes'>,
  endpointId: string,
  overlapHours: number,
  once?: ExactlyOnce<RotatedPartnerKey>,
): Promise<RotatedPartnerKey> => {
  return rotating(ctx, endpointId, async (record, now) => {
    const partnerKey = `pk_${Buffer.from(ctx.randomBytes(32)).toString('base64url')}`;
    const keeps = overlapHours > 0 && record.partner_key_sha256 !== undefined;
    const changes: EndpointChanges = {
      partner_key_sha256: partnerKeyHash(partnerKey),
      previous_partner_key_sha256: keeps ? record.partner_key_sha256 : undefined,
      previous_partner_key_valid_until: keeps
        ? new Date(now.getTime() + overlapHours * 3_600_000).toISOString()
        : undefined,
    };
    const at = now.toISOString();
    const rotated: RotatedPartnerKey = {
      ...endpointView({ ...record, ...changes, updated_at: at } as EndpointRecord),
      partner_key: partnerKey,
    };
    const updated = await ctx.endpoints.update(endpointId, changes, at, {
      expected: record,
      completion: await once?.completion(rotated),
    });
    return updated ? rotated : CONFLICT;
  });
};

/** The endpoint kept changing while it was being rotated. */
export class EndpointConflictError extends ServiceError {
  constructor(endpointId: string) {
    super('conflict', `endpoint ${endpointId} kept changing while it was being changed; retry`, {
      retryAfterSeconds: 1,
    });
    this.name = 'EndpointConflictError';
  }
}
