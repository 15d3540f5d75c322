import type { FastifyInstance, FastifyReply } from 'fastify';
import {
  BETA_SCOPE_BUSINESS_CONNECT,
  type BetaOAuthAppTokenAnswer,
  type BetaOAuthTokenAnswer,
} from '../../src/providers/beta/beta.types';
import { escapeHtml, hiddenInputs, htmlPage, sendHtml, sendRedirect } from '../shared/html-page';
import {
  consentDecision,
  consentFormOf,
  pageRefusal,
  readClientAndRedirect,
  sendAccessDenied,
  sendAuthorizePage,
} from '../shared/oauth-authorize';
import { readTokenRequest } from '../shared/oauth-client-auth';
import { oauthCall, prepareOAuthRoutes } from '../shared/oauth-endpoint';
import { OAuthFailure } from '../shared/oauth-failure';
import { PARAMETER_MAX_LENGTH, parameter, redirectTo, required, single } from '../shared/oauth-parameters';
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

/** The consent page's choice for a consent without a linked company. */
export const NO_COMPANY = 'none';
const KNOWN_SCOPES = [BETA_SCOPE_BUSINESS_CONNECT];

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

/**
 * Checked in this order, the same for the page and for the form it posts (whose hidden fields may be altered): the
 * client and the redirect first (refused on a page), then the rest (refused by a redirect to the client).
 */
function readAuthorizeRequest(params: URLSearchParams, clients: BetaSandboxOAuthClient[]): AuthorizeRequest {
  const { client, redirectUri } = readClientAndRedirect(params, clients);

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

const PAGE_STYLE =
  'body{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#1d1d1f}' +
  'label{display:block;margin:.4rem 0}select{font-size:1rem;margin:.4rem 0 1rem}' +
  'button{font-size:1rem;padding:.5rem 1.2rem;margin-right:.5rem}code{word-break:break-all}.note{color:#6e6e73;font-size:.9rem}';

function consentPage(request: AuthorizeRequest, params: URLSearchParams, companies: BetaSandboxCompany[]): string {
  const hidden = hiddenInputs(AUTHORIZE_PARAMETERS, params);
  const options = [
    ...companies.map(
      (company, index) =>
        `<option value="${escapeHtml(company.id)}"${index === 0 ? ' selected' : ''}>${escapeHtml(company.name)} (${escapeHtml(company.id)})</option>`,
    ),
    `<option value="${NO_COMPANY}"${companies.length === 0 ? ' selected' : ''}>No company (consent without a linked company)</option>`,
  ];
  return htmlPage(
    PAGE_STYLE,
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

/** Either refusal of an authorization request, answered as its kind requires. */
function sendAuthorizeRefusal(reply: FastifyReply, error: unknown): FastifyReply {
  if (error instanceof AuthorizeRedirectError) {
    const parameters = { error: error.error, error_description: error.description, state: error.state };
    return sendRedirect(reply, redirectTo(error.redirectUri, parameters));
  }
  return sendAuthorizePage(reply, PAGE_STYLE, error);
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

  prepareOAuthRoutes(app, { pageStyle: PAGE_STYLE, failureLog: 'beta sandbox OAuth failure' });

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
      const form = consentFormOf(request);
      const authorize = readAuthorizeRequest(form, store.config.oauthClients);
      if (consentDecision(form) === 'decline') return sendAccessDenied(reply, authorize);
      const chosen = single(form, 'company', pageRefusal);
      const company = chosen === undefined || chosen === NO_COMPANY ? undefined : store.company(chosen);
      if (chosen === undefined || (chosen !== NO_COMPANY && !company)) {
        throw pageRefusal('Choose one of the sandbox companies, or no company');
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
    oauthCall(store, request, reply, (): BetaOAuthTokenAnswer | BetaOAuthAppTokenAnswer => {
      const { form, client, grantType } = readTokenRequest(request, store.config.oauthClients, 'beta-sandbox');
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
