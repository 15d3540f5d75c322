import { createServer } from 'node:net';

/**
 * A TCP port that is free right now, chosen by the system (listening on port 0), for servers that cannot be
 * started on port 0 themselves (PostgreSQL's port is part of its cluster's settings; an inspector's is given).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => (port > 0 ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}
