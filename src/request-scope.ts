import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import type { Principal } from './access/principal';
import type { RequestLoaders } from './db/request-loaders';

/**
 * Where a request came from, as the product counts it: the documented REST paths are the external API, GraphQL is
 * the app (the dashboards). Posts record it as their source.
 */
export type RequestSource = 'external_api' | 'app';

/**
 * What a service may use of one request, whatever transport carried it: its own entity manager, who is calling,
 * the per-request loaders, a logger, where it came from, and the process parts it declares (`D`: `{ clock: Clock }`,
 * never the whole process). Services take this and return data or throw DomainErrors; they never see headers,
 * GraphQL or HTTP. The one context factory (src/context.ts) builds it, for GraphQL over HTTP and WebSocket and for
 * REST alike.
 */
export interface RequestScope<D extends object = object> {
  em: EntityManager;
  principal: Principal | null;
  loaders: RequestLoaders;
  log: FastifyBaseLogger;
  source: RequestSource;
  runtime: D;
}
