import { readdirSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import { ruruHTML, type RuruClientConfig } from 'ruru/server';
import { isServableAsset, staticAssets } from '../http/static-assets';

const STATIC_PATH = '/graphql-ide/';

/**
 * The package's `static/` folder: the files Ruru's default staticPath would load from unpkg. ruru's `exports`
 * hide the folder, so it is found next to the `ruru/static` module (dist/static.js -> ../static).
 *
 * Not served with `getStaticFile` from 'ruru/static': it loads its bundle with a dynamic `import()`, which
 * fails inside Jest's VM (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING_FLAG), so the tests could not exercise it.
 */
const ASSET_DIR = path.join(path.dirname(require.resolve('ruru/static')), '..', 'static');

/**
 * The GraphQL IDE (Ruru, a GraphiQL distribution) for browsers at GET /graphql. Its scripts are served from the
 * npm package, never a CDN, so it works with no internet. In development the demo token, when known, is
 * filled into the headers editor.
 */
function registerIdeAssets(app: FastifyInstance): void {
  // Source maps are left out, as Ruru does with disallowDevAssets.
  const send = staticAssets({
    dir: ASSET_DIR,
    names: new Set(readdirSync(ASSET_DIR).filter(isServableAsset)),
    // The names carry no content hash (ruru.js stays ruru.js across versions): revalidate, answer 304 when unchanged.
    cacheControl: 'no-cache',
    missing: 'No IDE asset',
  });
  app.get<{ Params: { file: string } }>(`${STATIC_PATH}:file`, (request, reply) => send(request, reply, request.params.file));
}

/** A browser asking for a page (not a GraphQL client asking for JSON) gets the IDE at GET /graphql. */
function wantsIde(accept: string | undefined, hasQuery: boolean): boolean {
  return !hasQuery && typeof accept === 'string' && accept.includes('text/html');
}

/** The document the IDE opens with: current fields only (none @deprecated; test/ide.test.ts checks it against the schema). */
const IDE_INITIAL_QUERY = `# Listings Gateway. Your organization and its first accounts (the REST reference is at /docs):
{
  organization {
    id
    name
    accountsConnection(first: 20) {
      edges {
        node {
          id
          name
          numberOfLocations
        }
      }
      pageInfo {
        hasNextPage
        endCursor
      }
    }
  }
}
`;

function ideHtml(token: string | undefined): string {
  return ruruHTML({
    endpoint: '/graphql',
    staticPath: STATIC_PATH,
    // ruru-types marks every client option required; the IDE itself treats them as optional.
    clientConfig: {
      initialHeaders: JSON.stringify({ Authorization: `Bearer ${token ?? '<token from `npm run cli -- demo`>'}` }, null, 2),
      isHeadersEditorEnabled: true,
      initialQuery: IDE_INITIAL_QUERY,
    } as RuruClientConfig,
  });
}

/** The IDE's assets, and its page for a browser at GET /graphql (after the edge's hooks: a stopping server's 503). */
export const idePlugin = fp<{ demoToken?: () => string | undefined }>(
  async (app, { demoToken }) => {
    registerIdeAssets(app);
    app.addHook('onRequest', async (request, reply) => {
      const [pathname, search] = request.url.split('?');
      if (request.method !== 'GET' || pathname !== '/graphql' || !wantsIde(request.headers.accept, Boolean(search && /(^|&)query=/.test(search)))) return undefined;
      return reply.type('text/html; charset=utf-8').send(ideHtml(demoToken?.()));
    });
  },
  { name: 'ide', dependencies: ['http-edge'] },
);
