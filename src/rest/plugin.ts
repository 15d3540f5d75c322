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
    registerRestRoutes(app, { runtime, schema }, routeTable);
    registerOAuthCallbacks(app, runtime);
    app.get('/openapi.json', (_request, reply) => reply.send(openApi));
  },
  { name: 'rest', dependencies: ['http-edge'] },
);
