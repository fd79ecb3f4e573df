import { describe, expect, it } from 'vitest';
import { createAwsClients, destroyAwsClients, emulatorSigner } from '../../../functions/adapters/aws/clients';

type Signable = Parameters<ReturnType<typeof emulatorSigner>['sign']>[0];

const request = (hostname: string): Signable =>
  ({
    protocol: 'https:',
    hostname,
    method: 'POST',
    path: '/',
    query: {},
    headers: { host: hostname },
  }) as Signable;

describe('emulatorSigner', () => {
  it('adds well-formed SigV4 headers naming the access key, without computing a signature', async () => {
    const signed = await emulatorSigner('local', 'local').sign(request('127.0.0.1'));
    expect(signed.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=local\/\d{8}\/local\/dynamodb\/aws4_request, SignedHeaders=host, Signature=0$/,
    );
    expect(signed.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
  });

  it('is used only for an emulator endpoint with explicit credentials; AWS clients sign for real', async () => {
    const credentials = { accessKeyId: 'local', secretAccessKey: 'local' };
    const emulator = createAwsClients({
      region: 'local',
      credentials,
      dynamoDbEndpoint: 'http://127.0.0.1:1',
      unsignedEmulator: true,
    });
    const aws = createAwsClients({ region: 'eu-west-1', credentials, unsignedEmulator: true });
    try {
      const emulated = await (await emulator.dynamoDb.config.signer()).sign(request('127.0.0.1'));
      expect(emulated.headers.authorization).toMatch(/Signature=0$/);
      const real = await (await aws.dynamoDb.config.signer()).sign(
        request('dynamodb.eu-west-1.amazonaws.com'),
      );
      expect(real.headers.authorization).toMatch(/Signature=[0-9a-f]{64}$/);
    } finally {
      destroyAwsClients(emulator);
      destroyAwsClients(aws);
    }
  });
});
