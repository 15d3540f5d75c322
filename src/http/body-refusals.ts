import type { FastifyError, FastifyRequest } from 'fastify';

/**
 * What Fastify's refusals of a request body say, reworded to say what to do (docs/decisions.md, "Errors that say
 * what to do"): the media type a body must have, and the size it must stay under. Other refusals keep Fastify's
 * words, which are written for clients.
 */

/** The one media type our bodies are read in (REST and GraphQL alike). */
export const ACCEPTED_BODY_TYPE = 'application/json';

/** 1048576 -> "1 MiB", 65536 -> "64 KiB", 1500 -> "1.5 KiB". */
export function bytesInWords(bytes: number): string {
  for (const [unit, size] of [['MiB', 1024 * 1024], ['KiB', 1024]] as const) {
    if (bytes >= size) return `${Number((bytes / size).toFixed(1))} ${unit}`;
  }
  return `${bytes} bytes`;
}

/** The media type the request named, without parameters, or a phrase saying it named none. */
function sentType(request: FastifyRequest): string {
  const header = request.headers['content-type'];
  const type = typeof header === 'string' ? header.split(';')[0]!.trim() : '';
  return type ? type : 'no Content-Type';
}

/** The message of a body refusal, or undefined where Fastify's own is kept. */
export function bodyRefusalMessage(error: FastifyError, request: FastifyRequest): string | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return `Content-Type must be ${ACCEPTED_BODY_TYPE} (this request sent ${sentType(request)}); send the body as a JSON object`;
    case 'FST_ERR_CTP_BODY_TOO_LARGE': {
      const limit = request.routeOptions.bodyLimit;
      return `The request body is larger than the limit of ${limit} bytes (${bytesInWords(limit)}); send less in one request`;
    }
    default:
      return undefined;
  }
}
