import type { FastifyInstance } from 'fastify';
import type { GraphQLSchema } from 'graphql';
import type { Runtime } from '../runtime';

/** What GraphQL over Server-Sent Events uses: the schema, and the process's parts for the one context factory. */
export interface SseDependencies {
  schema: GraphQLSchema;
  runtime: Runtime;
  /** Production hides graphql-js's "Did you mean" hints (they name schema fields). */
  hideSuggestions: boolean;
}

/**
 * Subscriptions over Server-Sent Events (the graphql-sse protocol), beside graphql-ws: registered on the app before
 * /graphql. Issue 18, item 5: being built.
 */
export function registerGraphQLOverSse(_app: FastifyInstance, _dependencies: SseDependencies): void {
  // Filled in by the SSE work of issue 18.
}
