import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import fp from 'fastify-plugin';
import { asPage, pagePolicy } from '../http/browser-page';
import { isServableAsset, staticAssets } from '../http/static-assets';
import { sendHttpError } from '../http/transport-errors';

/**
 * Where the build puts the bundle (dashboard/build.mjs): beside this file's compiled folder, dist/src/dashboard ->
 * dist/dashboard (dist-dev likewise). Whoever runs the sources themselves (the tests) names the folder.
 */
export const BUILT_DASHBOARD_DIR = path.resolve(__dirname, '../../dashboard');

const ASSET_PATH = '/dashboard/assets/';

/** What the build wrote: the hashed names of the one script and the one stylesheet. */
interface Manifest {
  script: string;
  stylesheet: string;
}

/**
 * The page loads its two files from here and talks to /graphql on the same origin (HTTP and WebSocket), nothing
 * else: no CDN, no inline script or style, no other host.
 */
const CONTENT_SECURITY_POLICY = pagePolicy({ script: "'self'", style: "'self'", connect: "'self'", img: "'self' data:" });

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (char) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[char]!);

function pageHtml(manifest: Manifest, demoToken: string | undefined): string {
  const token = demoToken ? ` data-demo-token="${escapeHtml(demoToken)}"` : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Listings Gateway · operations</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${ASSET_PATH}${manifest.stylesheet}">
<script type="module" src="${ASSET_PATH}${manifest.script}"></script>
</head>
<body>
<div id="app"${token}></div>
<noscript>The dashboard needs JavaScript.</noscript>
</body>
</html>
`;
}

function readManifest(dir: string): Manifest {
  const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Partial<Manifest>;
  if (typeof manifest.script !== 'string' || typeof manifest.stylesheet !== 'string') throw new Error(`${dir}/manifest.json names no script or stylesheet`);
  return { script: manifest.script, stylesheet: manifest.stylesheet };
}

export interface DashboardOptions {
  /** The built bundle's folder (default: the one the build puts beside this file). */
  dir?: string;
  /** The token the sign-in field is filled with (the demo token, in development only). */
  demoToken?: () => string | undefined;
  log: FastifyBaseLogger;
}

/**
 * The live operations dashboard (docs/operations.md): GET /dashboard answers the page, which holds no data and so
 * needs no token; every request the page makes carries the token the person signs in with. The bundle is built with
 * the server (npm run build); a server whose build has none answers 503 at /dashboard, saying so.
 */
export const dashboardPlugin = fp<DashboardOptions>(
  async (app, options) => {
    const dir = options.dir ?? BUILT_DASHBOARD_DIR;
    let manifest: Manifest | undefined;
    let assetNames: string[] = [];
    try {
      manifest = readManifest(dir);
      assetNames = readdirSync(path.join(dir, 'assets')).filter(isServableAsset);
    } catch (error) {
      options.log.warn({ err: error, dir }, 'the dashboard is not built: /dashboard answers 503 (npm run build builds it)');
    }

    const page = (demoToken: string | undefined) => (manifest ? pageHtml(manifest, demoToken) : undefined);
    for (const url of ['/dashboard', '/dashboard/']) {
      app.get(url, (request, reply) => {
        const html = page(options.demoToken?.());
        if (!html) return sendHttpError(request, reply, 503, 'The dashboard was not built with this server (npm run build builds it)');
        // The page names the current bundle: never kept, so a new build is picked up at the next load.
        return asPage(reply, { policy: CONTENT_SECURITY_POLICY, cacheControl: 'no-store' }).send(html);
      });
    }

    const send = staticAssets({
      dir: path.join(dir, 'assets'),
      names: new Set(assetNames),
      // The names carry their content's hash: a name always means the same bytes.
      cacheControl: 'public, max-age=31536000, immutable',
      missing: 'No dashboard asset',
    });
    app.get<{ Params: { file: string } }>(`${ASSET_PATH}:file`, (request, reply) => send(request, reply, request.params.file));
  },
  { name: 'dashboard', dependencies: ['http-edge'] },
);
