import { urlProblem } from '../../src/shared/url-rule';

/** The one URL rule (src/shared/url-rule.ts): each refusal says what is wrong, the first thing to fix first. */
describe('urlProblem', () => {
  it('takes absolute http(s) URLs as written', () => {
    for (const url of ['https://example.com', 'http://example.com:8080/a?b=c#d', 'https://[2606:4700::1111]/x', 'https://bäckerei.example/ö']) {
      expect([url, urlProblem(url)]).toEqual([url, undefined]);
    }
  });

  it('says a text with no scheme is not a URL at all, whatever else it holds', () => {
    for (const text of ['not a url', 'example.com/path', '/relative', 'localhost:8080/x', 'mailto:someone@example.com']) {
      expect([text, urlProblem(text)]).toEqual([text, 'must be an absolute http(s) URL, such as https://example.com/path']);
    }
    expect(urlProblem('not a url', { httpsOnly: true })).toBe('must be an absolute https URL, such as https://example.com/path');
  });

  it('names the scheme it wants and the one it got', () => {
    expect(urlProblem('ftp://example.com/x')).toBe('scheme must be http or https, not ftp');
    expect(urlProblem('http://example.com/x', { httpsOnly: true })).toBe('scheme must be https, not http');
  });

  it('then what the URL carries, each by name', () => {
    expect(urlProblem('')).toBe('must not be empty');
    expect(urlProblem(' https://example.com')).toBe('must not begin or end with spaces');
    expect(urlProblem('https:/example.com')).toBe('must name a host after https://');
    expect(urlProblem('https://example.com/a b')).toBe('must not contain spaces, backslashes or control characters (percent-encode them: a space is %20)');
    expect(urlProblem('https://exa mple.com/')).toBe('must not contain spaces, backslashes or control characters (percent-encode them: a space is %20)');
    expect(urlProblem('https://example.com:99999/')).toBe('is not a valid URL: check its host and port');
    expect(urlProblem('https://u:p@example.com/')).toBe('must not carry credentials (user:password@)');
    expect(urlProblem('https://example.com/#x', { noFragment: true })).toBe('must not have a fragment (#…)');
    expect(urlProblem(`https://example.com/${'a'.repeat(2048)}`)).toBe('must be at most 2048 characters');
    expect(urlProblem(`https://example.com/${'é'.repeat(1000)}`)).toBe('must be at most 2048 characters written as a URL (non-ASCII characters percent-encoded)');
  });

  it('names a private host when the field wants a public one', () => {
    expect(urlProblem('https://10.0.0.1/x', { publicHostOnly: true })).toBe('host 10.0.0.1 is a loopback, private, link-local or metadata address');
    expect(urlProblem('https://localhost/x', { publicHostOnly: true })).toBe('host localhost is a local name');
    expect(urlProblem('https://intranet/x', { publicHostOnly: true })).toBe('host intranet is not a public name (it has no domain)');
    expect(urlProblem('https://10.0.0.1/x')).toBeUndefined();
  });
});
