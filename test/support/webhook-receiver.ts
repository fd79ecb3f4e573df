import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { secretBytes } from '../../functions/domain/webhooks/secret';
import { verifySignatureHeader } from '../../functions/domain/webhooks/signature';

/** One request as the receiver saw it: raw body bytes and headers, when it arrived. */
export interface ReceivedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
  readonly receivedAt: number;
  /** The envelope, parsed. */
  readonly envelope: { event_id: string; attempt: number; type: string } & Record<string, unknown>;
}

/** What the receiver does with a request. */
export type Reaction =
  | {
      readonly kind: 'respond';
      readonly status: number;
      readonly headers?: Record<string, string>;
      readonly body?: string;
    }
  | { readonly kind: 'hang' }
  | { readonly kind: 'reset' };

export interface TestReceiver {
  /** Base URL to register (`http://127.0.0.1:<port>/webhooks/v1`). */
  readonly baseUrl: string;
  readonly requests: ReceivedRequest[];
  /** Connections accepted (including ones reset before a request was read). */
  connections: number;
  /** When each hanging request ended (the sender gave up), by its index in `requests`. */
  readonly hungUntil: Map<number, number>;
  react: (request: ReceivedRequest, index: number) => Reaction;
  close(): Promise<void>;
}

/** A real HTTP receiver on loopback whose answers the test decides, request by request. */
export const startReceiver = async (
  react: (request: ReceivedRequest, index: number) => Reaction = () => ({ kind: 'respond', status: 200 }),
): Promise<TestReceiver> => {
  const sockets = new Set<Socket>();
  const hanging = new Set<() => void>();
  let server: Server | undefined;
  const receiver: TestReceiver = {
    baseUrl: '',
    requests: [],
    connections: 0,
    hungUntil: new Map(),
    react,
    close: async () => {
      for (const release of hanging) release();
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server?.close(() => resolve()));
    },
  };
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      let envelope: ReceivedRequest['envelope'];
      try {
        envelope = JSON.parse(body.toString('utf8')) as ReceivedRequest['envelope'];
      } catch {
        envelope = { event_id: '', attempt: 0, type: '' };
      }
      const request: ReceivedRequest = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        body,
        receivedAt: Date.now(),
        envelope,
      };
      const index = receiver.requests.push(request) - 1;
      const reaction = receiver.react(request, index);
      if (reaction.kind === 'reset') {
        req.socket.destroy();
        return;
      }
      if (reaction.kind === 'hang') {
        const release = () => res.destroy();
        hanging.add(release);
        res.on('close', () => {
          hanging.delete(release);
          receiver.hungUntil.set(index, Date.now());
        });
        return;
      }
      res.writeHead(reaction.status, { 'content-type': 'application/json', ...(reaction.headers ?? {}) });
      res.end(reaction.body ?? '{}');
    });
  });
  server.on('connection', (socket) => {
    receiver.connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  (receiver as { baseUrl: string }).baseUrl = `http://127.0.0.1:${port}/webhooks/v1`;
  return receiver;
};

/** Whether a received delivery carries a valid signature by one of the endpoint's `whsec_…` secrets. */
export const signedBy = (request: ReceivedRequest, ...secrets: string[]): boolean =>
  verifySignatureHeader({
    header: String(request.headers['x-signature']),
    secrets: secrets.map(secretBytes),
    timestamp: String(request.headers['x-timestamp']),
    method: 'POST',
    path: request.path,
    body: request.body,
  });
