import 'reflect-metadata';
import { GraphQLScalarType, type GraphQLSchema } from 'graphql';
import { DateTimeISOResolver } from 'graphql-scalars';
import { buildSchema } from 'type-graphql';
import { subscriptionPubSub } from './events/graphql-pubsub';
import { validateArgument } from './graphql/argument-rules';
import { defineComposedNodes, NodeResolver } from './graphql/node';
import { useSynchronousTypeResolution } from './graphql/type-resolution';
import { composition } from './modules';

/** `DateTime`, serialized as an ISO 8601 string with milliseconds (graphql-scalars' DateTime yields Date objects). */
export const DateTimeScalar = new GraphQLScalarType({ ...DateTimeISOResolver.toConfig(), name: 'DateTime' });

let built: Promise<GraphQLSchema> | undefined;

/** The schema, built once per process from the modules' resolvers. */
export function gatewaySchema(): Promise<GraphQLSchema> {
  built ??= Promise.resolve().then(() => {
    defineComposedNodes();
    return buildSchema({
      // `node(nodeId:)` and every record's `nodeId`: the records' resolvers define how each is refetched.
      resolvers: [NodeResolver, ...composition.resolvers],
      scalarsMap: [{ type: Date, scalar: DateTimeScalar }],
      validateFn: validateArgument,
      pubSub: subscriptionPubSub,
    });
  }).then((schema) => {
    useSynchronousTypeResolution(schema);
    return schema;
  });
  return built;
}
