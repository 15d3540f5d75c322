import type { ErrorCode } from '../../src/errors/domain-error';

/**
 * A refusal as a caller meets it: a DomainError of this code with this exact message (or one matching the pattern,
 * where the wording after our field path is a library's). For `toThrow`, which takes an asymmetric matcher but is
 * typed without one.
 */
export function domainError(code: ErrorCode, message: string | RegExp): Error {
  const text: unknown = typeof message === 'string' ? message : expect.stringMatching(message);
  return expect.objectContaining({ name: 'DomainError', code, message: text }) as Error;
}

/** A 400: the rules' refusal of a bad value. */
export function badInput(message: string | RegExp): Error {
  return domainError('BAD_USER_INPUT', message);
}
