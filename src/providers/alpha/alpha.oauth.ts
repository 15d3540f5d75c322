import { createHash, randomBytes } from 'node:crypto';
import type { z } from 'zod';
import { excerptSuffix, parseAnswerBody, parseJson } from '../shared/answer';
import { baseUrlNow, callProvider, type BaseUrl, type HttpAnswer, type ProviderCallObserver, type TransportFailure } from '../shared/http';
import { unansweredMessage } from '../shared/provider-error';
import { OAUTH_CLIENT_ERRORS, OAuthError } from '../shared/oauth-error';
import { isRetryableAlphaStatus } from './alpha.errors';
import { oauthErrorSchema, oauthTokenAnswerSchema, userInfoSchema } from './alpha.schemas';
import type { AlphaOAuthTokenAnswer, AlphaUserInfo } from './alpha.types';

/** Per call: `signal` cancels the call; the client's own timeout still applies. */
export interface AlphaOAuthCallOptions {
  signal?: AbortSignal;
}

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

export interface AlphaOAuthClientOptions {
  /** Root of the identity provider, without `/oauth` (the sandbox: the same base URL as the alpha API's). */
  baseUrl: BaseUrl;
  clientId: string;
  clientSecret: string;
  /** Per call, covering the answer's body too. Default 10000. */
  timeoutMs?: number;
  /** Told of every call as it ends (metrics). */
  observe?: ProviderCallObserver;
  fetchFn?: typeof fetch;
}

const DEFAULT_TIMEOUT_MS = 10_000;

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
  const root = () => `${baseUrlNow(options.baseUrl)}/oauth`;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const fetchFn = options.fetchFn ?? fetch;

  async function call(
    endpoint: 'token' | 'revoke' | 'userinfo',
    init: { form?: Record<string, string>; bearer?: string },
    callOptions: AlphaOAuthCallOptions = {},
  ): Promise<HttpAnswer> {
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
    return callProvider(
      request,
      { fetchFn, timeoutMs, signal: callOptions.signal, observe: options.observe },
      {
        transport: (failure) => transportError(failure, endpoint, timeoutMs),
        answer: (answer) => answerError(answer, endpoint),
      },
    );
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
      return parseAnswer(oauthTokenAnswerSchema, await call('token', { form }, callOptions), 'token');
    },

    async refresh(refreshToken, callOptions) {
      const form = { grant_type: 'refresh_token', refresh_token: refreshToken, ...credentials() };
      return parseAnswer(oauthTokenAnswerSchema, await call('token', { form }, callOptions), 'token');
    },

    async revoke(token, callOptions) {
      await call('revoke', { form: { token } }, callOptions);
    },

    async userInfo(accessToken, callOptions) {
      return parseAnswer(userInfoSchema, await call('userinfo', { bearer: accessToken }, callOptions), 'userinfo');
    },
  };
}

function transportError(failure: TransportFailure, endpoint: string, timeoutMs: number): OAuthError {
  // Cancelled by the caller reads as unreachable: the OAuth errors have no code of their own for it.
  const timedOut = failure.kind === 'timeout';
  return new OAuthError({
    provider: 'alpha',
    status: 0,
    error: timedOut ? OAUTH_CLIENT_ERRORS.timeout : OAUTH_CLIENT_ERRORS.network,
    description: unansweredMessage('identity provider', timedOut ? 'timeout' : 'network', `its ${endpoint} endpoint`, timeoutMs),
    retryable: true,
    cause: failure.cause,
  });
}

function answerError({ status, text }: HttpAnswer, endpoint: string): OAuthError {
  const retryable = isRetryableAlphaStatus(status);
  const body = oauthErrorSchema.safeParse(parseJson(text));
  if (body.success) {
    return new OAuthError({ provider: 'alpha', status, error: body.data.error, description: body.data.error_description, retryable });
  }
  // A proxy in front of the provider answers in HTML or plain text: name the failure by RFC 6749's codes.
  return new OAuthError({
    provider: 'alpha',
    status,
    error:
      status === 503
        ? 'temporarily_unavailable'
        : status >= 500
          ? 'server_error'
          : OAUTH_CLIENT_ERRORS.badResponse,
    description: `The identity provider's ${endpoint} endpoint answered HTTP ${status} without an OAuth error${excerptSuffix(text)}`,
    retryable,
  });
}

function parseAnswer<S extends z.ZodType>(schema: S, answer: HttpAnswer, endpoint: string): z.output<S> {
  return parseAnswerBody(
    schema,
    answer.text,
    (problems) =>
      new OAuthError({
        provider: 'alpha',
        status: answer.status,
        error: OAUTH_CLIENT_ERRORS.badResponse,
        description: `The identity provider's ${endpoint} answer is not the expected shape: ${problems}`,
        retryable: false,
      }),
  );
}
