import {
  APIGatewayClient,
  ConflictException,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  GetApiKeysCommand,
  GetUsagePlansCommand,
  NotFoundException,
} from '@aws-sdk/client-api-gateway';
import { mockClient } from 'aws-sdk-client-mock';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { ApiGatewayCallerUsagePlan } from '../../../functions/adapters/aws/api-gateway-usage-plan';
import {
  issueApiKey,
  revokeApiKey,
  rotateApiKey,
  secretSha256,
} from '../../../functions/usecases/access/api-keys';
import { MemoryApiKeyStore } from '../../support/memory-api-keys';

const gateway = mockClient(APIGatewayClient);
// The stub is on the client class's prototype: undone after this file, for the files that share its worker.
afterAll(() => gateway.restore());
const IDENTIFIER = 'a'.repeat(64);

beforeEach(() => {
  gateway.reset();
  gateway
    .on(GetUsagePlansCommand)
    .resolvesOnce({ items: [{ id: 'other', name: 'someone-else' }], position: 'next' })
    .resolves({ items: [{ id: 'plan1', name: 'pricing-dev-service-api-callers' }] });
});

const plan = () =>
  new ApiGatewayCallerUsagePlan(
    new APIGatewayClient({ region: 'eu-west-1' }),
    'pricing-dev-service-api-callers',
  );

describe('ApiGatewayCallerUsagePlan', () => {
  it('creates an API key holding the identifier (never a secret) and adds it to the plan found by name', async () => {
    gateway.on(CreateApiKeyCommand).resolves({ id: 'k1' });
    gateway.on(CreateUsagePlanKeyCommand).resolves({});
    await plan().register(IDENTIFIER);
    expect(gateway.commandCalls(GetUsagePlansCommand)).toHaveLength(2);
    expect(gateway.commandCalls(CreateApiKeyCommand)[0]?.args[0].input).toEqual({
      name: `caller-${IDENTIFIER}`,
      value: IDENTIFIER,
      enabled: true,
    });
    expect(gateway.commandCalls(CreateUsagePlanKeyCommand)[0]?.args[0].input).toEqual({
      usagePlanId: 'plan1',
      keyId: 'k1',
      keyType: 'API_KEY',
    });
  });

  it('finishes what an earlier attempt began: an existing key is found by name, an existing plan key kept', async () => {
    gateway.on(CreateApiKeyCommand).rejects(new ConflictException({ message: 'exists', $metadata: {} }));
    gateway.on(GetApiKeysCommand).resolves({
      items: [
        { id: 'k-other', name: `caller-${IDENTIFIER}x` },
        { id: 'k1', name: `caller-${IDENTIFIER}` },
      ],
    });
    gateway
      .on(CreateUsagePlanKeyCommand)
      .rejects(new ConflictException({ message: 'exists', $metadata: {} }));
    await plan().register(IDENTIFIER);
    expect(gateway.commandCalls(CreateUsagePlanKeyCommand)[0]?.args[0].input.keyId).toBe('k1');
  });

  it('deletes the API keys named after removed identifiers, ignoring ones already gone', async () => {
    gateway.on(GetApiKeysCommand).resolves({ items: [{ id: 'k1', name: `caller-${IDENTIFIER}` }] });
    gateway.on(DeleteApiKeyCommand).rejects(new NotFoundException({ message: 'gone', $metadata: {} }));
    await plan().remove([IDENTIFIER]);
    expect(gateway.commandCalls(DeleteApiKeyCommand)[0]?.args[0].input).toEqual({ apiKey: 'k1' });
  });

  it('fails clearly when the plan does not exist', async () => {
    gateway.reset();
    gateway.on(GetUsagePlansCommand).resolves({ items: [] });
    await expect(plan().register(IDENTIFIER)).rejects.toThrow(/no usage plan named/);
  });
});

describe('caller keys keep the usage plan in step', () => {
  it('registers every live secret before it works and removes each one that stops', async () => {
    const calls: string[] = [];
    const usagePlan = {
      register: async (id: string) => {
        calls.push(`+${id.slice(0, 8)}`);
      },
      remove: async (ids: readonly string[]) => {
        for (const id of ids) calls.push(`-${id.slice(0, 8)}`);
      },
    };
    const deps = {
      store: new MemoryApiKeyStore(),
      clock: { now: () => new Date('2026-11-25T10:00:00Z') },
      usagePlan,
    };
    const short = (key: string) => secretSha256(key).slice(0, 8);
    const issued = await issueApiKey(deps, { tenant: 't1', scopes: ['prices:read'] }, 'erin');
    const overlapping = await rotateApiKey(deps, issued.key_id, 24);
    const emergency = await rotateApiKey(deps, issued.key_id, 0);
    await revokeApiKey(deps, issued.key_id, 'erin');
    expect(calls).toEqual([
      `+${short(issued.key)}`,
      `+${short(overlapping.key)}`,
      `+${short(emergency.key)}`,
      `-${short(issued.key)}`,
      `-${short(overlapping.key)}`,
      `-${short(emergency.key)}`,
    ]);
  });
});
