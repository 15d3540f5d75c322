import { isRetryableStatus } from '../shared/answer';

/** Reasons the client itself assigns when the provider gave no envelope to read one from. */
export const ALPHA_CLIENT_REASONS = {
  /** No answer: connection refused or reset, DNS failure. */
  network: 'NETWORK_ERROR',
  /** No complete answer within the client's timeout. */
  timeout: 'TIMEOUT',
  /** Cancelled by the caller (a worker stopping) before an answer arrived. */
  cancelled: 'CANCELLED',
  /** An answer we cannot read as the documented shape. */
  badResponse: 'BAD_RESPONSE',
  /** A call we refused to send (for example a malformed resource name). */
  invalidArgument: 'INVALID_ARGUMENT',
} as const;

export interface AlphaProviderErrorInit {
  /** HTTP status; 0 when no answer arrived (network error, timeout) or no call was made. */
  status: number;
  code: number;
  reason: string;
  message: string;
  details?: unknown[];
  retryable: boolean;
  retryAfterSeconds?: number;
  cause?: unknown;
}

/**
 * Any failure of a call to the alpha provider. The job engine decides from `retryable` whether to try again, and
 * records status, reason, message and details as the post's last_error.
 */
export class AlphaProviderError extends Error {
  override readonly name = 'AlphaProviderError';
  /** HTTP status; 0 for network errors and timeouts. */
  readonly status: number;
  /** The envelope's `code` (the HTTP status as the provider saw it); 0 when there was no answer. */
  readonly code: number;
  /** The envelope's `status`, e.g. RESOURCE_EXHAUSTED, or one of ALPHA_CLIENT_REASONS. */
  readonly reason: string;
  readonly details: unknown[];
  /** True for 429, 5xx, network errors and timeouts: the same call may succeed later. */
  readonly retryable: boolean;
  /** From a Retry-After header, when the provider sent one. */
  readonly retryAfterSeconds?: number;

  constructor(init: AlphaProviderErrorInit) {
    super(init.message, init.cause === undefined ? undefined : { cause: init.cause });
    this.status = init.status;
    this.code = init.code;
    this.reason = init.reason;
    this.details = init.details ?? [];
    this.retryable = init.retryable;
    if (init.retryAfterSeconds !== undefined) this.retryAfterSeconds = init.retryAfterSeconds;
  }
}

/** Whether a call that failed with this HTTP status may succeed if repeated: the rule every provider shares. */
export const isRetryableAlphaStatus: (status: number) => boolean = isRetryableStatus;

/** The provider's canonical reason for an HTTP status, for error answers that carry no readable envelope. */
export function alphaReasonForStatus(status: number): string {
  switch (status) {
    case 400:
      return 'INVALID_ARGUMENT';
    case 401:
      return 'UNAUTHENTICATED';
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'NOT_FOUND';
    case 409:
      return 'ABORTED';
    case 429:
      return 'RESOURCE_EXHAUSTED';
    case 499:
      return 'CANCELLED';
    case 501:
      return 'UNIMPLEMENTED';
    case 502:
    case 503:
      return 'UNAVAILABLE';
    case 504:
      return 'DEADLINE_EXCEEDED';
    default:
      if (status >= 500) return 'INTERNAL';
      if (status >= 400) return 'FAILED_PRECONDITION';
      return 'UNKNOWN';
  }
}

/** Codes the OAuth client itself assigns when the identity provider gave no OAuth error to read one from. */
export const ALPHA_OAUTH_CLIENT_ERRORS = {
  network: 'network_error',
  timeout: 'timeout',
  badResponse: 'bad_response',
} as const;

export interface AlphaOAuthErrorInit {
  /** HTTP status; 0 when no answer arrived. */
  status: number;
  error: string;
  description?: string;
  retryable: boolean;
  cause?: unknown;
}

/**
 * A failure of the identity provider's OAuth endpoints (token, revoke, userinfo). Kept apart from
 * AlphaProviderError: its `error` is the OAuth code (`invalid_grant`: the user must consent again;
 * `invalid_client`: our configuration is wrong), which callers act on differently from business-API reasons.
 */
export class AlphaOAuthError extends Error {
  override readonly name = 'AlphaOAuthError';
  readonly status: number;
  /** The OAuth `error`, e.g. invalid_grant, or one of ALPHA_OAUTH_CLIENT_ERRORS. */
  readonly error: string;
  readonly description: string | undefined;
  /** True for 429, 5xx, network errors and timeouts. */
  readonly retryable: boolean;

  constructor(init: AlphaOAuthErrorInit) {
    super(
      init.description === undefined ? `OAuth error ${init.error}` : `OAuth error ${init.error}: ${init.description}`,
      init.cause === undefined ? undefined : { cause: init.cause },
    );
    this.status = init.status;
    this.error = init.error;
    this.description = init.description;
    this.retryable = init.retryable;
  }
}
