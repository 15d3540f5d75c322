import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import { authenticate } from './auth/token.service';
import type { Context } from './graphql/context';
import { createLoaders } from './loaders';
import type { RequestSource } from './request-scope';
import type { Runtime } from './runtime';

/**
 * The one context factory: GraphQL over HTTP, over WebSocket (per operation) and REST all build their context
 * here. It lives outside graphql/ because it reaches the resources (tokens, loaders), which depend on graphql/.
 */
export interface ContextInput {
  runtime: Runtime;
  authorization: unknown;
  log: FastifyBaseLogger;
  source: RequestSource;
}

export async function createContext(input: ContextInput): Promise<Context> {
  const em = input.runtime.database.orm.em.fork() as EntityManager;
  const principal = await authenticate(em, input.authorization, input.runtime.principals);
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

