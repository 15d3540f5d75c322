import { createHmac } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import {
  ALPHA_CONNECT_SCOPES,
  ALPHA_SCOPE_BUSINESS_MANAGE,
  ALPHA_SCOPE_EMAIL,
  ALPHA_SCOPE_OPENID,
  ALPHA_SCOPE_PROFILE,
  type AlphaOAuthTokenAnswer,
  type AlphaScope,
  type AlphaUserInfo,
} from '../../src/providers/alpha/alpha.types';
import { escapeHtml, hiddenInputs, htmlPage, sendHtml, sendRedirect } from '../shared/html-page';
import {
  AuthorizePageError,
  consentDecision,
  consentFormOf,
  pageRefusal,
  readClientAndRedirect,
  sendAccessDenied,
  sendAuthorizePage,
} from '../shared/oauth-authorize';
import { readTokenRequest } from '../shared/oauth-client-auth';
import { oauthCall, prepareOAuthRoutes } from '../shared/oauth-endpoint';
import { invalidRequest, OAuthFailure } from '../shared/oauth-failure';
import { parameter, redirectTo, required, single } from '../shared/oauth-parameters';
import type { AlphaSandboxIdentity } from './alpha-sandbox.accounts';
import type { IssuedTokens } from './alpha-sandbox.grants';
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

/** Checked in this order, the same for the page and for the form it posts (whose hidden fields may be altered). */
function readAuthorizeRequest(params: URLSearchParams, clients: AlphaSandboxOAuthClient[]): AuthorizeRequest {
  const { client, redirectUri } = readClientAndRedirect(params, clients);
  const responseType = single(params, 'response_type', pageRefusal);
  if (responseType !== 'code') {
    throw new AuthorizePageError(
      'unsupported_response_type',
      'response_type must be code (the authorization code flow)',
    );
  }

  const scopeText = single(params, 'scope', pageRefusal);
  if (scopeText === undefined || scopeText.trim() === '') {
    throw new AuthorizePageError('invalid_scope', 'scope is required');
  }
  const scopes: AlphaScope[] = [];
  for (const scope of scopeText.split(' ').filter((part) => part !== '')) {
    if (!isKnownScope(scope)) throw new AuthorizePageError('invalid_scope', `Unknown scope: ${scope}`);
    if (!scopes.includes(scope)) scopes.push(scope);
  }

  const codeChallenge = single(params, 'code_challenge', pageRefusal);
  if (codeChallenge === undefined) throw pageRefusal('code_challenge is required: this provider requires PKCE');
  if (single(params, 'code_challenge_method', pageRefusal) !== 'S256') {
    throw pageRefusal('code_challenge_method must be S256');
  }
  if (!PKCE_VALUE.test(codeChallenge)) {
    throw pageRefusal('code_challenge must be 43 to 128 characters of A-Z a-z 0-9 - . _ ~');
  }

  const accessType = single(params, 'access_type', pageRefusal) ?? 'online';
  if (accessType !== 'online' && accessType !== 'offline') throw pageRefusal('access_type must be online or offline');
  const prompt = single(params, 'prompt', pageRefusal);
  if (prompt !== undefined && !prompt.split(' ').every((value) => PROMPT_VALUES.includes(value))) {
    throw pageRefusal(`prompt must be made of ${PROMPT_VALUES.join(', ')}`);
  }
  return {
    client,
    redirectUri,
    scopes,
    state: single(params, 'state', pageRefusal),
    codeChallenge,
    offline: accessType === 'offline',
    prompt,
    loginHint: single(params, 'login_hint', pageRefusal),
  };
}

const PAGE_STYLE =
  'body{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#202124}' +
  'fieldset{border:1px solid #dadce0;border-radius:8px;margin:1rem 0}label{display:block;margin:.4rem 0}' +
  'button{font-size:1rem;padding:.5rem 1.2rem;margin-right:.5rem}code{word-break:break-all}.note{color:#5f6368;font-size:.9rem}';

function consentPage(request: AuthorizeRequest, params: URLSearchParams, identities: AlphaSandboxIdentity[]): string {
  const hint = request.loginHint?.toLowerCase();
  const chosen =
    identities.find((identity) => identity.sub === request.loginHint || identity.email.toLowerCase() === hint) ??
    identities[0];
  const hidden = hiddenInputs(AUTHORIZE_PARAMETERS, params);
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
  return htmlPage(
    PAGE_STYLE,
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

  prepareOAuthRoutes(app, { pageStyle: PAGE_STYLE, failureLog: 'alpha sandbox identity provider failure' });

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
      return sendAuthorizePage(reply, PAGE_STYLE, error);
    }
  });

  // What the consent form posts: the request again (checked again), the person chosen, the scopes left ticked.
  app.post('/authorize', async (request, reply) => {
    try {
      const form = consentFormOf(request);
      const authorize = readAuthorizeRequest(form, store.config.oauthClients);
      if (consentDecision(form) === 'decline') return sendAccessDenied(reply, authorize);
      const sub = single(form, 'identity', pageRefusal);
      const identity = sub === undefined ? undefined : store.directory.identity(sub);
      if (!identity) throw pageRefusal('Choose one of the sandbox identities to sign in as');
      const ticked = form.getAll('grant');
      const beyond = ticked.filter((scope) => !(authorize.scopes as string[]).includes(scope));
      if (beyond.length > 0) throw new AuthorizePageError('invalid_scope', `Not requested: ${beyond.join(' ')}`);
      const granted = authorize.scopes.filter((scope) => ticked.includes(scope));
      // Approving with nothing ticked grants nothing: the client hears it as a refusal.
      if (granted.length === 0) return sendAccessDenied(reply, authorize);
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
      return sendAuthorizePage(reply, PAGE_STYLE, error);
    }
  });

  app.post('/token', (request, reply) =>
    oauthCall(store, request, reply, () => {
      const { form, client, grantType } = readTokenRequest(request, store.config.oauthClients, 'alpha-sandbox');
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
        return tokenAnswer(issued, client);
      }
      if (grantType === 'refresh_token') {
        const refreshToken = required(form, 'refresh_token');
        const scope = parameter(form, 'scope');
        const scopes = scope === undefined ? undefined : scope.split(' ').filter((part) => part !== '');
        const issued = store.grants.refresh({ refreshToken, clientId: client.clientId, scopes, ttlSeconds });
        return tokenAnswer(issued, client);
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
    oauthCall(store, request, reply, () => {
      const query = new URL(request.url, 'http://sandbox').searchParams;
      const form = request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
      const given = [...query.getAll('token'), ...form.getAll('token')];
      if (given.length > 1) throw invalidRequest('token is given more than once');
      const token = given[0];
      if (token === undefined || token === '') throw invalidRequest('token is required');
      store.grants.revoke(token);
      return {};
    }),
  );

  app.get('/userinfo', (request, reply) =>
    oauthCall(store, request, reply, () => {
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
      return info;
    }),
  );
}
