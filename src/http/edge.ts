import type { FastifyError } from 'fastify';
import fp from 'fastify-plugin';
import { AllowedMethods } from './allowed-methods';
import { REQUEST_ID_HEADER } from './request-id';
import { limitHeaders } from './limit-headers';
import { handleFastifyError, sendHttpError } from './transport-errors';
import { closeUnusedConnectionsOnClose } from './unused-connections';
import { runWithOrigin } from '../observability/origin';

/** Seconds a client is told to wait when it reaches a server that is stopping. */
const RETRY_AFTER_STOPPING_SECONDS = 5;

/**
 * The HTTP edge every answer passes: its request id (on the answer and on everything the request runs, the jobs it
 * enqueues included), refusals in the documented shapes (errors Fastify raises before a handler, unknown paths 404,
 * known paths with another method 405 with `Allow`), and a 503 to requests that arrive while the server stops.
 * Registered first, after CORS: its hooks and handlers cover the routes registered after it.
 */
export const httpEdgePlugin = fp(
  async (app) => {
    // A client's spare connection that never sent a request would hold the stop until the client drops it.
    closeUnusedConnectionsOnClose(app);
    let stopping = false;
    app.addHook('preClose', async () => {
      stopping = true;
    });
    const allowed = new AllowedMethods();
    // CORS's preflight route (`OPTIONS *`) names no path: a path that has no route of its own stays a 404.
    app.addHook('onRoute', (route) => {
      if (route.url !== '*') allowed.add(route.url, route.method);
    });
    // REST routes answer their own errors in the route's shapes (src/rest/adapter.ts); this is everything else.
    app.setErrorHandler((error: FastifyError, request, reply) => handleFastifyError(error, request, reply));
    app.setNotFoundHandler((request, reply) => {
      const pathname = request.url.split('?')[0]!;
      const methods = allowed.for(pathname);
      if (methods.length > 0) {
        return sendHttpError(request, reply, 405, `${request.method} is not allowed on ${pathname}; use ${methods.join(', ')}`, {
          allow: methods.join(', '),
        });
      }
      return sendHttpError(request, reply, 404, `No route ${request.method} ${pathname}`);
    });
    app.addHook('onRequest', (request, _reply, done) => runWithOrigin({ requestId: request.id }, done));
    app.addHook('onRequest', async (request, reply) => {
      reply.header(REQUEST_ID_HEADER, request.id);
      if (!stopping) return undefined;
      // Fastify's own 503 while closing is not in a documented shape (return503OnClosing is off).
      return sendHttpError(request, reply, 503, 'The server is stopping; retry shortly', {
        connection: 'close',
        ...Object.fromEntries(limitHeaders({ retryAfterSeconds: RETRY_AFTER_STOPPING_SECONDS })),
      });
    });
  },
  { name: 'http-edge' },
);
