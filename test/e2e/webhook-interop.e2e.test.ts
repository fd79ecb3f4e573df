/**
 * Webhook interoperability (C33; issue "webhook interoperability") on the local stack, over HTTP.
 * - Standard Webhooks mode (item 2): an endpoint that asks for `signature_scheme: "standard-webhooks"` gets
 *   `webhook-id`, `webhook-timestamp` and `webhook-signature`, and every delivery verifies with the published
 *   `standardwebhooks` library — before a secret rotation, during its overlap (by the new and by the previous
 *   secret alone) — while a tampered body or another endpoint's secret does not; `PATCH` switches the scheme.
 * - The event-type catalog and the AsyncAPI document (item 1) are served without credentials, equal to the
 *   catalog and to `docs/asyncapi.json`.
 */
import { readFileSync } from 'node:fs';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { eventTypesCatalog } from '../../functions/schemas/event-types';
import { endpointResponseSchema } from '../../functions/schemas/webhooks';
import { deliveryWorld } from '../support/delivery-world';
import { eventually } from '../support/engines';
import { type ReceivedRequest, signedBy } from '../support/webhook-receiver';

const world = deliveryWorld({
  apiKey: 'key_sw_e2e_0123456789abcdef0123',
  adminToken: 'adm_sw_e2e_0123456789abcdef0123',
  react: () => ({ kind: 'respond', status: 204 }),
});

/** The request's headers as the library takes them (a plain record of strings). */
const headersOf = (request: ReceivedRequest): Record<string, string> =>
  Object.fromEntries(Object.entries(request.headers).map(([name, value]) => [name, String(value)]));

const deliveryOf = (path: string, eventId: string) =>
  eventually(async () => world.requestsTo(path).find((request) => request.envelope.event_id === eventId), {
    timeoutMs: 20_000,
    intervalMs: 50,
  });

describe('Standard Webhooks mode (C33)', () => {
  it('signs deliveries so that the standardwebhooks library verifies them, before and during a secret rotation', async () => {
    const endpoint = await world.register('sw', 'sw', { signature_scheme: 'standard-webhooks' });
    expect(endpoint.signature_scheme).toBe('standard-webhooks');
    const other = await world.register('sw-other', 'sw_other');

    const { eventId } = await world.publish('sw', 1);
    const first = await deliveryOf('sw', eventId);
    expect(first.headers['webhook-id']).toBe(eventId);
    expect(Number(first.headers['webhook-timestamp'])).toBeCloseTo(Date.now() / 1000, -2);
    expect(String(first.headers['webhook-signature'])).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    // Only the one scheme's signature headers.
    expect(first.headers['x-signature']).toBeUndefined();
    expect(first.headers['x-timestamp']).toBeUndefined();
    const payload = new Webhook(endpoint.secret).verify(first.body.toString('utf8'), headersOf(first));
    expect(payload).toMatchObject({ event_id: eventId, type: 'sw.changed', data: { seq: 1 } });
    // A body changed on the way, or another endpoint's secret, does not verify.
    expect(() =>
      new Webhook(endpoint.secret).verify(
        first.body.toString('utf8').replace('"seq":1', '"seq":2'),
        headersOf(first),
      ),
    ).toThrow(WebhookVerificationError);
    expect(() => new Webhook(other.secret).verify(first.body.toString('utf8'), headersOf(first))).toThrow(
      WebhookVerificationError,
    );

    // Rotated: the new secret is sent first and the previous one beside it through the overlap, so a receiver
    // verifies with either while it changes its configuration.
    const rotated = await world.admin('POST', `/webhooks/endpoints/${endpoint.endpoint_id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    const newSecret = String(rotated.body.secret);
    expect(newSecret).not.toBe(endpoint.secret);
    const during = await deliveryOf('sw', (await world.publish('sw', 2)).eventId);
    expect(String(during.headers['webhook-signature']).split(' ')).toHaveLength(2);
    for (const secret of [newSecret, endpoint.secret])
      expect(new Webhook(secret).verify(during.body.toString('utf8'), headersOf(during))).toMatchObject({
        data: { seq: 2 },
      });
  });

  it('switches between the schemes with PATCH: native deliveries carry X-Signature again', async () => {
    const endpoint = await world.register('switch', 'switch', { signature_scheme: 'standard-webhooks' });
    const patched = await world.admin('PATCH', `/webhooks/endpoints/${endpoint.endpoint_id}`, {
      signature_scheme: 'native',
    });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    // The default is not stored: a native endpoint shows no scheme.
    expect(endpointResponseSchema.parse(patched.body).signature_scheme).toBeUndefined();
    const native = await deliveryOf('switch', (await world.publish('switch', 1)).eventId);
    expect(native.headers['webhook-signature']).toBeUndefined();
    expect(signedBy(native, endpoint.secret)).toBe(true);

    const back = await world.admin('PATCH', `/webhooks/endpoints/${endpoint.endpoint_id}`, {
      signature_scheme: 'standard-webhooks',
    });
    expect(back.body.signature_scheme).toBe('standard-webhooks');
    const standard = await deliveryOf('switch', (await world.publish('switch', 2)).eventId);
    expect(
      new Webhook(endpoint.secret).verify(standard.body.toString('utf8'), headersOf(standard)),
    ).toBeTruthy();
  });

  it('refuses an unknown scheme with a 400 naming the field, registering nothing', async () => {
    const refused = await world.admin('POST', '/webhooks/endpoints', {
      url: `${world.receiver().baseUrl}/bad`,
      topics: ['bad'],
      signature_scheme: 'svix',
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('signature_scheme');
    const listed = await world.admin('GET', '/webhooks/endpoints');
    expect(JSON.stringify(listed.body)).not.toContain('/bad');
  });
});

describe('the event-type catalog and the AsyncAPI document over HTTP (C33)', () => {
  it('are served without credentials, equal to the catalog and to docs/asyncapi.json', async () => {
    const types = await fetch(`${world.url()}/webhooks/event-types`);
    expect(types.status).toBe(200);
    expect(types.headers.get('cache-control')).toBe('public, max-age=300');
    expect(await types.json()).toEqual(JSON.parse(JSON.stringify(eventTypesCatalog())));
    const asyncapi = await fetch(`${world.url()}/asyncapi.json`);
    expect(asyncapi.status).toBe(200);
    expect(await asyncapi.json()).toEqual(
      JSON.parse(readFileSync(new URL('../../docs/asyncapi.json', import.meta.url), 'utf8')),
    );
  });
});
