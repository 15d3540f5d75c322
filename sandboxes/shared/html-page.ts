import type { FastifyReply } from 'fastify';

/** The sandboxes' consent and error pages: plain HTML, no JavaScript, usable in any browser. */

export function escapeHtml(text: string): string {
  return text
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** A whole page; `style` is the sandbox's own stylesheet, `body` HTML already escaped. */
export function htmlPage(style: string, title: string, body: string): string {
  return [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${style}</style>`,
    '</head>',
    '<body>',
    '<main>',
    body,
    '</main>',
    '</body>',
    '</html>',
    '',
  ].join('\n');
}

/** The request's parameters again, as hidden fields of the consent form, in the order of `names`. */
export function hiddenInputs(names: readonly string[], params: URLSearchParams): string[] {
  return names.flatMap((name) => {
    const value = params.get(name);
    return value === null ? [] : [`<input type="hidden" name="${name}" value="${escapeHtml(value)}">`];
  });
}

/** A refused authorization request whose client or redirect is in doubt: told to the person, not the client. */
export function authorizeErrorPage(style: string, error: string, description: string, status = 400): string {
  return htmlPage(
    style,
    `Error ${status}: ${error}`,
    [
      `<h1>Error ${status}: ${escapeHtml(error)}</h1>`,
      `<p>${escapeHtml(description)}</p>`,
      '<p class="note">The request cannot be sent back to the application that made it: its client or its redirect address is in doubt.</p>',
    ].join('\n'),
  );
}

/** The consent page must not be framed (clickjacking), cached, or leak its query (state, challenge) as a referrer. */
export function sendHtml(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply
    .code(status)
    .headers({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'x-frame-options': 'DENY',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      'referrer-policy': 'no-referrer',
    })
    .send(html);
}

export function sendRedirect(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(302).headers({ location, 'cache-control': 'no-store', 'referrer-policy': 'no-referrer' }).send();
}
