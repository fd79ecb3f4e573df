/**
 * Webhook interoperability (C33; issue "webhook interoperability") on the local stack, over HTTP.
 * - Standard Webhooks mode (item 2): an endpoint that asks for `signature_scheme: "standard-webhooks"` gets
 *   `webhook-id`, `webhook-timestamp` and `webhook-signature`, and every delivery verifies with the published
 *   `standardwebhooks` library — before a secret rotation, during its overlap (by the new and by the previous
 *   secret alone) — while a tampered body or another endpoint's secret does not; `PATCH` switches the scheme.
 * - The event-type catalog and the AsyncAPI document (item 1) are served without credentials, equal to the
 *   catalog and to `docs/asyncapi.json`.
 * - Ed25519 signatures with key discovery (item 3): deliveries of an endpoint with `signing_algorithm: "ed25519"`
 *   verify, in both schemes, against `GET /webhooks/jwks.json` by the key id they name — in a verifier written here
 *   from the specifications alone (C13's canonical string, Standard Webhooks' signed content, RFC 8032 and the JWK
 *   of RFC 8037 through `node:crypto`) — before a rotation, between its publication and its activation (the old key
 *   signs, both are listed) and after it (the new key signs, the old one is still listed for the overlap).
 */
import { createHash, createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { JwksCache, kidOf, verifyWebhook } from '../../functions/receiver';
import { eventTypesCatalog } from '../../functions/schemas/event-types';
import { endpointResponseSchema } from '../../functions/schemas/webhooks';
import { deliveryWorld } from '../support/delivery-world';
import { eventually } from '../support/engines';
import { type ReceivedRequest, signedBy } from '../support/webhook-receiver';

const world = deliveryWorld({
  apiKey: 'key_sw_e2e_0123456789abcdef0123',
  adminToken: 'adm_sw_e2e_0123456789abcdef0123',
  react: () => ({ kind: 'respond', status: 204 }),
  // A rotation's key takes over within a second here (a minute in production).
  settings: { senderKeyCacheSeconds: 1 },
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

interface Jwk {
  kty: string;
  crv: string;
  x: string;
  kid: string;
  alg: string;
  use: string;
}

/** The service's JWKS, fetched without credentials. */
const jwks = async (): Promise<Jwk[]> => {
  const answer = await fetch(`${world.url()}/webhooks/jwks.json`);
  expect(answer.status).toBe(200);
  return ((await answer.json()) as { keys: Jwk[] }).keys;
};

/**
 * A receiver's check of an Ed25519 delivery, from the specifications: the key named by X-Signature-Key-Id in the
 * JWKS; native: `v1a=` over `X-Timestamp\nPOST\n<path>\n<hex SHA-256 of the body>`; Standard Webhooks: `v1a,`
 * over `<webhook-id>.<webhook-timestamp>.<body>`.
 */
const verifiedBy = (request: ReceivedRequest, keys: readonly Jwk[]): string | undefined => {
  const kid = String(request.headers['x-signature-key-id']);
  const jwk = keys.find((key) => key.kid === kid);
  if (jwk?.kty !== 'OKP' || jwk.crv !== 'Ed25519' || jwk.alg !== 'EdDSA') return undefined;
  const key = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x }, format: 'jwk' });
  const standard = request.headers['webhook-signature'] !== undefined;
  const content = standard
    ? Buffer.concat([
        Buffer.from(`${request.headers['webhook-id']}.${request.headers['webhook-timestamp']}.`),
        request.body,
      ])
    : Buffer.from(
        [
          request.headers['x-timestamp'],
          'POST',
          request.path,
          createHash('sha256').update(request.body).digest('hex'),
        ].join('\n'),
      );
  const header = String(standard ? request.headers['webhook-signature'] : request.headers['x-signature']);
  const prefix = standard ? 'v1a,' : 'v1a=';
  const valid = header
    .split(' ')
    .filter((entry) => entry.startsWith(prefix))
    .some((entry) => verify(null, content, key, Buffer.from(entry.slice(prefix.length), 'base64')));
  return valid ? kid : undefined;
};

describe('Ed25519 signatures with key discovery (C33)', () => {
  it('verify against the JWKS by kid in both schemes, before, during and after a key rotation', async () => {
    const native = await world.register('ed', 'ed', { signing_algorithm: 'ed25519' });
    expect(native.signing_algorithm).toBe('ed25519');
    const standard = await world.register('edsw', 'edsw', {
      signing_algorithm: 'ed25519',
      signature_scheme: 'standard-webhooks',
    });
    const before = await jwks();
    expect(before).toHaveLength(1);
    const [first] = before as [Jwk];
    expect(first).toMatchObject({ kty: 'OKP', crv: 'Ed25519', alg: 'EdDSA', use: 'sig' });

    const nativeDelivery = await deliveryOf('ed', (await world.publish('ed', 1)).eventId);
    expect(String(nativeDelivery.headers['x-signature'])).toMatch(/^v1a=/);
    expect(verifiedBy(nativeDelivery, before)).toBe(first.kid);
    // One key signs for every endpoint: the signed envelope names the endpoint it is for (an HMAC one does not).
    expect(JSON.parse(nativeDelivery.body.toString('utf8')).endpoint_id).toBe(native.endpoint_id);
    const standardDelivery = await deliveryOf('edsw', (await world.publish('edsw', 1)).eventId);
    expect(String(standardDelivery.headers['webhook-signature'])).toMatch(/^v1a,/);
    expect(verifiedBy(standardDelivery, before)).toBe(first.kid);
    // The receiver kit verifies both, fetching the JWKS over HTTP itself, and only for the endpoint each names.
    const kit = new JwksCache({ url: `${world.url()}/webhooks/jwks.json` });
    for (const [delivery, id] of [
      [nativeDelivery, native.endpoint_id],
      [standardDelivery, standard.endpoint_id],
    ] as const) {
      const input = {
        body: delivery.body,
        method: 'POST',
        path: delivery.path,
        headers: delivery.headers as Record<string, string>,
        secrets: [],
        publicKeys: await kit.keysFor(kidOf(delivery.headers as Record<string, string>)),
        now: new Date(delivery.receivedAt),
      };
      expect(verifyWebhook({ ...input, endpointId: id }).event_id).toBe(delivery.envelope.event_id);
      expect(() =>
        verifyWebhook({
          ...input,
          endpointId: id === native.endpoint_id ? standard.endpoint_id : native.endpoint_id,
        }),
      ).toThrow(/endpoint_mismatch/);
    }
    // A changed body does not verify.
    expect(
      verifiedBy({ ...nativeDelivery, body: Buffer.from(`${nativeDelivery.body} `) }, before),
    ).toBeUndefined();

    // Rotated: published at once, signing from its activation (here 3 s); the old key signs until then.
    const rotated = await world.admin('POST', '/webhooks/signing-keys/rotate', { activate_in_seconds: 3 });
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(201);
    expect(rotated.body.previous_kid).toBe(first.kid);
    const during = await jwks();
    expect(during.map((key) => key.kid)).toEqual([first.kid, rotated.body.kid]);
    const pending = await deliveryOf('ed', (await world.publish('ed', 2)).eventId);
    expect(verifiedBy(pending, during)).toBe(first.kid);

    await eventually(
      async () => {
        const after = await deliveryOf('ed', (await world.publish('ed', 3)).eventId);
        return verifiedBy(after, await jwks()) === rotated.body.kid ? true : undefined;
      },
      { timeoutMs: 20_000, intervalMs: 500 },
    );
    const afterStandard = await deliveryOf('edsw', (await world.publish('edsw', 2)).eventId);
    const after = await jwks();
    expect(verifiedBy(afterStandard, after)).toBe(rotated.body.kid);
    // The superseded key stays published for the overlap, so deliveries signed with it still verify.
    expect(after.map((key) => key.kid)).toEqual([first.kid, rotated.body.kid]);
    expect(verifiedBy(nativeDelivery, after)).toBe(first.kid);
    expect(standard).toMatchObject({ signing_algorithm: 'ed25519', signature_scheme: 'standard-webhooks' });
  });

  it('lets only an endpoint administrator rotate, and refuses a bad activation with a 400', async () => {
    const bad = await world.admin('POST', '/webhooks/signing-keys/rotate', { activate_in_seconds: -1 });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('activate_in_seconds');
    const anonymous = await fetch(`${world.url()}/webhooks/signing-keys/rotate`, { method: 'POST' });
    expect(anonymous.status).toBe(401);
  });
});

describe('outbound authentication (C34)', () => {
  it('sends an endpoint’s static headers, shows only their names, and refuses a header the service sets', async () => {
    const endpoint = await world.register('static', 'static', {
      auth: { headers: { 'X-Api-Key': 'partner-gateway-key-0123456789' } },
    });
    expect(endpoint.auth).toEqual({ headers: ['X-Api-Key'] });
    const shown = await world.admin('GET', `/webhooks/endpoints/${endpoint.endpoint_id}`);
    expect(JSON.stringify(shown.body)).not.toContain('partner-gateway-key');
    const delivered = await deliveryOf('static', (await world.publish('static', 1)).eventId);
    expect(delivered.headers['x-api-key']).toBe('partner-gateway-key-0123456789');
    expect(signedBy(delivered, endpoint.secret)).toBe(true);

    const refused = await world.admin('POST', '/webhooks/endpoints', {
      url: `${world.receiver().baseUrl}/reserved`,
      topics: ['reserved'],
      auth: { headers: { 'X-Signature': 'v1=forged' } },
    });
    expect(refused.status).toBe(400);
    expect(JSON.stringify(refused.body)).toContain('auth');
    // Its credentials go to its origin only: moving the URL elsewhere needs them given again (or removed).
    const moved = await world.admin('PATCH', `/webhooks/endpoints/${endpoint.endpoint_id}`, {
      url: 'https://elsewhere.example/webhooks/v1',
    });
    expect(moved.status).toBe(400);
    expect(JSON.stringify(moved.body)).toContain('$.auth');
    const samePlace = await world.admin('PATCH', `/webhooks/endpoints/${endpoint.endpoint_id}`, {
      url: `${world.receiver().baseUrl}/static`,
    });
    expect(samePlace.status).toBe(200);
    // An auth over the size it can be stored with is a 400, not a failure.
    const huge = await world.admin('PATCH', `/webhooks/endpoints/${endpoint.endpoint_id}`, {
      auth: {
        headers: Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`X-Key-${i}`, 'v'.repeat(1000)])),
      },
    });
    expect(huge.status).toBe(400);
    // Removed with null: the next delivery carries no such header.
    const removed = await world.admin('PATCH', `/webhooks/endpoints/${endpoint.endpoint_id}`, { auth: null });
    expect(removed.body.auth).toBeUndefined();
    const bare = await deliveryOf('static', (await world.publish('static', 2)).eventId);
    expect(bare.headers['x-api-key']).toBeUndefined();
  });

  it('presents an OAuth 2.0 client-credentials token, cached, fetched again once when the endpoint answers 401', async () => {
    // The partner's token endpoint on loopback: Basic client authentication, a new token per request.
    const issued: string[] = [];
    const accepted = new Set<string>();
    const tokenRequests: { authorization?: string; body: string }[] = [];
    const tokenServer = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        tokenRequests.push({
          authorization: request.headers.authorization,
          body: Buffer.concat(chunks).toString(),
        });
        const token = `tok_${issued.length + 1}_${Math.random().toString(36).slice(2)}`;
        issued.push(token);
        accepted.add(`Bearer ${token}`);
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ access_token: token, token_type: 'Bearer', expires_in: 3600 }));
      });
    });
    await new Promise<void>((resolve) => tokenServer.listen(0, '127.0.0.1', resolve));
    const { port } = tokenServer.address() as AddressInfo;
    try {
      // The receiver accepts the tokens the token endpoint issued and the partner has not revoked.
      world.receiver().react = (request) =>
        request.path.startsWith('/webhooks/v1/oauth/') && !accepted.has(String(request.headers.authorization))
          ? { kind: 'respond', status: 401 }
          : { kind: 'respond', status: 204 };
      const endpoint = await world.register('oauth', 'oauth', {
        auth: {
          oauth2: {
            token_url: `http://127.0.0.1:${port}/oauth/token`,
            client_id: 'pricing-service',
            client_secret: 'client-secret-value-0123456789',
            scope: 'webhooks:write',
          },
        },
      });
      expect(endpoint.auth).toEqual({
        oauth2: {
          token_url: `http://127.0.0.1:${port}/oauth/token`,
          client_id: 'pricing-service',
          scope: 'webhooks:write',
        },
      });
      expect(JSON.stringify(endpoint)).not.toContain('client-secret-value');
      for (const seq of [1, 2, 3]) {
        const delivered = await deliveryOf('oauth', (await world.publish('oauth', seq)).eventId);
        expect(delivered.headers.authorization).toBe(`Bearer ${issued[0]}`);
      }
      // One token for the three deliveries, asked for as RFC 6749 says.
      expect(tokenRequests).toHaveLength(1);
      expect(tokenRequests[0]?.authorization).toBe(
        `Basic ${Buffer.from('pricing-service:client-secret-value-0123456789').toString('base64')}`,
      );
      expect(new URLSearchParams(tokenRequests[0]?.body)).toEqual(
        new URLSearchParams({ grant_type: 'client_credentials', scope: 'webhooks:write' }),
      );
      // The partner revokes the token: the next attempt gets a 401, then a new token, delivered in that attempt.
      accepted.delete(`Bearer ${issued[0]}`);
      const { eventId } = await world.publish('oauth', 4);
      const sent = await eventually(
        async () => {
          const requests = world
            .requestsTo('oauth')
            .filter((request) => request.envelope.event_id === eventId);
          return requests.length >= 2 ? requests : undefined;
        },
        { timeoutMs: 20_000, intervalMs: 50 },
      );
      expect(sent.map((request) => request.headers.authorization)).toEqual([
        `Bearer ${issued[0]}`,
        `Bearer ${issued[1]}`,
      ]);
      expect(sent.map((request) => request.envelope.attempt)).toEqual([1, 1]);
      expect(tokenRequests).toHaveLength(2);
      const history = await eventually(async () => {
        const answer = await world.admin('GET', `/webhooks/events/${eventId}`);
        const [delivery] = (answer.body.deliveries ?? []) as { status: string; attempts: unknown[] }[];
        return delivery?.status === 'delivered' ? delivery : undefined;
      });
      expect(history.attempts).toHaveLength(1);
    } finally {
      await new Promise((resolve) => tokenServer.close(resolve));
    }
  });

  it('records why a token could not be had in the attempt history, retried like a network error', async () => {
    const endpoint = await world.register('notoken', 'notoken', {
      auth: {
        oauth2: {
          token_url: 'http://127.0.0.1:1/oauth/token',
          client_id: 'c',
          client_secret: 'never-shown-secret',
        },
      },
    });
    const { eventId } = await world.publish('notoken', 1);
    const attempt = await eventually(async () => {
      const answer = await world.admin('GET', `/webhooks/events/${eventId}`);
      const deliveries = (answer.body.deliveries ?? []) as {
        endpoint_id: string;
        attempts: Record<string, unknown>[];
      }[];
      return deliveries.find((delivery) => delivery.endpoint_id === endpoint.endpoint_id)?.attempts[0];
    });
    expect(attempt).toMatchObject({ error: 'other', outcome: 'retry' });
    expect(String(attempt.error_detail)).toMatch(/^oauth token request failed: connection_refused/);
    expect(JSON.stringify(attempt)).not.toContain('never-shown-secret');
    expect(world.requestsTo('notoken')).toHaveLength(0);
  });
});
