import type { ApolloServerOptionsWithGateway } from '@apollo/server';
import type { FastifyBaseLogger } from 'fastify';
import { printSchema, type GraphQLSchema } from 'graphql';
import { LRUCache } from 'lru-cache';
import { compileOperation, type CompiledOperation } from './compiled-operation';

type GatewayInterface = ApolloServerOptionsWithGateway<Record<string, unknown>>['gateway'];
type SchemaListener = Parameters<GatewayInterface['onSchemaLoadOrUpdate']>[0];

/**
 * Compiled documents kept at once. Clients send a bounded set of distinct documents (the app's operations, the
 * IDE's, a trusted documents manifest: tens to a few hundred); 200 keeps those compiled while bounding what
 * clients sending ever-new documents can make the process hold. A document that left is compiled again (0.5 to
 * 9 ms for the REST routes' documents on this project's 2-core machine) when it comes back.
 */
export const COMPILED_DOCUMENTS_MAX = 200;

/**
 * GraphQL over HTTP executed by graphql-jit, through Apollo Server's one hook for an executor of its own, the
 * `gateway` option: Apollo still parses, validates, runs every plugin and formats errors; only the execution is ours
 * (docs/benchmarks.md, "GraphQL over HTTP compiled"). Apollo takes the schema from the `onSchemaLoadOrUpdate`
 * listener, called here during `load()`, whose answer gives only the executor.
 */
export function compiledExecutionGateway(schema: GraphQLSchema, log: FastifyBaseLogger, maxDocuments = COMPILED_DOCUMENTS_MAX): GatewayInterface {
  const listeners = new Set<SchemaListener>();
  const compiled = new LRUCache<string, CompiledOperation>({ max: maxDocuments });
  return {
    onSchemaLoadOrUpdate(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    load() {
      // The SDL is read only by Apollo's schema reporting, which is off.
      for (const listener of listeners) listener({ apiSchema: schema, coreSupergraphSdl: printSchema(schema) });
      return Promise.resolve({
        executor: async ({ request, queryHash, document, context }) => {
          const operationName = request.operationName ?? undefined;
          const key = `${queryHash}:${operationName ?? ''}`;
          let operation = compiled.get(key);
          if (!operation) {
            operation = compileOperation(schema, document, operationName);
            // Once per document (while it is kept): its name and hash find it, never its text or variables.
            if (operation.fallbackReason) log.warn({ operationName, queryHash, reason: operation.fallbackReason }, 'graphql-jit cannot compile this document: graphql-js executes it');
            compiled.set(key, operation);
          }
          return operation.run(context, request.variables);
        },
      });
    },
    stop() {
      compiled.clear();
      return Promise.resolve();
    },
  };
}
