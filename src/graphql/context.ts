import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { Principal } from '../auth/principal';
import { authenticate } from '../auth/token.service';
import type { Runtime } from '../runtime';
import { createLoaders, type Loaders } from './loaders';

/** Which surface an operation arrived by; posts record it as their source. */
export type Surface = 'graphql' | 'rest';

/** Everything a resolver may use, built per request (or per WebSocket operation) by `createContext` only. */
export interface Context {
  em: EntityManager;
  principal: Principal | null;
  loaders: Loaders;
  log: FastifyBaseLogger;
  surface: Surface;
  /** The process-wide parts services use: configuration, job engine, event bus, provider clients. */
  runtime: Runtime;
  /** Headers the operation wants on the HTTP response (rate limits, idempotent replay); both transports send them. */
  responseHeaders: Map<string, string>;
}

export interface ContextInput {
  runtime: Runtime;
  authorization: unknown;
  log: FastifyBaseLogger;
  surface: Surface;
}

export async function createContext(input: ContextInput): Promise<Context> {
  const em = input.runtime.database.orm.em.fork() as EntityManager;
  const principal = await authenticate(em, input.authorization);
  return {
    em,
    principal,
    loaders: createLoaders(em),
    log: input.log,
    surface: input.surface,
    runtime: input.runtime,
    responseHeaders: new Map(),
  };
}
