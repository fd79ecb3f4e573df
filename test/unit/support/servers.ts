import type { Server } from 'node:http';
import { afterEach } from 'vitest';

/** Servers started by a test file, closed (connections included) after each test. */
export const closedAfterEach = (): Server[] => {
  const servers: Server[] = [];
  afterEach(async () => {
    await Promise.all(
      servers.splice(0).map(
        (server) =>
          new Promise<void>((resolve) => {
            server.closeAllConnections();
            server.close(() => resolve());
          }),
      ),
    );
  });
  return servers;
};
