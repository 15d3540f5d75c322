import type { FastifyBaseLogger, FastifyInstance } from 'fastify';
import { completeAlphaConsent, type AlphaCallbackDeps, type CallbackOutcome } from '../oauth/alpha-connection.service';
import { completeBetaConsent, type BetaCallbackDeps } from '../oauth/beta-connection.service';
import { restErrorBody } from '../http/error-body';

/**
 * The identity providers' redirects back to us. A person's browser follows them, so there is no bearer token: the
 * single-use state is what ties the request to a consent. The answer sends the browser on to the caller's
 * redirect_url, with the outcome in its query; a state that names no consent has nowhere to go, and is refused.
 */
export function registerOAuthCallbacks(app: FastifyInstance, runtime: AlphaCallbackDeps & BetaCallbackDeps): void {
  type Complete = (query: Record<string, string | undefined>, log: FastifyBaseLogger) => Promise<CallbackOutcome>;
  const callback = (provider: 'alpha' | 'beta', complete: Complete) =>
    app.get(`/oauth/${provider}/callback`, async (request, reply) => {
      const query = request.query as Record<string, unknown>;
      const text = (name: string) => (typeof query[name] === 'string' ? (query[name]) : undefined);
      const outcome = await complete({ state: text('state'), code: text('code'), error: text('error'), scope: text('scope') }, request.log);
      // Every outcome leaves a line (failures have theirs, with the cause, from the flow's boundary).
      request.log.info({ provider, outcome: 'redirect' in outcome ? outcome.outcome : 'refused: no such consent' }, `${provider} consent callback`);
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
      if ('redirect' in outcome) return reply.redirect(outcome.redirect, 302);
      const { status, body } = restErrorBody('BAD_REQUEST', outcome.refusal);
      return reply.code(status).send(body);
    });
  callback('alpha', (query, log) => completeAlphaConsent(runtime, query, log));
  callback('beta', (query, log) => completeBetaConsent(runtime, query, log));
}
