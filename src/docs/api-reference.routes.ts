import { createHash } from 'node:crypto';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import fp from 'fastify-plugin';
import { asPage, escapeHtml, pagePolicy } from '../http/browser-page';
import { staticAssets } from '../http/static-assets';
import { openApi30View } from './openapi-30-view';

/**
 * The REST reference page at /docs: Swagger UI rendering /openapi.json (in 3.0 form, at /docs/openapi.json), its files served from the npm package, never
 * a CDN (docs/openapi.md, "The reference page"). Public, like the document it shows: the page holds nothing else,
 * and the token typed under Authorize stays in the page.
 */

const ASSET_PATH = '/docs/assets/';

/** What the page renders: /openapi.json in OpenAPI 3.0 form (or as it is, when that form cannot say it all). */
const VIEW_PATH = '/docs/openapi.json';

/** The package's folder (its `absolute-path.js` entry names it). */
const ASSET_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));

/** The only files the page loads: the bundle (which needs no standalone preset for this layout) and its stylesheet. */
const ASSETS = new Set(['swagger-ui-bundle.js', 'swagger-ui.css']);

/**
 * The page's one inline script, allowed by its hash: Swagger UI on the document in 3.0 form (openapi-30-view.ts: it
 * draws in a fraction of the time). No validator badge (it would ask validator.swagger.io), no URL box (the page shows
 * this service's document only), and try-it-out requests keep the path's own base: the document's server. In
 * development the demo token, which the page carries in an attribute (the script stays the same, and so its hash), is
 * filled in under Authorize, as the IDE fills it in.
 */
const INITIALIZER = `window.addEventListener('load', function () {
  var root = document.getElementById('swagger-ui');
  window.ui = SwaggerUIBundle({
    url: '${VIEW_PATH}',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    displayOperationId: true,
    defaultModelsExpandDepth: 1,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
    onComplete: function () {
      var token = root.getAttribute('data-demo-token');
      if (token) window.ui.preauthorizeApiKey('bearer', token);
    },
  });
});`;

const sha256 = (text: string) => createHash('sha256').update(text).digest('base64');

/**
 * The page loads its two files from here and /openapi.json, and talks to this origin only (try it out). Swagger UI
 * writes style attributes and inline SVG images, hence 'unsafe-inline' styles and data: images; nothing else runs.
 */
const CONTENT_SECURITY_POLICY = pagePolicy({
  script: `'self' 'sha256-${sha256(INITIALIZER)}'`,
  style: "'self' 'unsafe-inline'",
  connect: "'self'",
  img: "'self' data:",
});

function pageHtml(demoToken: string | undefined): string {
  const token = demoToken ? ` data-demo-token="${escapeHtml(demoToken)}"` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Listings Gateway · REST reference</title>
<link rel="icon" href="/favicon.ico">
<link rel="stylesheet" href="${ASSET_PATH}swagger-ui.css">
</head>
<body>
<div id="swagger-ui"${token}></div>
<noscript>The reference page needs JavaScript; the document itself is at <a href="/openapi.json">/openapi.json</a>.</noscript>
<script src="${ASSET_PATH}swagger-ui-bundle.js"></script>
<script>${INITIALIZER}</script>
</body>
</html>
`;
}

export interface ApiReferenceOptions {
  /** The document /openapi.json answers (src/rest/openapi.ts). */
  document: Record<string, unknown>;
  /** The token filled in under Authorize: the demo token, in development only (the server passes none elsewhere). */
  demoToken?: () => string | undefined;
  log: FastifyBaseLogger;
}

/** GET /docs: the REST reference page (Swagger UI over /openapi.json), its assets from the npm package. */
export const apiReferencePlugin = fp<ApiReferenceOptions>(
  async (app, { document, demoToken, log }) => {
    for (const url of ['/docs', '/docs/']) {
      app.get(url, (_request, reply) => {
        const token = demoToken?.();
        // The page names unversioned files: it is small, and always asked again; with a token in it, never kept.
        return asPage(reply, { policy: CONTENT_SECURITY_POLICY, cacheControl: token ? 'no-store' : 'no-cache' }).send(pageHtml(token));
      });
    }
    const view = openApi30View(document);
    // A warning: the page still works, but slowly, until the translation learns what the document now says.
    if (!view) log.warn('the reference page shows /openapi.json as OpenAPI 3.1, which Swagger UI draws slowly: the document says something the 3.0 form cannot (src/docs/openapi-30-view.ts)');
    const shown = view ?? document;
    app.get(VIEW_PATH, (_request, reply) => reply.header('cache-control', 'no-cache').send(shown));
    const send = staticAssets({
      dir: ASSET_DIR,
      names: ASSETS,
      // The names carry no content hash (a new swagger-ui-dist keeps them): revalidate, answer 304 when unchanged.
      cacheControl: 'no-cache',
      missing: 'No reference page asset',
    });
    app.get<{ Params: { file: string } }>(`${ASSET_PATH}:file`, (request, reply) => send(request, reply, request.params.file));
  },
  { name: 'api-reference', dependencies: ['http-edge'] },
);
