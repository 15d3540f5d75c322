import { apiFailures } from '../shared/api-client';
import { ProviderError } from '../shared/provider-error';
import type { Failure } from '../shared/transport';
import { errorEnvelopeSchema } from './alpha.schemas';

export interface AlphaProviderErrorInit extends Failure {
  code: number;
  details?: unknown[];
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

/** How the alpha client names its failures: the envelope `{ error: { code, message, status, details } }`. */
export const alphaFailures = apiFailures({
  who: 'alpha provider',
  errorFormat: 'its error envelope',
  // Without an envelope, the HTTP status stands for its code.
  error: (failure) => new AlphaProviderError({ ...failure, code: failure.status }),
  fromBody({ status, json, retryable, retryAfterSeconds }) {
    const envelope = errorEnvelopeSchema.safeParse(json);
    if (!envelope.success) return undefined;
    const { code, message, status: reason, details } = envelope.data.error;
    // The provider says when to come back in a RetryInfo detail, with or without a Retry-After header: the later wins.
    const retryDelay = retryInfoSeconds(details ?? []);
    return new AlphaProviderError({
      status,
      code: code ?? status,
      reason: reason ?? alphaReasonForStatus(status),
      message: message ?? `Alpha provider answered HTTP ${status}`,
      details: details ?? [],
      retryable,
      retryAfterSeconds: retryAfterSeconds === undefined ? retryDelay : Math.max(retryAfterSeconds, retryDelay ?? 0),
      ...(status === 429 && namesProjectQuota(details ?? []) ? { quotaScope: 'project' as const } : {}),
    });
  },
  reasonForStatus: alphaReasonForStatus,
});

/**
 * An ErrorInfo detail naming a per-project limit (`quota_limit: RequestsPerMinutePerProject`, …), as the provider's
 * quota errors do; a per-location edit limit, or a 429 that names none, covers less than every call.
 */
function namesProjectQuota(details: unknown[]): boolean {
  return details.some((detail) => {
    if (typeof detail !== 'object' || detail === null) return false;
    const { '@type': type, metadata } = detail as Record<string, unknown>;
    const limit = typeof metadata === 'object' && metadata !== null ? (metadata as Record<string, unknown>).quota_limit : undefined;
    return typeof type === 'string' && type.endsWith('google.rpc.ErrorInfo') && typeof limit === 'string' && limit.endsWith('PerProject');
  });
}

/** A `google.rpc.RetryInfo` detail's `retryDelay` ("1.5s", a protobuf Duration as JSON), in whole seconds, rounded up. */
export function retryInfoSeconds(details: unknown[]): number | undefined {
  for (const detail of details) {
    if (typeof detail !== 'object' || detail === null) continue;
    const { '@type': type, retryDelay } = detail as Record<string, unknown>;
    if (typeof type !== 'string' || !type.endsWith('google.rpc.RetryInfo') || typeof retryDelay !== 'string') continue;
    const seconds = /^(\d+(?:\.\d+)?)s$/.exec(retryDelay.trim());
    if (seconds) return Math.ceil(Number(seconds[1]));
  }
  return undefined;
}

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
