import type { FastifyInstance } from 'fastify';
import { completeAlphaConsent, type CallbackOutcome } from '../connection/alpha-connection.service';
import { completeBetaConsent } from '../connection/beta-connection.service';
import { restErrorBody } from '../http/error-body';
import type { Runtime } from '../runtime';

/**
 * The identity providers' redirects back to us. A person's browser follows them, so there is no bearer token: the
 * single-use state is what ties the request to a consent. The answer sends the browser on to the caller's
 * redirect_url, with the outcome in its query; a state that names no consent has nowhere to go, and is refused.
 */
export function registerOAuthCallbacks(app: FastifyInstance, runtime: Runtime): void {
  const callback = (path: string, complete: (query: Record<string, string | undefined>) => Promise<CallbackOutcome>) =>
    app.get(path, async (request, reply) => {
      const query = request.query as Record<string, unknown>;
      const text = (name: string) => (typeof query[name] === 'string' ? (query[name] as string) : undefined);
      const outcome = await complete({ state: text('state'), code: text('code'), error: text('error'), scope: text('scope') });
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
      if ('redirect' in outcome) return reply.redirect(outcome.redirect, 302);
      const { status, body } = restErrorBody('BAD_REQUEST', outcome.refusal);
      return reply.code(status).send(body);
    });
  callback('/oauth/alpha/callback', (query) => completeAlphaConsent(runtime, query));
  callback('/oauth/beta/callback', (query) => completeBetaConsent(runtime, query));
}
