import { timingSafeEqual } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  BETA_SCOPE_BUSINESS_CONNECT,
  type BetaOAuthAppTokenAnswer,
  type BetaOAuthTokenAnswer,
} from '../../providers/beta/beta.types';
import { OAuthFailure } from './beta-sandbox.grants';
import type { BetaSandboxCompany } from './beta-sandbox.seed';
import type { BetaSandboxOAuthClient, BetaSandboxStore } from './beta-sandbox.state';

/**
 * The provider's OAuth 2.0 endpoints: a consent page a person can use in a browser (no JavaScript) where they pick
 * the company to link, and the token endpoint (authorization code, client credentials, refresh). Mounted under
 * `/oauth` of the sandbox's prefix. Its leniencies: any http(s) redirect_uri is accepted at authorize (a real
 * provider takes only registered ones), nobody logs in (the page offers every sandbox company), and the consent
 * form carries no anti-forgery token.
 */

export interface BetaSandboxOAuthOptions {
  store: BetaSandboxStore;
}

const FORM_BODY_LIMIT = 64 * 1024;
/** Longer parameters are refused before any work: no real request needs them. */
const PARAMETER_MAX_LENGTH = 2048;
/** The consent page's choice for a consent without a linked company. */
export const NO_COMPANY = 'none';
const KNOWN_SCOPES = [BETA_SCOPE_BUSINESS_CONNECT];

/** A refused authorization request whose client or redirect is in doubt: an HTML page, never a redirect. */
class AuthorizePageError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
  ) {
    super(`${error}: ${description}`);
  }
}

/** A refused authorization request of a known client and redirect: told to the client (RFC 6749 section 4.1.2.1). */
class AuthorizeRedirectError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly redirectUri: string,
    readonly state: string | undefined,
  ) {
    super(`${error}: ${description}`);
  }
}

interface AuthorizeRequest {
  client: BetaSandboxOAuthClient;
  redirectUri: string;
  state: string | undefined;
  scope: string;
}

/** The parameters the consent form carries back, in the order the page writes them. */
const AUTHORIZE_PARAMETERS = ['response_type', 'client_id', 'redirect_uri', 'scope', 'state'] as const;

/** One value of a parameter that may appear at most once (RFC 6749 section 3.1). */
function single(params: URLSearchParams, name: string, refuse: (description: string) => Error): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw refuse(`${name} is given more than once`);
  const value = values[0];
  if (value !== undefined && value.length > PARAMETER_MAX_LENGTH) {
    throw refuse(`${name} is longer than ${PARAMETER_MAX_LENGTH} characters`);
  }
  return value === '' ? undefined : value;
}

/**
 * Checked in this order, the same for the page and for the form it posts (whose hidden fields may be altered): the
 * client and the redirect first (refused on a page), then the rest (refused by a redirect to the client).
 */
function readAuthorizeRequest(params: URLSearchParams, clients: BetaSandboxOAuthClient[]): AuthorizeRequest {
  const refusePage = (description: string) => new AuthorizePageError('invalid_request', description);
  const clientId = single(params, 'client_id', refusePage);
  if (clientId === undefined) throw refusePage('client_id is required');
  const client = clients.find((candidate) => candidate.clientId === clientId);
  if (!client) throw new AuthorizePageError('invalid_client', `The OAuth client ${clientId} was not found.`);

  const redirectUri = single(params, 'redirect_uri', refusePage);
  if (redirectUri === undefined) throw refusePage('redirect_uri is required');
  let redirect: URL;
  try {
    redirect = new URL(redirectUri);
  } catch {
    throw refusePage('redirect_uri must be an absolute http or https URL');
  }
  if (redirect.protocol !== 'http:' && redirect.protocol !== 'https:') {
    throw refusePage('redirect_uri must be an absolute http or https URL');
  }
  if (redirectUri.includes('#')) throw refusePage('redirect_uri must not have a fragment');

  // From here the client can be told, with its state when that can be read.
  const stateValues = params.getAll('state');
  const state = stateValues.length === 1 && stateValues[0] !== '' ? stateValues[0] : undefined;
  const refuse = (error: string, description: string) =>
    new AuthorizeRedirectError(error, description, redirectUri, state);
  if (stateValues.length > 1) throw refuse('invalid_request', 'state is given more than once');
  if (state !== undefined && state.length > PARAMETER_MAX_LENGTH) {
    throw new AuthorizeRedirectError(
      'invalid_request',
      `state is longer than ${PARAMETER_MAX_LENGTH} characters`,
      redirectUri,
      undefined,
    );
  }
  const invalid = (description: string) => refuse('invalid_request', description);
  if (single(params, 'response_type', invalid) !== 'code') {
    throw refuse('unsupported_response_type', 'response_type must be code');
  }
  const scopeText = single(params, 'scope', invalid);
  if (scopeText === undefined || scopeText.trim() === '') {
    throw refuse('invalid_scope', `scope is required: ${BETA_SCOPE_BUSINESS_CONNECT}`);
  }
  const scopes = [...new Set(scopeText.split(' ').filter((part) => part !== ''))];
  const unknown = scopes.filter((scope) => !KNOWN_SCOPES.includes(scope));
  if (unknown.length > 0) throw refuse('invalid_scope', `Unknown scope: ${unknown.join(' ')}`);
  return { client, redirectUri, state, scope: scopes.join(' ') };
}

/** The redirect back to the client, keeping the query the redirect_uri already has (RFC 6749 section 3.1.2). */
function redirectTo(redirectUri: string, parameters: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

const PAGE_STYLE =
  'body{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}' +
  'label{display:block;margin:.4rem 0}select{font-size:1rem;margin:.4rem 0 1rem}' +
  'button{font-size:1rem;padding:.5rem 1.2rem;margin-right:.5rem}code{word-break:break-all}.note{color:#6e6e73;font-size:.9rem}';

function page(title: string, body: string): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${PAGE_STYLE}</style>`,
    '</head>',
    '<body>',
    '<main>',
    body,
    '</main>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

function consentPage(request: AuthorizeRequest, params: URLSearchParams, companies: BetaSandboxCompany[]): string {
  const hidden = AUTHORIZE_PARAMETERS.flatMap((name) => {
    const value = params.get(name);
    return value === null ? [] : [`<input type="hidden" name="${name}" value="${escapeHtml(value)}">`];
  });
  const options = [
    ...companies.map(
      (company, index) =>
        `<option value="${escapeHtml(company.id)}"${index === 0 ? ' selected' : ''}>${escapeHtml(company.name)} (${escapeHtml(company.id)})</option>`,
    ),
    `<option value="${NO_COMPANY}"${companies.length === 0 ? ' selected' : ''}>No company (consent without a linked company)</option>`,
  ];
  return page(
    'Link a company - beta sandbox',
    [
      '<h1>Beta sandbox: link a company</h1>',
      `<p><strong>${escapeHtml(request.client.clientId)}</strong> asks to manage the brands of the company you choose (scope <code>${escapeHtml(request.scope)}</code>).</p>`,
      '<form method="post" action="authorize">',
      ...hidden,
      '<label for="company">Company</label>',
      '<select id="company" name="company">',
      ...options,
      '</select>',
      '<div>',
      '<button type="submit" name="decision" value="approve">Approve</button>',
      '<button type="submit" name="decision" value="decline">Decline</button>',
      '</div>',
      '</form>',
      `<p class="note">You return to <code>${escapeHtml(request.redirectUri)}</code>. This is a sandbox: nobody signs in.</p>`,
    ].join('\n'),
  );
}

function errorPage(error: string, description: string, status = 400): string {
  return page(
    `Error ${status}: ${error}`,
    [
      `<h1>Error ${status}: ${escapeHtml(error)}</h1>`,
      `<p>${escapeHtml(description)}</p>`,
      '<p class="note">The request cannot be sent back to the application that made it: its client or its redirect address is in doubt.</p>',
    ].join('\n'),
  );
}

/** The consent page must not be framed (clickjacking), cached, or leak its query (state) as a referrer. */
function sendHtml(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply
    .code(status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      'referrer-policy': 'no-referrer',
    })
    .send(html);
}

function sendRedirect(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(302).headers({ location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }).send();
}

/** Either refusal of an authorization request, answered as its kind requires. */
function sendAuthorizeRefusal(reply: FastifyReply, error: unknown): FastifyReply {
  if (error instanceof AuthorizePageError) return sendHtml(reply, 400, errorPage(error.error, error.description));
  if (error instanceof AuthorizeRedirectError) {
    const parameters = { error: error.error, error_description: error.description, state: error.state };
    return sendRedirect(reply, redirectTo(error.redirectUri, parameters));
  }
  throw error;
}

function invalidRequest(description: string): OAuthFailure {
  return new OAuthFailure(400, 'invalid_request', description);
}

/** The form body, or a refusal naming what to send instead. */
function formOf(request: FastifyRequest): URLSearchParams {
  if (!(request.body instanceof URLSearchParams)) {
    throw invalidRequest('The body must be application/x-www-form-urlencoded');
  }
  return request.body;
}

/** RFC 6749 section 3.2: no parameter of a token request may appear twice. */
function requireSingles(form: URLSearchParams): void {
  for (const name of new Set(form.keys())) {
    if (form.getAll(name).length > 1) throw invalidRequest(`${name} is given more than once`);
  }
}

function parameter(form: URLSearchParams, name: string): string | undefined {
  return single(form, name, invalidRequest);
}

function required(form: URLSearchParams, name: string): string {
  const value = parameter(form, name);
  if (value === undefined) throw invalidRequest(`${name} is required`);
  return value;
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

const BASIC_CHALLENGE = { 'www-authenticate': 'Basic realm="beta-sandbox"' };

/** HTTP Basic (RFC 6749 section 2.3.1: each half form-encoded first) or client_id and client_secret in the form. */
function authenticateClient(
  request: FastifyRequest,
  form: URLSearchParams,
  clients: BetaSandboxOAuthClient[],
): BetaSandboxOAuthClient {
  const header = request.headers.authorization;
  const basic = header !== undefined && /^Basic\s/i.test(header) ? parseBasic(header) : undefined;
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
  const challenge: Record<string, string> = basic ? BASIC_CHALLENGE : {};
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

function parseBasic(header: string): { id: string; secret: string } {
  const malformed = () => new OAuthFailure(401, 'invalid_client', 'Malformed HTTP Basic credentials.', BASIC_CHALLENGE);
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

/** A `scope` a token request may carry: the brand API's one, or nothing (meaning it). */
function checkScope(form: URLSearchParams): void {
  const scope = parameter(form, 'scope');
  if (scope === undefined) return;
  const unknown = scope.split(' ').filter((part) => part !== '' && !KNOWN_SCOPES.includes(part));
  if (unknown.length > 0) throw new OAuthFailure(400, 'invalid_scope', `Unknown scope: ${unknown.join(' ')}`);
}

/** Registered by the sandbox plugin under `/oauth`; errors here are OAuth's shapes, not the brand API's. */
export async function betaSandboxOAuthPlugin(app: FastifyInstance, options: BetaSandboxOAuthOptions): Promise<void> {
  const { store } = options;

  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
    (_request, body, done) => done(null, new URLSearchParams(body as string)),
  );
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'beta sandbox OAuth failure');
    if (request.url.split('?')[0]!.endsWith('/authorize')) {
      const [code, description] =
        status === 500 ? ['server_error', 'Internal error.'] : ['invalid_request', error.message];
      return sendHtml(reply, status, errorPage(code, description, status));
    }
    const failure =
      status === 500
        ? new OAuthFailure(500, 'server_error', 'Internal error.')
        : new OAuthFailure(status, 'invalid_request', error.message);
    return reply
      .code(failure.status)
      .headers({ 'cache-control': 'no-store', pragma: 'no-cache' })
      .send({ error: failure.error, error_description: failure.description });
  });

  /**
   * The token endpoint's steps: a scripted failure aimed at it (pathContains naming the path), the work, and the
   * answer; `after` failures lose the answer of work that took effect (a code exchanged, then the answer dropped).
   */
  async function oauthCall(
    request: FastifyRequest,
    reply: FastifyReply,
    work: () => BetaOAuthTokenAnswer | BetaOAuthAppTokenAnswer,
  ): Promise<FastifyReply> {
    const failure = store.takeFailure(request.method, request.url, { aimedOnly: true });
    if (failure?.when === 'before') return sendScriptedFailure(request, reply, failure.status);
    let answer: { status: number; body: unknown; headers: Record<string, string> };
    const noStore = { 'cache-control': 'no-store', pragma: 'no-cache' };
    try {
      answer = { status: 200, body: work(), headers: noStore };
    } catch (error) {
      if (!(error instanceof OAuthFailure)) throw error;
      answer = {
        status: error.status,
        body: { error: error.error, error_description: error.description },
        headers: { ...noStore, ...error.headers },
      };
    }
    if (failure?.when === 'after') return sendScriptedFailure(request, reply, failure.status);
    return reply.code(answer.status).headers(answer.headers).send(answer.body);
  }

  app.get('/authorize', async (request, reply) => {
    const params = new URL(request.url, 'http://sandbox').searchParams;
    try {
      const authorize = readAuthorizeRequest(params, store.config.oauthClients);
      return sendHtml(reply, 200, consentPage(authorize, params, store.companyList()));
    } catch (error) {
      return sendAuthorizeRefusal(reply, error);
    }
  });

  // What the consent form posts: the request again (checked again), the person's decision and company.
  app.post('/authorize', async (request, reply) => {
    try {
      if (!(request.body instanceof URLSearchParams)) {
        throw new AuthorizePageError('invalid_request', 'The body must be application/x-www-form-urlencoded');
      }
      const form = request.body;
      const authorize = readAuthorizeRequest(form, store.config.oauthClients);
      const refuse = (description: string) => new AuthorizePageError('invalid_request', description);
      const decision = single(form, 'decision', refuse);
      if (decision === 'decline') {
        return sendRedirect(
          reply,
          redirectTo(authorize.redirectUri, { error: 'access_denied', state: authorize.state }),
        );
      }
      if (decision !== 'approve') throw refuse('decision must be approve or decline');
      const chosen = single(form, 'company', refuse);
      const company = chosen === undefined || chosen === NO_COMPANY ? undefined : store.company(chosen);
      if (chosen === undefined || (chosen !== NO_COMPANY && !company)) {
        throw refuse('Choose one of the sandbox companies, or no company');
      }
      const code = store.grants.issueCode({
        clientId: authorize.client.clientId,
        redirectUri: authorize.redirectUri,
        companyId: company?.id ?? null,
        scope: authorize.scope,
      });
      return sendRedirect(reply, redirectTo(authorize.redirectUri, { code, state: authorize.state }));
    } catch (error) {
      return sendAuthorizeRefusal(reply, error);
    }
  });

  app.post('/token', (request, reply) =>
    oauthCall(request, reply, () => {
      const form = formOf(request);
      requireSingles(form);
      const client = authenticateClient(request, form, store.config.oauthClients);
      const grantType = required(form, 'grant_type');
      const ttlSeconds = store.config.accessTokenTtlSeconds;
      if (grantType === 'authorization_code') {
        const code = required(form, 'code');
        const redirectUri = required(form, 'redirect_uri');
        return tokenAnswer(store.grants.redeemCode({ code, clientId: client.clientId, redirectUri, ttlSeconds }));
      }
      if (grantType === 'refresh_token') {
        const refreshToken = required(form, 'refresh_token');
        checkScope(form);
        return tokenAnswer(store.grants.refresh({ refreshToken, clientId: client.clientId, ttlSeconds }));
      }
      if (grantType === 'client_credentials') {
        checkScope(form);
        const issued = store.grants.issueAppToken({ clientId: client.clientId, ttlSeconds });
        return { access_token: issued.accessToken, token_type: 'Bearer', expires_in: issued.expiresInSeconds };
      }
      throw new OAuthFailure(
        400,
        'unsupported_grant_type',
        `grant_type ${grantType} is not supported: use authorization_code, client_credentials or refresh_token`,
      );
    }),
  );
}

function tokenAnswer(issued: {
  accessToken: string;
  refreshToken: string;
  expiresInSeconds: number;
  scope: string;
  companyId: string | null;
}): BetaOAuthTokenAnswer {
  return {
    access_token: issued.accessToken,
    token_type: 'Bearer',
    expires_in: issued.expiresInSeconds,
    refresh_token: issued.refreshToken,
    scope: issued.scope,
    ...(issued.companyId !== null ? { company_id: issued.companyId } : {}),
  };
}

/** A scripted failure, in OAuth's shape: the client sees what a failing token endpoint sends. */
function sendScriptedFailure(request: FastifyRequest, reply: FastifyReply, status: number): FastifyReply {
  if (status === 0) {
    reply.hijack();
    request.raw.socket.destroy();
    return reply;
  }
  const error =
    status === 429 || status === 503 ? 'temporarily_unavailable' : status >= 500 ? 'server_error' : 'invalid_request';
  return reply
    .code(status)
    .headers({ 'cache-control': 'no-store', pragma: 'no-cache', ...(status === 429 ? { 'retry-after': '1' } : {}) })
    .send({ error, error_description: `Scripted failure (HTTP ${status}).` });
}
