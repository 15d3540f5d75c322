import { BlockList, isIP } from 'node:net';

/**
 * The one rule of every URL a caller gives us (docs/decisions.md, "URLs"): a redirect_url, a webhook endpoint's url,
 * a post's call-to-action, media and offer links, a location's website, logo and cover, a brand's website and app
 * store links. What a field needs beyond the rule's core (https only, no fragment, no private host) is its policy.
 * A refusal says what is wrong with the URL, without naming the field (the caller names it): never a generic
 * "invalid", and never a later problem where an earlier one explains it ("not a url" is not a URL at all, whatever
 * its spaces).
 */

/** Longer URLs are refused by browsers and by the providers alike. */
export const URL_MAX = 2048;

export interface UrlPolicy {
  /** Only https (a redirect outside development, a webhook receiver); default: http or https. */
  httpsOnly?: boolean;
  /** Whether `#…` is refused (a redirect: browsers keep a fragment across redirects). Default: allowed. */
  noFragment?: boolean;
  /** Whether hosts that are loopback, private, link-local, metadata or local names are refused. Default: allowed. */
  publicHostOnly?: boolean;
}

/** Addresses never called outside development and tests: loopback, private, link-local, metadata, reserved. */
const forbidden = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.0.2.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['198.51.100.0', 24], ['203.0.113.0', 24],
  ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) forbidden.addSubnet(network, prefix, 'ipv4');
// IPv4-compatible (::/96) and IPv4-translated (::ffff:0:0:0/96) addresses carry an IPv4 address a host or translator
// may reach: reserved, never a receiver's, so refused whole, as NAT64's prefixes are; so is deprecated site-local fec0::/10.
for (const [network, prefix] of [
  ['::', 96], ['::1', 128], ['::ffff:0:0:0', 96], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32],
  ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['100::', 64],
] as const) forbidden.addSubnet(network, prefix, 'ipv6');

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a trailing dotted IPv4 as two groups, zone dropped). */
function ipv6Groups(address: string): number[] {
  const [text] = address.split('%');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text!);
  const hex = dotted ? text!.slice(0, dotted.index) + [0, 2].map((i) => ((Number(dotted[i + 1]) << 8) | Number(dotted[i + 2])).toString(16)).join(':') : text!;
  const [head, tail] = hex.split('::') as [string, string | undefined];
  const parse = (part: string | undefined) => (part ? part.split(':').map((group) => parseInt(group, 16)) : []);
  const [left, right] = [parse(head), parse(tail)];
  return tail === undefined ? left : [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/** The IPv4 address a 6to4 address (2002:AABB:CCDD::/48) embeds, as text; undefined for any other IPv6 address. */
function sixToFourIpv4(address: string): string | undefined {
  const [prefix, high, low] = ipv6Groups(address);
  if (prefix !== 0x2002) return undefined;
  return [high! >> 8, high! & 0xff, low! >> 8, low! & 0xff].join('.');
}

/**
 * True for an address no delivery may reach. An IPv4-mapped IPv6 address (::ffff:127.0.0.1, also written
 * ::ffff:7f00:1) is judged as its IPv4 address (BlockList does so for the hex form), and so is the IPv4 address a
 * 6to4 address embeds.
 */
export function isForbiddenAddress(address: string): boolean {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped) return isIP(mapped[1]!) !== 4 || forbidden.check(mapped[1]!, 'ipv4');
  const family = isIP(address);
  if (family === 0) return true;
  if (family === 4) return forbidden.check(address, 'ipv4');
  const embedded = sixToFourIpv4(address);
  return forbidden.check(address, 'ipv6') || (embedded !== undefined && forbidden.check(embedded, 'ipv4'));
}

/** Why `host` (a WHATWG-parsed hostname) is not a public host, or undefined when it is one. */
function privateHostProblem(hostname: string): string | undefined {
  // A fully qualified name's trailing dot (`localhost.`) names the same host.
  const host = hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (isIP(host) !== 0) return isForbiddenAddress(host) ? `host ${host} is a loopback, private, link-local or metadata address` : undefined;
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal')) return `host ${host} is a local name`;
  if (!host.includes('.')) return `host ${host} is not a public name (it has no domain)`;
  return undefined;
}

/**
 * What is wrong with `text` as a URL under `policy`, or undefined when nothing is. Checked in the order a person
 * would fix them: is it a URL at all, of the right scheme, with a host; then what it carries.
 */
export function urlProblem(text: string, policy: UrlPolicy = {}): string | undefined {
  const schemes = policy.httpsOnly ? 'https' : 'http(s)';
  if (text.length === 0) return 'must not be empty';
  if ([...text].length > URL_MAX) return `must be at most ${URL_MAX} characters`;
  if (text !== text.trim()) return 'must not begin or end with spaces';
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(text)?.[1]?.toLowerCase();
  if (!scheme || (scheme !== 'http' && scheme !== 'https' && !/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(text))) {
    return `must be an absolute ${schemes} URL, such as https://example.com/path`;
  }
  if (scheme !== 'https' && (policy.httpsOnly || scheme !== 'http')) return `scheme must be ${policy.httpsOnly ? 'https' : 'http or https'}, not ${scheme}`;
  // Browsers read `https:/x` or `https:\\x` as if it were `https://x`: what they follow would not be what was checked.
  if (!/^https?:\/\/[^/?#\\]/i.test(text)) return `must name a host after ${scheme}://`;
  // eslint-disable-next-line no-control-regex -- finding control characters is what this does
  if (/[\s\\\u0000-\u001f\u007f]/.test(text)) return 'must not contain spaces, backslashes or control characters (percent-encode them: a space is %20)';
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a valid URL: check its host and port';
  }
  if (url.username || url.password || text.slice(0, text.indexOf(url.host) + url.host.length).includes('@')) return 'must not carry credentials (user:password@)';
  if (policy.noFragment && text.includes('#')) return 'must not have a fragment (#…)';
  if (policy.publicHostOnly) {
    const hostProblem = privateHostProblem(url.hostname);
    if (hostProblem) return hostProblem;
  }
  // Bounded as stored and sent too: non-ASCII characters are percent-encoded (up to 12 characters for one).
  if (url.toString().length > URL_MAX) return `must be at most ${URL_MAX} characters written as a URL (non-ASCII characters percent-encoded)`;
  return undefined;
}
