/**
 * Lambda entry point of the reference receiver (behind the `WebhookReceiver` CDK construct's REST API).
 *
 * Configuration, from the environment:
 * - `RECEIVER_TABLE_NAME` (required): the receiver table (partition key `event_id`, TTL `expires_at`);
 * - the signing secrets, exactly one of:
 *   - `WEBHOOK_SECRETS_PARAMETER`: name of an SSM SecureString parameter holding the `whsec_…` secrets
 *     (comma- or whitespace-separated), read at start and again every `SECRETS_CACHE_SECONDS` (default 300)
 *     — what the construct sets: secrets stay out of the environment;
 *   - `WEBHOOK_SECRETS`: the secrets themselves, comma-separated (local runs and tests only);
 * - `HANDLER_VERSION` (default `reference-1`): recorded with each processed event;
 * - `DEDUP_DAYS` (default 7, whole days ≥ 1): dedup memory, and the age past which an event is `event_too_old`;
 * - `WEBHOOK_JWKS_URL` (optional): the sender's `<API>/webhooks/jwks.json`, for endpoints signed with Ed25519,
 *   with `WEBHOOK_ENDPOINT_ID`, this endpoint's `ep_…` id (the shared key's deliveries name their endpoint).
 *
 * The configuration is read on the first invocation (a broken one fails that invocation, which API Gateway
 * answers 5xx and the sender retries) and kept for the life of the instance.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { JwksCache } from '../jwks';
import { IdempotencyStore } from '../process-once';
import { countingEffect } from './effect';
import { jsonConsoleLogger, type ReceiverLogger } from './http';
import { createReferenceReceiver, type ReferenceReceiver } from './receiver';
import {
  cachedSecrets,
  parseSecretList,
  readSsmParameter,
  type SecretsSource,
  type SsmParameterOptions,
} from './secrets';
import { receiverDocuments } from './table';

export const DEFAULT_HANDLER_VERSION = 'reference-1';
export const DEFAULT_DEDUP_DAYS = 7;
export const DEFAULT_SECRETS_CACHE_SECONDS = 300;

/** The environment is incomplete or contradictory. The message names variables, never their secret values. */
export class ReceiverConfigurationError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'ReceiverConfigurationError';
  }
}

export type SecretsConfig =
  | { readonly kind: 'list'; readonly secrets: readonly string[] }
  | { readonly kind: 'ssm'; readonly parameterName: string; readonly cacheSeconds: number };

export interface ReceiverConfig {
  readonly tableName: string;
  readonly secrets: SecretsConfig;
  readonly handlerVersion: string;
  readonly dedupDays: number;
  readonly region: string | undefined;
  /** The sender's JWKS URL, for endpoints signed with Ed25519 (`WEBHOOK_JWKS_URL`, https). */
  readonly jwksUrl?: string;
  /** This endpoint's id, required with the JWKS URL (`WEBHOOK_ENDPOINT_ID`). */
  readonly endpointId?: string;
}

type Env = Readonly<Record<string, string | undefined>>;

const nonEmpty = (env: Env, name: string): string | undefined => {
  const value = env[name]?.trim();
  return value === undefined || value.length === 0 ? undefined : value;
};

const wholeNumber = (env: Env, name: string, fallback: number, minimum: number): number => {
  const text = nonEmpty(env, name);
  if (text === undefined) return fallback;
  if (!/^\d+$/.test(text) || Number(text) < minimum) {
    throw new ReceiverConfigurationError(
      `${name} must be a whole number, at least ${minimum} (got "${text}")`,
    );
  }
  return Number(text);
};

/** The receiver's configuration from environment variables; throws ReceiverConfigurationError. */
export const readReceiverConfig = (env: Env): ReceiverConfig => {
  const tableName = nonEmpty(env, 'RECEIVER_TABLE_NAME');
  if (tableName === undefined) throw new ReceiverConfigurationError('RECEIVER_TABLE_NAME is required');
  const list = nonEmpty(env, 'WEBHOOK_SECRETS');
  const parameterName = nonEmpty(env, 'WEBHOOK_SECRETS_PARAMETER');
  if (list !== undefined && parameterName !== undefined) {
    throw new ReceiverConfigurationError('set either WEBHOOK_SECRETS or WEBHOOK_SECRETS_PARAMETER, not both');
  }
  let secrets: SecretsConfig;
  if (parameterName !== undefined) {
    secrets = {
      kind: 'ssm',
      parameterName,
      cacheSeconds: wholeNumber(env, 'SECRETS_CACHE_SECONDS', DEFAULT_SECRETS_CACHE_SECONDS, 0),
    };
  } else if (list !== undefined) {
    secrets = { kind: 'list', secrets: parseSecretList(list, 'WEBHOOK_SECRETS') };
  } else {
    throw new ReceiverConfigurationError(
      'signing secrets are required: WEBHOOK_SECRETS_PARAMETER (an SSM SecureString name) or WEBHOOK_SECRETS',
    );
  }
  return {
    tableName,
    secrets,
    handlerVersion: nonEmpty(env, 'HANDLER_VERSION') ?? DEFAULT_HANDLER_VERSION,
    dedupDays: wholeNumber(env, 'DEDUP_DAYS', DEFAULT_DEDUP_DAYS, 1),
    region: nonEmpty(env, 'AWS_REGION') ?? nonEmpty(env, 'AWS_DEFAULT_REGION'),
    ...jwksUrlOf(env),
  };
};

/** `WEBHOOK_JWKS_URL`: an absolute http(s) URL (http only for loopback, as in local runs and tests). */
const jwksUrlOf = (env: Env): { jwksUrl?: string; endpointId?: string } => {
  const value = nonEmpty(env, 'WEBHOOK_JWKS_URL');
  if (value === undefined) return {};
  const endpointId = nonEmpty(env, 'WEBHOOK_ENDPOINT_ID');
  if (endpointId === undefined || !/^ep_[0-9A-Z]{26}$/.test(endpointId))
    throw new ReceiverConfigurationError(
      "WEBHOOK_ENDPOINT_ID (this endpoint's ep_… id) is required with WEBHOOK_JWKS_URL",
    );
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new ReceiverConfigurationError('WEBHOOK_JWKS_URL is not a URL');
  }
  const loopback = ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname);
  if (url.protocol !== 'https:' && !(url.protocol === 'http:' && loopback))
    throw new ReceiverConfigurationError('WEBHOOK_JWKS_URL must be https (http only on loopback)');
  return { jwksUrl: url.toString(), endpointId };
};

export interface ReceiverDependencies {
  readonly dynamoDb?: DynamoDBClient;
  readonly clock?: () => Date;
  readonly logger?: ReceiverLogger;
  /** Overrides for the SSM call (endpoint, credentials, fetch): tests point it at a fake. */
  readonly ssm?: Partial<Omit<SsmParameterOptions, 'parameterName'>>;
  /** The path the sender signed, per request. @default signedPathOf (API Gateway) */
  readonly signedPath?: (event: APIGatewayProxyEvent) => string;
}

/** The secrets source a configuration describes: the list itself, or the SSM parameter behind a cache. */
export const secretsSourceOf = (
  config: ReceiverConfig,
  dependencies: ReceiverDependencies = {},
): SecretsSource => {
  if (config.secrets.kind === 'list') return config.secrets.secrets;
  const { parameterName, cacheSeconds } = config.secrets;
  const region = dependencies.ssm?.region ?? config.region;
  if (region === undefined)
    throw new ReceiverConfigurationError('AWS_REGION is required to read the SSM parameter');
  const logger = dependencies.logger ?? jsonConsoleLogger;
  return cachedSecrets(
    async () =>
      parseSecretList(
        await readSsmParameter({ ...dependencies.ssm, parameterName, region }),
        `SSM parameter ${parameterName}`,
      ),
    {
      ttlSeconds: cacheSeconds,
      ...(dependencies.clock ? { clock: dependencies.clock } : {}),
      onStale: (error) =>
        logger.warn('signing secrets reload failed; using the previous ones', {
          error_type: error instanceof Error ? error.name : typeof error,
          error_message: error instanceof Error ? error.message : undefined,
        }),
    },
  );
};

/** The reference receiver wired from a configuration: kit store on the table, secrets, counting effect. */
export const createReceiverFromConfig = (
  config: ReceiverConfig,
  dependencies: ReceiverDependencies = {},
): ReferenceReceiver => {
  const clock = dependencies.clock ?? (() => new Date());
  const documents = receiverDocuments(dependencies.dynamoDb ?? new DynamoDBClient({}));
  const store = new IdempotencyStore({
    documents,
    tableName: config.tableName,
    handlerVersion: config.handlerVersion,
    dedupSeconds: config.dedupDays * 86_400,
    clock,
  });
  return createReferenceReceiver({
    store,
    secrets: secretsSourceOf(config, dependencies),
    handlerVersion: config.handlerVersion,
    handler: countingEffect({
      tableName: config.tableName,
      clock,
      markerRetentionSeconds: config.dedupDays * 86_400,
    }),
    clock,
    ...(dependencies.logger ? { logger: dependencies.logger } : {}),
    ...(dependencies.signedPath ? { signedPath: dependencies.signedPath } : {}),
    ...(config.jwksUrl ? { jwks: new JwksCache({ url: config.jwksUrl }) } : {}),
    ...(config.endpointId ? { endpointId: config.endpointId } : {}),
  });
};

let receiver: ReferenceReceiver | undefined;

/** The Lambda handler (API Gateway REST proxy events). */
export const handler = async (event: APIGatewayProxyEvent): Promise<APIGatewayProxyResult> => {
  receiver ??= createReceiverFromConfig(readReceiverConfig(process.env));
  return receiver(event);
};
