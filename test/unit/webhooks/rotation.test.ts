/**
 * Signing-secret rotation (C12): each rotated-out secret is sent for its whole overlap, also when rotations
 * follow each other inside one overlap; at most `MAX_RETIRING_SECRETS` of them, the most recent first.
 */
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { LocalDataCipher } from '../../../functions/adapters/local/local-signing';
import type { EndpointRecord } from '../../../functions/ports/webhooks';
import { DEFAULT_WEBHOOK_SETTINGS, type WebhookContext } from '../../../functions/usecases/webhooks/context';
import {
  createEndpoint,
  MAX_RETIRING_SECRETS,
  rotateSecret,
  signingSecrets,
} from '../../../functions/usecases/webhooks/endpoints';

const HOUR_MS = 3_600_000;

const world = () => {
  const now = { value: new Date('2026-11-22T12:00:00.000Z') };
  const endpoints = new Map<string, EndpointRecord>();
  const ctx = {
    clock: { now: () => now.value },
    cipher: new LocalDataCipher(randomBytes(32)),
    randomBytes: (size: number) => randomBytes(size),
    settings: { ...DEFAULT_WEBHOOK_SETTINGS, previousSecretHours: 24 },
    endpoints: {
      create: async (record: EndpointRecord) => {
        endpoints.set(record.endpoint_id, record);
      },
      get: async (id: string) => endpoints.get(id),
      update: async (id: string, changes: Partial<EndpointRecord>) => {
        const next = { ...(endpoints.get(id) as EndpointRecord), ...changes };
        endpoints.set(id, next);
        return next;
      },
    },
  } as unknown as WebhookContext;
  const advance = (ms: number) => {
    now.value = new Date(now.value.getTime() + ms);
  };
  const secretsNow = async (id: string) =>
    signingSecrets(ctx, endpoints.get(id) as EndpointRecord, now.value);
  return { ctx, advance, secretsNow };
};

describe('rotateSecret', () => {
  it('keeps every rotated-out secret for its own overlap, the most recent first', async () => {
    const { ctx, advance, secretsNow } = world();
    const created = await createEndpoint(ctx, { url: 'https://partner.example/wh' });
    const first = created.secret;
    advance(HOUR_MS);
    const second = (await rotateSecret(ctx, created.endpoint_id)).secret;
    advance(HOUR_MS);
    const third = (await rotateSecret(ctx, created.endpoint_id)).secret;
    expect(await secretsNow(created.endpoint_id)).toEqual([third, second, first]);
    // The first rotation's overlap ends 24 h after it: `first` goes, `second` stays an hour longer.
    advance(23 * HOUR_MS + 1);
    expect(await secretsNow(created.endpoint_id)).toEqual([third, second]);
    advance(HOUR_MS);
    expect(await secretsNow(created.endpoint_id)).toEqual([third]);
  });

  it(`sends at most ${MAX_RETIRING_SECRETS} rotated-out secrets`, async () => {
    const { ctx, advance, secretsNow } = world();
    const created = await createEndpoint(ctx, { url: 'https://partner.example/wh' });
    const secrets = [created.secret];
    for (let index = 0; index < MAX_RETIRING_SECRETS + 3; index += 1) {
      advance(60_000);
      secrets.push((await rotateSecret(ctx, created.endpoint_id)).secret);
    }
    const signing = await secretsNow(created.endpoint_id);
    expect(signing).toEqual(secrets.reverse().slice(0, MAX_RETIRING_SECRETS + 1));
  });
});
