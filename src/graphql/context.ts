import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import { authenticate } from '../auth/token.service';
import { createLoaders } from '../loaders';
import type { RequestScope, RequestSource } from '../request-scope';
import type { Runtime } from '../runtime';

/**
 * What a resolver gets: the transport-free request scope services take, plus what only transports use. Built per
 * request (or per WebSocket operation) by `createContext` only, for GraphQL and for REST (which runs GraphQL).
 */
export interface Context extends RequestScope {
  /** Headers resolvers derive from what services report (rate limits, idempotent replay); both transports send them. */
  responseHeaders: Map<string, string>;
}

export interface ContextInput {
  runtime: Runtime;
  authorization: unknown;
  log: FastifyBaseLogger;
  source: RequestSource;
}

export async function createContext(input: ContextInput): Promise<Context> {
  const em = input.runtime.database.orm.em.fork() as EntityManager;
  const principal = await authenticate(em, input.authorization);
  return {
    em,
    principal,
    loaders: createLoaders(em),
    log: input.log,
    source: input.source,
    runtime: input.runtime,
    responseHeaders: new Map(),
  };
}

/** Adds headers for the HTTP response of this operation (both transports send `responseHeaders`). */
export function addResponseHeaders(ctx: Context, headers: Map<string, string>): void {
  for (const [name, value] of headers) ctx.responseHeaders.set(name, value);
}
