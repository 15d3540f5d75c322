import type { FastifyInstance } from 'fastify';
import { ruruHTML, type RuruClientConfig } from 'ruru/server';
import { getStaticFile } from 'ruru/static';

const STATIC_PATH = '/graphql-ide/';

/**
 * The GraphQL IDE (Ruru, a GraphiQL distribution) for browsers at GET /graphql. Its scripts are served from the
 * npm package, never a CDN, so it works with no internet. In development the demo token, when known, is
 * filled into the headers editor.
 */
export function registerIdeAssets(app: FastifyInstance): void {
  app.get(`${STATIC_PATH}*`, async (request, reply) => {
    const file = await getStaticFile({
      staticPath: STATIC_PATH,
      urlPath: request.url.split('?')[0]!,
      acceptEncoding: request.headers['accept-encoding'],
      disallowDevAssets: true,
    });
    if (!file) return reply.code(404).send({ error: 404, message: 'Not found' });
    return reply.headers(file.headers).send(file.content);
  });
}

/** A browser asking for a page (not a GraphQL client asking for JSON) gets the IDE at GET /graphql. */
export function wantsIde(accept: string | undefined, hasQuery: boolean): boolean {
  return !hasQuery && typeof accept === 'string' && accept.includes('text/html');
}

export function ideHtml(token: string | undefined): string {
  return ruruHTML({
    endpoint: '/graphql',
    staticPath: STATIC_PATH,
    // ruru-types marks every client option required; the IDE itself treats them as optional.
    clientConfig: {
      initialHeaders: JSON.stringify({ Authorization: `Bearer ${token ?? '<token from `npm run cli -- demo`>'}` }, null, 2),
      isHeadersEditorEnabled: true,
      initialQuery: `# Listings Gateway. Your organization and its accounts:\n{\n  organization {\n    id\n    name\n    accounts {\n      id\n      name\n      numberOfLocations\n    }\n  }\n}\n`,
    } as RuruClientConfig,
  });
}
