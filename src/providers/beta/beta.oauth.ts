import type { z } from 'zod';
import { excerptSuffix, parseAnswerBody, parseJson } from '../shared/answer';
import { baseUrlNow, callProvider, type BaseUrl, type HttpAnswer, type ProviderCallObserver, type TransportFailure } from '../shared/http';
import { unansweredMessage } from '../shared/provider-error';
import { OAUTH_CLIENT_ERRORS, OAuthError } from '../shared/oauth-error';
import { isRetryableBetaStatus } from './beta.errors';
import { oauthAppTokenAnswerSchema, oauthErrorSchema, oauthTokenAnswerSchema } from './beta.schemas';
import { BETA_SCOPE_BUSINESS_CONNECT, type BetaOAuthAppTokenAnswer, type BetaOAuthTokenAnswer } from './beta.types';

/** Per call: `signal` cancels the call; the client's own timeout still applies. */
export interface BetaOAuthCallOptions {
  signal?: AbortSignal;
}

/**
 * The beta provider's OAuth 2.0 endpoints (authorization code, client credentials, refresh). Every call either
 * returns checked data or throws an OAuthError carrying the OAuth `error` code; none retries.
 */
export interface BetaOAuthClient {
  /** The consent page's address to send a person to; they pick the company to link there. */
  authorizeUrl(input: { redirectUri: string; state: string }): string;
  /**
   * The code the provider sent to `redirectUri`, for tokens; `redirectUri` must be the one the code was asked with.
   * `company_id` is absent when the person linked no company.
   */
  exchangeCode(
    input: { code: string; redirectUri: string },
    options?: BetaOAuthCallOptions,
  ): Promise<BetaOAuthTokenAnswer>;
  /** An app token of no company, for lookups: it may read brands but not write them. */
  clientCredentials(options?: BetaOAuthCallOptions): Promise<BetaOAuthAppTokenAnswer>;
  /** A new access token of the same grant; the answer repeats the refresh token (they are not rotated). */
  refresh(refreshToken: string, options?: BetaOAuthCallOptions): Promise<BetaOAuthTokenAnswer>;
}

export interface BetaOAuthClientOptions {
  /** Root of the provider, without `/oauth` (the sandbox: the same base URL as the brand API's). */
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

export function createBetaOAuthClient(options: BetaOAuthClientOptions): BetaOAuthClient {
  const root = () => `${baseUrlNow(options.baseUrl)}/oauth`;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const fetchFn = options.fetchFn ?? fetch;
  // RFC 6749 section 2.3.1: each half form-encoded, then joined and base64-encoded.
  const basic = Buffer.from(`${formEncode(options.clientId)}:${formEncode(options.clientSecret)}`, 'utf8').toString(
    'base64',
  );

  async function token(form: Record<string, string>, callOptions: BetaOAuthCallOptions = {}): Promise<HttpAnswer> {
    // The client secret travels in this request: sendHttp follows no redirect that could carry it elsewhere.
    const request = {
      method: 'POST' as const,
      url: `${root()}/token`,
      operation: 'POST token',
      headers: {
        accept: 'application/json',
        authorization: `Basic ${basic}`,
        'content-type': 'application/x-www-form-urlencoded',
      },
      body: new URLSearchParams(form).toString(),
    };
    return callProvider(
      request,
      { fetchFn, timeoutMs, signal: callOptions.signal, observe: options.observe },
      { transport: (failure) => transportError(failure, timeoutMs), answer: answerError },
    );
  }

  return {
    authorizeUrl({ redirectUri, state }) {
      const query = new URLSearchParams({
        response_type: 'code',
        client_id: options.clientId,
        redirect_uri: redirectUri,
        state,
        scope: BETA_SCOPE_BUSINESS_CONNECT,
      });
      return `${root()}/authorize?${query.toString()}`;
    },

    async exchangeCode({ code, redirectUri }, callOptions) {
      const form = { grant_type: 'authorization_code', code, redirect_uri: redirectUri };
      return parseAnswer(oauthTokenAnswerSchema, await token(form, callOptions));
    },

    async clientCredentials(callOptions) {
      const form = { grant_type: 'client_credentials', scope: BETA_SCOPE_BUSINESS_CONNECT };
      return parseAnswer(oauthAppTokenAnswerSchema, await token(form, callOptions));
    },

    async refresh(refreshToken, callOptions) {
      const form = { grant_type: 'refresh_token', refresh_token: refreshToken };
      return parseAnswer(oauthTokenAnswerSchema, await token(form, callOptions));
    },
  };
}

function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

function transportError(failure: TransportFailure, timeoutMs: number): OAuthError {
  // Cancelled by the caller reads as unreachable: the OAuth errors have no code of their own for it.
  const timedOut = failure.kind === 'timeout';
  return new OAuthError({
    provider: 'beta',
    status: 0,
    error: timedOut ? OAUTH_CLIENT_ERRORS.timeout : OAUTH_CLIENT_ERRORS.network,
    description: unansweredMessage('beta provider', timedOut ? 'timeout' : 'network', 'its token endpoint', timeoutMs),
    retryable: true,
    cause: failure.cause,
  });
}

function answerError({ status, text }: HttpAnswer): OAuthError {
  const retryable = isRetryableBetaStatus(status);
  const body = oauthErrorSchema.safeParse(parseJson(text));
  if (body.success) {
    return new OAuthError({ provider: 'beta', status, error: body.data.error, description: body.data.error_description, retryable });
  }
  // A proxy in front of the provider answers in HTML or plain text: name the failure by RFC 6749's codes.
  return new OAuthError({
    provider: 'beta',
    status,
    error:
      status === 503 || status === 429
        ? 'temporarily_unavailable'
        : status >= 500
          ? 'server_error'
          : OAUTH_CLIENT_ERRORS.badResponse,
    description: `The beta provider's token endpoint answered HTTP ${status} without an OAuth error${excerptSuffix(text)}`,
    retryable,
  });
}

function parseAnswer<S extends z.ZodType>(schema: S, answer: HttpAnswer): z.output<S> {
  return parseAnswerBody(
    schema,
    answer.text,
    (problems) =>
      new OAuthError({
        provider: 'beta',
        status: answer.status,
        error: OAUTH_CLIENT_ERRORS.badResponse,
        description: `The beta provider's token answer is not the expected shape: ${problems}`,
        retryable: false,
      }),
  );
}
