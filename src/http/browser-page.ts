import type { FastifyReply } from 'fastify';

/**
 * The one way our HTML pages (the REST reference, the dashboard, the consent callbacks' refusals) are sent: a
 * Content-Security-Policy that allows only what the page names, and the headers every page of ours carries.
 */

/** What a page may load or do; every directive not named is 'none' (default-src), and nothing may frame it. */
export interface PageSources {
  script?: string;
  style?: string;
  connect?: string;
  img?: string;
}

export function pagePolicy(sources: PageSources): string {
  return [
    "default-src 'none'",
    ...(sources.script ? [`script-src ${sources.script}`] : []),
    ...(sources.style ? [`style-src ${sources.style}`] : []),
    ...(sources.connect ? [`connect-src ${sources.connect}`] : []),
    ...(sources.img ? [`img-src ${sources.img}`] : []),
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Sets the headers of an HTML page: its type, its policy, no sniffing, no framing, no referrer; how long it is kept. */
export function asPage(reply: FastifyReply, options: { policy: string; cacheControl: string }): FastifyReply {
  return reply
    .type('text/html; charset=utf-8')
    .header('content-security-policy', options.policy)
    .header('x-content-type-options', 'nosniff')
    .header('x-frame-options', 'DENY')
    .header('cache-control', options.cacheControl)
    .header('referrer-policy', 'no-referrer');
}

/** Text from outside, safe inside an element or a quoted attribute of a page. */
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (character) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[character]!);
