import { ActivityLogResolver } from './activity-log/activity-log.resolver';
import 'reflect-metadata';
import { GraphQLScalarType, type GraphQLSchema } from 'graphql';
import { DateTimeISOResolver } from 'graphql-scalars';
import { buildSchema } from 'type-graphql';
import { AccountResolver } from './account/account.resolver';
import {
  AccountWorkResolver,
  AsyncWorkResolver,
  BetaBrandWorkResolver,
  CompetitorScanWorkResolver,
  LocationUpdateWorkResolver,
  LocationWorkResolver,
  PostWorkResolver,
  ReviewWorkResolver,
} from './async-work/async-work.resolver';
import { OrganizationAccountsResolver } from './account/organization-accounts.resolver';
import { TokenResolver } from './auth/token.resolver';
import { BetaBrandResolver } from './beta-brand/beta-brand.resolver';
import { CitationResolver } from './citation/citation.resolver';
import { CompetitorScanResolver } from './competitor-scan/competitor-scan.resolver';
import { AlphaConnectionResolver } from './oauth/alpha-connection.resolver';
import { ReviewResolver } from './review/review.resolver';
import { LocationUpdateJobResolver } from './location/location-update-job.resolver';
import { LocationResolver } from './location/location.resolver';
import { OrganizationResolver } from './organization/organization.resolver';
import { PostResolver } from './post/post.resolver';
import { WebhookDeliveryResolver, WebhookEndpointResolver } from './webhook/webhook.resolver';
import { subscriptionPubSub } from './events/graphql-pubsub';
import { validateArgument } from './graphql/argument-rules';
import { NodeResolver } from './graphql/node';
import { useSynchronousTypeResolution } from './graphql/type-resolution';

/** `DateTime`, serialized as an ISO 8601 string with milliseconds (graphql-scalars' DateTime yields Date objects). */
export const DateTimeScalar = new GraphQLScalarType({ ...DateTimeISOResolver.toConfig(), name: 'DateTime' });

export const resolvers = [
  OrganizationResolver,
  OrganizationAccountsResolver,
  AccountResolver,
  LocationResolver,
  LocationUpdateJobResolver,
  CitationResolver,
  ReviewResolver,
  AlphaConnectionResolver,
  BetaBrandResolver,
  CompetitorScanResolver,
  TokenResolver,
  PostResolver,
  AsyncWorkResolver,
  PostWorkResolver,
  LocationWorkResolver,
  LocationUpdateWorkResolver,
  AccountWorkResolver,
  CompetitorScanWorkResolver,
  BetaBrandWorkResolver,
  ReviewWorkResolver,
  ActivityLogResolver,
  // `node(nodeId:)` and every record's `nodeId`: the records' resolvers above define how each is refetched.
  NodeResolver,
  WebhookEndpointResolver,
  WebhookDeliveryResolver,
] as const;

let built: Promise<GraphQLSchema> | undefined;

/** The schema, built once per process from the resolver classes. */
export function gatewaySchema(): Promise<GraphQLSchema> {
  built ??= buildSchema({
    resolvers,
    scalarsMap: [{ type: Date, scalar: DateTimeScalar }],
    validateFn: validateArgument,
    pubSub: subscriptionPubSub,
  }).then((schema) => {
    useSynchronousTypeResolution(schema);
    return schema;
  });
  return built;
}
