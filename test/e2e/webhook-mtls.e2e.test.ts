/**
 * End to end on the local stack: a partner's TLS receiver that requires a client certificate (issued by the
 * partner's own CA) accepts deliveries to an endpoint registered with one — it sees the certificate's subject —
 * and refuses the handshake for an endpoint registered without one, which the delivery history records as a
 * failed attempt and the retry policy retries; once the certificate is added, the retry gets through. The stack
 * trusts the receiver's server certificate through `WEBHOOK_CA_CERTS`, as `npm start` reads it.
 */
import { once } from 'node:events';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalStack, startLocalStack } from '../../functions/composition/local/stack';
import { egressPolicyFromEnv, LOCAL_EGRESS } from '../../functions/composition/webhooks';
import { DEFAULT_RETRY_POLICY } from '../../functions/domain/webhooks/retry-policy';
import { endpointResponseSchema, eventHistoryResponseSchema } from '../../functions/schemas/webhooks';
import { demoCatalogWithoutRatePolicy } from '../support/demo-stack';
import { eventually } from '../support/engines';
import { createTestCa, type IssuedCertificate, type TestCa } from '../support/test-pki';

/** How long to wait for the pipeline (a bound, not a timing assertion: it only fails a stuck test). */
const PATIENCE = { timeoutMs: 30_000, intervalMs: 100 };
const ADMIN = 'adm_mtls_e2e_0123456789abcdef';

interface Seen {
  readonly subject: string;
  readonly eventId: string;
  readonly path: string;
}

let stack: LocalStack;
let receiver: Server;
let receiverUrl: string;
let scratch: string;
let partnerCa: TestCa;
let clientCertificate: IssuedCertificate;
const seen: Seen[] = [];
let refusedHandshakes = 0;
const sockets = new Set<Socket>();

beforeAll(async () => {
  // The receiver's server certificate comes from a CA the stack is told to trust; client certificates from
  // the partner's CA, the only one the receiver accepts them from.
  const serverCa = await createTestCa({ commonName: 'Receiver Server CA' });
  partnerCa = await createTestCa({ commonName: 'Partner Client CA' });
  const serverCertificate = await serverCa.issueServer({ commonName: 'localhost' });
  clientCertificate = await partnerCa.issueClient({ commonName: 'pricing-webhooks-e2e' });

  receiver = createServer(
    {
      cert: serverCertificate.certPem,
      key: serverCertificate.keyPem,
      requestCert: true,
      rejectUnauthorized: true,
      ca: [partnerCa.certPem],
    },
    (request, response) => {
      request.resume();
      request.on('end', () => {
        const peer = (request.socket as TLSSocket).getPeerCertificate();
        seen.push({
          subject: String(peer.subject?.CN ?? ''),
          eventId: String(request.headers['x-event-id'] ?? ''),
          path: request.url ?? '',
        });
        response.writeHead(204).end();
      });
    },
  );
  receiver.on('tlsClientError', () => {
    refusedHandshakes += 1;
  });
  receiver.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  receiver.listen(0, '127.0.0.1');
  await once(receiver, 'listening');
  receiverUrl = `https://127.0.0.1:${(receiver.address() as AddressInfo).port}/webhooks/v1`;

  scratch = mkdtempSync(path.join(tmpdir(), 'mtls-e2e-'));
  const caFile = path.join(scratch, 'receiver-ca.pem');
  writeFileSync(caFile, serverCa.certPem);
  stack = await startLocalStack({
    port: 0,
    apiKey: 'key_mtls_e2e_0123456789abcdef',
    adminToken: ADMIN,
    logLevel: 'SILENT',
    streamPollIntervalMs: 50,
    seedCatalog: demoCatalogWithoutRatePolicy(),
    webhooks: {
      // https only, to loopback, trusting the receiver's CA besides the public roots.
      egress: egressPolicyFromEnv({ WEBHOOK_CA_CERTS: caFile, WEBHOOK_ALLOW_HTTP: 'false' }, LOCAL_EGRESS),
      policy: {
        ...DEFAULT_RETRY_POLICY,
        backoffSeconds: [1, 1, 1, 2, 2, 3, 3, 5],
        dailyRetryDays: 0,
        jitter: { min: 1, max: 1 },
      },
    },
  });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => (receiver ? receiver.close(() => resolve()) : resolve()));
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

const admin = async (method: string, route: string, body?: unknown) => {
  const response = await fetch(`${stack.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  return { status: response.status, text, json: (text ? JSON.parse(text) : {}) as Record<string, unknown> };
};

type History = ReturnType<typeof eventHistoryResponseSchema.parse>;
type DeliveryHistory = History['deliveries'][number];

const deliveryOf = async (eventId: string, endpointId: string): Promise<DeliveryHistory | undefined> => {
  const answer = await admin('GET', `/webhooks/events/${eventId}`);
  if (answer.status !== 200) return undefined;
  return eventHistoryResponseSchema
    .parse(answer.json)
    .deliveries.find((delivery) => delivery.endpoint_id === endpointId);
};

describe('mTLS per endpoint (local stack, TLS receiver requiring a client certificate)', () => {
  it('delivers with the registered certificate; without one the handshake fails, is recorded and retried', async () => {
    const mtls = { client_certificate: clientCertificate.certPem, client_key: clientCertificate.keyPem };
    const withCertificate = await admin('POST', '/webhooks/endpoints', { url: receiverUrl, mtls });
    expect(withCertificate.status).toBe(201);
    expect(withCertificate.text).not.toContain('PRIVATE KEY');
    expect(withCertificate.text).not.toContain('BEGIN CERTIFICATE');
    const withId = withCertificate.json.endpoint_id as string;
    const without = await admin('POST', '/webhooks/endpoints', { url: receiverUrl });
    const withoutId = without.json.endpoint_id as string;

    const shown = await admin('GET', `/webhooks/endpoints/${withId}`);
    expect(endpointResponseSchema.parse(shown.json).mtls).toMatchObject({
      subject: 'CN=pricing-webhooks-e2e',
      issuer: 'CN=Partner Client CA',
    });
    expect(shown.text).not.toMatch(/PRIVATE KEY|BEGIN CERTIFICATE|key_ciphertext/);

    const published = await admin('POST', '/webhooks/events', {
      type: 'payout.processed',
      producer: 'payments',
      data: { payout_id: 'po_mtls', status: 'paid', amount_minor: 1250, currency: 'EUR' },
    });
    expect(published.status).toBe(202);
    const eventId = published.json.event_id as string;

    // The receiver got the event over mTLS and saw the client certificate's subject.
    const delivered = await eventually(async () => {
      const delivery = await deliveryOf(eventId, withId);
      return delivery?.status === 'delivered' ? delivery : undefined;
    }, PATIENCE);
    expect(delivered.attempts).toEqual([
      expect.objectContaining({ attempt: 1, http_status: 204, outcome: 'delivered' }),
    ]);
    expect(seen).toContainEqual({ subject: 'pricing-webhooks-e2e', eventId, path: '/webhooks/v1/payout' });

    // The endpoint without a certificate: the receiver refused the handshake; a failed, retried attempt.
    const failed = await eventually(async () => {
      const delivery = await deliveryOf(eventId, withoutId);
      return delivery && delivery.attempts.length > 0 ? delivery : undefined;
    }, PATIENCE);
    expect(failed.status).toBe('retrying');
    expect(failed.attempts[0]).toMatchObject({
      attempt: 1,
      outcome: 'retry',
      error: expect.stringMatching(/^(tls_error|connection_reset)$/),
      next_attempt_at: expect.any(String),
    });
    expect(failed.attempts[0]?.http_status).toBeUndefined();
    expect(refusedHandshakes).toBeGreaterThan(0);
    expect(seen.filter((request) => request.subject === '')).toEqual([]);

    // Registering the certificate on that endpoint: the next retry of the same delivery gets through.
    const patched = await admin('PATCH', `/webhooks/endpoints/${withoutId}`, { mtls });
    expect(patched.status).toBe(200);
    expect(endpointResponseSchema.parse(patched.json).mtls?.subject).toBe('CN=pricing-webhooks-e2e');
    const recovered = await eventually(
      async () => {
        const delivery = await deliveryOf(eventId, withoutId);
        return delivery?.status === 'delivered' ? delivery : undefined;
      },
      { timeoutMs: 30_000, intervalMs: 200 },
    );
    const last = recovered.attempts.at(-1);
    expect(last).toMatchObject({ http_status: 204, outcome: 'delivered' });
    expect(recovered.attempts.slice(0, -1).every((attempt) => attempt.outcome === 'retry')).toBe(true);
    expect(seen.filter((request) => request.eventId === eventId)).toHaveLength(2);
  });

  it('removes the certificate with mtls: null; later deliveries fail the handshake again', async () => {
    const mtls = { client_certificate: clientCertificate.certPem, client_key: clientCertificate.keyPem };
    const created = await admin('POST', '/webhooks/endpoints', {
      url: receiverUrl,
      mtls,
      topics: ['payout'],
    });
    const endpointId = created.json.endpoint_id as string;
    const removed = await admin('PATCH', `/webhooks/endpoints/${endpointId}`, { mtls: null });
    expect(removed.status).toBe(200);
    expect(removed.json.mtls).toBeUndefined();
    const published = await admin('POST', '/webhooks/events', {
      type: 'payout.processed',
      producer: 'payments',
      data: { payout_id: 'po_mtls_removed', status: 'paid', amount_minor: 10, currency: 'EUR' },
    });
    const eventId = published.json.event_id as string;
    const failed = await eventually(async () => {
      const delivery = await deliveryOf(eventId, endpointId);
      return delivery && delivery.attempts.length > 0 ? delivery : undefined;
    }, PATIENCE);
    expect(failed.attempts[0]).toMatchObject({
      outcome: 'retry',
      error: expect.stringMatching(/^(tls_error|connection_reset)$/),
    });
    // Stop the retries of this endpoint: the test is over.
    await admin('DELETE', `/webhooks/endpoints/${endpointId}`);
  });

  it('refuses an unusable certificate with 400 naming the field, without echoing the key', async () => {
    const expired = await partnerCa.issueClient({
      commonName: 'expired',
      notBefore: new Date(Date.now() - 20 * 86_400_000),
      notAfter: new Date(Date.now() - 86_400_000),
    });
    const answer = await admin('POST', '/webhooks/endpoints', {
      url: receiverUrl,
      mtls: { client_certificate: expired.certPem, client_key: expired.keyPem },
    });
    expect(answer.status).toBe(400);
    expect(answer.json).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringContaining('$.mtls.client_certificate'),
    });
    const keyBody = expired.keyPem.split('\n').slice(1, 2).join('');
    expect(answer.text).not.toContain(keyBody);
  });
});
