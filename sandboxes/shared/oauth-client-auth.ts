import { timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { invalidRequest, OAuthFailure } from './oauth-failure';
import { formOf, parameter, required, requireSingles } from './oauth-parameters';

export interface SandboxOAuthClient {
  clientId: string;
  clientSecret: string;
}

/** A token request's form (no parameter given twice), the client it authenticates, and its grant_type. */
export function readTokenRequest<C extends SandboxOAuthClient>(
  request: FastifyRequest,
  clients: C[],
  realm: string,
): { form: URLSearchParams; client: C; grantType: string } {
  const form = formOf(request);
  requireSingles(form);
  const client = authenticateClient(request, form, clients, realm);
  return { form, client, grantType: required(form, 'grant_type') };
}

/**
 * HTTP Basic (RFC 6749 section 2.3.1: each half form-encoded first) or client_id and client_secret in the form.
 * `realm` names the sandbox in the Basic challenge.
 */
export function authenticateClient<C extends SandboxOAuthClient>(
  request: FastifyRequest,
  form: URLSearchParams,
  clients: C[],
  realm: string,
): C {
  const basicChallenge = { 'www-authenticate': `Basic realm="${realm}"` };
  const header = request.headers.authorization;
  const basic = header !== undefined && /^Basic\s/i.test(header) ? parseBasic(header, basicChallenge) : undefined;
  const formId = parameter(form, 'client_id');
  const formSecret = parameter(form, 'client_secret');
  if (basic && formSecret !== undefined) {
    throw invalidRequest('Client credentials are given twice: use HTTP Basic or the form, not both');
  }
  if (basic && formId !== undefined && formId !== basic.id) {
    throw invalidRequest('client_id differs from the HTTP Basic credentials');
  }
  const id = basic?.id ?? formId;
  const secret = basic?.secret ?? formSecret;
  const challenge: Record<string, string> = basic ? basicChallenge : {};
  if (id === undefined || secret === undefined) {
    throw new OAuthFailure(
      401,
      'invalid_client',
      'Client authentication is required (client_id and client_secret).',
      challenge,
    );
  }
  const client = clients.find((candidate) => candidate.clientId === id);
  if (!client || !sameSecret(secret, client.clientSecret)) {
    throw new OAuthFailure(401, 'invalid_client', 'The OAuth client was not found, or its secret is wrong.', challenge);
  }
  return client;
}

function parseBasic(header: string, challenge: Record<string, string>): { id: string; secret: string } {
  const malformed = () => new OAuthFailure(401, 'invalid_client', 'Malformed HTTP Basic credentials.', challenge);
  const decoded = Buffer.from(header.replace(/^Basic\s+/i, '').trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw malformed();
  const decode = (part: string) => {
    try {
      return decodeURIComponent(part.replace(/\+/g, ' '));
    } catch {
      throw malformed();
    }
  };
  return { id: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)) };
}

/** In constant time, so the answer's timing does not tell how much of a guessed secret was right. */
function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
