import { isRetryableStatus } from '../shared/answer';
import { ProviderError } from '../shared/provider-error';
import { BETA_ERROR_CODES } from './beta.types';

/** Codes the client itself assigns when the provider gave no error body to read one from. */
export const BETA_CLIENT_CODES = {
  /** No answer: connection refused or reset, DNS failure. */
  network: 'NETWORK_ERROR',
  /** No complete answer within the client's timeout. */
  timeout: 'TIMEOUT',
  /** Cancelled by the caller (a worker stopping) before an answer arrived. */
  cancelled: 'CANCELLED',
  /** An answer we cannot read as the documented shape. */
  badResponse: 'BAD_RESPONSE',
  /** A call we refused to send (an empty id, an empty etag). */
  invalidArgument: 'INVALID_ARGUMENT',
} as const;

export interface BetaProviderErrorInit {
  /** HTTP status; 0 when no answer arrived (network error, timeout) or no call was made. */
  status: number;
  code: string;
  message: string;
  context?: string | null;
  details?: unknown[];
  retryable: boolean;
  retryAfterSeconds?: number;
  cause?: unknown;
}

/**
 * Any failure of a call to the beta provider's brand API: a ProviderError whose reason is the provider's `code`
 * (ETAG_MISMATCH, see isBetaEtagMismatch, means the brand changed since its etag was read: read it again, then
 * decide), with the field it named (`context`) and its details.
 */
export class BetaProviderError extends ProviderError {
  override readonly name = 'BetaProviderError';
  /** The provider's code (VALIDATION_ERROR, ETAG_MISMATCH, ...), or one of BETA_CLIENT_CODES. */
  readonly code: string;
  /** The field, header or resource the provider named (brandDetails.countryCodes[0], If-Match), or null. */
  readonly context: string | null;
  readonly details: unknown[];

  constructor(init: BetaProviderErrorInit) {
    super({ provider: 'beta', reason: init.code, ...init });
    this.code = init.code;
    this.context = init.context ?? null;
    this.details = init.details ?? [];
  }
}

/** The brand was replaced since the etag was read: a 412 from a replace or a delete. */
export function isBetaEtagMismatch(error: unknown): error is BetaProviderError {
  return error instanceof BetaProviderError && error.code === BETA_ERROR_CODES.etagMismatch;
}

/** Whether a call that failed with this HTTP status may succeed if repeated: the rule every provider shares. */
export const isRetryableBetaStatus: (status: number) => boolean = isRetryableStatus;

/** The provider's code for an HTTP status, for error answers that carry no readable body. */
export function betaCodeForStatus(status: number): string {
  switch (status) {
    case 400:
      return BETA_ERROR_CODES.validation;
    case 401:
      return BETA_ERROR_CODES.unauthorized;
    case 403:
      return BETA_ERROR_CODES.forbidden;
    case 404:
      return BETA_ERROR_CODES.notFound;
    case 412:
      return BETA_ERROR_CODES.etagMismatch;
    case 428:
      return BETA_ERROR_CODES.preconditionRequired;
    case 429:
      return BETA_ERROR_CODES.rateLimited;
    case 502:
    case 503:
    case 504:
      return BETA_ERROR_CODES.unavailable;
    default:
      if (status >= 500) return BETA_ERROR_CODES.internal;
      return 'BAD_REQUEST';
  }
}
