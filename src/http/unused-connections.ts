import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * A connection that was opened and has not sent a request yet (an HTTP client's spare connection, a browser's
 * preconnect) holds a Node HTTP server's close for as long as the client keeps it: Node's closeIdleConnections
 * (which Fastify's close calls) closes idle keep-alive connections, not those that never carried a request. So a
 * close destroys them before the server stops listening; connections with a request in flight finish it as before.
 * Call before the server listens.
 */
export function closeUnusedConnectionsOnClose(app: FastifyInstance): void {
  const unused = new Set<Socket>();
  app.server.on('connection', (socket: Socket) => {
    unused.add(socket);
    socket.once('close', () => unused.delete(socket));
  });
  const used = (socket: Socket) => unused.delete(socket);
  app.server.on('request', (request: { socket: Socket }) => used(request.socket));
  app.server.on('upgrade', (request: { socket: Socket }) => used(request.socket));
  app.addHook('preClose', async () => {
    for (const socket of unused) socket.destroy();
    unused.clear();
  });
}
