import type { FastifyReply } from 'fastify';

/** An OAuth error answer (RFC 6749 section 5.2), rendered as `{error, error_description}`. */
export class OAuthFailure extends Error {
  constructor(
    readonly status: number,
    readonly error: string,
    readonly description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(`${error}: ${description}`);
  }
}

export function invalidRequest(description: string): OAuthFailure {
  return new OAuthFailure(400, 'invalid_request', description);
}

export function invalidGrant(description: string): OAuthFailure {
  return new OAuthFailure(400, 'invalid_grant', description);
}

/** Token answers and their refusals are never cached (RFC 6749 section 5.1). */
export const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' } as const;

export function sendOAuthError(reply: FastifyReply, failure: OAuthFailure): FastifyReply {
  return reply
    .code(failure.status)
    .headers({ ...NO_STORE, ...failure.headers })
    .send({ error: failure.error, error_description: failure.description });
}
