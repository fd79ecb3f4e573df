/**
 * The bundles AWS runs (issue 17): the app synthesized with bundling as `npm run deploy` builds it, each function's
 * bundle loaded in a fresh Node 24 process outside the repository (no `node_modules` to fall back on, as in
 * Lambda) with only the environment its template gives it — its variables resolved to this test's DynamoDB Local
 * and fauxqs resources through the definitions, KMS, EventBridge Scheduler and API Gateway to the local AWS twin
 * — and invoked with real events of its kind: API Gateway proxy events (health, a price, a quote and its commit,
 * the JWKS, an endpoint and an event published), DynamoDB stream batches read from DynamoDB Local's streams (the
 * fan-out, the receipt export), an SQS batch received from fauxqs (a delivery to a loopback receiver) and a
 * scheduled event (a rates run). Their answers equal the source handlers' on the same state. A planted bundling
 * fault (an entry importing a package the bundle marks external) is caught.
 */
import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { checkReceipt } from '../../bin/verify-receipt';
import { DynamoApiKeyStore } from '../../functions/adapters/aws/api-key-store';
import { DynamoCatalogRepository } from '../../functions/adapters/aws/catalog-repository';
import { type AwsTwin, queueOfArnIn, startAwsTwin } from '../../functions/adapters/local/aws-twin';
import type { ProvisionedResources } from '../../functions/adapters/local/bootstrap';
import { LOCAL_REGION } from '../../functions/adapters/local/local-aws';
import { loadOrCreateLocalKeys } from '../../functions/adapters/local/local-signing';
import { LocalOneTimeScheduler } from '../../functions/adapters/local/scheduler';
import { awsPlatform } from '../../functions/composition/aws';
import { FUNCTION_FACTORIES } from '../../functions/composition/functions';
import {
  LOCAL_CALLER_USAGE_PLAN,
  lambdaEnvironmentOnEngines,
} from '../../functions/composition/local/function-environment';
import { composeService } from '../../functions/composition/service';
import { FUNCTIONS, type FunctionId } from '../../functions/definitions';
import type { JsonObject } from '../../functions/domain/receipts/receipt';
import { UNAUTHORIZED } from '../../functions/handlers/authorizer';
import { callerContext } from '../../functions/handlers/middleware/principal';
import { verifyWebhook } from '../../functions/receiver/verify';
import { ensureConfiguredKey } from '../../functions/usecases/access/api-keys';
import { importCatalog } from '../../functions/usecases/catalog/import';
import { validateCatalogDocument } from '../../functions/usecases/catalog/validate';
import { functionBundling } from '../../lib/constructs/defaults';
import {
  BUNDLE_CACHE_DIR,
  bundleInputsDigest,
  runBundle,
  type SynthesizedBundles,
  synthesizeFunctionBundles,
} from '../../lib/function-bundles';
import { demoDocument } from '../support/demo-pricing';
import { engineClients, provisionIsolated } from '../support/engines';
import { asLambdaJson, streamRecords } from '../support/streams';
import { lambdaContext, proxyEvent } from '../unit/support/lambda';

const clients = engineClients();
let synthesized: SynthesizedBundles;
/** The resources the bundles run on, and a copy in the same state the source handlers run on. */
let resources: ProvisionedResources;
let sourceResources: ProvisionedResources;
let twin: AwsTwin;
let keysDir: string;

/**
 * What Lambda gives the function: its own variables (the template's), resolved to this test's resources, the
 * region and credentials; the AWS SDK's per-service endpoint variables point it at the engines and the twin. The
 * webhook functions are configured as a deployment with a private receiver would be (`WEBHOOK_ALLOWED_CIDRS`).
 */
const lambdaEnvironment = (
  functionId: FunctionId,
  on: ProvisionedResources = resources,
): Record<string, string> =>
  lambdaEnvironmentOnEngines(
    functionId,
    {
      resources: on,
      dynamoDbEndpoint: inject('dynamoDbEndpoint'),
      sqsEndpoint: inject('sqsEndpoint'),
      twinEndpoint: twin.endpoint,
      // No cloud destination here: STS and EventBridge calls would fail as the twin's unemulated ones do.
      partnerEndpoint: twin.endpoint,
    },
    {
      ...(functionId === 'deliver' || functionId === 'webhooks'
        ? { WEBHOOK_ALLOW_HTTP: 'true', WEBHOOK_ALLOWED_CIDRS: '127.0.0.0/8' }
        : {}),
      POWERTOOLS_LOG_LEVEL: 'SILENT',
    },
  );

/** The source handler of a function, composed for AWS from the same environment, on the same event. */
const sourceResult = async (
  functionId: FunctionId,
  event: unknown,
  on: ProvisionedResources = resources,
): Promise<unknown> => {
  const env = lambdaEnvironment(functionId, on);
  // What the variables were, to put back in the same object: the worker's later files share `process.env`.
  const previous = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  // The SDK reads its endpoint variables from the process environment, as in Lambda.
  Object.assign(process.env, env);
  try {
    const handler = FUNCTION_FACTORIES[functionId](composeService(awsPlatform(env), functionId)) as (
      event: unknown,
      context: unknown,
    ) => Promise<unknown>;
    return await handler(event, lambdaContext());
  } finally {
    for (const [name, value] of Object.entries(previous)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
};

/** The bundle's answer to an event; a failed import or invocation fails the test with its message. */
const bundleResult = async (
  functionId: FunctionId,
  event: unknown,
  on: ProvisionedResources = resources,
): Promise<unknown> => {
  const run = await runBundle(synthesized.bundles[functionId].file, {
    env: lambdaEnvironment(functionId, on),
    event,
  });
  expect(run.error).toBeUndefined();
  return run.result;
};

/** Headers that differ between two invocations by construction (trace ids, timing). */
const stable = (result: unknown): unknown => {
  const answer = result as { statusCode: number; headers?: Record<string, string>; body?: string };
  const {
    'X-Trace-Id': _trace,
    'x-trace-id': _lower,
    'Server-Timing': _timing,
    ...headers
  } = answer.headers ?? {};
  const body = answer.body ? (JSON.parse(answer.body) as Record<string, unknown>) : undefined;
  if (body && typeof body === 'object') delete body.trace_id;
  return { statusCode: answer.statusCode, headers, body };
};

/** An API Gateway answer's status and parsed body. */
const answerOf = (result: unknown): { statusCode: number; body: JsonObject } => {
  const answer = result as { statusCode: number; body: string };
  return { statusCode: answer.statusCode, body: JSON.parse(answer.body) as JsonObject };
};

/** A JSON POST through API Gateway with a fresh idempotency key, as the caller or operator the route wants. */
const post = (resource: string, body: unknown) =>
  proxyEvent({
    method: 'POST',
    resource,
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', 'idempotency-key': randomUUID() },
  });

/** Imports the demo catalog (its rate policy too, when asked) into a set of resources. */
const importDemo = async (on: ProvisionedResources, withRatePolicy: boolean): Promise<void> => {
  const { rate_policy: policy, ...document } = demoDocument();
  await importCatalog(
    {
      repository: new DynamoCatalogRepository(clients.documents, on.tableNames.catalog, on.tableNames.events),
      clock: { now: () => new Date() },
    },
    validateCatalogDocument(withRatePolicy ? { ...document, rate_policy: policy } : document),
  );
};

beforeAll(async () => {
  [resources, sourceResources] = await Promise.all([provisionIsolated(clients), provisionIsolated(clients)]);
  await Promise.all([importDemo(resources, false), importDemo(sourceResources, false)]);
  keysDir = mkdtempSync(join(tmpdir(), 'pricing-bundle-keys-'));
  twin = await startAwsTwin({
    keys: (await loadOrCreateLocalKeys(keysDir)).kms,
    scheduler: new LocalOneTimeScheduler(clients.documents, resources.tableNames.localSchedules, {
      now: () => new Date(),
    }),
    queueOfArn: queueOfArnIn(resources.queueUrls),
    usagePlans: [LOCAL_CALLER_USAGE_PLAN],
    region: LOCAL_REGION,
    account: '000000000000',
  });
  synthesized = synthesizeFunctionBundles({ cache: true });
}, 180_000);

afterAll(async () => {
  synthesized?.cleanup();
  await twin?.stop();
  if (keysDir) rmSync(keysDir, { recursive: true, force: true });
});

describe('every function bundle', () => {
  it.each(Object.keys(FUNCTIONS) as FunctionId[])(
    '%s loads in a fresh process outside the repository and exports its handler',
    async (functionId) => {
      const run = await runBundle(synthesized.bundles[functionId].file, {
        env: lambdaEnvironment(functionId),
      });
      expect(run.error).toBeUndefined();
      expect(run.exports).toContain('handler');
    },
  );
});

describe('bundles invoked with real events against the engines', () => {
  it('api: GET /health answers as the source handler does', async () => {
    const event = proxyEvent({ resource: '/health', authorizer: null });
    const run = await runBundle(synthesized.bundles.api.file, { env: lambdaEnvironment('api'), event });
    expect(run.error).toBeUndefined();
    expect(stable(run.result)).toEqual(stable(await sourceResult('api', event)));
    expect((run.result as { statusCode: number }).statusCode).toBe(200);
  });

  it('authorizer: an unknown key is refused after a read of the api-keys table', async () => {
    const event = {
      type: 'REQUEST',
      methodArn: 'arn:aws:execute-api:eu-west-1:000000000000:api/prod/GET/catalog/prices',
      headers: { 'x-api-key': 'mck_unknown_key_for_the_bundle_test_0000000000' },
    };
    const run = await runBundle(synthesized.bundles.authorizer.file, {
      env: lambdaEnvironment('authorizer'),
      event,
    });
    // API Gateway's convention: throwing `Unauthorized` answers 401. Any other failure (a missing variable, an
    // unreachable table) would surface as another message.
    expect(run.error).toEqual({ phase: 'invoke', message: UNAUTHORIZED });
    await expect(sourceResult('authorizer', event)).rejects.toThrow(UNAUTHORIZED);
  });

  it('authorizer: a key issued in the api-keys table is resolved to its tenant and scopes', async () => {
    const store = new DynamoApiKeyStore(clients.documents, resources.tableNames.apiKeys);
    const key = 'mck_bundle_test_key_0123456789abcdefghijklmnopqrstu';
    await ensureConfiguredKey(
      { store, clock: { now: () => new Date() } },
      { key, tenant: 'bundle-tenant', scopes: ['prices:read'], description: 'bundle test' },
    );
    const event = {
      type: 'REQUEST',
      methodArn: 'arn:aws:execute-api:eu-west-1:000000000000:api/prod/GET/catalog/prices',
      headers: { 'x-api-key': key },
    };
    const run = await runBundle(synthesized.bundles.authorizer.file, {
      env: lambdaEnvironment('authorizer'),
      event,
    });
    expect(run.error).toBeUndefined();
    expect(run.result).toEqual(await sourceResult('authorizer', event));
    expect(run.result).toMatchObject({ context: { tenant: 'bundle-tenant', scopes: 'prices:read' } });
  });

  it('catalog: a storefront price read from the catalog in DynamoDB equals the source handler’s', async () => {
    const event = {
      ...proxyEvent({
        resource: '/catalog/prices',
        authorizer: callerContext({
          kind: 'caller',
          keyId: 'ak_bundle',
          tenant: 'demo',
          scopes: ['prices:read'],
          channels: [],
          customerGroups: [],
        }),
      }),
      queryStringParameters: { sku: 'GAME-STARFALL-PS5', currency: 'EUR', region: 'DE' },
    };
    const run = await runBundle(synthesized.bundles.catalog.file, {
      env: lambdaEnvironment('catalog'),
      event,
    });
    expect(run.error).toBeUndefined();
    const answer = run.result as { statusCode: number; body: string };
    expect(answer.statusCode, answer.body).toBe(200);
    const fromSource = stable(await sourceResult('catalog', event)) as { body: Record<string, unknown> };
    const fromBundle = stable(run.result) as { body: Record<string, unknown> };
    expect(fromBundle.body).toEqual(fromSource.body);
  });
});

/** A loopback receiver that records each request and answers 200. */
interface Received {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}
const startReceiver = async (): Promise<{ url: string; received: Received[]; server: Server }> => {
  const received: Received[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    request.on('end', () => {
      received.push({
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body,
      });
      response.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/hooks`, received, server };
};

/** A value with the named fields (at any depth) replaced by their type: what differs by run, not by code. */
const withoutVolatile =
  (fields: readonly string[]) =>
  (value: unknown): unknown =>
    JSON.parse(JSON.stringify(value, (key, entry: unknown) => (fields.includes(key) ? typeof entry : entry)));

/** What differs between two quotes of the same basket by construction: ids, times, the MAC over them. */
const quoteContent = withoutVolatile([
  'quote_id',
  'signature',
  'created_at',
  'issued_at',
  'expires_at',
  'trace_id',
]);

describe('bundles invoked with real events against the engines and the AWS twin', () => {
  let receipt: JsonObject;

  it('checkout: a quote equals the source handler’s; its commit is a receipt that verifies against the api bundle’s GET /keys', async () => {
    const basket = {
      items: [{ sku_id: 'GAME-STARFALL-PS5', quantity: 2 }],
      region: 'DE',
      currency: 'EUR',
      buyer_type: 'consumer',
    };
    const quote = answerOf(await bundleResult('checkout', post('/pricing/quote', basket)));
    expect(quote.statusCode, JSON.stringify(quote.body)).toBe(201);
    const fromSource = answerOf(
      await sourceResult('checkout', post('/pricing/quote', basket), sourceResources),
    );
    expect(quoteContent(quote.body)).toEqual(quoteContent(fromSource.body));
    expect(quote.body.total).toBe(fromSource.body.total);

    const commit = answerOf(
      await bundleResult(
        'checkout',
        post('/pricing/commit', { quote_id: quote.body.quote_id, signature: quote.body.signature }),
      ),
    );
    expect(commit.statusCode, JSON.stringify(commit.body)).toBe(201);
    receipt = commit.body;
    expect(receipt.key_id).toBe(lambdaEnvironment('checkout').RECEIPT_SIGNING_KEY_ID);
    const keys = answerOf(await bundleResult('api', proxyEvent({ resource: '/keys', authorizer: null })));
    expect(keys.statusCode).toBe(200);
    expect(checkReceipt(receipt, keys.body)).toMatchObject({ valid: true });
    // The source handler's commit of its own quote signs the same totals with the same key.
    const sourceCommit = answerOf(
      await sourceResult(
        'checkout',
        post('/pricing/commit', { quote_id: fromSource.body.quote_id, signature: fromSource.body.signature }),
        sourceResources,
      ),
    );
    expect(sourceCommit.statusCode).toBe(201);
    expect(sourceCommit.body.computed_totals).toEqual(receipt.computed_totals);
    expect(checkReceipt(sourceCommit.body, keys.body)).toMatchObject({ valid: true });
  });

  it('exporter: the receipt’s stream record is exported as a signed document; the source handler’s run of the same batch finds it there', async () => {
    const records = (await streamRecords(clients, resources.tableNames.receipts)).filter(
      (record) => record.eventName === 'INSERT',
    );
    expect(records).toHaveLength(1);
    const event = { Records: records };
    const fromBundle = await bundleResult('exporter', event);
    expect(fromBundle).toEqual({ batchItemFailures: [] });
    // The write-once put of the same document compares what is there and accepts it.
    expect(await sourceResult('exporter', event)).toEqual(fromBundle);
    const listed = await clients.s3.send(
      new ListObjectsV2Command({ Bucket: resources.bucketNames.receipts }),
    );
    const keys = (listed.Contents ?? []).map((object) => object.Key ?? '');
    expect(
      keys.filter((key) => key.includes(String(receipt.receipt_id))),
      keys.join(', '),
    ).toHaveLength(1);
  });

  it('webhooks → fanout → deliver: an endpoint and an event published through the bundle, fanned out from the stream, delivered signed to a loopback receiver, once', async () => {
    const receiver = await startReceiver();
    try {
      const endpoint = answerOf(
        await bundleResult(
          'webhooks',
          post('/webhooks/endpoints', { url: receiver.url, topics: ['bundle'], description: 'bundle test' }),
        ),
      );
      expect(endpoint.statusCode, JSON.stringify(endpoint.body)).toBe(201);
      const eventId = `bundle-${randomUUID()}`;
      const published = answerOf(
        await bundleResult(
          'webhooks',
          post('/webhooks/events', {
            event_id: eventId,
            type: 'bundle.test',
            producer: 'bundle',
            data: { n: 1 },
          }),
        ),
      );
      expect(published.statusCode, JSON.stringify(published.body)).toBeLessThan(300);

      const records = (await streamRecords(clients, resources.tableNames.events)).filter(
        (record) => record.dynamodb?.Keys?.event_id?.S === eventId,
      );
      expect(records.length).toBeGreaterThan(0);
      const streamEvent = { Records: records };
      expect(await bundleResult('fanout', streamEvent)).toEqual({ batchItemFailures: [] });
      // The source handler on the same batch: the delivery exists, nothing new is sent.
      expect(await sourceResult('fanout', streamEvent)).toEqual({ batchItemFailures: [] });

      const received = await clients.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: resources.queueUrls.delivery,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 1,
          MessageAttributeNames: ['All'],
          MessageSystemAttributeNames: ['All'],
        }),
      );
      // Two messages for one delivery: a fan-out handed the same batch again sends its message again (a crash
      // between the delivery's put and the send must not lose it); the delivery is claimed once.
      const messages = received.Messages ?? [];
      expect(messages).toHaveLength(2);
      const sqsEvent = (message: (typeof messages)[number]): SQSEvent =>
        asLambdaJson({
          Records: [
            {
              messageId: message.MessageId ?? '',
              receiptHandle: message.ReceiptHandle ?? '',
              body: message.Body ?? '',
              attributes: {
                ApproximateReceiveCount: message.Attributes?.ApproximateReceiveCount ?? '1',
                SentTimestamp: message.Attributes?.SentTimestamp ?? String(Date.now()),
                SenderId: 'AIDAEXAMPLE',
                ApproximateFirstReceiveTimestamp: String(Date.now()),
              },
              messageAttributes: {},
              md5OfBody: message.MD5OfBody ?? '',
              eventSource: 'aws:sqs',
              eventSourceARN: `arn:aws:sqs:${LOCAL_REGION}:000000000000:${resources.queueUrls.delivery.split('/').at(-1)}`,
              awsRegion: LOCAL_REGION,
            },
          ],
        });
      const [first, second] = messages as [(typeof messages)[number], (typeof messages)[number]];
      expect(await bundleResult('deliver', sqsEvent(first))).toEqual({ batchItemFailures: [] });
      expect(receiver.received).toHaveLength(1);
      const [request] = receiver.received;
      const envelope = verifyWebhook({
        body: request?.body ?? '',
        method: request?.method ?? '',
        path: request?.path ?? '',
        headers: request?.headers ?? {},
        secrets: [String(endpoint.body.secret)],
        now: new Date(),
      });
      expect(envelope.event_id).toBe(eventId);
      // The duplicate through the source handler: the delivery is done, nothing is sent twice.
      expect(await sourceResult('deliver', sqsEvent(second))).toEqual({ batchItemFailures: [] });
      expect(receiver.received).toHaveLength(1);
    } finally {
      receiver.server.close();
    }
  });

  it('rates: a scheduled run publishes the demo rate policy’s pairs as the source handler does on the same state', async () => {
    const [bundleSide, sourceSide] = await Promise.all([
      provisionIsolated(clients),
      provisionIsolated(clients),
    ]);
    await Promise.all([importDemo(bundleSide, true), importDemo(sourceSide, true)]);
    const scheduled = {
      version: '0',
      id: randomUUID(),
      'detail-type': 'Scheduled Event',
      source: 'aws.scheduler',
      account: '000000000000',
      time: new Date().toISOString(),
      region: LOCAL_REGION,
      resources: [],
      detail: {},
    };
    const fromBundle = (await bundleResult('rates', scheduled, bundleSide)) as JsonObject;
    const fromSource = (await sourceResult('rates', scheduled, sourceSide)) as JsonObject;
    // The same pairs with the same outcomes and versions; times, ids and the simulated rates differ by run.
    const outline = withoutVolatile(['at', 'effective_from', 'rate', 'run_id', 'trace_id']);
    expect(outline(fromBundle)).toEqual(outline(fromSource));
    expect(JSON.stringify(fromBundle)).toContain('EUR');
  });
});

describe('a planted bundling fault', () => {
  it('is caught: an entry importing a package the bundle marks external fails to load outside the repository', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'pricing-planted-'));
    try {
      const entry = join(dir, 'entry.ts');
      writeFileSync(
        entry,
        "import { z } from 'zod';\nexport const handler = async () => z.string().parse('ok');\n",
      );
      const settings = functionBundling();
      const outfile = join(dir, 'index.mjs');
      await build({
        entryPoints: [entry],
        outfile,
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: settings.target,
        minify: settings.minify,
        banner: settings.banner ? { js: settings.banner } : {},
        // The fault: a dependency left out of the bundle, resolvable in the repository but not in Lambda.
        external: ['zod'],
        nodePaths: [join(process.cwd(), 'node_modules')],
        logLevel: 'silent',
      });
      const run = await runBundle(outfile);
      expect(run.error?.phase).toBe('import');
      expect(run.error?.message).toMatch(/Cannot find package 'zod'/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the bundle build cache', () => {
  it('reuses the build for unchanged sources, whole, with the same files', () => {
    const again = synthesizeFunctionBundles({ cache: true });
    expect(again.synthMs).toBe(0);
    expect(again.bundles).toEqual(synthesized.bundles);
    expect(again.bundles.api.file.startsWith(BUNDLE_CACHE_DIR)).toBe(true);
  });

  it('keys a build by every input: a change to a source, the lock file or the compiler settings is a new build', () => {
    const root = mkdtempSync(join(tmpdir(), 'pricing-bundle-inputs-'));
    try {
      mkdirSync(join(root, 'functions', 'handlers'), { recursive: true });
      mkdirSync(join(root, 'lib'), { recursive: true });
      writeFileSync(join(root, 'functions', 'handlers', 'api.ts'), 'export const handler = 1;\n');
      writeFileSync(join(root, 'lib', 'stack.ts'), 'export {};\n');
      writeFileSync(join(root, 'package-lock.json'), '{}');
      writeFileSync(join(root, 'tsconfig.json'), '{}');
      writeFileSync(join(root, 'README.md'), 'not an input');
      const digests = [bundleInputsDigest(root)];
      writeFileSync(join(root, 'README.md'), 'still not an input');
      expect(bundleInputsDigest(root)).toBe(digests[0]);
      for (const [file, text] of [
        ['functions/handlers/api.ts', 'export const handler = 2;\n'],
        ['lib/stack.ts', 'export const x = 1;\n'],
        ['package-lock.json', '{"lockfileVersion":3}'],
        ['tsconfig.json', '{"compilerOptions":{}}'],
      ] as const) {
        writeFileSync(join(root, file), text);
        digests.push(bundleInputsDigest(root));
      }
      // A file moved to another name is another input, too.
      renameSync(join(root, 'lib', 'stack.ts'), join(root, 'lib', 'stacks.ts'));
      digests.push(bundleInputsDigest(root));
      expect(new Set(digests).size).toBe(digests.length);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
