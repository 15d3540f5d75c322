import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { answerStatusOf } from './control-routes';
import { authorizeErrorPage, sendHtml } from './html-page';
import { NO_STORE, OAuthFailure, sendOAuthError } from './oauth-failure';
import { answerOrFail, bodyTextOf, dropConnection, type ScriptedFailure, type TakeOptions } from './scripted-failures';

const FORM_BODY_LIMIT = 64 * 1024;

/**
 * What every sandbox's OAuth plugin starts with: form bodies read as URLSearchParams, and errors in OAuth's shapes
 * (an HTML page at /authorize, `{error, error_description}` elsewhere), not the provider API's.
 */
export function prepareOAuthRoutes(app: FastifyInstance, options: { pageStyle: string; failureLog: string }): void {
  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
    (_request, body, done) => done(null, new URLSearchParams(body as string)),
  );
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = answerStatusOf(error);
    if (status === 500) request.log.error({ err: error }, options.failureLog);
    if (request.url.split('?')[0]!.endsWith('/authorize')) {
      const [code, description] =
        status === 500 ? ['server_error', 'Internal error.'] : ['invalid_request', error.message];
      return sendHtml(reply, status, authorizeErrorPage(options.pageStyle, code, description, status));
    }
    const failure =
      status === 500
        ? new OAuthFailure(500, 'server_error', 'Internal error.')
        : new OAuthFailure(status, 'invalid_request', error.message);
    return sendOAuthError(reply, failure);
  });
}

/**
 * The JSON endpoints' steps: a scripted failure aimed at them (pathContains naming the path) with its delay, the work, and the
 * answer; `after` failures lose the answer of work that took effect (a code exchanged, then the answer dropped).
 */
export async function oauthCall(
  store: {
    takeFailure(method: string, url: string, options: TakeOptions): ScriptedFailure | undefined;
    hold(ms: number): Promise<void>;
  },
  request: FastifyRequest,
  reply: FastifyReply,
  work: () => unknown,
): Promise<FastifyReply> {
  const failure = store.takeFailure(request.method, request.url, { aimedOnly: true, body: bodyTextOf(request.body) });
  // No configured latency here (it is the business API's); a scripted delay aimed at the endpoint holds it.
  await store.hold(failure?.delayMs ?? 0);
  return answerOrFail(
    failure,
    (status) => sendScriptedFailure(request, reply, status),
    (): { status: number; body: unknown; headers: Record<string, string> } => {
      try {
        return { status: 200, body: work(), headers: NO_STORE };
      } catch (error) {
        if (!(error instanceof OAuthFailure)) throw error;
        return {
          status: error.status,
          body: { error: error.error, error_description: error.description },
          headers: { ...NO_STORE, ...error.headers },
        };
      }
    },
    (answer) => reply.code(answer.status).headers(answer.headers).send(answer.body),
  );
}

/** A scripted failure, in OAuth's shape: the client sees what a failing identity provider sends. */
function sendScriptedFailure(request: FastifyRequest, reply: FastifyReply, status: number): FastifyReply {
  if (status === 0) return dropConnection(request, reply);
  const error =
    status === 429 || status === 503 ? 'temporarily_unavailable' : status >= 500 ? 'server_error' : 'invalid_request';
  const headers: Record<string, string> = status === 429 ? { 'retry-after': '1' } : {};
  return sendOAuthError(reply, new OAuthFailure(status, error, `Scripted failure (HTTP ${status}).`, headers));
}
