import { z } from 'zod';
import { OAUTH_CLIENT_ERRORS, OAuthError } from './oauth-error';
import { unansweredMessage, type ProviderName } from './provider-error';
import type { ProviderFailures, TransportOptions } from './transport';

/** What the alpha and beta OAuth clients share above the transport. */

/** `baseUrl` is the root of the provider's OAuth endpoints, without `/oauth`. */
export interface OAuthClientOptions extends TransportOptions {
  clientId: string;
  clientSecret: string;
}

/** RFC 6749 section 5.2. */
const oauthErrorSchema = z.object({
  error: z.string().min(1),
  error_description: z.string().optional(),
});

/**
 * How an OAuth client names its failures, as OAuthErrors: `who` as its texts name the provider, `call` being the
 * endpoint; a status in `unavailable` without an OAuth error reads as temporarily_unavailable.
 */
export function oauthFailures(provider: ProviderName, who: string, unavailable: readonly number[]): ProviderFailures<OAuthError> {
  return {
    error: ({ status, reason, message, retryable, cause }) =>
      new OAuthError({ provider, status, error: reason, description: message, retryable, cause }),
    fromBody({ status, json, retryable }) {
      const body = oauthErrorSchema.safeParse(json);
      if (!body.success) return undefined;
      return new OAuthError({ provider, status, error: body.data.error, description: body.data.error_description, retryable });
    },
    unanswered(kind, endpoint, timeoutMs) {
      // Cancelled by the caller reads as unreachable: the OAuth errors have no code of their own for it.
      const timedOut = kind === 'timeout';
      return {
        reason: timedOut ? OAUTH_CLIENT_ERRORS.timeout : OAUTH_CLIENT_ERRORS.network,
        message: unansweredMessage(who, timedOut ? 'timeout' : 'network', `its ${endpoint} endpoint`, timeoutMs),
      };
    },
    // A proxy in front of the provider answers in HTML or plain text: name the failure by RFC 6749's codes.
    unformatted: (status, endpoint) => ({
      reason: unavailable.includes(status) ? 'temporarily_unavailable' : status >= 500 ? 'server_error' : OAUTH_CLIENT_ERRORS.badResponse,
      message: `The ${who}'s ${endpoint} endpoint answered HTTP ${status} without an OAuth error`,
    }),
    unreadable: (endpoint, problems) => ({
      reason: OAUTH_CLIENT_ERRORS.badResponse,
      message: `The ${who}'s ${endpoint} answer is not the expected shape: ${problems}`,
    }),
  };
}
