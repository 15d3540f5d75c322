import { apiFailures } from '../shared/api-client';
import { ProviderError } from '../shared/provider-error';
import type { Failure } from '../shared/transport';
import { errorBodySchema } from './beta.schemas';
import { BETA_ERROR_CODES } from './beta.types';

/** Its reason is its `code`. */
export interface BetaProviderErrorInit extends Omit<Failure, 'reason'> {
  code: string;
  context?: string | null;
  details?: unknown[];
}

/**
 * Any failure of a call to the beta provider's brand API: a ProviderError whose reason is the provider's `code`
 * (ETAG_MISMATCH, see isBetaEtagMismatch, means the brand changed since its etag was read: read it again, then
 * decide), with the field it named (`context`) and its details.
 */
export class BetaProviderError extends ProviderError {
  override readonly name = 'BetaProviderError';
  /** The provider's code (VALIDATION_ERROR, ETAG_MISMATCH, ...), or one of API_CLIENT_REASONS. */
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

/** How the beta client names its failures: the body `{ code, message, context, details }`. */
export const betaFailures = apiFailures({
  who: 'beta provider',
  errorFormat: 'its error body',
  error: ({ reason, ...failure }) => new BetaProviderError({ ...failure, code: reason }),
  fromBody({ status, json, retryable, retryAfterSeconds }) {
    const body = errorBodySchema.safeParse(json);
    if (!body.success) return undefined;
    return new BetaProviderError({
      status,
      code: body.data.code,
      message: body.data.message ?? `Beta provider answered HTTP ${status}`,
      context: body.data.context ?? null,
      details: body.data.details ?? [],
      retryable,
      retryAfterSeconds,
      // The beta provider has one limit, its project's: every 429 covers every call.
      ...(status === 429 ? { quotaScope: 'project' as const } : {}),
    });
  },
  reasonForStatus: betaCodeForStatus,
});

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
