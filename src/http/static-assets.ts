import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlibConstants } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { sendHttpError } from './transport-errors';

/** The types of the files browser pages load from us (the IDE's and the dashboard's). */
export const ASSET_CONTENT_TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.ttf': 'font/ttf',
};

export function isServableAsset(name: string): boolean {
  return path.extname(name) in ASSET_CONTENT_TYPES;
}

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

export interface StaticAssetOptions {
  dir: string;
  /** The only files that can be answered: a request never names a path, only one of these. */
  names: ReadonlySet<string>;
  /** `no-cache` for names that stay the same across versions; a long max-age for content-hashed names. */
  cacheControl: string;
  /** Starts the 404's message: `No IDE asset`. */
  missing: string;
}

/**
 * Files of one folder as browsers load them: their content type, a strong ETag (304 when it matches), and brotli
 * when the browser accepts it. Each file is read once, when first asked for.
 */
export function staticAssets(options: StaticAssetOptions): (request: FastifyRequest, reply: FastifyReply, name: string) => Promise<FastifyReply> {
  const assets = new Map<string, Promise<Asset>>();
  const load = (name: string): Promise<Asset> => {
    let asset = assets.get(name);
    if (!asset) {
      asset = readFile(path.join(options.dir, name)).then((content) => ({
        contentType: ASSET_CONTENT_TYPES[path.extname(name)]!,
        plain: { content, etag: `"${createHash('sha256').update(content).digest('base64url')}"` },
      }));
      // A failed read is not cached: the next request tries again.
      asset.catch(() => assets.delete(name));
      assets.set(name, asset);
    }
    return asset;
  };

  return async (request, reply, name) => {
    if (!options.names.has(name)) return sendHttpError(request, reply, 404, `${options.missing} ${name}`);
    const asset = await load(name);
    let variant = asset.plain;
    if (/\bbr\b/i.test(String(request.headers['accept-encoding'] ?? ''))) {
      asset.br ??= compress(asset.plain.content, { params: { [zlibConstants.BROTLI_PARAM_QUALITY]: 5 } }).then(
        (content) => ({ content, etag: `${asset.plain.etag.slice(0, -1)}-br"` }),
      );
      variant = await asset.br;
      reply.header('content-encoding', 'br');
    }
    reply.header('content-type', asset.contentType).header('etag', variant.etag);
    reply.header('cache-control', options.cacheControl).header('vary', 'accept-encoding');
    if (request.headers['if-none-match'] === variant.etag) return reply.code(304).send();
    return reply.send(variant.content);
  };
}
