import type { Server } from 'node:http';
import type { Context } from './context';

/** The one context factory (src/context.ts `createContext`), as a transport outside Apollo calls it: per operation, from the caller's Authorization. */
export type ContextFactory = (authorization: unknown) => Promise<Context>;

/**
 * The context factory of each HTTP server, for the transports that build contexts outside Apollo. src/graphql/
 * cannot import src/context.ts (it reaches the resources, which depend on src/graphql/: a cycle between folders),
 * so the composition root (src/server.ts) hands the factory over: graphql-ws receives it in its dependencies and
 * provides it here for its server; GraphQL over SSE, registered on the same server with the process's runtime
 * only, takes it from here for each request. One factory per server, so both transports authenticate and build
 * contexts alike.
 */
const factories = new WeakMap<Server, ContextFactory>();

export function provideContextFactory(server: Server, factory: ContextFactory): void {
  factories.set(server, factory);
}

/** The server's context factory; undefined until its graphql-ws transport is attached (before the server listens). */
export function contextFactoryOf(server: Server): ContextFactory | undefined {
  return factories.get(server);
}
