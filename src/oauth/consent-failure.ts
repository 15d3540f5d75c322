import type { FastifyBaseLogger } from 'fastify';
import { ProviderError, UNEXPECTED_FAILURE_MESSAGE } from '../providers/shared/provider-error';

/**
 * The boundary of the consent flows (the callbacks, connect, reconnect, disconnect): every failure of a step is
 * classified and logged here, once, before the flow turns it into its documented outcome. How each kind is logged
 * and shown: docs/decisions.md, "Failures".
 */
export interface ConsentStepFailure {
  /** The provider answered or could not be reached (its failure), rather than something of ours failing. */
  fromProvider: boolean;
  /** Safe for the person's redirect URL and GraphQL's errorMessage. */
  text: string;
}

/** OAuth errors that mean this service's own client configuration is wrong (RFC 6749 §5.2). */
const OUR_CONFIGURATION = new Set(['invalid_client', 'unauthorized_client', 'invalid_scope']);

export function consentStepFailed(log: FastifyBaseLogger, step: string, error: unknown): ConsentStepFailure {
  if (error instanceof ProviderError) {
    const details = { err: error, provider: error.provider, step, status: error.status, reason: error.reason };
    if (OUR_CONFIGURATION.has(error.reason)) log.error(details, `the ${error.provider} provider refused our client configuration during ${step}: check its client id and secret`);
    else log.warn(details, `the ${error.provider} provider failed during ${step}`);
    return { fromProvider: true, text: error.message };
  }
  log.error({ err: error, step }, `unexpected error during ${step}`);
  return { fromProvider: false, text: UNEXPECTED_FAILURE_MESSAGE };
}

/**
 * Giving tokens back to the provider (revocation) is a courtesy the outcome never waits on: a failure is logged,
 * and the tokens lapse at the provider on their own.
 */
export async function revokeQuietly(log: FastifyBaseLogger, step: string, revoke: () => Promise<unknown>): Promise<void> {
  try {
    await revoke();
  } catch (error) {
    consentStepFailed(log, `${step} (revoking the tokens; they lapse on their own)`, error);
  }
}
