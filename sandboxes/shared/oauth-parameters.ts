import type { FastifyRequest } from 'fastify';
import { invalidRequest } from './oauth-failure';

/** Longer parameters are refused before any work: no real request needs them. */
export const PARAMETER_MAX_LENGTH = 2048;

/** One value of a parameter that may appear at most once (RFC 6749 section 3.1). */
export function single(
  params: URLSearchParams,
  name: string,
  refuse: (description: string) => Error,
): string | undefined {
  const values = params.getAll(name);
  if (values.length > 1) throw refuse(`${name} is given more than once`);
  const value = values[0];
  if (value !== undefined && value.length > PARAMETER_MAX_LENGTH) {
    throw refuse(`${name} is longer than ${PARAMETER_MAX_LENGTH} characters`);
  }
  return value === '' ? undefined : value;
}

/** The form body, or a refusal naming what to send instead. */
export function formOf(request: FastifyRequest): URLSearchParams {
  if (!(request.body instanceof URLSearchParams)) {
    throw invalidRequest('The body must be application/x-www-form-urlencoded');
  }
  return request.body;
}

/** RFC 6749 section 3.2: no parameter of a token request may appear twice. */
export function requireSingles(form: URLSearchParams): void {
  for (const name of new Set(form.keys())) {
    if (form.getAll(name).length > 1) throw invalidRequest(`${name} is given more than once`);
  }
}

export function parameter(form: URLSearchParams, name: string): string | undefined {
  return single(form, name, invalidRequest);
}

export function required(form: URLSearchParams, name: string): string {
  const value = parameter(form, name);
  if (value === undefined) throw invalidRequest(`${name} is required`);
  return value;
}

/** The redirect back to the client, keeping the query the redirect_uri already has (RFC 6749 section 3.1.2). */
export function redirectTo(redirectUri: string, parameters: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(parameters)) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}
