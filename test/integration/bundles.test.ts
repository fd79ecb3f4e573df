/**
 * The bundles AWS runs (issue 17): the app synthesized with bundling as `npm run deploy` builds it, each function's
 * bundle loaded in a fresh Node 24 process outside the repository (no `node_modules` to fall back on, as in
 * Lambda) with only the environment its template gives it — its variables resolved to this test's DynamoDB Local
 * and fauxqs resources through the definitions — and invoked with real events of its kind: the API's health, the
 * caller-key authorizer with an unknown key, a storefront price read from the catalog published here. Their
 * answers equal the source handlers'. A planted bundling fault (an entry importing a package the bundle marks
 * external) is caught.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DynamoApiKeyStore } from '../../functions/adapters/aws/api-key-store';
import { DynamoCatalogRepository } from '../../functions/adapters/aws/catalog-repository';
import type { ProvisionedResources } from '../../functions/adapters/local/bootstrap';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../functions/adapters/local/local-aws';
import { awsDependencies } from '../../functions/composition/aws';
import { FUNCTION_FACTORIES } from '../../functions/composition/functions';
import { FUNCTIONS, type FunctionId } from '../../functions/definitions';
import { UNAUTHORIZED } from '../../functions/handlers/authorizer';
import { callerContext } from '../../functions/handlers/middleware/principal';
import { ensureConfiguredKey } from '../../functions/usecases/access/api-keys';
import { importCatalog } from '../../functions/usecases/catalog/import';
import { validateCatalogDocument } from '../../functions/usecases/catalog/validate';
import { functionBundling } from '../../lib/constructs/defaults';
import { runBundle, type SynthesizedBundles, synthesizeFunctionBundles } from '../../lib/function-bundles';
import { demoDocument } from '../support/demo-pricing';
import { engineClients, provisionIsolated } from '../support/engines';
import { functionEnvironment } from '../support/function-environment';
import { lambdaContext, proxyEvent } from '../unit/support/lambda';

const clients = engineClients();
let synthesized: SynthesizedBundles;
let resources: ProvisionedResources;

/**
 * What Lambda gives the function: its own variables (the template's), resolved to this test's resources, the
 * region and credentials; the AWS SDK's per-service endpoint variables point it at the engines.
 */
const lambdaEnvironment = (functionId: FunctionId): Record<string, string> => ({
  ...functionEnvironment(functionId, {
    region: LOCAL_REGION,
    account: '000000000000',
    table: (id) => resources.tableNames[id],
    queueUrl: (id) => resources.queueUrls[id],
    bucket: (id) => resources.bucketNames[id],
  }),
  AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
  AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
  AWS_ENDPOINT_URL_DYNAMODB: inject('dynamoDbEndpoint'),
  AWS_ENDPOINT_URL_SQS: inject('sqsEndpoint'),
  AWS_ENDPOINT_URL_S3: inject('sqsEndpoint'),
  POWERTOOLS_LOG_LEVEL: 'SILENT',
});

/** The source handler of a function on the same environment, for the same event. */
const sourceResult = async (functionId: FunctionId, event: unknown): Promise<unknown> => {
  const previous = { ...process.env };
  Object.assign(process.env, lambdaEnvironment(functionId));
  try {
    const handler = FUNCTION_FACTORIES[functionId](awsDependencies(functionId, process.env)) as (
      event: unknown,
      context: unknown,
    ) => Promise<unknown>;
    return await handler(event, lambdaContext());
  } finally {
    process.env = previous;
  }
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

beforeAll(async () => {
  resources = await provisionIsolated(clients);
  const clock = { now: () => new Date() };
  const { rate_policy: _policy, ...document } = demoDocument();
  await importCatalog(
    {
      repository: new DynamoCatalogRepository(
        clients.documents,
        resources.tableNames.catalog,
        resources.tableNames.events,
      ),
      clock,
    },
    validateCatalogDocument(document),
  );
  synthesized = synthesizeFunctionBundles();
}, 180_000);

afterAll(() => synthesized?.cleanup());

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
