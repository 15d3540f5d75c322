import { createHash } from 'node:crypto';
import fp from 'fastify-plugin';
import { asPage, escapeHtml, pagePolicy } from '../http/browser-page';
import { FAVICON } from './favicon';
import { productVersion, SERVICE_NAME, type FrontDoorLink } from './front-door';

/**
 * The front door, GET /: for a browser, a page naming the service and its version with the links a newcomer looks
 * for (src/home/front-door.ts, the same the start banner prints) and, in development, the demo token; for anything
 * else (curl, an API client), the same as JSON. And the icon every page of ours shows, GET /favicon.ico.
 */

const STYLE =
  'body{margin:0;font:1rem/1.5 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1a1a1a;background:#f6f6f6}' +
  'main{max-width:44rem;margin:6vh auto;padding:2rem;background:#fff;border:1px solid #c8c8c8;border-radius:.5rem}' +
  'h1{font-size:1.5rem;margin:0 0 .25rem}.version{color:#4a4a4a;margin:0 0 1.5rem}ul{padding-left:1.25rem}li{margin:.25rem 0}' +
  'code{font:.9rem ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all;background:#f0f0f0;padding:.1rem .25rem;border-radius:.25rem}' +
  '@media (prefers-color-scheme:dark){body{color:#f0f0f0;background:#121212}main{background:#1e1e1e;border-color:#555}.version{color:#c8c8c8}code{background:#2a2a2a}a{color:#8ab4f8}}';

/** No script; its one style allowed by its hash; its icon from this origin. */
const PAGE_POLICY = pagePolicy({ style: `'sha256-${createHash('sha256').update(STYLE).digest('base64')}'`, img: "'self'" });

function pageHtml(links: FrontDoorLink[], demoToken: string | undefined): string {
  const items = links.map((link) => `<li><a href="${escapeHtml(link.path)}">${escapeHtml(link.title)}</a> <code>${escapeHtml(link.path)}</code></li>`);
  const demo = demoToken
    ? `<h2>Demo token (development only)</h2>
<p>The demo organization's token; the IDE and the dashboard have it filled in. Send it as <code>Authorization: Bearer &lt;token&gt;</code>:</p>
<p><code id="demo-token">${escapeHtml(demoToken)}</code></p>
`
    : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${SERVICE_NAME}</title>
<link rel="icon" href="/favicon.ico">
<style>${STYLE}</style>
</head>
<body>
<main>
<h1>${SERVICE_NAME}</h1>
<p class="version">Version ${escapeHtml(productVersion())}. GraphQL and REST for business listings on the alpha and beta providers; the REST paths are at the root of this server.</p>
<ul>
${items.join('\n')}
</ul>
${demo}<p>Tokens: <code>npm run cli -- org create --name "My org"</code> prints an organization and its token.</p>
</main>
</body>
</html>
`;
}

/** What an API client reads at GET /: the links by their rel, and the demo token in development. */
function frontDoorJson(links: FrontDoorLink[], demoToken: string | undefined): object {
  return {
    service: SERVICE_NAME,
    version: productVersion(),
    links: Object.fromEntries(links.map((link) => [link.rel, { href: link.path, title: link.title }])),
    ...(demoToken ? { demo_token: demoToken } : {}),
  };
}

export interface FrontDoorOptions {
  links: FrontDoorLink[];
  /** The demo token, shown in development only (the server passes none elsewhere). */
  demoToken?: () => string | undefined;
}

export const frontDoorPlugin = fp<FrontDoorOptions>(
  async (app, { links, demoToken }) => {
    app.get('/', (request, reply) => {
      // The page may hold a token: never kept by a cache. Its two forms differ by Accept.
      reply.header('vary', 'accept');
      const token = demoToken?.();
      if (request.headers.accept?.includes('text/html')) return asPage(reply, { policy: PAGE_POLICY, cacheControl: 'no-store' }).send(pageHtml(links, token));
      return reply.header('cache-control', 'no-store').send(frontDoorJson(links, token));
    });
    app.get('/favicon.ico', (_request, reply) =>
      // The same bytes for a version's life: a day in the browser's cache.
      reply.type('image/x-icon').header('cache-control', 'public, max-age=86400').send(FAVICON),
    );
  },
  { name: 'front-door', dependencies: ['http-edge'] },
);
