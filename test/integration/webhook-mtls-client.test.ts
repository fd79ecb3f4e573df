/**
 * The guarded webhook client presents a request's client certificate (mTLS) to a real TLS server that requires
 * one (`requestCert`, `rejectUnauthorized`, its own CA), trusts the receiver's CA only when told to (never with
 * verification off), and keeps its SSRF guard for requests that carry a certificate.
 */
import { once } from 'node:events';
import { createServer, type Server } from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createGuardedHttpClient,
  type EgressPolicy,
  type Resolver,
} from '../../functions/adapters/http/guarded-http-client';
import type { ClientCertificate, WebhookRequest } from '../../functions/ports/webhook-http';
import { createTestCa, type IssuedCertificate, type TestCa } from '../support/test-pki';

let rootCa: TestCa;
let otherCa: TestCa;
let clientCa: TestCa;
let server: Server;
let port: number;
let connections = 0;
let clientLeaf: IssuedCertificate;
let viaIntermediate: ClientCertificate;
let strangerCertificate: ClientCertificate;
const sockets = new Set<Socket>();

const certificateOf = (issued: IssuedCertificate, ...chain: IssuedCertificate[]): ClientCertificate => ({
  cert: [issued.certPem, ...chain.map((entry) => entry.certPem)].join('\n'),
  key: issued.keyPem,
});

beforeAll(async () => {
  rootCa = await createTestCa({ commonName: 'Receiver Root CA' });
  otherCa = await createTestCa({ commonName: 'Stranger CA' });
  // Client certificates come from an intermediate; the receiver trusts the root only, so the chain is needed.
  clientCa = await rootCa.issueIntermediate({ commonName: 'Partner Client CA' });
  const serverCertificate = await rootCa.issueServer({
    commonName: 'receiver.test',
    dnsNames: ['receiver.test'],
  });
  clientLeaf = await clientCa.issueClient({ commonName: 'pricing-webhooks', algorithm: 'ec-p256' });
  viaIntermediate = certificateOf(clientLeaf, clientCa);
  strangerCertificate = certificateOf(await otherCa.issueClient({ commonName: 'stranger' }));

  server = createServer(
    {
      cert: serverCertificate.certPem,
      key: serverCertificate.keyPem,
      requestCert: true,
      rejectUnauthorized: true,
      ca: [rootCa.certPem],
    },
    (request, response) => {
      request.resume();
      const peer = (request.socket as TLSSocket).getPeerCertificate();
      response.end(`subject=${peer.subject?.CN ?? 'none'}`);
    },
  );
  server.on('tlsClientError', () => undefined);
  server.on('connection', (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise<void>((resolve) => server?.close(() => resolve()));
});

/** Names resolve to loopback (the receiver), except `private.test`, which resolves to a private address. */
const resolve: Resolver = async (hostname) =>
  hostname === 'private.test' ? [{ address: '10.1.2.3', family: 4 }] : [{ address: '127.0.0.1', family: 4 }];

const policy = (overrides: Partial<EgressPolicy> = {}): EgressPolicy => ({
  allowHttp: false,
  allowedCidrs: ['127.0.0.0/8'],
  trustedCaCertificates: rootCa.certPem,
  ...overrides,
});

/**
 * How a receiver's refusal of the client certificate reaches the client: in TLS 1.3 it checks the certificate
 * after the client finished its handshake, so its alert (`tls_error`) can lose the race against the reset of the
 * request the client already wrote (`connection_reset`). Either is a failed, retried attempt.
 */
const REFUSED_HANDSHAKE = {
  kind: 'network_error',
  error: expect.stringMatching(/^(tls_error|connection_reset)$/),
};

const request = (overrides: Partial<WebhookRequest> = {}): WebhookRequest => ({
  url: `https://receiver.test:${port}/webhooks/v1/payout`,
  headers: { 'Content-Type': 'application/json' },
  body: new TextEncoder().encode('{"event_id":"evt_mtls"}'),
  timeoutMs: 5_000,
  ...overrides,
});

describe('mTLS through the guarded client', () => {
  it('presents the request certificate (with its chain): the receiver sees its subject', async () => {
    const client = createGuardedHttpClient({ policy: policy(), resolve });
    const answer = await client.post(request({ clientCertificate: viaIntermediate }));
    expect(answer).toMatchObject({ kind: 'response', status: 200, excerpt: 'subject=pricing-webhooks' });
  });

  it('works with RSA and Ed25519 client keys too', async () => {
    const client = createGuardedHttpClient({ policy: policy(), resolve });
    for (const algorithm of ['rsa-2048', 'ed25519'] as const) {
      const leaf = await clientCa.issueClient({ commonName: `client-${algorithm}`, algorithm });
      const answer = await client.post(request({ clientCertificate: certificateOf(leaf, clientCa) }));
      expect(answer).toMatchObject({ kind: 'response', status: 200, excerpt: `subject=client-${algorithm}` });
    }
  });

  it('fails the attempt when no certificate, or one the receiver does not trust, is presented', async () => {
    const client = createGuardedHttpClient({ policy: policy(), resolve });
    const without = await client.post(request());
    expect(without).toMatchObject(REFUSED_HANDSHAKE);
    const stranger = await client.post(request({ clientCertificate: strangerCertificate }));
    expect(stranger).toMatchObject(REFUSED_HANDSHAKE);
    expect(stranger.kind === 'network_error' ? stranger.message : '').not.toMatch(/PRIVATE|BEGIN/);
    // Leaf without the intermediate: the receiver cannot build the chain to its root.
    const leafOnly = await client.post(request({ clientCertificate: certificateOf(clientLeaf) }));
    expect(leafOnly).toMatchObject(REFUSED_HANDSHAKE);
  });

  it("the request's certificate wins over the client's own", async () => {
    const client = createGuardedHttpClient({
      policy: policy(),
      resolve,
      clientCertificate: strangerCertificate,
    });
    expect(await client.post(request())).toMatchObject(REFUSED_HANDSHAKE);
    expect(await client.post(request({ clientCertificate: viaIntermediate }))).toMatchObject({
      kind: 'response',
      status: 200,
      excerpt: 'subject=pricing-webhooks',
    });
  });

  it("verifies the receiver's certificate: an untrusted CA or another host name is a TLS error", async () => {
    const untrusting = createGuardedHttpClient({
      policy: policy({ trustedCaCertificates: undefined }),
      resolve,
    });
    expect(await untrusting.post(request({ clientCertificate: viaIntermediate }))).toMatchObject({
      kind: 'network_error',
      error: 'tls_error',
    });
    const wrongCa = createGuardedHttpClient({
      policy: policy({ trustedCaCertificates: otherCa.certPem }),
      resolve,
    });
    expect(await wrongCa.post(request({ clientCertificate: viaIntermediate }))).toMatchObject({
      kind: 'network_error',
      error: 'tls_error',
    });
    const client = createGuardedHttpClient({ policy: policy(), resolve });
    expect(
      await client.post(
        request({ url: `https://other.test:${port}/webhooks/v1/payout`, clientCertificate: viaIntermediate }),
      ),
    ).toMatchObject({ kind: 'network_error', error: 'tls_error' });
  });

  it('keeps the SSRF guard: a certificate never gets a request past the egress policy', async () => {
    const client = createGuardedHttpClient({ policy: policy({ allowedCidrs: [] }), resolve });
    const before = connections;
    // Loopback is not allowed by this policy, whether literal or resolved.
    expect(
      await client.post(
        request({ url: `https://127.0.0.1:${port}/webhooks/v1/payout`, clientCertificate: viaIntermediate }),
      ),
    ).toMatchObject({ kind: 'network_error', error: 'address_not_allowed' });
    expect(await client.post(request({ clientCertificate: viaIntermediate }))).toMatchObject({
      kind: 'network_error',
      error: 'address_not_allowed',
    });
    expect(
      await client.post(
        request({
          url: `https://private.test:${port}/webhooks/v1/payout`,
          clientCertificate: viaIntermediate,
        }),
      ),
    ).toMatchObject({ kind: 'network_error', error: 'address_not_allowed' });
    expect(
      await client.post(
        request({
          url: `http://receiver.test:${port}/webhooks/v1/payout`,
          clientCertificate: viaIntermediate,
        }),
      ),
    ).toMatchObject({ kind: 'network_error', error: 'scheme_not_allowed' });
    expect(connections).toBe(before);
  });
});
