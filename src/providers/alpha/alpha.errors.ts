import { isRetryableStatus } from '../shared/answer';
import { ProviderError } from '../shared/provider-error';

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
 * Any failure of a call to the alpha provider's business API: a ProviderError (status, reason, retryable) that
 * also keeps the envelope's `code` and `details` (recorded as a post's last_error).
 */
export class AlphaProviderError extends ProviderError {
  override readonly name = 'AlphaProviderError';
  /** The envelope's `code` (the HTTP status as the provider saw it); 0 when there was no answer. */
  readonly code: number;
  readonly details: unknown[];

  constructor(init: AlphaProviderErrorInit) {
    super({ provider: 'alpha', ...init });
    this.code = init.code;
    this.details = init.details ?? [];
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
