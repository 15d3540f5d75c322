import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

const clip = (url: string) => (url.length > 200 ? `${url.slice(0, 200)}…` : url);

/**
 * Fastify's per-request log lines, made one line per request (method, url, status, time) at a level of our
 * choosing: debug in development, where a terminal is for reading, info elsewhere.
 */
export class RequestLogController extends LogController {
  constructor(private readonly level: 'debug' | 'info') {
    super();
  }

  override incomingRequest(): void {
    // The completion line says everything the request line would.
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    const fields = { method: request.method, url: request.url, statusCode: reply.statusCode, responseTime: Math.round(reply.elapsedTime) };
    // The message reads on its own on a terminal; the fields are there for machines.
    const message = `${fields.method} ${clip(fields.url)} ${fields.statusCode} ${fields.responseTime} ms`;
    if (error) reply.log.error({ ...fields, err: error }, message);
    else reply.log[this.level](fields, message);
  }

  override routeNotFound(): void {
    // Our 404/405 handler answers; the completion line records it.
  }
}
