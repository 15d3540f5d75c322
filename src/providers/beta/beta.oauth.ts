import { oauthFailures, type OAuthClientOptions } from '../shared/oauth-client';
import { createTransport, type CallOptions } from '../shared/transport';
import { oauthAppTokenAnswerSchema, oauthTokenAnswerSchema } from './beta.schemas';
import { BETA_SCOPE_BUSINESS_CONNECT, type BetaOAuthAppTokenAnswer, type BetaOAuthTokenAnswer } from './beta.types';

export type BetaOAuthCallOptions = CallOptions;

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

/** `baseUrl` is the provider's root (the sandbox: the same base URL as the brand API's). */
export type BetaOAuthClientOptions = OAuthClientOptions;

/** A 503 or 429 without an OAuth error reads as temporarily_unavailable. */
const failures = oauthFailures('beta', 'beta provider', [503, 429]);

export function createBetaOAuthClient(options: BetaOAuthClientOptions): BetaOAuthClient {
  const transport = createTransport(options, failures);
  const root = () => `${transport.root()}/oauth`;
  // RFC 6749 section 2.3.1: each half form-encoded, then joined and base64-encoded.
  const basic = Buffer.from(`${formEncode(options.clientId)}:${formEncode(options.clientSecret)}`, 'utf8').toString(
    'base64',
  );

  async function token(form: Record<string, string>, callOptions: BetaOAuthCallOptions = {}) {
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
    return transport.send(request, 'token', callOptions.signal);
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
      return transport.read(oauthTokenAnswerSchema, await token(form, callOptions), 'token');
    },

    async clientCredentials(callOptions) {
      const form = { grant_type: 'client_credentials', scope: BETA_SCOPE_BUSINESS_CONNECT };
      return transport.read(oauthAppTokenAnswerSchema, await token(form, callOptions), 'token');
    },

    async refresh(refreshToken, callOptions) {
      const form = { grant_type: 'refresh_token', refresh_token: refreshToken };
      return transport.read(oauthTokenAnswerSchema, await token(form, callOptions), 'token');
    },
  };
}

function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}
