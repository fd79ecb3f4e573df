/**
 * Where the reference receiver gets its signing secrets: a list given directly (local runs, tests), or an SSM
 * Parameter Store SecureString read at start and re-read at most every few minutes (AWS), so the secrets are
 * never in the function's environment and a rotation needs no deployment.
 *
 * The parameter (or list) holds `whsec_…` values separated by commas or whitespace; during a rotation both
 * the new and the old secret.
 */
import { Sha256 } from '@aws-crypto/sha256-js';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, Provider } from '@smithy/types';
import { InvalidSecretError, secretBytes } from '../../domain/webhooks/secret';

/** The receiver's secrets could not be read or are not usable. The message never holds a secret. */
export class SecretsConfigurationError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'SecretsConfigurationError';
  }
}

/** The secrets for one request: a fixed list or a (cached) loader. */
export type SecretsSource = readonly string[] | (() => Promise<readonly string[]>);

/**
 * The secrets in a list text (`whsec_a,whsec_b` or one per line), each checked to be `whsec_` + base64 of 32
 * bytes. Throws SecretsConfigurationError naming the position and the problem, never the value.
 */
export const parseSecretList = (text: string, origin: string): string[] => {
  const secrets = text
    .split(/[\s,]+/)
    .map((secret) => secret.trim())
    .filter((secret) => secret.length > 0);
  if (secrets.length === 0) throw new SecretsConfigurationError(`${origin} holds no secret`);
  secrets.forEach((secret, index) => {
    try {
      secretBytes(secret);
    } catch (error) {
      const code = error instanceof InvalidSecretError ? error.code : 'invalid';
      throw new SecretsConfigurationError(
        `${origin}: secret ${index + 1} of ${secrets.length} is not a whsec_ secret (${code})`,
        { cause: error },
      );
    }
  });
  return secrets;
};

export interface SsmParameterOptions {
  readonly parameterName: string;
  readonly region: string;
  /** @default the default AWS credential provider chain (the function's role in Lambda) */
  readonly credentials?: AwsCredentialIdentity | Provider<AwsCredentialIdentity>;
  /** @default `https://ssm.<region>.amazonaws.com` */
  readonly endpoint?: string;
  /** @default globalThis.fetch */
  readonly fetch?: (url: string, init: RequestInit) => Promise<Response>;
  /** @default 5000 */
  readonly timeoutMs?: number;
}

/**
 * Reads a SecureString parameter's decrypted value with one SigV4-signed `AmazonSSM.GetParameter` call (the
 * SSM JSON protocol over HTTPS, so the function needs no SSM SDK client). Throws SecretsConfigurationError
 * with the error type SSM answered (never the value).
 */
export const readSsmParameter = async (options: SsmParameterOptions): Promise<string> => {
  const url = new URL(options.endpoint ?? `https://ssm.${options.region}.amazonaws.com/`);
  const body = JSON.stringify({ Name: options.parameterName, WithDecryption: true });
  const signer = new SignatureV4({
    service: 'ssm',
    region: options.region,
    sha256: Sha256,
    credentials: options.credentials ?? defaultProvider(),
  });
  const signed = await signer.sign({
    method: 'POST',
    protocol: url.protocol,
    hostname: url.hostname,
    ...(url.port ? { port: Number(url.port) } : {}),
    path: url.pathname,
    headers: {
      host: url.host,
      'content-type': 'application/x-amz-json-1.1',
      'x-amz-target': 'AmazonSSM.GetParameter',
    },
    body,
  });
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(signed.headers)) {
    if (name.toLowerCase() !== 'host') headers[name] = String(value);
  }
  const send = options.fetch ?? ((target: string, init: RequestInit) => fetch(target, init));
  let response: Response;
  try {
    response = await send(url.toString(), {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(options.timeoutMs ?? 5_000),
    });
  } catch (error) {
    throw new SecretsConfigurationError(`cannot reach SSM to read ${options.parameterName}`, {
      cause: error,
    });
  }
  const text = await response.text();
  let parsed: { Parameter?: { Value?: unknown }; __type?: unknown } | undefined;
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const type =
      typeof parsed?.__type === 'string' ? parsed.__type.split('#').at(-1) : `HTTP ${response.status}`;
    throw new SecretsConfigurationError(`SSM refused to read ${options.parameterName}: ${type}`);
  }
  const value = parsed?.Parameter?.Value;
  if (typeof value !== 'string') {
    throw new SecretsConfigurationError(`SSM returned no value for ${options.parameterName}`);
  }
  return value;
};

export interface CachedSecretsOptions {
  /** Seconds a loaded list is used before it is loaded again; 0 loads on every call. */
  readonly ttlSeconds: number;
  /** @default () => new Date() */
  readonly clock?: () => Date;
  /** Told when a reload fails and the previous list stays in use. */
  readonly onStale?: (error: unknown) => void;
}

/**
 * A loader that loads once, keeps the result for `ttlSeconds`, shares one load among concurrent callers, and
 * keeps using the previous list when a reload fails (a passing SSM hiccup must not turn into 401s). The first
 * load's failure is thrown.
 */
export const cachedSecrets = (
  load: () => Promise<readonly string[]>,
  options: CachedSecretsOptions,
): (() => Promise<readonly string[]>) => {
  const clock = options.clock ?? (() => new Date());
  let current: { readonly secrets: readonly string[]; readonly loadedAtMs: number } | undefined;
  let loading: Promise<readonly string[]> | undefined;
  const reload = (): Promise<readonly string[]> => {
    loading ??= load()
      .then((secrets) => {
        current = { secrets, loadedAtMs: clock().getTime() };
        return secrets;
      })
      .catch((error: unknown) => {
        if (current === undefined) throw error;
        options.onStale?.(error);
        // Try again after another full period rather than on every request.
        current = { secrets: current.secrets, loadedAtMs: clock().getTime() };
        return current.secrets;
      })
      .finally(() => {
        loading = undefined;
      });
    return loading;
  };
  return async () => {
    if (current !== undefined && clock().getTime() - current.loadedAtMs < options.ttlSeconds * 1000) {
      return current.secrets;
    }
    return reload();
  };
};

/** The secrets of a source, for one request. */
export const secretsOf = async (source: SecretsSource): Promise<readonly string[]> =>
  typeof source === 'function' ? source() : source;
