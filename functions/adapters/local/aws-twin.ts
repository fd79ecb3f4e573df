import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { KEYS, type KeyId, keyArn, type QueueId } from '../../definitions';
import type { OneTimeScheduler } from '../../ports/scheduler';
import { IntegrityError } from '../../ports/signing';
import { canonicalContext, type LocalKmsKeys } from './local-signing';

/**
 * The local twin of the AWS services the bundles call that DynamoDB Local and fauxqs do not emulate, on one
 * loopback port (`AWS_ENDPOINT_URL_KMS`, `AWS_ENDPOINT_URL_SCHEDULER`, `AWS_ENDPOINT_URL_API_GATEWAY`), so that
 * `LOCAL_BUNDLES=1 npm start` and the bundle test run the deployed code unchanged against local engines:
 *
 * - **KMS** (JSON 1.1, `X-Amz-Target: TrentService.*`): `Sign` (digest, ECDSA_SHA_256), `GetPublicKey`,
 *   `GenerateMac` / `VerifyMac` (HMAC_SHA_256), `Encrypt` / `Decrypt` (SYMMETRIC_DEFAULT, the encryption
 *   context bound as AAD), with the local stack's key files. A key is named by its ARN or id ending in
 *   `key/<definition id>` (`KEYS.*.id`); KMS's error names for unknown keys, wrong key usage, a bad MAC and a
 *   ciphertext that does not open.
 * - **EventBridge Scheduler** (REST JSON): `CreateSchedule` with an `at(…)` expression and an SQS target,
 *   `DeleteSchedule`: stored in the local scheduler twin (`scheduler.ts`), whose dispatcher sends due schedules.
 * - **API Gateway usage plans** (REST JSON): the calls the caller-key registration makes (`GetUsagePlans`,
 *   `GetApiKeys`, `CreateApiKey`, `CreateUsagePlanKey`, `DeleteApiKey`), kept in memory: the local gateway
 *   throttles per key itself, so the registration only has to succeed as it would in AWS.
 * - **CloudWatch metrics** (JSON 1.0, `GraniteServiceVersion20100801.GetMetricData`): what CloudWatch extracts
 *   from the functions' embedded-metric-format log lines (`ingestLogLine`, fed with the bundles' output) is
 *   kept in memory and answered by `GetMetricData` with `Sum`, `SampleCount`, `Average`, `Minimum`, `Maximum`
 *   and `pNN` over the asked window (`GET /admin/slo` on bundles reads its figures so).
 *
 * Anything else answers 501 with the operation named, so an unemulated call fails loudly, never silently.
 */
export interface AwsTwinOptions {
  readonly keys: LocalKmsKeys;
  /** Where `CreateSchedule` stores one-time schedules; without it, Scheduler calls answer 501. */
  readonly scheduler?: OneTimeScheduler;
  /** The queue an SQS ARN names (a schedule's target), or undefined for a queue of no definition. */
  readonly queueOfArn?: (arn: string) => QueueId | undefined;
  /** The usage plan names API Gateway knows (the caller usage plan). */
  readonly usagePlans?: readonly string[];
  readonly region: string;
  readonly account: string;
  readonly host?: string;
}

export interface AwsTwin {
  readonly endpoint: string;
  /** One line of a function's output: an EMF document's metrics are recorded, anything else ignored. */
  ingestLogLine(line: string): void;
  stop(): Promise<void>;
}

/** One metric value as CloudWatch stores it from an EMF document: its dimension set and time. */
interface MetricSample {
  readonly namespace: string;
  readonly metric: string;
  readonly dimensions: Readonly<Record<string, string>>;
  readonly at: number;
  readonly values: readonly number[];
}

/** Samples kept at most (the oldest dropped first): a day of a busy local stack. */
const MAX_METRIC_SAMPLES = 200_000;

const emfSamples = (line: string): MetricSample[] => {
  if (!line.startsWith('{') || !line.includes('"_aws"')) return [];
  let document: Record<string, unknown>;
  try {
    document = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return [];
  }
  const aws = document._aws as
    | {
        Timestamp?: number;
        CloudWatchMetrics?: { Namespace?: string; Dimensions?: string[][]; Metrics?: { Name?: string }[] }[];
      }
    | undefined;
  const samples: MetricSample[] = [];
  for (const directive of aws?.CloudWatchMetrics ?? []) {
    for (const dimensionSet of directive.Dimensions ?? [[]]) {
      const dimensions = Object.fromEntries(dimensionSet.map((name) => [name, String(document[name] ?? '')]));
      for (const { Name } of directive.Metrics ?? []) {
        const raw = Name ? document[Name] : undefined;
        const values = (Array.isArray(raw) ? raw : [raw]).filter(
          (value): value is number => typeof value === 'number',
        );
        if (!Name || values.length === 0) continue;
        samples.push({
          namespace: directive.Namespace ?? '',
          metric: Name,
          dimensions,
          at: aws?.Timestamp ?? Date.now(),
          values,
        });
      }
    }
  }
  return samples;
};

/** A statistic over values, as CloudWatch computes it (`pNN`: nearest rank). */
const statistic = (stat: string, values: readonly number[]): number | undefined => {
  if (values.length === 0) return undefined;
  if (stat === 'Sum') return values.reduce((sum, value) => sum + value, 0);
  if (stat === 'SampleCount') return values.length;
  if (stat === 'Average') return values.reduce((sum, value) => sum + value, 0) / values.length;
  // A reduce, not a spread: a day of samples is more arguments than a call may take.
  if (stat === 'Minimum') return values.reduce((least, value) => (value < least ? value : least));
  if (stat === 'Maximum') return values.reduce((most, value) => (value > most ? value : most));
  const percentile = stat.match(/^p(\d{1,2}(?:\.\d+)?)$/);
  if (!percentile)
    throw new TwinError('InvalidParameterValueException', `the statistic ${stat} is not emulated`);
  const sorted = [...values].sort((left, right) => left - right);
  const rank = Math.ceil((Number(percentile[1]) / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
};

interface MetricQuery {
  readonly Id?: string;
  readonly Label?: string;
  readonly MetricStat?: {
    readonly Metric?: {
      readonly Namespace?: string;
      readonly MetricName?: string;
      readonly Dimensions?: readonly { readonly Name?: string; readonly Value?: string }[];
    };
    readonly Stat?: string;
  };
}

/** `GetMetricData` over the recorded samples: one value per query for the whole window. */
const getMetricData = (samples: readonly MetricSample[], request: Json): Json => {
  // JSON 1.0 carries timestamps as epoch seconds.
  const start = Number(request.StartTime) * 1000;
  const end = Number(request.EndTime) * 1000;
  const queries = (request.MetricDataQueries ?? []) as readonly MetricQuery[];
  return {
    MetricDataResults: queries.map((query) => {
      const metric = query.MetricStat?.Metric;
      const wanted = Object.fromEntries((metric?.Dimensions ?? []).map((entry) => [entry.Name, entry.Value]));
      const values = samples
        .filter(
          (sample) =>
            sample.namespace === metric?.Namespace &&
            sample.metric === metric?.MetricName &&
            sample.at >= start &&
            sample.at < end &&
            Object.keys(sample.dimensions).length === Object.keys(wanted).length &&
            Object.entries(wanted).every(([name, value]) => sample.dimensions[name] === value),
        )
        .flatMap((sample) => sample.values);
      const value = statistic(query.MetricStat?.Stat ?? 'Sum', values);
      return {
        Id: query.Id,
        Label: query.Label ?? metric?.MetricName,
        StatusCode: 'Complete',
        Timestamps: value === undefined ? [] : [start / 1000],
        Values: value === undefined ? [] : [value],
      };
    }),
  };
};

/** A KMS error as the JSON protocol carries it: status 400 and `__type`. */
class TwinError extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
    this.name = type;
  }
}

type Json = Record<string, unknown>;

const bytesOf = (value: unknown, field: string): Uint8Array => {
  if (typeof value !== 'string') throw new TwinError('ValidationException', `${field} is required`);
  return new Uint8Array(Buffer.from(value, 'base64'));
};

const base64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString('base64');

/** The key a `KeyId` (an ARN `…:key/<id>` or a bare id) names; NotFoundException otherwise. */
const keyNamed = (keyId: unknown): KeyId => {
  if (typeof keyId !== 'string') throw new TwinError('ValidationException', 'KeyId is required');
  const id = keyId.split('key/').at(-1);
  const found = (Object.keys(KEYS) as KeyId[]).find((key) => KEYS[key].id === id);
  if (!found) throw new TwinError('NotFoundException', `Key '${keyId}' does not exist`);
  return found;
};

const contextAad = (context: unknown): Uint8Array => {
  if (context === undefined) return canonicalContext({});
  if (typeof context !== 'object' || context === null)
    throw new TwinError('ValidationException', 'EncryptionContext must be a map of strings');
  return canonicalContext(context as Record<string, string>);
};

/** First byte of the twin's ciphertext blobs; the second names the key (its index in `KEYS`). */
const BLOB_VERSION = 0x01;

const kmsOperation = (options: AwsTwinOptions, operation: string, request: Json): Json | Promise<Json> => {
  const arnOf = (key: KeyId) => keyArn(KEYS[key].id, options.region, options.account);
  const wrongUse = (key: KeyId): never => {
    throw new TwinError('InvalidKeyUsageException', `${operation} is not valid for the key ${arnOf(key)}`);
  };
  switch (operation) {
    case 'Sign': {
      const key = keyNamed(request.KeyId);
      if (key !== 'receiptSigning') return wrongUse(key);
      if (request.MessageType !== 'DIGEST' || request.SigningAlgorithm !== 'ECDSA_SHA_256')
        throw new TwinError('ValidationException', 'the twin signs SHA-256 digests with ECDSA_SHA_256 only');
      const signature = options.keys.receiptSigning.signDigest(bytesOf(request.Message, 'Message'));
      return { KeyId: arnOf(key), Signature: base64(signature), SigningAlgorithm: 'ECDSA_SHA_256' };
    }
    case 'GetPublicKey': {
      const key = keyNamed(request.KeyId);
      if (key !== 'receiptSigning') return wrongUse(key);
      return {
        KeyId: arnOf(key),
        PublicKey: base64(options.keys.receiptSigning.publicKeySpki),
        KeySpec: 'ECC_NIST_P256',
        KeyUsage: 'SIGN_VERIFY',
        SigningAlgorithms: ['ECDSA_SHA_256'],
      };
    }
    case 'GenerateMac':
    case 'VerifyMac':
      return macOperation(options, operation, request, arnOf, wrongUse);
    case 'Encrypt': {
      const key = keyNamed(request.KeyId);
      if (key !== 'secrets') return wrongUse(key);
      const plaintext = bytesOf(request.Plaintext, 'Plaintext');
      if (plaintext.byteLength === 0 || plaintext.byteLength > 4096)
        throw new TwinError('ValidationException', 'Plaintext must be 1..4096 bytes');
      const sealed = options.keys.secrets.seal(plaintext, contextAad(request.EncryptionContext));
      const blob = Buffer.concat([Buffer.of(BLOB_VERSION, Object.keys(KEYS).indexOf(key)), sealed]);
      return { KeyId: arnOf(key), CiphertextBlob: base64(blob), EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
    }
    case 'Decrypt': {
      const blob = bytesOf(request.CiphertextBlob, 'CiphertextBlob');
      const key = (Object.keys(KEYS) as KeyId[])[blob[1] ?? -1];
      if (blob[0] !== BLOB_VERSION || key !== 'secrets')
        throw new TwinError('InvalidCiphertextException', 'the ciphertext is not one this key made');
      if (request.KeyId !== undefined && keyNamed(request.KeyId) !== key)
        throw new TwinError('IncorrectKeyException', 'the ciphertext was made with another key');
      try {
        const plaintext = options.keys.secrets.open(blob.subarray(2), contextAad(request.EncryptionContext));
        return { KeyId: arnOf(key), Plaintext: base64(plaintext), EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
      } catch (error) {
        if (error instanceof IntegrityError)
          throw new TwinError('InvalidCiphertextException', 'the ciphertext does not open with this context');
        throw error;
      }
    }
    default:
      throw new TwinError('UnsupportedOperationException', `KMS ${operation} is not emulated locally`, 501);
  }
};

const macOperation = (
  options: AwsTwinOptions,
  operation: 'GenerateMac' | 'VerifyMac',
  request: Json,
  arnOf: (key: KeyId) => string,
  wrongUse: (key: KeyId) => never,
): Promise<Json> | Json => {
  const key = keyNamed(request.KeyId);
  if (key !== 'quoteMac') return wrongUse(key);
  if (request.MacAlgorithm !== 'HMAC_SHA_256')
    throw new TwinError('ValidationException', 'the twin computes HMAC_SHA_256 only');
  const message = bytesOf(request.Message, 'Message');
  if (message.byteLength === 0 || message.byteLength > 4096)
    throw new TwinError('ValidationException', 'Message must be 1..4096 bytes');
  const mac = options.keys.quoteMac;
  if (operation === 'GenerateMac')
    return mac
      .generateMac(message)
      .then((tag) => ({ KeyId: arnOf(key), Mac: base64(tag), MacAlgorithm: 'HMAC_SHA_256' }));
  return mac.verifyMac(message, bytesOf(request.Mac, 'Mac')).then((valid) => {
    if (!valid) throw new TwinError('KMSInvalidMacException', 'the MAC does not verify');
    return { KeyId: arnOf(key), MacValid: true, MacAlgorithm: 'HMAC_SHA_256' };
  });
};

/** `at(yyyy-mm-ddThh:mm:ss)` in UTC. */
const atTime = (expression: unknown): Date => {
  const match =
    typeof expression === 'string' ? expression.match(/^at\((\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)\)$/) : null;
  if (!match) throw new TwinError('ValidationException', 'only one-time at(…) schedules are emulated');
  return new Date(`${match[1]}Z`);
};

interface RestAnswer {
  readonly status: number;
  readonly body: Json;
  readonly errorType?: string;
}

const schedulerOperation = async (
  options: AwsTwinOptions,
  method: string,
  name: string,
  request: Json,
): Promise<RestAnswer> => {
  const scheduler = options.scheduler;
  if (!scheduler) throw new TwinError('UnsupportedOperationException', 'Scheduler is not emulated here', 501);
  if (method === 'DELETE') {
    await scheduler.cancel(name);
    return { status: 200, body: {} };
  }
  if (method !== 'POST') throw new TwinError('UnsupportedOperationException', `${method} /schedules`, 501);
  const target = (request.Target ?? {}) as Json;
  const queue = typeof target.Arn === 'string' ? options.queueOfArn?.(target.Arn) : undefined;
  if (!queue)
    throw new TwinError('ValidationException', `the target ${String(target.Arn)} is no local queue`);
  const created = await scheduler.scheduleOnce({
    name,
    at: atTime(request.ScheduleExpression),
    queue,
    body: String(target.Input ?? ''),
  });
  if (created === 'exists')
    return {
      status: 409,
      errorType: 'ConflictException',
      body: { Message: `Schedule ${name} already exists` },
    };
  return {
    status: 200,
    body: { ScheduleArn: `arn:aws:scheduler:${options.region}:${options.account}:schedule/${name}` },
  };
};

interface ApiKey {
  readonly id: string;
  readonly name: string;
  readonly value: string;
  readonly enabled: boolean;
}

const apiGatewayOperation = (
  options: AwsTwinOptions,
  apiKeys: Map<string, ApiKey>,
  method: string,
  url: URL,
  request: Json,
): RestAnswer => {
  const plans = (options.usagePlans ?? []).map((name, index) => ({ id: `plan${index}`, name }));
  const path = url.pathname;
  const keyView = ({ value: _value, ...key }: ApiKey) => key;
  if (method === 'GET' && path === '/usageplans') return { status: 200, body: { item: plans } };
  if (method === 'GET' && path === '/apikeys') {
    const name = url.searchParams.get('name') ?? '';
    const items = [...apiKeys.values()].filter((key) => key.name.startsWith(name)).map(keyView);
    return { status: 200, body: { item: items } };
  }
  if (method === 'POST' && path === '/apikeys') {
    const value = String(request.value ?? '');
    if ([...apiKeys.values()].some((key) => key.value === value))
      return { status: 409, errorType: 'ConflictException', body: { message: 'API key already exists' } };
    const key = { id: randomUUID().slice(0, 10), name: String(request.name ?? ''), value, enabled: true };
    apiKeys.set(key.id, key);
    return { status: 201, body: keyView(key) };
  }
  const planKey = path.match(/^\/usageplans\/([^/]+)\/keys$/);
  if (method === 'POST' && planKey) {
    const key = apiKeys.get(String(request.keyId ?? ''));
    if (!plans.some((plan) => plan.id === planKey[1]) || !key)
      return { status: 404, errorType: 'NotFoundException', body: { message: 'Invalid usage plan or key' } };
    return { status: 201, body: { id: key.id, type: 'API_KEY', name: key.name } };
  }
  const keyPath = path.match(/^\/apikeys\/([^/]+)$/);
  if (method === 'DELETE' && keyPath) {
    if (!apiKeys.delete(decodeURIComponent(keyPath[1] ?? '')))
      return { status: 404, errorType: 'NotFoundException', body: { message: 'Invalid API Key identifier' } };
    return { status: 202, body: {} };
  }
  throw new TwinError('UnsupportedOperationException', `API Gateway ${method} ${path} is not emulated`, 501);
};

const readBody = async (request: IncomingMessage): Promise<Json> => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  if (!text) return {};
  try {
    const parsed = JSON.parse(text) as unknown;
    return typeof parsed === 'object' && parsed !== null ? (parsed as Json) : {};
  } catch {
    throw new TwinError('SerializationException', 'the body is not JSON');
  }
};

const send = (response: ServerResponse, status: number, body: Json, headers: Record<string, string>) => {
  const payload = JSON.stringify(body);
  response.writeHead(status, { ...headers, 'content-length': Buffer.byteLength(payload) });
  response.end(payload);
};

/** Starts the twin on a free loopback port. */
export const startAwsTwin = async (options: AwsTwinOptions): Promise<AwsTwin> => {
  const apiKeys = new Map<string, ApiKey>();
  const samples: MetricSample[] = [];
  const server = createServer((request, response) => {
    const target = request.headers['x-amz-target'];
    const isCloudWatch = typeof target === 'string' && target.startsWith('GraniteServiceVersion20100801.');
    const isKms = (typeof target === 'string' && target.startsWith('TrentService.')) || isCloudWatch;
    const url = new URL(request.url ?? '/', 'http://twin');
    const handle = async () => {
      const body = await readBody(request);
      if (isCloudWatch) {
        const operation = target.slice('GraniteServiceVersion20100801.'.length);
        if (operation !== 'GetMetricData')
          throw new TwinError(
            'UnsupportedOperationException',
            `CloudWatch ${operation} is not emulated`,
            501,
          );
        send(response, 200, getMetricData(samples, body), { 'content-type': 'application/x-amz-json-1.0' });
        return;
      }
      if (isKms) {
        const answer = await kmsOperation(options, target.slice('TrentService.'.length), body);
        send(response, 200, answer, { 'content-type': 'application/x-amz-json-1.1' });
        return;
      }
      const schedule = url.pathname.match(/^\/schedules\/([^/]+)$/);
      const answer = schedule
        ? await schedulerOperation(
            options,
            request.method ?? 'GET',
            decodeURIComponent(schedule[1] ?? ''),
            body,
          )
        : apiGatewayOperation(options, apiKeys, request.method ?? 'GET', url, body);
      send(response, answer.status, answer.body, {
        'content-type': 'application/json',
        ...(answer.errorType ? { 'x-amzn-errortype': answer.errorType } : {}),
      });
    };
    handle().catch((error: unknown) => {
      const twinError =
        error instanceof TwinError ? error : new TwinError('InternalFailure', (error as Error).message, 500);
      const body = isKms
        ? { __type: twinError.type, message: twinError.message }
        : { message: twinError.message, Message: twinError.message };
      send(response, twinError.status, body, {
        'content-type': isKms ? 'application/x-amz-json-1.1' : 'application/json',
        'x-amzn-errortype': twinError.type,
      });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  let stopped = false;
  return {
    endpoint: `http://${options.host ?? '127.0.0.1'}:${port}`,
    ingestLogLine: (line) => {
      samples.push(...emfSamples(line));
      if (samples.length > MAX_METRIC_SAMPLES) samples.splice(0, samples.length - MAX_METRIC_SAMPLES);
    },
    stop: async () => {
      if (stopped) return;
      stopped = true;
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
};

/** The queue whose URL ends in the name an SQS ARN names (`arn:aws:sqs:<region>:<account>:<name>`). */
export const queueOfArnIn =
  (queueUrls: Readonly<Record<QueueId, string>>) =>
  (arn: string): QueueId | undefined => {
    const name = arn.split(':').at(-1);
    return (Object.keys(queueUrls) as QueueId[]).find((id) => queueUrls[id].split('/').at(-1) === name);
  };
