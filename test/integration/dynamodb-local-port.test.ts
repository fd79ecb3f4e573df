/**
 * DynamoDB Local on a free port: a port found free may be taken before Java binds it (another test's server, any
 * process); the start then chooses another port instead of failing. Here the first port offered is held by a
 * server of this test.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  DynamoDbLocalStartError,
  startDynamoDbLocalOnFreePort,
} from '../../functions/adapters/local/dynamodb-local';
import { freePort } from '../../functions/adapters/local/local-aws';

const workDir = mkdtempSync(path.join(tmpdir(), 'ddb-port-'));
const held: Server[] = [];
const accepted: Socket[] = [];
afterAll(async () => {
  // The readiness probes connected to the holder and were abandoned: their sockets end with it.
  for (const socket of accepted) socket.destroy();
  for (const server of held) await new Promise((resolve) => server.close(resolve));
  rmSync(workDir, { recursive: true, force: true });
});

/** A port this test keeps bound on every address, as the process that took it would. */
const takenPort = async (): Promise<number> => {
  const port = await freePort();
  const server = createServer((socket) => accepted.push(socket));
  await new Promise<void>((resolve) => server.listen(port, '0.0.0.0', resolve));
  held.push(server);
  return port;
};

describe('DynamoDB Local on a free port', () => {
  it('chooses another port when the one chosen was taken before Java bound it', async () => {
    const taken = await takenPort();
    const offered: number[] = [];
    const dynamo = await startDynamoDbLocalOnFreePort({ workDir }, 3, async () => {
      const port = offered.length === 0 ? taken : await freePort();
      offered.push(port);
      return port;
    });
    try {
      expect(offered).toHaveLength(2);
      expect(dynamo.endpoint).toBe(`http://127.0.0.1:${offered[1]}`);
      expect((await fetch(dynamo.endpoint, { method: 'POST' })).status).toBeLessThan(500);
    } finally {
      await dynamo.stop();
    }
  }, 60_000);

  it('gives up after its attempts, with the bind failure', async () => {
    const taken = await takenPort();
    await expect(startDynamoDbLocalOnFreePort({ workDir }, 2, async () => taken)).rejects.toSatisfy(
      (error: unknown) =>
        error instanceof DynamoDbLocalStartError &&
        /Failed to bind|Address already in use/.test(error.message),
    );
  }, 60_000);
});
