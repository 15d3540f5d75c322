import { randomBytes } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import { ALL_EVENT_TYPES, type EventTypeName, type SubscribedEventTypeName } from '../activity/activity.enums';

/** The pure rules of webhooks (docs/webhooks.md): secrets, the retry schedule, which addresses may be called. */

/** A new signing secret: 32 random bytes, prefixed so it is recognisable in a client's configuration. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64url')}`;
}

/** A delivery is retried for a day from its creation; an endpoint failing for a day is disabled. */
export const RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;
const FIRST_RETRY_MS = 30_000;
const LONGEST_RETRY_MS = 60 * 60 * 1000;

/**
 * The wait after the `attempt`-th failed attempt (1-based): 30 s doubling up to an hour, of which a random half is
 * taken off ("equal jitter"), so receivers coming back are not hit by every sender at once. `random` is in [0, 1).
 */
export function retryDelayMs(attempt: number, random: number): number {
  const ceiling = Math.min(LONGEST_RETRY_MS, FIRST_RETRY_MS * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random * ceiling) / 2);
}

/**
 * When a delivery created at `createdAt` is tried next after its `attempts`-th attempt failed at `now`, or null when it
 * is given up (FAILED): a failure a day or more after its creation ends it; until then the schedule above.
 */
export function nextAttemptAfterFailure(createdAt: Date, now: Date, attempts: number, random: number): Date | null {
  if (now.getTime() - createdAt.getTime() >= RETRY_WINDOW_MS) return null;
  return new Date(now.getTime() + retryDelayMs(attempts, random));
}

/** Whether an endpoint subscribed to `subscribed` is sent events of `type`: it names the type, or every type (`*`). */
export function endpointWants(subscribed: readonly SubscribedEventTypeName[], type: EventTypeName): boolean {
  return subscribed.includes(type) || subscribed.includes(ALL_EVENT_TYPES);
}

/** The types an endpoint keeps: each once, in the order given; `*` alone when it is among them (it holds the others). */
export function subscribedTypes(types: readonly SubscribedEventTypeName[]): SubscribedEventTypeName[] {
  return types.includes(ALL_EVENT_TYPES) ? [ALL_EVENT_TYPES] : [...new Set(types)];
}

export const MAX_ENDPOINTS_PER_ORGANIZATION = 20;
export const MAX_URL_CHARACTERS = 2048;
/** The first bytes of an answer kept in the delivery log. */
export const RESPONSE_EXCERPT_BYTES = 1024;

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

/**
 * Why `text` cannot be an endpoint's URL, or undefined when it can: an absolute https URL (http too when private
 * targets are allowed) without credentials, whose host is not a forbidden address or a local name. Names are
 * resolved and checked again at every send (src/webhook/webhook-sender.ts).
 */
export function urlRefusal(text: string, allowPrivateTargets: boolean): string | undefined {
  if ([...text].length > MAX_URL_CHARACTERS) return `url must be at most ${MAX_URL_CHARACTERS} characters`;
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'url must be an absolute URL';
  }
  const schemes = allowPrivateTargets ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) return 'url must be an https URL';
  if (url.username || url.password) return 'url must not carry credentials';
  if (allowPrivateTargets) return undefined;
  // A fully qualified name's trailing dot (`localhost.`) names the same host.
  const host = url.hostname.replace(/^\[|\]$/g, '').replace(/\.$/, '').toLowerCase();
  if (isIP(host) !== 0 ? isForbiddenAddress(host) : host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.internal') || !host.includes('.')) {
    return 'url must not name a loopback, private, link-local or metadata address';
  }
  return undefined;
}
