import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { isDependencyUnavailable, UNAVAILABLE_MESSAGE, UNAVAILABLE_RETRY_AFTER_SECONDS } from '../errors/dependency-unavailable';
import { errorCodeForStatus, INTERNAL_ERROR_MESSAGE, type ErrorCode, type RestErrorShape } from '../errors/domain-error';
import { bodyRefusalMessage } from './body-refusals';
import { restErrorBody } from './error-body';
import { limitHeaders } from './limit-headers';
import { newRequestId, REQUEST_ID_HEADER } from './request-id';

/**
 * Every answer the HTTP server gives outside the GraphQL and REST adapters (Fastify's and Node's own refusals,
 * unknown paths and methods, a stopping server) in a documented shape: the document's generic
 * `{error: <status>, message}` on REST paths, a GraphQL error list with `extensions.code` on /graphql.
 */

export function isGraphQLPath(url: string): boolean {
  const pathname = url.split('?')[0];
  // /graphql/stream: GraphQL over Server-Sent Events (src/graphql/sse.ts).
  return pathname === '/graphql' || pathname === '/graphql/' || pathname === '/graphql/stream';
}

/** `shape`: where the route's document writes this status in another of its shapes (src/rest/route.ts `errorShapes`). */
export function errorBody(url: string, code: ErrorCode, message: string, shape?: RestErrorShape): { status: number; body: Record<string, unknown> } {
  const rendered = restErrorBody(code, message, {}, shape);
  if (!isGraphQLPath(url)) return rendered;
  return { status: rendered.status, body: { errors: [{ message, extensions: { code } }] } };
}

export function sendHttpError(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  message: string,
  headers: Record<string, string> = {},
  shape?: RestErrorShape,
): FastifyReply {
  // The catalogue's status: a refusal it has no code for (an unusual 4xx) answers as the code it maps to, so the
  // status and the body's `error` always agree.
  const rendered = errorBody(request.url, errorCodeForStatus(status), message, shape);
  // Also here: a refusal before the hooks ran (frameworkErrors) still names its request.
  return reply.code(rendered.status).headers({ ...headers, [REQUEST_ID_HEADER]: request.id }).type('application/json; charset=utf-8').send(rendered.body);
}

/** Fastify's messages of its 4xx refusals are written for clients; a 5xx never shows its internals. */
export function messageForFastifyError(error: FastifyError, status: number): string {
  return status >= 500 ? INTERNAL_ERROR_MESSAGE : error.message;
}

/**
 * Errors Fastify raises before a handler runs (a body that is not JSON, too large, of an unsupported type), and
 * whatever escapes a handler (a 500, logged). `shapeOf` gives the shape a route writes a status in, where it has one.
 */
export function handleFastifyError(
  error: FastifyError,
  request: FastifyRequest,
  reply: FastifyReply,
  shapeOf: (status: number) => RestErrorShape | undefined = () => undefined,
): FastifyReply {
  if (isDependencyUnavailable(error)) {
    request.log.warn({ err: error }, 'a dependency is unavailable');
    return sendHttpError(request, reply, 503, UNAVAILABLE_MESSAGE, Object.fromEntries(limitHeaders({ retryAfterSeconds: UNAVAILABLE_RETRY_AFTER_SECONDS })), shapeOf(503));
  }
  const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
  if (status === 500) request.log.error({ err: error }, 'unexpected error');
  const message = (status < 500 ? bodyRefusalMessage(error, request) : undefined) ?? messageForFastifyError(error, status);
  return sendHttpError(request, reply, status, message, {}, shapeOf(status));
}

/** Fastify's router refusals (bad percent-encoding, over-long path parameter), in the documented shape. */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const status = error.statusCode && error.statusCode >= 400 ? error.statusCode : 400;
  void sendHttpError(request, reply, status, messageForFastifyError(error, status));
}

/**
 * Requests Node's HTTP parser refuses before any route sees them (headers over 16 KB, malformed request lines,
 * time-outs). The socket gets one JSON answer in the generic shape and is closed.
 */
export function clientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const message =
    status === 431
      ? 'Request headers are larger than 16 KB'
      : status === 408
        ? 'The request did not arrive in time'
        : 'The request is not valid HTTP';
  const body = JSON.stringify(restErrorBody(errorCodeForStatus(status), message).body);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `${REQUEST_ID_HEADER}: ${newRequestId()}\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}
