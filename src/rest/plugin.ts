import fp from 'fastify-plugin';
import type { GraphQLSchema } from 'graphql';
import { registerRestRoutes, type RestDependencies } from './adapter';
import { routeTable } from './routes';
import { registerOAuthCallbacks } from './routes/oauth-callbacks';

export interface RestOptions {
  schema: GraphQLSchema;
  runtime: RestDependencies['runtime'] & Parameters<typeof registerOAuthCallbacks>[1];
  /** What /openapi.json answers (src/rest/openapi.ts), built by the server, which the reference page shows too. */
  openApi: Record<string, unknown>;
}

/** The documented REST paths (the route table, each running its GraphQL operation), the consent callbacks, and /openapi.json. */
export const restPlugin = fp<RestOptions>(
  async (app, { schema, runtime, openApi }) => {
    // The documented bodies are JSON: text/plain (Fastify reads it as a string) is refused 415 like any other type,
    // with the one accepted type named, rather than parsed and then refused as "not a JSON object" (docs/decisions.md).
    await app.register(async (rest) => {
      rest.removeContentTypeParser('text/plain');
      registerRestRoutes(rest, { runtime, schema }, routeTable);
    });
    registerOAuthCallbacks(app, runtime);
    app.get('/openapi.json', (_request, reply) => reply.send(openApi));
  },
  { name: 'rest', dependencies: ['http-edge'] },
);
