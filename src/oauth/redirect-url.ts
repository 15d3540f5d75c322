import { DomainError } from '../errors/domain-error';

/**
 * The rules of a caller's redirect_url (product-decisions §7): an absolute http(s) URL as written (no relative or
 * scheme-relative form, nothing a browser would reinterpret), without credentials or a fragment, https outside
 * development (and always where `httpsOnly`). The consent flows redirect only to the URL stored when it passed.
 */
export function checkRedirectUrl(text: string, options: { httpsOnly: boolean }): string {
  const refuse = (why: string): never => {
    throw DomainError.badInput(`redirect_url ${why}`);
  };
  if (text.length === 0 || text.length > 2048) refuse('must be 1 to 2048 characters');
  // Browsers strip or rewrite these, so what they follow would not be what was checked.
  // eslint-disable-next-line no-control-regex -- finding control characters is what this does
  if (/[\s\\\u0000-\u001f\u007f]/.test(text)) refuse('must not contain spaces, backslashes or control characters');
  if (!/^https?:\/\/[^/?#]/i.test(text)) refuse('must be an absolute http(s) URL');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return refuse('must be an absolute http(s) URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') refuse('must be an absolute http(s) URL');
  if (options.httpsOnly && url.protocol !== 'https:') refuse('must use https');
  if (url.username || url.password || text.slice(0, text.indexOf(url.host) + url.host.length).includes('@')) refuse('must not carry credentials');
  if (url.hash || text.includes('#')) refuse('must not have a fragment');
  if (!url.hostname) refuse('must name a host');
  // Bounded as stored and sent too: non-ASCII characters are percent-encoded (up to 12 characters for one).
  const written = url.toString();
  if (written.length > 2048) refuse('must be at most 2048 characters written as a URL (non-ASCII characters percent-encoded)');
  return written;
}

/** The stored redirect_url with the flow's parameters added (existing query parameters are kept). */
export function redirectWith(redirectUrl: string, parameters: Record<string, string | null | undefined>): string {
  const url = new URL(redirectUrl);
  for (const [name, value] of Object.entries(parameters)) {
    if (value !== undefined && value !== null) url.searchParams.append(name, value);
  }
  return url.toString();
}
