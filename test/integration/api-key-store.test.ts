import { GetCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { DynamoApiKeyStore } from '../../functions/adapters/aws/api-key-store';
import { destroyAwsClients } from '../../functions/adapters/aws/clients';
import type { ProvisionedResources } from '../../functions/adapters/local/bootstrap';
import { ApiKeyConflictError } from '../../functions/ports/api-keys';
import { InvalidCursorError } from '../../functions/shared/cursor';
import {
  CallerKeyResolver,
  issueApiKey,
  listApiKeys,
  revokeApiKey,
  rotateApiKey,
  secretSha256,
} from '../../functions/usecases/access/api-keys';
import { engineClients, provisionIsolated } from '../support/engines';

/** Caller keys (C26) on DynamoDB Local: hash items, conditional rotations, TTL of overlapping secrets. */

const clients = engineClients();
afterAll(() => destroyAwsClients(clients));

let resources: ProvisionedResources;
beforeEach(async () => {
  resources = await provisionIsolated(clients);
});

const clock = { now: () => new Date('2026-11-25T10:00:00.000Z') };

describe('DynamoApiKeyStore', () => {
  it('issues, resolves, rotates with an overlap kept until its TTL, and revokes every hash', async () => {
    const store = new DynamoApiKeyStore(clients.documents, resources.tableNames.apiKeys);
    const deps = { store, clock };
    const resolver = new CallerKeyResolver(store, clock, 0);
    const issued = await issueApiKey(
      deps,
      { tenant: 't1', scopes: ['prices:read'], channels: ['web'], description: 'kiosk' },
      'erin',
    );
    expect(await resolver.resolve(issued.key)).toMatchObject({ tenant: 't1', channels: ['web'] });

    const rotated = await rotateApiKey(deps, issued.key_id, 24);
    const old = await clients.documents.send(
      new GetCommand({
        TableName: resources.tableNames.apiKeys,
        Key: { pk: `hash#${secretSha256(issued.key)}` },
      }),
    );
    // The overlapping secret's item carries its end as the table's TTL attribute.
    expect(old.Item?.expires_at).toBe(Date.parse('2026-11-26T10:00:00.000Z') / 1000);
    expect(await resolver.resolve(issued.key)).toBeDefined();
    expect(await resolver.resolve(rotated.key)).toBeDefined();

    await revokeApiKey(deps, issued.key_id, 'erin');
    expect(await resolver.resolve(issued.key)).toBeUndefined();
    expect(await resolver.resolve(rotated.key)).toBeUndefined();
    expect((await store.get(issued.key_id))?.record.status).toBe('revoked');
  });

  it('stores the customer groups (C29) on the record and every secret; a record from before binds none', async () => {
    const store = new DynamoApiKeyStore(clients.documents, resources.tableNames.apiKeys);
    const deps = { store, clock };
    const resolver = new CallerKeyResolver(store, clock, 0);
    const issued = await issueApiKey(
      deps,
      { tenant: 't1', scopes: ['prices:read'], customer_groups: ['b2b-gold', 'vip', 'vip'] },
      'erin',
    );
    expect(issued.customer_groups).toEqual(['b2b-gold', 'vip']);
    expect((await store.get(issued.key_id))?.record.customer_groups).toEqual(['b2b-gold', 'vip']);
    expect((await store.grantOf(secretSha256(issued.key)))?.customer_groups).toEqual(['b2b-gold', 'vip']);
    const rotated = await rotateApiKey(deps, issued.key_id, 24);
    expect(rotated.customer_groups).toEqual(['b2b-gold', 'vip']);
    // The new secret and the overlapping old one both carry the groups.
    for (const key of [issued.key, rotated.key])
      expect(await resolver.resolve(key)).toMatchObject({ customerGroups: ['b2b-gold', 'vip'] });
    expect((await listApiKeys(deps, { tenant: 't1', limit: 10 })).items).toMatchObject([
      { key_id: issued.key_id, customer_groups: ['b2b-gold', 'vip'] },
    ]);

    // A key stored before keys bound customer groups: no attribute on its record nor its secret's item.
    const secret = 'mck_stored_before_groups_0123456789';
    const olderRecord = {
      key_id: 'ak_01JD8ZK4Q7000000000000OLD0',
      tenant: 't2',
      scopes: ['prices:read'],
      channels: [],
      status: 'active',
      created_at: '2026-01-01T00:00:00.000Z',
      created_by: 'erin',
    };
    await clients.documents.send(
      new TransactWriteCommand({
        TransactItems: [
          {
            Put: {
              TableName: resources.tableNames.apiKeys,
              Item: {
                pk: `key#${olderRecord.key_id}`,
                list: 'keys',
                created_key: `${olderRecord.created_at}#${olderRecord.key_id}`,
                record_json: JSON.stringify(olderRecord),
                tenant: olderRecord.tenant,
                current_sha256: secretSha256(secret),
              },
            },
          },
          {
            Put: {
              TableName: resources.tableNames.apiKeys,
              Item: {
                pk: `hash#${secretSha256(secret)}`,
                key_id: olderRecord.key_id,
                tenant: olderRecord.tenant,
                scopes: olderRecord.scopes,
                channels: olderRecord.channels,
              },
            },
          },
        ],
      }),
    );
    expect((await store.get(olderRecord.key_id))?.record.customer_groups).toEqual([]);
    expect((await listApiKeys(deps, { tenant: 't2', limit: 10 })).items[0]?.customer_groups).toEqual([]);
    expect(await resolver.resolve(secret)).toMatchObject({ tenant: 't2', customerGroups: [] });
    // Rotating it writes the attribute: none.
    const olderRotated = await rotateApiKey(deps, olderRecord.key_id, 0);
    expect(olderRotated.customer_groups).toEqual([]);
    expect((await store.grantOf(secretSha256(olderRotated.key)))?.customer_groups).toEqual([]);
  });

  it('refuses a rotation against a key that changed since it was read (optimistic concurrency)', async () => {
    const store = new DynamoApiKeyStore(clients.documents, resources.tableNames.apiKeys);
    const deps = { store, clock };
    const issued = await issueApiKey(deps, { tenant: 't1', scopes: ['prices:read'] }, 'erin');
    const stale = await store.get(issued.key_id);
    if (!stale) throw new Error('issued');
    await rotateApiKey(deps, issued.key_id, 24);
    await expect(
      store.rotate({
        record: stale.record,
        expectedCurrent: stale.current,
        nextSha256: secretSha256('mck_another_secret_0123456789'),
      }),
    ).rejects.toBeInstanceOf(ApiKeyConflictError);
  });

  it('lists keys newest first, by tenant, page by page, without secrets or hashes', async () => {
    const store = new DynamoApiKeyStore(clients.documents, resources.tableNames.apiKeys);
    let at = Date.parse('2026-11-25T10:00:00.000Z');
    const ticking = {
      now: () => {
        at += 1000;
        return new Date(at);
      },
    };
    const issued = [];
    for (const tenant of ['t1', 't2', 't1', 't1']) {
      issued.push(await issueApiKey({ store, clock: ticking }, { tenant, scopes: ['prices:read'] }, 'erin'));
    }
    const first = await listApiKeys({ store, clock }, { tenant: 't1', limit: 2 });
    const all = [...first.items];
    let cursor = first.cursor;
    while (cursor) {
      const page = await listApiKeys({ store, clock }, { tenant: 't1', limit: 2, cursor });
      all.push(...page.items);
      cursor = page.cursor;
    }
    expect(all.map((key) => key.key_id)).toEqual(
      issued
        .filter((key) => key.tenant === 't1')
        .map((key) => key.key_id)
        .reverse(),
    );
    const text = JSON.stringify(all);
    for (const key of issued) {
      expect(text).not.toContain(key.key);
      expect(text).not.toContain(secretSha256(key.key));
    }
    await expect(store.list({ limit: 2, cursor: '!!not-a-cursor' })).rejects.toBeInstanceOf(
      InvalidCursorError,
    );
  });
});
