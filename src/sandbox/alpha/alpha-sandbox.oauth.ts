import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  ALPHA_CONNECT_SCOPES,
  ALPHA_SCOPE_BUSINESS_MANAGE,
  ALPHA_SCOPE_EMAIL,
  ALPHA_SCOPE_OPENID,
  ALPHA_SCOPE_PROFILE,
  type AlphaOAuthTokenAnswer,
  type AlphaScope,
  type AlphaUserInfo,
} from '../../providers/alpha/alpha.types';
import type { AlphaSandboxIdentity } from './alpha-sandbox.accounts';
import { OAuthFailure, type IssuedTokens } from './alpha-sandbox.grants';
import type { AlphaSandboxOAuthClient, AlphaSandboxStore } from './alpha-sandbox.state';

/**
 * The identity provider, modelled on Google's OAuth 2.0 endpoints: a consent page a person can use in a browser
 * (no JavaScript), the token endpoint (authorization code with PKCE S256, refresh), revocation and userinfo. Mounted
 * under `/oauth` of the sandbox's prefix. Its leniencies: any redirect_uri is accepted at authorize (a real
 * provider takes only registered ones), nobody logs in (the page offers the sandbox identities), and the consent
 * form carries no anti-forgery token.
 */

export interface AlphaSandboxOAuthOptions {
  store: AlphaSandboxStore;
  clock: () => number;
}

/** The issuer of the ID tokens. */
const ISSUER = 'https://accounts.alpha.example';
const FORM_BODY_LIMIT = 64 * 1024;
/** Longer parameters are refused before any work: no real request needs them. */
const PARAMETER_MAX_LENGTH = 2048;
const PKCE_VALUE = /^[A-Za-z0-9._~-]{43,128}$/;
const PROMPT_VALUES = ['none', 'consent', 'select_account'];

const SCOPE_DESCRIPTIONS: Record<AlphaScope, string> = {
  [ALPHA_SCOPE_OPENID]: 'Associate you with your personal info on the alpha sandbox',
  [ALPHA_SCOPE_EMAIL]: 'See your primary email address',
  [ALPHA_SCOPE_PROFILE]: 'See your personal info, including your name and picture',
  [ALPHA_SCOPE_BUSINESS_MANAGE]:
    'See, edit, create and delete your business listings, their posts, reviews and replies',
};

function isKnownScope(scope: string): scope is AlphaScope {
  return (ALPHA_CONNECT_SCOPES as readonly string[]).includes(scope);
}

/** A refused authorization request: shown as an HTML page, never redirected (the redirect itself is in doubt). */
class AuthorizePageError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
  ) {
    super(`${error}: ${description}`);
  }
}

interface AuthorizeRequest {
  client: AlphaSandboxOAuthClient;
  redirectUri: string;
  scopes: AlphaScope[];
  state: string | undefined;
  codeChallenge: string;
  offline: boolean;
  prompt: string | undefined;
  loginHint: string | undefined;
}

/** The parameters the consent form carries back, in the order the page writes them. */
const AUTHORIZE_PARAMETERS = [
  'response_type',
  'client_id',
  'redirect_uri',
  'scope',
  'state',
  'code_challenge',
  'code_challenge_method',
  'access_type',
  'prompt',
  'login_hint',
] as const;

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

/** Checked in this order, the same for the page and for the form it posts (whose hidden fields may be altered). */
function readAuthorizeRequest(params: URLSearchParams, clients: AlphaSandboxOAuthClient[]): AuthorizeRequest {
  const refuse = (description: string) => new AuthorizePageError('invalid_request', description);
  const clientId = single(params, 'client_id', refuse);
  if (clientId === undefined) throw refuse('client_id is required');
  const client = clients.find((candidate) => candidate.clientId === clientId);
  if (!client) throw new AuthorizePageError('invalid_client', `The OAuth client ${clientId} was not found.`);

  const redirectUri = single(params, 'redirect_uri', refuse);
  if (redirectUri === undefined) throw refuse('redirect_uri is required');
  let redirect: URL;
  try {
    redirect = new URL(redirectUri);
  } catch {
    throw refuse('redirect_uri must be an absolute http or https URL');
  }
  if (redirect.protocol !== 'http:' && redirect.protocol !== 'https:') {
    throw refuse('redirect_uri must be an absolute http or https URL');
  }
  if (redirectUri.includes('#')) throw refuse('redirect_uri must not have a fragment');

  const responseType = single(params, 'response_type', refuse);
  if (responseType !== 'code') {
    throw new AuthorizePageError(
      'unsupported_response_type',
      'response_type must be code (the authorization code flow)',
    );
  }

  const scopeText = single(params, 'scope', refuse);
  if (scopeText === undefined || scopeText.trim() === '') {
    throw new AuthorizePageError('invalid_scope', 'scope is required');
  }
  const scopes: AlphaScope[] = [];
  for (const scope of scopeText.split(' ').filter((part) => part !== '')) {
    if (!isKnownScope(scope)) throw new AuthorizePageError('invalid_scope', `Unknown scope: ${scope}`);
    if (!scopes.includes(scope)) scopes.push(scope);
  }

  const codeChallenge = single(params, 'code_challenge', refuse);
  if (codeChallenge === undefined) throw refuse('code_challenge is required: this provider requires PKCE');
  if (single(params, 'code_challenge_method', refuse) !== 'S256') throw refuse('code_challenge_method must be S256');
  if (!PKCE_VALUE.test(codeChallenge)) {
    throw refuse('code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~');
  }

  const accessType = single(params, 'access_type', refuse) ?? 'online';
  if (accessType !== 'online' && accessType !== 'offline') throw refuse('access_type must be online or offline');
  const prompt = single(params, 'prompt', refuse);
  if (prompt !== undefined && !prompt.split(' ').every((value) => PROMPT_VALUES.includes(value))) {
    throw refuse(`prompt must be made of ${PROMPT_VALUES.join(', ')}`);
  }
  return {
    client,
    redirectUri,
    scopes,
    state: single(params, 'state', refuse),
    codeChallenge,
    offline: accessType === 'offline',
    prompt,
    loginHint: single(params, 'login_hint', refuse),
  };
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
  'body{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#202124}' +
  'fieldset{border:1px solid #dadce0;border-radius:8px;margin:1rem 0}label{display:block;margin:.4rem 0}' +
  'button{font-size:1rem;padding:.5rem 1.2rem;margin-right:.5rem}code{word-break:break-all}.note{color:#5f6368;font-size:.9rem}';

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

function consentPage(request: AuthorizeRequest, params: URLSearchParams, identities: AlphaSandboxIdentity[]): string {
  const hint = request.loginHint?.toLowerCase();
  const chosen =
    identities.find((identity) => identity.sub === request.loginHint || identity.email.toLowerCase() === hint) ??
    identities[0];
  const hidden = AUTHORIZE_PARAMETERS.flatMap((name) => {
    const value = params.get(name);
    return value === null ? [] : [`<input type="hidden" name="${name}" value="${escapeHtml(value)}">`];
  });
  const options = identities.map(
    (identity) =>
      `<option value="${escapeHtml(identity.sub)}"${identity === chosen ? ' selected' : ''}>${escapeHtml(identity.name)} (${escapeHtml(identity.email)})</option>`,
  );
  const scopes = request.scopes.map(
    (scope) =>
      `<label><input type="checkbox" name="grant" value="${escapeHtml(scope)}" checked> ${escapeHtml(SCOPE_DESCRIPTIONS[scope])} <code>${escapeHtml(scope)}</code></label>`,
  );
  const signIn =
    identities.length === 0
      ? [
          '<p>No sandbox identities exist: add one with <code>POST /_control/identities</code>, or reset the sandbox.</p>',
        ]
      : ['<label for="identity">Sign in as</label>', '<select id="identity" name="identity">', ...options, '</select>'];
  return page(
    'Sign in - alpha sandbox',
    [
      '<h1>Alpha sandbox: sign in and allow access</h1>',
      `<p><strong>${escapeHtml(request.client.clientId)}</strong> wants to access your alpha account.</p>`,
      '<form method="post" action="authorize">',
      ...hidden,
      ...signIn,
      '<fieldset>',
      `<legend>Allow ${escapeHtml(request.client.clientId)} to:</legend>`,
      ...scopes,
      '</fieldset>',
      ...(identities.length === 0 ? [] : ['<button type="submit" name="decision" value="approve">Approve</button>']),
      '<button type="submit" name="decision" value="decline">Decline</button>',
      '</form>',
      `<p class="note">You return to <code>${escapeHtml(request.redirectUri)}</code>. This is a sandbox: no password is asked.</p>`,
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

/** The consent page must not be framed (clickjacking), cached, or leak its query (state, challenge) as a referrer. */
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

function sendOAuthError(reply: FastifyReply, failure: OAuthFailure): FastifyReply {
  return reply
    .code(failure.status)
    .headers({ 'cache-control': 'no-store', pragma: 'no-cache', ...failure.headers })
    .send({ error: failure.error, error_description: failure.description });
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

/** HTTP Basic (RFC 6749 section 2.3.1: each half form-encoded first) or client_id and client_secret in the form. */
function authenticateClient(
  request: FastifyRequest,
  form: URLSearchParams,
  clients: AlphaSandboxOAuthClient[],
): AlphaSandboxOAuthClient {
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
  const challenge: Record<string, string> = basic ? { 'www-authenticate': 'Basic realm="alpha-sandbox"' } : {};
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
  const decoded = Buffer.from(header.replace(/^Basic\s+/i, '').trim(), 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) {
    throw new OAuthFailure(401, 'invalid_client', 'Malformed HTTP Basic credentials.', {
      'www-authenticate': 'Basic realm="alpha-sandbox"',
    });
  }
  const decode = (part: string) => {
    try {
      return decodeURIComponent(part.replace(/\+/g, ' '));
    } catch {
      throw new OAuthFailure(401, 'invalid_client', 'Malformed HTTP Basic credentials.', {
        'www-authenticate': 'Basic realm="alpha-sandbox"',
      });
    }
  };
  return { id: decode(decoded.slice(0, colon)), secret: decode(decoded.slice(colon + 1)) };
}

/** An ID token (OpenID Connect Core section 2), signed HS256 with the client's secret, as section 10.1 allows. */
function idToken(
  identity: AlphaSandboxIdentity,
  client: AlphaSandboxOAuthClient,
  scopes: string[],
  now: number,
  ttlSeconds: number,
): string {
  const issuedAt = Math.floor(now / 1000);
  const claims = {
    iss: ISSUER,
    aud: client.clientId,
    sub: identity.sub,
    iat: issuedAt,
    exp: issuedAt + ttlSeconds,
    ...profileClaims(identity, scopes),
  };
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const unsigned = `${encode({ alg: 'HS256', typ: 'JWT' })}.${encode(claims)}`;
  const signature = createHmac('sha256', client.clientSecret).update(unsigned).digest('base64url');
  return `${unsigned}.${signature}`;
}

/** What the granted scopes let the client see of the person. */
function profileClaims(identity: AlphaSandboxIdentity, scopes: string[]): Omit<AlphaUserInfo, 'sub'> {
  return {
    ...(scopes.includes(ALPHA_SCOPE_EMAIL) ? { email: identity.email, email_verified: true } : {}),
    ...(scopes.includes(ALPHA_SCOPE_PROFILE) ? { name: identity.name, picture: identity.picture } : {}),
  };
}

/** Registered by the sandbox plugin under `/oauth`; errors here are OAuth's shapes, not the business API's envelope. */
export async function alphaSandboxOAuthPlugin(app: FastifyInstance, options: AlphaSandboxOAuthOptions): Promise<void> {
  const { store, clock } = options;

  app.addContentTypeParser(
    'application/x-www-form-urlencoded',
    { parseAs: 'string', bodyLimit: FORM_BODY_LIMIT },
    (_request, body, done) => done(null, new URLSearchParams(body as string)),
  );
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'alpha sandbox identity provider failure');
    if (request.url.split('?')[0]!.endsWith('/authorize')) {
      const [code, description] =
        status === 500 ? ['server_error', 'Internal error.'] : ['invalid_request', error.message];
      return sendHtml(reply, status, errorPage(code, description, status));
    }
    const failure =
      status === 500
        ? new OAuthFailure(500, 'server_error', 'Internal error.')
        : new OAuthFailure(status, 'invalid_request', error.message);
    return sendOAuthError(reply, failure);
  });

  /**
   * The JSON endpoints' steps: a scripted failure aimed at them (pathContains naming the path), the work, and the
   * answer; `after` failures lose the answer of work that took effect (a code exchanged, then the answer dropped).
   */
  async function oauthCall(
    request: FastifyRequest,
    reply: FastifyReply,
    work: () => { status?: number; body: unknown },
  ): Promise<FastifyReply> {
    const failure = store.takeFailure(request.method, request.url, { aimedOnly: true });
    if (failure?.when === 'before') return sendScriptedFailure(request, reply, failure.status);
    let answer: { status: number; body: unknown; headers: Record<string, string> };
    try {
      const done = work();
      answer = {
        status: done.status ?? 200,
        body: done.body,
        headers: { 'cache-control': 'no-store', pragma: 'no-cache' },
      };
    } catch (error) {
      if (!(error instanceof OAuthFailure)) throw error;
      answer = {
        status: error.status,
        body: { error: error.error, error_description: error.description },
        headers: { 'cache-control': 'no-store', pragma: 'no-cache', ...error.headers },
      };
    }
    if (failure?.when === 'after') return sendScriptedFailure(request, reply, failure.status);
    return reply.code(answer.status).headers(answer.headers).send(answer.body);
  }

  function tokenAnswer(issued: IssuedTokens, client: AlphaSandboxOAuthClient): AlphaOAuthTokenAnswer {
    const identity = store.directory.identity(issued.sub);
    return {
      access_token: issued.accessToken,
      expires_in: issued.expiresInSeconds,
      ...(issued.refreshToken !== undefined ? { refresh_token: issued.refreshToken } : {}),
      scope: issued.scopes.join(' '),
      token_type: 'Bearer',
      ...(identity && issued.scopes.includes(ALPHA_SCOPE_OPENID)
        ? { id_token: idToken(identity, client, issued.scopes, clock(), issued.expiresInSeconds) }
        : {}),
    };
  }

  app.get('/authorize', async (request, reply) => {
    const params = new URL(request.url, 'http://sandbox').searchParams;
    try {
      const authorize = readAuthorizeRequest(params, store.config.oauthClients);
      return sendHtml(reply, 200, consentPage(authorize, params, store.directory.identityList()));
    } catch (error) {
      if (error instanceof AuthorizePageError) return sendHtml(reply, 400, errorPage(error.error, error.description));
      throw error;
    }
  });

  // What the consent form posts: the request again (checked again), the person chosen, the scopes left ticked.
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
      const sub = single(form, 'identity', refuse);
      const identity = sub === undefined ? undefined : store.directory.identity(sub);
      if (!identity) throw refuse('Choose one of the sandbox identities to sign in as');
      const ticked = form.getAll('grant');
      const beyond = ticked.filter((scope) => !(authorize.scopes as string[]).includes(scope));
      if (beyond.length > 0) throw new AuthorizePageError('invalid_scope', `Not requested: ${beyond.join(' ')}`);
      const granted = authorize.scopes.filter((scope) => ticked.includes(scope));
      // Approving with nothing ticked grants nothing: the client hears it as a refusal.
      if (granted.length === 0) {
        return sendRedirect(
          reply,
          redirectTo(authorize.redirectUri, { error: 'access_denied', state: authorize.state }),
        );
      }
      const code = store.grants.issueCode({
        clientId: authorize.client.clientId,
        redirectUri: authorize.redirectUri,
        codeChallenge: authorize.codeChallenge,
        sub: identity.sub,
        scopes: granted,
        offline: authorize.offline,
      });
      return sendRedirect(
        reply,
        redirectTo(authorize.redirectUri, { code, state: authorize.state, scope: granted.join(' ') }),
      );
    } catch (error) {
      if (error instanceof AuthorizePageError) return sendHtml(reply, 400, errorPage(error.error, error.description));
      throw error;
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
        const codeVerifier = required(form, 'code_verifier');
        if (!PKCE_VALUE.test(codeVerifier)) {
          throw invalidRequest('code_verifier must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~');
        }
        const issued = store.grants.redeemCode({
          code,
          clientId: client.clientId,
          redirectUri,
          codeVerifier,
          ttlSeconds,
        });
        return { body: tokenAnswer(issued, client) };
      }
      if (grantType === 'refresh_token') {
        const refreshToken = required(form, 'refresh_token');
        const scope = parameter(form, 'scope');
        const scopes = scope === undefined ? undefined : scope.split(' ').filter((part) => part !== '');
        const issued = store.grants.refresh({ refreshToken, clientId: client.clientId, scopes, ttlSeconds });
        return { body: tokenAnswer(issued, client) };
      }
      throw new OAuthFailure(
        400,
        'unsupported_grant_type',
        `grant_type ${grantType} is not supported: use authorization_code or refresh_token`,
      );
    }),
  );

  // As the provider's: the token in the form (or the query), no client authentication, 200 for a token it does not know.
  app.post('/revoke', (request, reply) =>
    oauthCall(request, reply, () => {
      const query = new URL(request.url, 'http://sandbox').searchParams;
      const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
      const given = [...query.getAll('token'), ...form.getAll('token')];
      if (given.length > 1) throw invalidRequest('token is given more than once');
      const token = given[0];
      if (token === undefined || token === '') throw invalidRequest('token is required');
      store.grants.revoke(token);
      return { body: {} };
    }),
  );

  app.get('/userinfo', (request, reply) =>
    oauthCall(request, reply, () => {
      const token = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];
      if (token === undefined) {
        throw new OAuthFailure(401, 'invalid_request', 'A Bearer access token is required.', {
          'www-authenticate': 'Bearer realm="alpha-sandbox"',
        });
      }
      const found = store.grants.lookupAccessToken(token);
      const identity = found.status === 'valid' ? store.directory.identity(found.sub) : undefined;
      if (found.status !== 'valid' || !identity) {
        throw new OAuthFailure(
          401,
          'invalid_token',
          found.status === 'expired'
            ? 'The access token expired.'
            : 'The access token is not valid (revoked, or never issued).',
          {
            'www-authenticate': 'Bearer realm="alpha-sandbox", error="invalid_token"',
          },
        );
      }
      const info: AlphaUserInfo = { sub: identity.sub, ...profileClaims(identity, found.scopes) };
      return { body: info };
    }),
  );
}

/** A scripted failure, in OAuth's shape: the client sees what a failing identity provider sends. */
function sendScriptedFailure(request: FastifyRequest, reply: FastifyReply, status: number): FastifyReply {
  if (status === 0) {
    reply.hijack();
    request.raw.socket.destroy();
    return reply;
  }
  const error =
    status === 429 || status === 503 ? 'temporarily_unavailable' : status >= 500 ? 'server_error' : 'invalid_request';
  const headers: Record<string, string> = status === 429 ? { 'retry-after': '1' } : {};
  return sendOAuthError(reply, new OAuthFailure(status, error, `Scripted failure (HTTP ${status}).`, headers));
}
