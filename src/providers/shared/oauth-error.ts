import { ProviderError, type ProviderName } from './provider-error';

/** Codes the OAuth clients themselves assign when the provider gave no OAuth error to read one from. */
export const OAUTH_CLIENT_ERRORS = {
  network: 'network_error',
  timeout: 'timeout',
  badResponse: 'bad_response',
} as const;

export interface OAuthErrorInit {
  provider: ProviderName;
  /** HTTP status; 0 when no answer arrived. */
  status: number;
  error: string;
  description?: string;
  retryable: boolean;
  cause?: unknown;
}

/**
 * A failure of a provider's OAuth endpoints (token, revoke, userinfo), whichever provider: a ProviderError whose
 * reason is the OAuth `error` (`invalid_grant`: the person must consent again; `invalid_client`: our configuration
 * is wrong).
 */
export class OAuthError extends ProviderError {
  override readonly name = 'OAuthError';
  /** The OAuth `error`, e.g. invalid_grant, or one of OAUTH_CLIENT_ERRORS. */
  readonly error: string;
  readonly description: string | undefined;

  constructor(init: OAuthErrorInit) {
    super({
      provider: init.provider,
      status: init.status,
      reason: init.error,
      message: init.description === undefined ? `OAuth error ${init.error}` : `OAuth error ${init.error}: ${init.description}`,
      retryable: init.retryable,
      cause: init.cause,
    });
    this.error = init.error;
    this.description = init.description;
  }
}

/** The provider refused the grant (a refresh token revoked, expired or unknown): only a new consent helps. */
export function isRefusedGrant(error: unknown): error is OAuthError {
  return error instanceof OAuthError && error.error === 'invalid_grant';
}
