import { createHash } from 'node:crypto';
import path from 'node:path';
import fp from 'fastify-plugin';
import { asPage, pagePolicy } from '../http/browser-page';
import { staticAssets } from '../http/static-assets';

/**
 * The REST reference page at /docs: Swagger UI rendering /openapi.json, its files served from the npm package, never
 * a CDN (docs/openapi.md, "The reference page"). Public, like the document it shows: the page holds nothing else,
 * and the token typed under Authorize stays in the page.
 */

const ASSET_PATH = '/docs/assets/';

/** The package's folder (its `absolute-path.js` entry names it). */
const ASSET_DIR = path.dirname(require.resolve('swagger-ui-dist/package.json'));

/** The only files the page loads: the bundle (which needs no standalone preset for this layout) and its stylesheet. */
const ASSETS = new Set(['swagger-ui-bundle.js', 'swagger-ui.css']);

/**
 * The page's one inline script, allowed by its hash: Swagger UI on /openapi.json. No validator badge (it would ask
 * validator.swagger.io), no URL box (the page shows this service's document only), and try-it-out requests keep the
 * path's own base: the document's server.
 */
const INITIALIZER = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/openapi.json',
    dom_id: '#swagger-ui',
    deepLinking: true,
    validatorUrl: null,
    displayOperationId: true,
    defaultModelsExpandDepth: 1,
    presets: [SwaggerUIBundle.presets.apis],
    layout: 'BaseLayout',
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

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Listings Gateway · REST reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${ASSET_PATH}swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<noscript>The reference page needs JavaScript; the document itself is at <a href="/openapi.json">/openapi.json</a>.</noscript>
<script src="${ASSET_PATH}swagger-ui-bundle.js"></script>
<script>${INITIALIZER}</script>
</body>
</html>
`;

/** GET /docs: the REST reference page (Swagger UI over /openapi.json), its assets from the npm package. */
export const apiReferencePlugin = fp(
  async (app) => {
    for (const url of ['/docs', '/docs/']) {
      // The page names unversioned files: it is small, and always asked again.
      app.get(url, (_request, reply) => asPage(reply, { policy: CONTENT_SECURITY_POLICY, cacheControl: 'no-cache' }).send(PAGE));
    }
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
