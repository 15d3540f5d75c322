import fp from 'fastify-plugin';
import type { GraphQLSchema } from 'graphql';
import { registerRestRoutes, type RestDependencies } from './adapter';
import { buildOpenApi } from './openapi';
import { routeTable } from './routes';
import { registerOAuthCallbacks } from './routes/oauth-callbacks';

export interface RestOptions {
  schema: GraphQLSchema;
  runtime: RestDependencies['runtime'] & Parameters<typeof registerOAuthCallbacks>[1];
  /** PUBLIC_URL: the server written into /openapi.json. */
  publicUrl: string | undefined;
}

/** The documented REST paths (the route table, each running its GraphQL operation), the consent callbacks, and /openapi.json. */
export const restPlugin = fp<RestOptions>(
  async (app, { schema, runtime, publicUrl }) => {
    // The documented bodies are JSON: text/plain (Fastify reads it as a string) is refused 415 like any other type,
    // with the one accepted type named, rather than parsed and then refused as "not a JSON object" (docs/decisions.md).
    await app.register(async (rest) => {
      rest.removeContentTypeParser('text/plain');
      registerRestRoutes(rest, { runtime, schema }, routeTable);
    });
    registerOAuthCallbacks(app, runtime);
    const openApi = buildOpenApi(routeTable, schema, publicUrl);
    app.get('/openapi.json', (_request, reply) => reply.send(openApi));
  },
  { name: 'rest', dependencies: ['http-edge'] },
);
