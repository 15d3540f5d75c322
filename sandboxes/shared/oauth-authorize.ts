import type { FastifyReply, FastifyRequest } from 'fastify';
import { authorizeErrorPage, sendHtml, sendRedirect } from './html-page';
import { redirectTo, single } from './oauth-parameters';

/** A refused authorization request whose client or redirect is in doubt: an HTML page, never a redirect. */
export class AuthorizePageError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
  ) {
    super(`${error}: ${description}`);
  }
}

export function pageRefusal(description: string): AuthorizePageError {
  return new AuthorizePageError('invalid_request', description);
}

/**
 * The client and the redirect_uri of an authorization request, checked first: until both are known good, a refusal
 * is shown on a page, never sent to the redirect.
 */
export function readClientAndRedirect<C extends { clientId: string }>(
  params: URLSearchParams,
  clients: C[],
): { client: C; redirectUri: string } {
  const clientId = single(params, 'client_id', pageRefusal);
  if (clientId === undefined) throw pageRefusal('client_id is required');
  const client = clients.find((candidate) => candidate.clientId === clientId);
  if (!client) throw new AuthorizePageError('invalid_client', `The OAuth client ${clientId} was not found.`);

  const redirectUri = single(params, 'redirect_uri', pageRefusal);
  if (redirectUri === undefined) throw pageRefusal('redirect_uri is required');
  let redirect: URL;
  try {
    redirect = new URL(redirectUri);
  } catch {
    throw pageRefusal('redirect_uri must be an absolute http or https URL');
  }
  if (redirect.protocol !== 'http:' && redirect.protocol !== 'https:') {
    throw pageRefusal('redirect_uri must be an absolute http or https URL');
  }
  if (redirectUri.includes('#')) throw pageRefusal('redirect_uri must not have a fragment');
  return { client, redirectUri };
}

/** What the consent form posted; its hidden fields may have been altered, so the caller checks them again. */
export function consentFormOf(request: FastifyRequest): URLSearchParams {
  if (!(request.body instanceof URLSearchParams)) {
    throw pageRefusal('The body must be application/x-www-form-urlencoded');
  }
  return request.body;
}

export function consentDecision(form: URLSearchParams): 'approve' | 'decline' {
  const decision = single(form, 'decision', pageRefusal);
  if (decision !== 'approve' && decision !== 'decline') throw pageRefusal('decision must be approve or decline');
  return decision;
}

/** The person declined (or granted nothing): the client hears access_denied. */
export function sendAccessDenied(
  reply: FastifyReply,
  authorize: { redirectUri: string; state: string | undefined },
): FastifyReply {
  return sendRedirect(reply, redirectTo(authorize.redirectUri, { error: 'access_denied', state: authorize.state }));
}

/** An AuthorizePageError shown as its page; anything else is thrown on. */
export function sendAuthorizePage(reply: FastifyReply, pageStyle: string, error: unknown): FastifyReply {
  if (error instanceof AuthorizePageError) {
    return sendHtml(reply, 400, authorizeErrorPage(pageStyle, error.error, error.description));
  }
  throw error;
}
