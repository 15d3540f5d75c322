/**
 * The one provider-neutral failure: whichever provider (alpha, beta) and whichever of its endpoints (the business
 * API, the OAuth endpoints) failed, callers decide from these fields alone: whether the same call may succeed later
 * (`retryable`), what the provider answered (`status`, `reason`), and a text a client may see (`message`: the
 * provider's own words, or for a call that got no answer a fixed text; the network detail stays in `cause`, for
 * the log).
 */
export type ProviderName = 'alpha' | 'beta';

/** Every provider, in the order operators read them (metrics, the dashboard). */
export const PROVIDER_NAMES: readonly ProviderName[] = ['alpha', 'beta'];

export interface ProviderErrorInit {
  provider: ProviderName;
  /** HTTP status; 0 when no answer arrived (network error, time-out) or no call was made. */
  status: number;
  /** The provider's reason code (RESOURCE_EXHAUSTED, VALIDATION_ERROR, invalid_grant, …) or one the client assigns. */
  reason: string;
  message: string;
  retryable: boolean;
  retryAfterSeconds?: number;
  /** What a 429's limit covers, when the provider says: `project`, every call of this integration. */
  quotaScope?: 'project';
  cause?: unknown;
}

export class ProviderError extends Error {
  override readonly name: string = 'ProviderError';
  readonly provider: ProviderName;
  /** HTTP status; 0 when no answer arrived (network error, time-out) or no call was made. */
  readonly status: number;
  readonly reason: string;
  /** True for 429, 5xx, network errors and time-outs: the same call may succeed later. */
  readonly retryable: boolean;
  /** From a Retry-After header, when the provider sent one. */
  readonly retryAfterSeconds?: number;
  /** What a 429's limit covers, when the provider says: `project`, every call of this integration. */
  readonly quotaScope?: 'project';

  constructor(init: ProviderErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.provider = init.provider;
    this.status = init.status;
    this.reason = init.reason;
    this.retryable = init.retryable;
    if (init.retryAfterSeconds !== undefined) this.retryAfterSeconds = init.retryAfterSeconds;
    if (init.quotaScope !== undefined) this.quotaScope = init.quotaScope;
  }
}

/**
 * The provider no longer accepts the consent a call needs (its refresh token was refused or is missing, or no
 * consent links the company): only the person consenting again can help, so it is final.
 */
export class ConsentLostError extends ProviderError {
  override readonly name = 'ConsentLostError';

  constructor(provider: ProviderName, message: string, cause?: unknown) {
    super({ provider, status: 401, reason: 'CONSENT_LOST', message, retryable: false, cause });
  }
}

/** What a client may read of any error: a provider failure's own text; a fixed text for anything else. */
export const UNEXPECTED_FAILURE_MESSAGE = 'An unexpected error occurred; it was logged for the operators';

export function clientTextOf(error: unknown): string {
  return error instanceof ProviderError ? error.message : UNEXPECTED_FAILURE_MESSAGE;
}

/** Fixed texts for calls that got no answer: the network detail (ECONNRESET, "fetch failed") is only logged. */
export function unansweredMessage(provider: string, kind: 'cancelled' | 'timeout' | 'network', what: string, timeoutMs: number): string {
  switch (kind) {
    case 'cancelled':
      return `The call ${what} to the ${provider} was cancelled`;
    case 'timeout':
      return `No answer from the ${provider} to ${what} within ${timeoutMs} ms`;
    case 'network':
      return `The ${provider} could not be reached for ${what}`;
  }
}
