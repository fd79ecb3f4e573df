import type { APIGatewayRequestAuthorizerEvent } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { ROUTES } from '../../../functions/definitions';
import { createAuthorizerHandler, UNAUTHORIZED } from '../../../functions/handlers/authorizer';
import { HttpError } from '../../../functions/handlers/middleware/errors';
import {
  authorizeRoute,
  callerContext,
  callerPrincipalOf,
  callerTenant,
} from '../../../functions/handlers/middleware/principal';
import {
  ApiKeyError,
  CallerKeyResolver,
  ensureConfiguredKey,
  issueApiKey,
  listApiKeys,
  revokeApiKey,
  rotateApiKey,
  secretSha256,
} from '../../../functions/usecases/access/api-keys';
import { MemoryApiKeyStore } from '../../support/memory-api-keys';
import { proxyEvent } from '../support/lambda';

const clockAt = (start: string) => {
  let now = new Date(start);
  return {
    now: () => now,
    advance: (ms: number) => {
      now = new Date(now.getTime() + ms);
    },
  };
};

const setup = () => {
  const store = new MemoryApiKeyStore();
  const clock = clockAt('2026-11-25T10:00:00.000Z');
  return { store, clock, deps: { store, clock }, resolver: new CallerKeyResolver(store, clock, 0) };
};

describe('caller keys (C26)', () => {
  it('issues a key stored only as its hash, which resolves to its tenant and scopes', async () => {
    const { store, deps, resolver } = setup();
    const issued = await issueApiKey(deps, { tenant: 't1', scopes: ['prices:read', 'prices:read'] }, 'erin');
    expect(issued.key).toMatch(/^mck_[A-Za-z0-9_-]{43}$/);
    expect(issued.scopes).toEqual(['prices:read']);
    expect(JSON.stringify([...store.keys.values()])).not.toContain(issued.key);
    expect(store.hashes.has(secretSha256(issued.key))).toBe(true);
    expect(await resolver.resolve(issued.key)).toEqual({
      kind: 'caller',
      keyId: issued.key_id,
      tenant: 't1',
      scopes: ['prices:read'],
      channels: [],
      customerGroups: [],
    });
    expect(await resolver.resolve('mck_unknown_0123456789')).toBeUndefined();
    expect(await resolver.resolve(undefined)).toBeUndefined();
    expect(await resolver.resolve('short')).toBeUndefined();
    expect(await resolver.resolve('x'.repeat(300))).toBeUndefined();
  });

  it('binds the customer groups given (once each, C29) and keeps them through a rotation', async () => {
    const { deps, resolver } = setup();
    const issued = await issueApiKey(
      deps,
      { tenant: 't1', scopes: ['prices:read'], customer_groups: ['b2b-gold', 'vip', 'b2b-gold'] },
      'erin',
    );
    expect(issued.customer_groups).toEqual(['b2b-gold', 'vip']);
    expect(await resolver.resolve(issued.key)).toMatchObject({ customerGroups: ['b2b-gold', 'vip'] });
    const rotated = await rotateApiKey(deps, issued.key_id, 1);
    expect(rotated.customer_groups).toEqual(['b2b-gold', 'vip']);
    for (const key of [issued.key, rotated.key])
      expect(await resolver.resolve(key)).toMatchObject({ customerGroups: ['b2b-gold', 'vip'] });
    const revoked = await revokeApiKey(deps, issued.key_id, 'erin');
    expect(revoked.customer_groups).toEqual(['b2b-gold', 'vip']);
  });

  it('keeps the old secret for the overlap after a rotation, then refuses it', async () => {
    const { deps, clock, resolver } = setup();
    const issued = await issueApiKey(deps, { tenant: 't1', scopes: ['prices:read'] }, 'erin');
    const rotated = await rotateApiKey(deps, issued.key_id, 2);
    expect(rotated.previous_valid_until).toBe('2026-11-25T12:00:00.000Z');
    expect(await resolver.resolve(issued.key)).toBeDefined();
    expect(await resolver.resolve(rotated.key)).toBeDefined();
    clock.advance(2 * 3_600_000);
    expect(await resolver.resolve(issued.key)).toBeUndefined();
    expect(await resolver.resolve(rotated.key)).toBeDefined();
    // Once its overlap ended, operators no longer see an old secret as working.
    const [listed] = (await listApiKeys(deps, { limit: 10 })).items;
    expect(listed?.previous_valid_until).toBeUndefined();
  });

  it('ends every old secret at once on an emergency rotation (overlap 0)', async () => {
    const { deps, resolver } = setup();
    const issued = await issueApiKey(deps, { tenant: 't1', scopes: ['prices:read'] }, 'erin');
    const overlapping = await rotateApiKey(deps, issued.key_id, 24);
    const emergency = await rotateApiKey(deps, issued.key_id, 0);
    expect(emergency.previous_valid_until).toBeUndefined();
    expect(await resolver.resolve(issued.key)).toBeUndefined();
    expect(await resolver.resolve(overlapping.key)).toBeUndefined();
    expect(await resolver.resolve(emergency.key)).toBeDefined();
  });

  it('revokes every secret; a revoked key cannot be rotated; an unknown one is not found', async () => {
    const { deps, resolver } = setup();
    const issued = await issueApiKey(deps, { tenant: 't1', scopes: ['prices:read'] }, 'erin');
    const rotated = await rotateApiKey(deps, issued.key_id, 24);
    const revoked = await revokeApiKey(deps, issued.key_id, 'erin');
    expect(revoked).toMatchObject({ status: 'revoked', revoked_by: 'erin' });
    expect(await resolver.resolve(issued.key)).toBeUndefined();
    expect(await resolver.resolve(rotated.key)).toBeUndefined();
    expect(await revokeApiKey(deps, issued.key_id, 'someone')).toEqual(revoked);
    await expect(rotateApiKey(deps, issued.key_id, 24)).rejects.toMatchObject({ code: 'invalid_state' });
    await expect(revokeApiKey(deps, 'ak_nothing', 'erin')).rejects.toBeInstanceOf(ApiKeyError);
  });

  it('creates a configured key once, under an id derived from its hash', async () => {
    const { store, deps } = setup();
    const input = {
      key: 'key_local_0123456789abcdef',
      tenant: 'demo',
      scopes: ['prices:read'] as const,
      description: 'x',
    };
    const first = await ensureConfiguredKey(deps, { ...input, customer_groups: ['b2b-gold'] });
    const second = await ensureConfiguredKey(deps, { ...input, tenant: 'other' });
    expect(second).toBe(first);
    expect(store.keys.get(first)?.record).toMatchObject({ tenant: 'demo', customer_groups: ['b2b-gold'] });
    // Without groups given, a configured key names none.
    const plain = await ensureConfiguredKey(deps, { ...input, key: 'key_local_plain_0123456789' });
    expect(store.keys.get(plain)?.record.customer_groups).toEqual([]);
  });

  it('remembers a resolution for its cache time: a revocation takes effect when it ends', async () => {
    const { store, deps, clock } = setup();
    const resolver = new CallerKeyResolver(store, clock, 30);
    const issued = await issueApiKey(deps, { tenant: 't1', scopes: ['prices:read'] }, 'erin');
    expect(await resolver.resolve(issued.key)).toBeDefined();
    await revokeApiKey(deps, issued.key_id, 'erin');
    expect(await resolver.resolve(issued.key)).toBeDefined();
    clock.advance(30_000);
    expect(await resolver.resolve(issued.key)).toBeUndefined();
  });
});

const authorizerEvent = (headers: Record<string, string>): APIGatewayRequestAuthorizerEvent =>
  ({
    type: 'REQUEST',
    methodArn: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/GET/catalog/prices',
    headers,
  }) as unknown as APIGatewayRequestAuthorizerEvent;

describe('the caller-key authorizer', () => {
  it('allows the whole stage with the key as context and its hash as usage identifier', async () => {
    const { store, clock } = setup();
    store.seed('key_test_0123456789abcdef', 't1', ['prices:read', 'quotes:write'], 'ak_t1');
    const handler = createAuthorizerHandler({ apiKeys: store, clock }, { cacheSeconds: 0 });
    const answer = await handler(authorizerEvent({ 'X-Api-Key': 'key_test_0123456789abcdef' }));
    expect(answer).toEqual({
      principalId: 'ak_t1',
      policyDocument: {
        Version: '2012-10-17',
        Statement: [
          {
            Action: 'execute-api:Invoke',
            Effect: 'Allow',
            Resource: 'arn:aws:execute-api:eu-west-1:123456789012:abc123/prod/*/*',
          },
        ],
      },
      context: {
        principal: 'caller',
        key_id: 'ak_t1',
        tenant: 't1',
        scopes: 'prices:read quotes:write',
        channels: '',
        customer_groups: '',
      },
      usageIdentifierKey: secretSha256('key_test_0123456789abcdef'),
    });
    await expect(handler(authorizerEvent({}))).rejects.toThrow(UNAUTHORIZED);
    await expect(handler(authorizerEvent({ 'x-api-key': 'key_wrong_0123456789abc' }))).rejects.toThrow(
      UNAUTHORIZED,
    );
  });
});

describe('authorizeRoute', () => {
  const route = (operation: string) => {
    const found = ROUTES.find((candidate) => candidate.operation === operation);
    if (!found) throw new Error(operation);
    return found;
  };
  const withCaller = (scopes: string[]) =>
    proxyEvent({
      resource: '/catalog/prices',
      authorizer: callerContext({
        kind: 'caller',
        keyId: 'ak_1',
        tenant: 't1',
        scopes: scopes as never,
        channels: [],
        customerGroups: [],
      }),
    });

  it('answers 401 without a principal and 403 without the scope or role', () => {
    const expectError = (run: () => unknown, code: string) => {
      try {
        run();
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(HttpError);
        expect((error as HttpError).code).toBe(code);
      }
    };
    expectError(
      () => authorizeRoute(route('getPrice'), proxyEvent({ resource: '/x', authorizer: null }), []),
      'unauthorized',
    );
    expectError(() => authorizeRoute(route('quote'), withCaller(['prices:read']), []), 'forbidden');
    expect(authorizeRoute(route('getPrice'), withCaller(['prices:read']), [])).toMatchObject({
      tenant: 't1',
    });
    // Unknown scope words in a context are dropped, never granted.
    expectError(() => authorizeRoute(route('quote'), withCaller(['quotes:*']), []), 'forbidden');
    const auditor = proxyEvent({
      resource: '/admin/change-requests',
      authorizer: { principal: 'operator', operator: 'fay', roles: 'auditor', machine: 'false' },
    });
    expect(authorizeRoute(route('listChangeRequests'), auditor, [])).toMatchObject({ identity: 'fay' });
    expectError(() => authorizeRoute(route('approveChangeRequest'), auditor, []), 'forbidden');
    // A machine context never holds approver, even when it says so.
    const machine = proxyEvent({
      resource: '/admin/change-requests',
      authorizer: { principal: 'operator', operator: 'bot', roles: 'approver author', machine: 'true' },
    });
    expectError(() => authorizeRoute(route('approveChangeRequest'), machine, []), 'forbidden');
    // In AWS: the IAM principal, normalised; an unconfigured role holds nothing.
    const iam = proxyEvent({ resource: '/admin/change-requests', authorizer: null });
    iam.requestContext.identity.userArn = 'arn:aws:sts::123456789012:assumed-role/Anything/alice';
    expectError(() => authorizeRoute(route('listChangeRequests'), iam, []), 'forbidden');
    expect(
      authorizeRoute(route('approveChangeRequest'), iam, [
        { account: '123456789012', roleName: 'Anything', roles: ['approver'], human: true },
      ]),
    ).toMatchObject({ identity: 'alice', roles: ['approver'] });
  });
});

describe('callerTenant: the tenant a caller key acts for (C26)', () => {
  const key = (channels: string[], customerGroups: string[] = []) =>
    ({
      kind: 'caller',
      keyId: 'ak_1',
      tenant: 't1',
      scopes: ['quotes:write'],
      channels,
      customerGroups,
    }) as const;
  const refusal = (run: () => unknown) => {
    try {
      run();
    } catch (error) {
      return error as HttpError;
    }
    throw new Error('expected a refusal');
  };

  it("is the key's tenant; a request naming it too is fine, naming another is 403", () => {
    expect(callerTenant(key([]), {}, 'quotes')).toBe('t1');
    expect(callerTenant(key([]), { tenant: 't1', channel: 'web' }, 'quotes')).toBe('t1');
    const other = refusal(() => callerTenant(key([]), { tenant: 't2' }, 'quotes'));
    expect(other.code).toBe('forbidden');
    expect(other.message).toBe('this key quotes for tenant t1 only');
  });

  it('limits a key with channels to those channels, and needs one named', () => {
    expect(callerTenant(key(['web', 'app']), { channel: 'app' }, 'reads prices')).toBe('t1');
    for (const asked of [{}, { channel: 'pos' }]) {
      const refused = refusal(() => callerTenant(key(['web', 'app']), asked, 'reads prices'));
      expect(refused.code).toBe('forbidden');
      expect(refused.message).toBe('this key reads prices for the channels web, app only');
    }
  });

  it('lets a request name only customer groups of the key (C29); naming none is always fine', () => {
    const gold = key([], ['b2b-gold', 'vip']);
    expect(callerTenant(gold, { customer_groups: ['vip'] }, 'quotes')).toBe('t1');
    expect(callerTenant(gold, { customer_groups: ['b2b-gold', 'vip', 'vip'] }, 'quotes')).toBe('t1');
    for (const asked of [{}, { customer_groups: [] }, { customer_groups: undefined }]) {
      expect(callerTenant(gold, asked, 'quotes')).toBe('t1');
      expect(callerTenant(key([]), asked, 'quotes')).toBe('t1');
    }
  });

  it('refuses (403) a customer group the key does not hold, naming what it may not and may name', () => {
    const extra = refusal(() =>
      callerTenant(
        key([], ['b2b-gold', 'vip']),
        { customer_groups: ['b2b-gold', 'staff', 'press', 'staff'] },
        'reads prices',
      ),
    );
    expect(extra).toBeInstanceOf(HttpError);
    expect(extra.code).toBe('forbidden');
    expect(extra.statusCode).toBe(403);
    expect(extra.message).toBe(
      'this key may not name the customer groups staff, press; it may name b2b-gold, vip',
    );
    // A key without groups may name none.
    const none = refusal(() => callerTenant(key([]), { customer_groups: ['b2b-gold'] }, 'quotes'));
    expect(none.code).toBe('forbidden');
    expect(none.message).toBe('this key may not name the customer groups b2b-gold; it may name none');
  });

  it('carries the customer groups through the authorizer context, as it carries channels', () => {
    const principal = key(['web'], ['b2b-gold', 'vip']);
    const context = callerContext(principal);
    expect(context).toMatchObject({ channels: 'web', customer_groups: 'b2b-gold vip' });
    expect(callerPrincipalOf(proxyEvent({ resource: '/catalog/prices', authorizer: context }))).toEqual(
      principal,
    );
    // A context from before (an authorizer answer cached across a deployment) binds no group.
    const { customer_groups: _groups, ...older } = context;
    expect(
      callerPrincipalOf(proxyEvent({ resource: '/catalog/prices', authorizer: older }))?.customerGroups,
    ).toEqual([]);
  });
});
