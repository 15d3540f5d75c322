import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlibConstants } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { ruruHTML, type RuruClientConfig } from 'ruru/server';

const STATIC_PATH = '/graphql-ide/';

/**
 * The package's `static/` folder: the files Ruru's default staticPath would load from unpkg. ruru's `exports`
 * hide the folder, so it is found next to the `ruru/static` module (dist/static.js -> ../static).
 *
 * Not served with `getStaticFile` from 'ruru/static': it loads its bundle with a dynamic `import()`, which
 * fails inside Jest's VM (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING_FLAG), so the tests could not exercise it.
 */
const ASSET_DIR = path.join(path.dirname(require.resolve('ruru/static')), '..', 'static');

/** What the page and its scripts load (source maps are left out, as Ruru does with disallowDevAssets). */
const CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.ttf': 'font/ttf',
};

const compress = promisify(brotliCompress);

interface Variant {
  content: Buffer;
  etag: string;
}

interface Asset {
  contentType: string;
  plain: Variant;
  /** Made on the first request that accepts br; quality 5 takes tens of milliseconds for the largest file. */
  br?: Promise<Variant>;
}

/**
 * The GraphQL IDE (Ruru, a GraphiQL distribution) for browsers at GET /graphql. Its scripts are served from the
 * npm package, never a CDN, so it works with no internet. In development the demo token, when known, is
 * filled into the headers editor.
 */
export function registerIdeAssets(app: FastifyInstance): void {
  // A fixed list of names: a request can only ever read one of these files (no path in the parameter).
  const names = new Set(readdirSync(ASSET_DIR).filter((name) => path.extname(name) in CONTENT_TYPES));
  const assets = new Map<string, Promise<Asset>>();

  const load = (name: string): Promise<Asset> => {
    let asset = assets.get(name);
    if (!asset) {
      asset = readFile(path.join(ASSET_DIR, name)).then((content) => ({
        contentType: CONTENT_TYPES[path.extname(name)]!,
        plain: { content, etag: `"${createHash('sha256').update(content).digest('base64url')}"` },
      }));
      // A failed read is not cached: the next request tries again.
      asset.catch(() => assets.delete(name));
      assets.set(name, asset);
    }
    return asset;
  };

  app.get<{ Params: { file: string } }>(`${STATIC_PATH}:file`, async (request, reply) => {
    const { file } = request.params;
    if (!names.has(file)) return reply.code(404).send({ error: 404, message: `No IDE asset ${file}` });
    const asset = await load(file);
    let variant = asset.plain;
    if (/\bbr\b/i.test(String(request.headers['accept-encoding'] ?? ''))) {
      asset.br ??= compress(asset.plain.content, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 5 } }).then(
        (content) => ({ content, etag: `${asset.plain.etag.slice(0, -1)}-br"` }),
      );
      variant = await asset.br;
      reply.header('content-encoding', 'br');
    }
    // The names carry no content hash (ruru.js stays ruru.js across versions): revalidate, answer 304 when unchanged.
    reply.header('content-type', asset.contentType).header('etag', variant.etag);
    reply.header('cache-control', 'no-cache').header('vary', 'accept-encoding');
    if (request.headers['if-none-match'] === variant.etag) return reply.code(304).send();
    return reply.send(variant.content);
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
