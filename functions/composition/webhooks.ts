import { randomBytes, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Logger } from '@aws-lambda-powertools/logger';
import * as z from 'zod';
import type { EgressPolicy } from '../adapters/http/guarded-http-client';
import { DEFAULT_RETRY_POLICY, type RetryPolicy, validateRetryPolicy } from '../domain/webhooks/retry-policy';
import type { ResponseSealer } from '../handlers/middleware/idempotency';
import type { DataCipher } from '../ports/signing';
import type { WebhookContext, WebhookSettings, WebhookSignal } from '../usecases/webhooks/context';
import { operationalSignals } from '../usecases/webhooks/operational-events';
import { OAuthTokenCache } from '../usecases/webhooks/outbound-auth';
import { senderKeySigner } from '../usecases/webhooks/sender-keys';
import type { ServiceDependencies } from './dependencies';
import type { Environment } from './environment';
import { lazyObject } from './lazy';

const numbers = (name: string, value: string): number[] => {
  const parsed = value.split(',').map((part) => Number(part.trim()));
  if (parsed.some((entry) => !Number.isFinite(entry) || entry < 0))
    throw new Error(`${name} must be a comma-separated list of non-negative numbers`);
  return parsed;
};

/** `WEBHOOK_TENANT_RETENTION_DAYS`: a JSON object of tenant → days (1–30), e.g. `{"eu-1":7}`. */
const tenantRetentionSchema = z.record(
  z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._:-]{0,127}$/, 'a tenant identifier'),
  z.number().int().min(1).max(30),
);

/**
 * Webhook settings from configuration: `WEBHOOK_TENANT_RETENTION_DAYS` shortens the body retention of some tenants'
 * events (C32 retention). A malformed value stops the function at start, naming the variable.
 */
export const webhookSettingsFromEnv = (env: Environment): Partial<WebhookSettings> => ({
  ...tenantRetentionFromEnv(env),
  // The local stack's bundles only (their queues are fauxqs'): never set in AWS.
  ...(env.WEBHOOK_EMULATOR_QUEUES === 'true' ? { emulatorQueues: true } : {}),
});

/** `PARTNER_TRUST_PRINCIPAL`: the service's account as `arn:<partition>:iam::<account>:root` (C34). */
export const trustPrincipalFromEnv = (env: Environment): string => {
  const principal = env.PARTNER_TRUST_PRINCIPAL;
  if (principal === undefined || !/^arn:aws(?:-cn|-us-gov)?:iam::\d{12}:root$/.test(principal))
    throw new Error('PARTNER_TRUST_PRINCIPAL: not an account principal (arn:aws:iam::<account>:root)');
  return principal;
};

const tenantRetentionFromEnv = (env: Environment): Partial<WebhookSettings> => {
  const raw = env.WEBHOOK_TENANT_RETENTION_DAYS;
  if (raw === undefined || raw.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new Error('WEBHOOK_TENANT_RETENTION_DAYS: not JSON (e.g. {"eu-1":7})');
  }
  const checked = tenantRetentionSchema.safeParse(parsed);
  if (!checked.success)
    throw new Error(
      `WEBHOOK_TENANT_RETENTION_DAYS: ${checked.error.issues.map((issue) => `${issue.path.join('.') || '$'}: ${issue.message}`).join('; ')}`,
    );
  return { tenantRetentionDays: checked.data };
};

/**
 * The retry policy from configuration: `WEBHOOK_BACKOFF_SECONDS` (comma-separated), `WEBHOOK_DAILY_RETRY_DAYS`,
 * `WEBHOOK_ATTEMPT_TIMEOUT_MS`. Unset: the production schedule (C14). Tests and local runs shorten it here,
 * never in code.
 */
export const retryPolicyFromEnv = (env: Environment): RetryPolicy =>
  validateRetryPolicy({
    ...DEFAULT_RETRY_POLICY,
    ...(env.WEBHOOK_BACKOFF_SECONDS
      ? { backoffSeconds: numbers('WEBHOOK_BACKOFF_SECONDS', env.WEBHOOK_BACKOFF_SECONDS) }
      : {}),
    ...(env.WEBHOOK_DAILY_RETRY_DAYS ? { dailyRetryDays: Number(env.WEBHOOK_DAILY_RETRY_DAYS) } : {}),
    ...(env.WEBHOOK_ATTEMPT_TIMEOUT_MS ? { attemptTimeoutMs: Number(env.WEBHOOK_ATTEMPT_TIMEOUT_MS) } : {}),
  });

/**
 * The PEM certificates of the file `WEBHOOK_CA_CERTS` names, checked to be certificates (the error names the
 * file, never its content).
 */
export const trustedCaCertificatesFrom = (file: string): string => {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new Error(`WEBHOOK_CA_CERTS: cannot read ${file}`, { cause: error });
  }
  const blocks = text.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new Error(`WEBHOOK_CA_CERTS: ${file} holds no PEM certificate`);
  blocks.forEach((block, index) => {
    try {
      new X509Certificate(block);
    } catch (error) {
      throw new Error(`WEBHOOK_CA_CERTS: certificate ${index + 1} in ${file} does not parse`, {
        cause: error,
      });
    }
  });
  return blocks.join('\n');
};

/**
 * Egress from configuration: `WEBHOOK_ALLOWED_CIDRS` (comma-separated), `WEBHOOK_ALLOW_HTTP=true`, and
 * `WEBHOOK_CA_CERTS` (a PEM file of CA certificates trusted besides the public roots: a local TLS receiver).
 */
export const egressPolicyFromEnv = (env: Environment, defaults: EgressPolicy): EgressPolicy => {
  const trusted = env.WEBHOOK_CA_CERTS ? trustedCaCertificatesFrom(env.WEBHOOK_CA_CERTS) : undefined;
  return {
    allowHttp: env.WEBHOOK_ALLOW_HTTP === undefined ? defaults.allowHttp : env.WEBHOOK_ALLOW_HTTP === 'true',
    allowedCidrs:
      env.WEBHOOK_ALLOWED_CIDRS === undefined
        ? defaults.allowedCidrs
        : env.WEBHOOK_ALLOWED_CIDRS.split(',')
            .map((cidr) => cidr.trim())
            .filter(Boolean),
    ...(trusted !== undefined
      ? { trustedCaCertificates: trusted }
      : defaults.trustedCaCertificates !== undefined
        ? { trustedCaCertificates: defaults.trustedCaCertificates }
        : {}),
  };
};

/** AWS: https only, public unicast only (C17). */
export const AWS_EGRESS: EgressPolicy = { allowHttp: false, allowedCidrs: [] };
/** The local stack: partners' test receivers on loopback, over plain http (C17). */
export const LOCAL_EGRESS: EgressPolicy = { allowHttp: true, allowedCidrs: ['127.0.0.0/8', '::1/128'] };

/** Signals as log lines an alarm can match (a metric filter in AWS; the local stack's log). */
const signalLogger =
  (logger: Logger) =>
  (name: WebhookSignal, fields: Readonly<Record<string, unknown>>): void => {
    if (name === 'delivery_dead') logger.error('delivery dead', { alarm: 'DeliveryDead', ...fields });
    else if (name === 'endpoint_disabled')
      logger.warn('endpoint disabled', { alarm: 'EndpointDisabled', ...fields });
    else if (
      name === 'slot_release_failed' ||
      name === 'stats_not_recorded' ||
      name === 'order_head_woken' ||
      name === 'order_turn_handed_on'
    )
      logger.warn(name.replaceAll('_', ' '), fields);
    else logger.info(name.replace('_', ' '), fields);
  };

/** Seals stored idempotent answers that carry a secret with the secrets key (C8 without a secret in clear). */
export const responseSealer = (cipher: DataCipher): ResponseSealer => {
  const context = { purpose: 'idempotent-response' };
  return {
    seal: (plaintext) => cipher.encrypt(new TextEncoder().encode(plaintext), context),
    open: async (sealed) => new TextDecoder().decode(await cipher.decrypt(sealed, context)),
  };
};

/**
 * The context the webhook use cases run in, for one function instance. Each member is taken from the function's
 * dependencies when first used, so a function reaches only the stores its work needs (fan-out never the replays).
 */
export const webhookContext = (deps: ServiceDependencies, logger: Logger): WebhookContext =>
  lazyObject<WebhookContext>({
    clock: () => deps.clock,
    events: () => deps.webhooks.events,
    endpoints: () => deps.webhooks.endpoints,
    deliveries: () => deps.webhooks.deliveries,
    replays: () => deps.webhooks.replays,
    limiter: () => deps.webhooks.limiter,
    sequencer: () => deps.webhooks.sequencer,
    senderKeys: () => deps.webhooks.senderKeys,
    senderSigner: () =>
      senderKeySigner(
        { clock: deps.clock, senderKeys: deps.webhooks.senderKeys, cipher: deps.secretsCipher },
        deps.webhooks.settings.senderKeyCacheSeconds,
      ),
    tokens: () => new OAuthTokenCache(),
    stats: () => deps.webhooks.stats,
    queue: () => deps.queue,
    scheduler: () => deps.scheduler,
    cipher: () => deps.secretsCipher,
    http: () => deps.webhooks.http,
    destinations: () => deps.webhooks.destinations,
    trustPrincipal: () => deps.webhooks.trustPrincipal,
    policy: () => deps.webhooks.policy,
    settings: () => deps.webhooks.settings,
    sleep: () => (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
    random: () => Math.random,
    randomBytes: () => (size: number) => randomBytes(size),
    signal: () => signalLogger(logger),
    operations: () =>
      operationalSignals({
        clock: deps.clock,
        events: deps.webhooks.events,
        settings: deps.webhooks.settings,
      }),
  });
