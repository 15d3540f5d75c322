import { createHash, randomBytes } from 'node:crypto';
import { oauthFailures, type OAuthClientOptions } from '../shared/oauth-client';
import { createTransport, type CallOptions } from '../shared/transport';
import { oauthTokenAnswerSchema, userInfoSchema } from './alpha.schemas';
import type { AlphaOAuthTokenAnswer, AlphaUserInfo } from './alpha.types';

export type AlphaOAuthCallOptions = CallOptions;

/**
 * The alpha provider's identity provider (OAuth 2.0 authorization code with PKCE, modelled on Google's). Every call
 * either returns checked data or throws an OAuthError carrying the OAuth `error` code; none retries.
 */
export interface AlphaOAuthClient {
  /**
   * The consent page's address to send a person to: offline access (a refresh token), consent asked every time,
   * PKCE S256. `scopes` are the provider's scope strings (ALPHA_CONNECT_SCOPES).
   */
  authorizeUrl(input: {
    redirectUri: string;
    state: string;
    codeChallenge: string;
    scopes: readonly string[];
    loginHint?: string;
  }): string;
  /** The code the provider sent to `redirectUri`, for tokens; `redirectUri` must be the one the code was asked with. */
  exchangeCode(
    input: { code: string; redirectUri: string; codeVerifier: string },
    options?: AlphaOAuthCallOptions,
  ): Promise<AlphaOAuthTokenAnswer>;
  /** A new access token for the same scopes; the answer carries no refresh token (the given one stays valid). */
  refresh(refreshToken: string, options?: AlphaOAuthCallOptions): Promise<AlphaOAuthTokenAnswer>;
  /** Revokes the grant the token belongs to: its refresh token and every access token from it. */
  revoke(token: string, options?: AlphaOAuthCallOptions): Promise<void>;
  userInfo(accessToken: string, options?: AlphaOAuthCallOptions): Promise<AlphaUserInfo>;
}

/** `baseUrl` is the identity provider's root (the sandbox: the same base URL as the alpha API's). */
export type AlphaOAuthClientOptions = OAuthClientOptions;

/** Its texts call it the identity provider; a 503 without an OAuth error reads as temporarily_unavailable. */
const failures = oauthFailures('alpha', 'identity provider', [503]);

/** A PKCE pair (RFC 7636): keep the verifier with the consent session, send the challenge in the authorize URL. */
export function createAlphaPkce(): { codeVerifier: string; codeChallenge: string } {
  // 32 random bytes: 43 characters of base64url, the shortest verifier allowed, with 256 bits of entropy.
  const codeVerifier = randomBytes(32).toString('base64url');
  return { codeVerifier, codeChallenge: alphaPkceChallenge(codeVerifier) };
}

/** The S256 challenge of a verifier. */
export function alphaPkceChallenge(codeVerifier: string): string {
  return createHash('sha256').update(codeVerifier, 'ascii').digest('base64url');
}

export function createAlphaOAuthClient(options: AlphaOAuthClientOptions): AlphaOAuthClient {
  const transport = createTransport(options, failures);
  const root = () => `${transport.root()}/oauth`;

  async function call(
    endpoint: 'token' | 'revoke' | 'userinfo',
    init: { form?: Record<string, string>; bearer?: string },
    callOptions: AlphaOAuthCallOptions = {},
  ) {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (init.form !== undefined) headers['content-type'] = 'application/x-www-form-urlencoded';
    if (init.bearer !== undefined) headers.authorization = `Bearer ${init.bearer}`;
    const method = init.form === undefined ? ('GET' as const) : ('POST' as const);
    const request = {
      method,
      url: `${root()}/${endpoint}`,
      operation: `${method} ${endpoint}`,
      headers,
      body: init.form === undefined ? undefined : new URLSearchParams(init.form).toString(),
    };
    return transport.send(request, endpoint, callOptions.signal);
  }

  const credentials = () => ({ client_id: options.clientId, client_secret: options.clientSecret });

  return {
    authorizeUrl({ redirectUri, state, codeChallenge, scopes, loginHint }) {
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: options.clientId,
        redirect_uri: redirectUri,
        scope: scopes.join(' '),
        state,
        code_challenge: codeChallenge,
        code_challenge_method: 'S256',
        access_type: 'offline',
        // Without it a second consent yields no refresh token, and a reconnect would have none to store.
        prompt: 'consent',
      });
      if (loginHint !== undefined) query.set('login_hint', loginHint);
      return `${root()}/authorize?${query.toString()}`;
    },

    async exchangeCode({ code, redirectUri, codeVerifier }, callOptions) {
      const form = {
        grant_type: 'authorization_code',
        code,
        redirect_uri: redirectUri,
        code_verifier: codeVerifier,
        ...credentials(),
      };
      return transport.read(oauthTokenAnswerSchema, await call('token', { form }, callOptions), 'token');
    },

    async refresh(refreshToken, callOptions) {
      const form = { grant_type: 'refresh_token', refresh_token: refreshToken, ...credentials() };
      return transport.read(oauthTokenAnswerSchema, await call('token', { form }, callOptions), 'token');
    },

    async revoke(token, callOptions) {
      await call('revoke', { form: { token } }, callOptions);
    },

    async userInfo(accessToken, callOptions) {
      return transport.read(userInfoSchema, await call('userinfo', { bearer: accessToken }, callOptions), 'userinfo');
    },
  };
}
