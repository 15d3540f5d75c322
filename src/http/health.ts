import fp from 'fastify-plugin';
import type { Database } from '../db/orm';

/** Liveness (the process answers) and readiness (the database answers). */
export const healthPlugin = fp<{ database: Database }>(
  async (app, { database }) => {
    app.get('/healthz', async () => ({ status: 'ok' }));
    app.get('/readyz', async (request, reply) => {
      try {
        await database.orm.em.getConnection().execute('select 1');
        return { status: 'ready' };
      } catch (error) {
        request.log.warn({ err: error }, 'readiness check failed');
        return reply.code(503).send({ status: 'unavailable' });
      }
    });
  },
  { name: 'health', dependencies: ['http-edge'] },
);
