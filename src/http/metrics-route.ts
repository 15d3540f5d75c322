import { timingSafeEqual } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { sendHttpError } from './transport-errors';
import type { Metrics } from '../observability/metrics';

export interface MetricsAccess {
  /** When set, a scrape must send `Authorization: Bearer <token>`. */
  token: string | undefined;
  /** Without a token: answer only scrapes from this machine (production, on the API's port). */
  loopbackOnly: boolean;
}

const LOOPBACK = /^(127\.|::1$|::ffff:127\.)/;

function sameText(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** GET /metrics in Prometheus's text format, behind the access rule. */
export function registerMetricsRoute(app: FastifyInstance, metrics: Metrics, access: MetricsAccess): void {
  app.get('/metrics', async (request, reply) => {
    if (access.token !== undefined) {
      const sent = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1];
      if (!sent || !sameText(sent, access.token)) return sendHttpError(request, reply, 401, 'Metrics need the metrics token (METRICS_TOKEN) as a bearer token');
    } else if (access.loopbackOnly && !LOOPBACK.test(request.ip)) {
      return sendHttpError(request, reply, 403, 'Metrics are answered to this machine only: set METRICS_TOKEN or METRICS=<port> to scrape from elsewhere');
    }
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });
}

/**
 * Every answer counted by its route's template (an unmatched path is `unmatched`: bounded, never a path with ids in
 * it), and GET /metrics on this port unless the metrics have a listener of their own (METRICS=<port>).
 */
export const httpMetricsPlugin = fp<{ metrics: Metrics; route?: MetricsAccess }>(
  async (app, { metrics, route }) => {
    app.addHook('onResponse', async (request, reply) => {
      const template = request.routeOptions.url ?? 'unmatched';
      metrics.httpRequests.inc({ method: request.method, route: template, status_code: String(reply.statusCode) });
      metrics.httpDuration.observe({ method: request.method, route: template }, reply.elapsedTime / 1000);
    });
    if (route) registerMetricsRoute(app, metrics, route);
  },
  { name: 'http-metrics', dependencies: ['http-edge'] },
);
