/**
 * The local AWS twin (KMS, EventBridge Scheduler, API Gateway usage plans) answers the service's own AWS adapters
 * as AWS does: the same adapters the bundles run, pointed at the twin, sign, MAC, encrypt, schedule and register
 * with the local stack's keys and scheduler table, and fail with KMS's error names where AWS would.
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { KMSClient } from '@aws-sdk/client-kms';
import { SchedulerClient } from '@aws-sdk/client-scheduler';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiGatewayCallerUsagePlan } from '../../functions/adapters/aws/api-gateway-usage-plan';
import { CloudWatchObjectiveFigures } from '../../functions/adapters/aws/cloudwatch-objectives';
import { EventBridgeOneTimeScheduler } from '../../functions/adapters/aws/eventbridge-scheduler';
import { KmsDataCipher, KmsMacSigner, KmsReceiptSigner } from '../../functions/adapters/aws/kms-signing';
import { type AwsTwin, queueOfArnIn, startAwsTwin } from '../../functions/adapters/local/aws-twin';
import type { ProvisionedResources } from '../../functions/adapters/local/bootstrap';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../functions/adapters/local/local-aws';
import { type LocalKeys, loadOrCreateLocalKeys } from '../../functions/adapters/local/local-signing';
import { LocalOneTimeScheduler } from '../../functions/adapters/local/scheduler';
import type { MessageQueue } from '../../functions/ports/queue';
import { IntegrityError } from '../../functions/ports/signing';
import { engineClients, provisionIsolated } from '../support/engines';

const ACCOUNT = '000000000000';
const arn = (id: string) => `arn:aws:kms:${LOCAL_REGION}:${ACCOUNT}:key/${id}`;
const clients = engineClients();
let keysDir: string;
let keys: LocalKeys;
let twin: AwsTwin;
let resources: ProvisionedResources;
let localScheduler: LocalOneTimeScheduler;
let kms: KMSClient;

beforeAll(async () => {
  keysDir = mkdtempSync(join(tmpdir(), 'pricing-twin-keys-'));
  keys = await loadOrCreateLocalKeys(keysDir);
  resources = await provisionIsolated(clients);
  localScheduler = new LocalOneTimeScheduler(clients.documents, resources.tableNames.localSchedules, {
    now: () => new Date(),
  });
  twin = await startAwsTwin({
    keys: keys.kms,
    scheduler: localScheduler,
    queueOfArn: queueOfArnIn(resources.queueUrls),
    usagePlans: ['pricing-callers'],
    region: LOCAL_REGION,
    account: ACCOUNT,
  });
  kms = new KMSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: twin.endpoint });
}, 60_000);

afterAll(async () => {
  kms?.destroy();
  await twin?.stop();
  rmSync(keysDir, { recursive: true, force: true });
});

describe('KMS', () => {
  it('signs digests with the local receipt key: the KMS adapter’s signatures verify with the local public key', async () => {
    const signer = new KmsReceiptSigner(kms, arn('receipt-signing'));
    const local = await keys.receiptSigner.publicKey();
    const published = await signer.publicKey();
    expect({ x: published.x, y: published.y }).toEqual({ x: local.x, y: local.y });
    const publicKey = createPublicKey({
      key: { kty: 'EC', crv: 'P-256', x: local.x, y: local.y },
      format: 'jwk',
    });
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 2048 }), async (message) => {
        const signature = await signer.sign(message);
        expect(verify('sha256', message, publicKey, signature)).toBe(true);
        const other = createHash('sha256').update(message).update('x').digest();
        expect(verify('sha256', other, publicKey, signature)).toBe(false);
      }),
      { numRuns: 40 },
    );
  });

  it('MACs with the local quote key: equal to the in-process signer’s, a changed MAC does not verify', async () => {
    const mac = new KmsMacSigner(kms, arn('quote-mac'));
    const message = new TextEncoder().encode('{"quote_id":"q_1"}');
    const tag = await mac.generateMac(message);
    expect(Buffer.from(tag)).toEqual(Buffer.from(await keys.quoteMac.generateMac(message)));
    expect(await mac.verifyMac(message, tag)).toBe(true);
    const changed = new Uint8Array(tag);
    changed[0] = (changed[0] ?? 0) ^ 1;
    expect(await mac.verifyMac(message, changed)).toBe(false);
  });

  it('encrypts with the secrets key, bound to the context: another context or a changed blob does not open', async () => {
    const cipher = new KmsDataCipher(kms, arn('secrets'));
    const plaintext = new TextEncoder().encode('whsec_the_endpoint_secret');
    const sealed = await cipher.encrypt(plaintext, { endpoint_id: 'ep_1' });
    expect(Buffer.from(await cipher.decrypt(sealed, { endpoint_id: 'ep_1' }))).toEqual(
      Buffer.from(plaintext),
    );
    await expect(cipher.decrypt(sealed, { endpoint_id: 'ep_2' })).rejects.toBeInstanceOf(IntegrityError);
    const tampered = `${sealed.slice(0, -6)}AAAAAA`;
    await expect(cipher.decrypt(tampered, { endpoint_id: 'ep_1' })).rejects.toBeInstanceOf(IntegrityError);
    expect(Buffer.from(await cipher.decrypt(await cipher.encrypt(new Uint8Array(), {}), {}))).toHaveLength(0);
  });

  it('answers with KMS’s error names: an unknown key, a key used for what it cannot do', async () => {
    await expect(
      new KmsReceiptSigner(kms, arn('no-such-key')).sign(new Uint8Array([1])),
    ).rejects.toMatchObject({
      name: 'NotFoundException',
    });
    await expect(new KmsReceiptSigner(kms, arn('secrets')).sign(new Uint8Array([1]))).rejects.toMatchObject({
      name: 'InvalidKeyUsageException',
    });
    await expect(
      new KmsMacSigner(kms, arn('receipt-signing')).generateMac(new Uint8Array([1])),
    ).rejects.toMatchObject({ name: 'InvalidKeyUsageException' });
  });
});

describe('EventBridge Scheduler', () => {
  it('stores a one-time schedule in the local scheduler table; a second with the name exists; a cancel removes it', async () => {
    const scheduler = new EventBridgeOneTimeScheduler(
      new SchedulerClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: twin.endpoint }),
      {
        groupName: 'deliveries',
        roleArn: `arn:aws:iam::${ACCOUNT}:role/scheduler`,
        queueArns: {
          delivery: `arn:aws:sqs:${LOCAL_REGION}:${ACCOUNT}:${resources.queueUrls.delivery.split('/').at(-1)}`,
        },
      },
    );
    const at = new Date(Date.now() - 1_000);
    const schedule = { name: 'retry-d_1-2', at, queue: 'delivery' as const, body: '{"delivery_id":"d_1"}' };
    expect(await scheduler.scheduleOnce(schedule)).toBe('created');
    expect(await scheduler.scheduleOnce(schedule)).toBe('exists');
    const sent: string[] = [];
    const queue: MessageQueue = {
      send: async (_queue, body) => {
        sent.push(body);
        return { messageId: `m${sent.length}` };
      },
    };
    expect(await localScheduler.dispatchDue(queue)).toBe(1);
    expect(sent).toEqual(['{"delivery_id":"d_1"}']);
    expect(await scheduler.scheduleOnce({ ...schedule, name: 'retry-d_1-3' })).toBe('created');
    await scheduler.cancel('retry-d_1-3');
    await scheduler.cancel('retry-d_1-3');
    expect(await localScheduler.dispatchDue(queue)).toBe(0);
  });
});

describe('API Gateway usage plans', () => {
  it('registers a caller key’s usage identifier once, and removes it', async () => {
    const plan = new ApiGatewayCallerUsagePlan(
      new APIGatewayClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: twin.endpoint }),
      'pricing-callers',
    );
    await plan.register('usage-abc');
    await plan.register('usage-abc');
    await plan.remove(['usage-abc']);
    await plan.remove(['usage-abc']);
    const missing = new ApiGatewayCallerUsagePlan(
      new APIGatewayClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: twin.endpoint }),
      'no-such-plan',
    );
    await expect(missing.register('usage-def')).rejects.toThrow('no usage plan named no-such-plan');
  });
});

describe('CloudWatch metrics', () => {
  it('answers GetMetricData from the EMF lines it was given, as the objectives reader asks', async () => {
    const now = Date.now();
    const emf = (service: string, operation: string, latency: number, at = now) =>
      JSON.stringify({
        _aws: {
          Timestamp: at,
          CloudWatchMetrics: [
            {
              Namespace: 'Pricing/local',
              Dimensions: [['service', 'operation']],
              Metrics: [{ Name: 'Latency', Unit: 'Milliseconds' }],
            },
          ],
        },
        service,
        operation,
        Latency: latency,
      });
    for (const latency of [10, 20, 30, 40, 1000])
      twin.ingestLogLine(emf('pricing-catalog', 'getPrice', latency));
    twin.ingestLogLine(emf('pricing-catalog', 'getPrice', 5, now - 3 * 86_400_000));
    twin.ingestLogLine('{"level":"INFO","message":"not a metric"}');
    twin.ingestLogLine('not json');
    const figures = await new CloudWatchObjectiveFigures(
      new CloudWatchClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: twin.endpoint }),
      { now: () => new Date(now + 60_000) },
      { namespace: 'Pricing/local' },
    ).read();
    // The sample of three days ago is outside the 24 h window; p95 of five values is the largest.
    expect(figures.latency.getPrice).toEqual({ count: 5, p95Ms: 1000 });
    expect(figures.latency.quote).toEqual({ count: 0, p95Ms: null });
  });
});
