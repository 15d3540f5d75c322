import { DomainError } from '../errors/domain-error';
import { urlProblem } from '../shared/url-rule';

/**
 * A caller's redirect_url (product-decisions §7), by the URL rule (src/shared/url-rule.ts): an absolute http(s) URL as
 * written, without credentials or a fragment, https outside development (and always where `httpsOnly`). Returns it
 * as it will be stored and followed. The consent flows redirect only to the URL stored when it passed.
 */
export function checkRedirectUrl(text: string, options: { httpsOnly: boolean }): string {
  const problem = urlProblem(text, { httpsOnly: options.httpsOnly, noFragment: true });
  if (problem) throw DomainError.badInput(`redirect_url ${problem}`);
  return new URL(text).toString();
}

/** The stored redirect_url with the flow's parameters added (existing query parameters are kept). */
export function redirectWith(redirectUrl: string, parameters: Record<string, string | null | undefined>): string {
  const url = new URL(redirectUrl);
  for (const [name, value] of Object.entries(parameters)) {
    if (value !== undefined && value !== null) url.searchParams.append(name, value);
  }
  return url.toString();
}
