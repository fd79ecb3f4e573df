import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  createReceiverFromConfig,
  ReceiverConfigurationError,
  readReceiverConfig,
  secretsSourceOf,
} from '../../../functions/receiver/reference/lambda';
import { SecretsConfigurationError } from '../../../functions/receiver/reference/secrets';
import { deliveryEvent, envelopeOf, newSecret, parsed, silentLogger } from './support';

const SECRET = newSecret();

describe('readReceiverConfig', () => {
  it('reads the table, a secret list and the defaults', () => {
    expect(
      readReceiverConfig({
        RECEIVER_TABLE_NAME: 'receiver',
        WEBHOOK_SECRETS: SECRET,
        AWS_REGION: 'eu-west-1',
      }),
    ).toEqual({
      tableName: 'receiver',
      secrets: { kind: 'list', secrets: [SECRET] },
      handlerVersion: 'reference-1',
      dedupDays: 7,
      region: 'eu-west-1',
    });
  });

  it('reads the sender JWKS URL for Ed25519 endpoints: https, or http on loopback only', () => {
    const base = {
      RECEIVER_TABLE_NAME: 'receiver',
      WEBHOOK_SECRETS: SECRET,
      WEBHOOK_ENDPOINT_ID: 'ep_01JQ4S6T1X5V8R2W3Y4Z5A6B7E',
    };
    expect(
      readReceiverConfig({ ...base, WEBHOOK_JWKS_URL: 'https://api.example.com/v1/webhooks/jwks.json' })
        .jwksUrl,
    ).toBe('https://api.example.com/v1/webhooks/jwks.json');
    expect(
      readReceiverConfig({ ...base, WEBHOOK_JWKS_URL: 'http://127.0.0.1:3000/webhooks/jwks.json' }).jwksUrl,
    ).toBe('http://127.0.0.1:3000/webhooks/jwks.json');
    expect(() =>
      readReceiverConfig({ ...base, WEBHOOK_JWKS_URL: 'http://api.example.com/jwks.json' }),
    ).toThrow(/must be https/);
    expect(() => readReceiverConfig({ ...base, WEBHOOK_JWKS_URL: 'not a url' })).toThrow(/not a URL/);
    expect(() =>
      readReceiverConfig({
        ...base,
        WEBHOOK_ENDPOINT_ID: '',
        WEBHOOK_JWKS_URL: 'https://api.example.com/jwks.json',
      }),
    ).toThrow(/WEBHOOK_ENDPOINT_ID/);
  });

  it('reads an SSM parameter name with its cache period, the handler version and the dedup days', () => {
    expect(
      readReceiverConfig({
        RECEIVER_TABLE_NAME: 'receiver',
        WEBHOOK_SECRETS_PARAMETER: '/partner/secrets',
        SECRETS_CACHE_SECONDS: '60',
        HANDLER_VERSION: 'orders-3',
        DEDUP_DAYS: '10',
        AWS_DEFAULT_REGION: 'us-east-2',
      }),
    ).toEqual({
      tableName: 'receiver',
      secrets: { kind: 'ssm', parameterName: '/partner/secrets', cacheSeconds: 60 },
      handlerVersion: 'orders-3',
      dedupDays: 10,
      region: 'us-east-2',
    });
  });

  it.each([
    [{ WEBHOOK_SECRETS: SECRET }, /RECEIVER_TABLE_NAME is required/],
    [{ RECEIVER_TABLE_NAME: 't' }, /signing secrets are required/],
    [{ RECEIVER_TABLE_NAME: 't', WEBHOOK_SECRETS: SECRET, WEBHOOK_SECRETS_PARAMETER: '/p' }, /not both/],
    [{ RECEIVER_TABLE_NAME: 't', WEBHOOK_SECRETS: SECRET, DEDUP_DAYS: '0' }, /DEDUP_DAYS/],
    [{ RECEIVER_TABLE_NAME: 't', WEBHOOK_SECRETS: SECRET, DEDUP_DAYS: '1.5' }, /DEDUP_DAYS/],
    [
      { RECEIVER_TABLE_NAME: 't', WEBHOOK_SECRETS_PARAMETER: '/p', SECRETS_CACHE_SECONDS: '-1' },
      /SECRETS_CACHE/,
    ],
  ])('refuses %j', (env, message) => {
    expect(() => readReceiverConfig(env)).toThrow(message);
    expect(() => readReceiverConfig(env)).toThrow(ReceiverConfigurationError);
  });

  it('refuses a malformed secret without echoing it', () => {
    expect(() => readReceiverConfig({ RECEIVER_TABLE_NAME: 't', WEBHOOK_SECRETS: 'whsec_oops' })).toThrow(
      SecretsConfigurationError,
    );
    try {
      readReceiverConfig({ RECEIVER_TABLE_NAME: 't', WEBHOOK_SECRETS: 'whsec_oops' });
    } catch (error) {
      expect((error as Error).message).not.toContain('oops');
    }
  });

  it('needs a region to read an SSM parameter', () => {
    const config = readReceiverConfig({ RECEIVER_TABLE_NAME: 't', WEBHOOK_SECRETS_PARAMETER: '/p' });
    expect(() => secretsSourceOf(config)).toThrow(/AWS_REGION/);
  });
});

describe('createReceiverFromConfig with SSM secrets', () => {
  const documents = mockClient(DynamoDBDocumentClient);
  afterEach(() => documents.reset());
  afterAll(() => documents.restore());

  it('reads the parameter once, verifies with its secrets, and commits the effect with the seen mark', async () => {
    documents.on(GetCommand).resolves({});
    documents.on(TransactWriteCommand).resolves({});
    let ssmCalls = 0;
    const now = new Date();
    const receive = createReceiverFromConfig(
      readReceiverConfig({
        RECEIVER_TABLE_NAME: 'receiver',
        WEBHOOK_SECRETS_PARAMETER: '/partner/secrets',
        AWS_REGION: 'eu-west-1',
      }),
      {
        dynamoDb: new DynamoDBClient({
          region: 'eu-west-1',
          credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
        }),
        clock: () => now,
        logger: silentLogger,
        ssm: {
          credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
          fetch: async () => {
            ssmCalls += 1;
            return new Response(JSON.stringify({ Parameter: { Value: `${newSecret()},${SECRET}` } }));
          },
        },
      },
    );
    const envelope = envelopeOf({ ts: now.toISOString() });
    const first = await receive(deliveryEvent({ envelope, secrets: [SECRET], timestamp: now.toISOString() }));
    const second = await receive(
      deliveryEvent({
        envelope: envelopeOf({ ts: now.toISOString() }),
        secrets: [SECRET],
        timestamp: now.toISOString(),
      }),
    );
    expect([first.statusCode, parsed(first).status, second.statusCode]).toEqual([200, 'processed', 200]);
    expect(ssmCalls).toBe(1);
    const [transaction] = documents.commandCalls(TransactWriteCommand);
    const items = transaction?.args[0].input.TransactItems ?? [];
    expect(items.map((item) => Object.keys(item)[0])).toEqual(['Update', 'Put', 'Put']);
    expect(items[2]?.Put?.Item).toMatchObject({
      event_id: envelope.event_id,
      handler_version: 'reference-1',
    });
    // The applied# marker lives as long as the dedup memory.
    const marker = items[1]?.Put?.Item as { expires_at: number };
    expect(marker.expires_at).toBe(Math.floor(now.getTime() / 1000) + 7 * 86_400);
  });
});
