import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { Principal } from './access/principal';
import type { Context } from './graphql/context';
import { RequestLoaders } from './db/request-loaders';
import type { RequestSource } from './request-scope';
import type { Runtime } from './runtime';

/**
 * The one context factory: GraphQL over HTTP, over WebSocket (per operation) and REST all build their context
 * here. It lives outside graphql/ because it reaches the resources (tokens, loaders), which depend on graphql/.
 */
export type ContextInput = {
  runtime: Runtime;
  log: FastifyBaseLogger;
  source: RequestSource;
} & (
  | { authorization: unknown }
  /**
   * The service reading on an organization's behalf, with no request to authenticate (webhook bodies are the
   * organization's GET /events items: src/rest/event-presenter.ts), in the entity manager given (its transaction).
   */
  | { principal: Principal; em: EntityManager }
);

export async function createContext(input: ContextInput): Promise<Context> {
  // Forked on first use: a subscription that joins a running group (src/graphql/subscription-groups.ts) and a
  // token served from the cache never need one.
  let em: EntityManager | undefined = 'em' in input ? input.em : undefined;
  const emOf = () => (em ??= input.runtime.database.orm.em.fork());
  const principal = 'principal' in input ? input.principal : await input.runtime.authentication.authenticate(emOf, input.authorization);
  let loaders: RequestLoaders | undefined;
  return {
    get em() {
      return emOf();
    },
    principal,
    get loaders() {
      return (loaders ??= new RequestLoaders(emOf));
    },
    log: input.log,
    source: input.source,
    runtime: input.runtime,
    responseHeaders: new Map(),
  };
}

