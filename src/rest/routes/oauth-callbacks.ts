import { createHash } from 'node:crypto';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { completeAlphaConsent, type AlphaCallbackDeps, type CallbackOutcome } from '../../oauth/alpha-consent.service';
import { completeBetaConsent, type BetaCallbackDeps } from '../../oauth/beta-connection.service';
import { asPage, escapeHtml, pagePolicy } from '../../http/browser-page';
import { restErrorBody } from '../../http/error-body';

/**
 * The identity providers' redirects back to us (docs/oauth.md, "The sequence" and "The callbacks' refusals"). A
 * person's browser follows them, so there is no bearer token: the single-use state ties the request to a consent,
 * and a state that names no consent has nowhere to send the person, so it is refused. Whatever refuses one answers a
 * browser a page and everyone else the documented JSON (personPage).
 */
export function registerOAuthCallbacks(app: FastifyInstance, runtime: AlphaCallbackDeps & BetaCallbackDeps): void {
  type Complete = (query: Record<string, string | undefined>, log: FastifyBaseLogger) => Promise<CallbackOutcome>;
  const callback = (provider: 'alpha' | 'beta', complete: Complete) =>
    app.get(`/oauth/${provider}/callback`, { onSend: personPage }, async (request, reply) => {
      const query = request.query as Record<string, unknown>;
      const text = (name: string) => (typeof query[name] === 'string' ? (query[name]) : undefined);
      const outcome = await complete({ state: text('state'), code: text('code'), error: text('error'), scope: text('scope') }, request.log);
      // Every outcome leaves a line (failures have theirs, with the cause, from the flow's boundary).
      request.log.info({ provider, outcome: 'redirect' in outcome ? outcome.outcome : 'refused: no such consent' }, `${provider} consent callback`);
      reply.header('cache-control', 'no-store').header('referrer-policy', 'no-referrer');
      if ('redirect' in outcome) return reply.redirect(outcome.redirect, 302);
      const { status, body } = restErrorBody('BAD_REQUEST', outcome.refusal);
      return reply.code(status).send(body);
    });
  callback('alpha', (query, log) => completeAlphaConsent(runtime, query, log));
  callback('beta', (query, log) => completeBetaConsent(runtime, query, log));
}

/**
 * The one place that decides between HTML and JSON for the callbacks' refusals (docs/oauth.md, "The callbacks'
 * refusals"): it sees every answer of 400 or more on the way out, the handler's, the error handler's and a stopping
 * server's alike.
 */
async function personPage(request: FastifyRequest, reply: FastifyReply, payload: unknown): Promise<unknown> {
  varyOnAccept(reply);
  if (reply.statusCode < 400 || !prefersHtml(request.headers.accept)) return payload;
  asPage(reply, { policy: PAGE_POLICY, cacheControl: 'no-store' });
  return refusalPage(reply.statusCode, messageOf(payload), request.id);
}

/** Adds Accept to Vary, keeping what is there (CORS's Origin). */
function varyOnAccept(reply: FastifyReply): void {
  const current = reply.getHeader('vary');
  const values = (Array.isArray(current) ? current.join(',') : typeof current === 'string' ? current : '')
    .split(',')
    .map((value) => value.trim())
    .filter(Boolean);
  if (values.some((value) => value === '*' || value.toLowerCase() === 'accept')) return;
  reply.header('vary', [...values, 'Accept'].join(', '));
}

/** The message of a documented error body (`{error, message}`), as the JSON answer would carry it. */
function messageOf(payload: unknown): string | undefined {
  if (typeof payload !== 'string') return undefined;
  try {
    const body = JSON.parse(payload) as { message?: unknown };
    return typeof body.message === 'string' ? body.message : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Whether an Accept header prefers text/html to application/json (RFC 9110 §12.5.1): each type's quality is that
 * of the most specific range matching it; the higher quality wins, then the more specific match (a browser names
 * text/html and reaches JSON only through `*\/*`); a tie, or no header, keeps JSON.
 */
function prefersHtml(accept: string | undefined): boolean {
  if (!accept) return false;
  const ranges = accept.split(',').flatMap((part) => {
    const [range = '', ...parameters] = part.split(';').map((piece) => piece.trim().toLowerCase());
    const [type, subtype] = range.split('/');
    if (!type || !subtype) return [];
    const q = parameters.find((parameter) => /^q\s*=/.test(parameter));
    const quality = q === undefined ? 1 : Number(q.slice(q.indexOf('=') + 1).trim());
    return Number.isFinite(quality) ? [{ type, subtype, quality: Math.min(Math.max(quality, 0), 1) }] : [];
  });
  const preference = (type: string, subtype: string): [number, number] => {
    let best: [number, number] = [0, -1];
    for (const range of ranges) {
      const specificity = range.type === type && range.subtype === subtype ? 2 : range.type === type && range.subtype === '*' ? 1 : range.type === '*' && range.subtype === '*' ? 0 : -1;
      if (specificity > best[1]) best = [range.quality, specificity];
    }
    return best;
  };
  const [htmlQuality, htmlSpecificity] = preference('text', 'html');
  const [jsonQuality, jsonSpecificity] = preference('application', 'json');
  if (htmlQuality === 0) return false;
  return htmlQuality > jsonQuality || (htmlQuality === jsonQuality && htmlSpecificity > jsonSpecificity);
}

const STYLE =
  'body{margin:0;font:1.125rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#f6f6f6}' +
  'main{max-width:36rem;margin:10vh auto;padding:2rem;background:#fff;border:1px solid #c8c8c8;border-radius:.5rem}' +
  'h1{font-size:1.5rem;margin:0 0 1rem}p{margin:0 0 1rem}.ref{font-size:.9rem;color:#4a4a4a;word-break:break-all}' +
  '@media (prefers-color-scheme:dark){body{color:#f0f0f0;background:#121212}main{background:#1e1e1e;border-color:#555}.ref{color:#c8c8c8}}';

/** Nothing loads, runs, frames or submits the page: its one style is allowed by its hash. */
const PAGE_POLICY = pagePolicy({ style: `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'` });

/** What the page tells the person, by status: what happened, and what to do. */
function wordsFor(status: number): { title: string; todo: string } {
  if (status === 503) {
    return {
      title: 'Connecting your account is not possible right now',
      todo: 'Wait a moment, then reload this page. If it still does not work, go back to the application and start connecting your account again.',
    };
  }
  if (status >= 500) {
    return { title: 'Something went wrong while connecting your account', todo: 'Go back to the application you came from and start connecting your account again.' };
  }
  return {
    title: 'This link cannot connect your account',
    todo: 'Go back to the application you came from and start connecting your account again. You can close this page.',
  };
}

/** A self-contained page: no script, no image, no external style; every text from outside escaped. */
function refusalPage(status: number, message: string | undefined, requestId: string): string {
  const { title, todo } = wordsFor(status);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${message ? `<p>${escapeHtml(message)}</p>\n` : ''}<p>${escapeHtml(todo)}</p>
<p class="ref">Error ${status}. Reference for support: ${escapeHtml(requestId)}</p>
</main>
</body>
</html>
`;
}
