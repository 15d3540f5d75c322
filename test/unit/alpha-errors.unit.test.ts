import { alphaFailures, retryInfoSeconds } from '../../src/providers/alpha/alpha.errors';

/** The alpha provider's 429 envelope, as it answers a spent quota (its sandbox: docs/alpha-sandbox.md). */
function exhausted(retryDelay: string, quotaLimit?: string): unknown {
  return {
    error: {
      code: 429,
      status: 'RESOURCE_EXHAUSTED',
      message: 'Quota exceeded. Retry later.',
      details: [
        { '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: 'RATE_LIMIT_EXCEEDED', ...(quotaLimit ? { metadata: { quota_limit: quotaLimit } } : {}) },
        { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay },
      ],
    },
  };
}

describe('when the alpha provider says to come back', () => {
  it('reads the RetryInfo detail when no Retry-After header came, rounding up to whole seconds', () => {
    const error = alphaFailures.fromBody({ status: 429, json: exhausted('4.2s'), retryable: true, retryAfterSeconds: undefined });
    expect(error).toMatchObject({ status: 429, reason: 'RESOURCE_EXHAUSTED', retryable: true, retryAfterSeconds: 5 });
  });

  it('takes the later of the header and the detail', () => {
    expect(alphaFailures.fromBody({ status: 429, json: exhausted('20s'), retryable: true, retryAfterSeconds: 1 })).toMatchObject({ retryAfterSeconds: 20 });
    expect(alphaFailures.fromBody({ status: 429, json: exhausted('1s'), retryable: true, retryAfterSeconds: 30 })).toMatchObject({ retryAfterSeconds: 30 });
  });

  it('ignores details that are not a well-formed RetryInfo', () => {
    expect(retryInfoSeconds([{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: 'soon' }, 'text', null, { retryDelay: '3s' }])).toBeUndefined();
    const error = alphaFailures.fromBody({ status: 503, json: { error: { code: 503, status: 'UNAVAILABLE', message: 'Try again' } }, retryable: true, retryAfterSeconds: undefined });
    expect(error).toMatchObject({ status: 503 });
    expect(error?.retryAfterSeconds).toBeUndefined();
  });

  it('says the limit is the project’s only when its ErrorInfo names a per-project limit', () => {
    const answer = (quotaLimit?: string) => alphaFailures.fromBody({ status: 429, json: exhausted('1s', quotaLimit), retryable: true, retryAfterSeconds: 1 });
    expect(answer('RequestsPerMinutePerProject')?.quotaScope).toBe('project');
    expect(answer('EditsPerMinutePerLocation')?.quotaScope).toBeUndefined();
    expect(answer()?.quotaScope).toBeUndefined();
  });
});
