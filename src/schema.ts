import 'reflect-metadata';
import { validate, type ValidationError } from 'class-validator';
import { GraphQLScalarType, type GraphQLSchema } from 'graphql';
import { DateTimeISOResolver } from 'graphql-scalars';
import { buildSchema } from 'type-graphql';
import { AccountResolver } from './account/account.resolver';
import { OrganizationAccountsResolver } from './account/organization-accounts.resolver';
import { TokenResolver } from './auth/token.resolver';
import { BetaBrandResolver } from './beta-brand/beta-brand.resolver';
import { CitationResolver } from './citation/citation.resolver';
import { CompetitorScanResolver } from './competitor-scan/competitor-scan.resolver';
import { AlphaConnectionResolver } from './connection/alpha-connection.resolver';
import { ReviewResolver } from './review/review.resolver';
import { LocationUpdateJobResolver } from './location/location-update-job.resolver';
import { LocationResolver } from './location/location.resolver';
import { OrganizationResolver } from './organization/organization.resolver';
import { PostResolver } from './post/post.resolver';
import { subscriptionPubSub } from './events/graphql-pubsub';
import { DomainError } from './errors/domain-error';

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
] as const;

function describe(errors: ValidationError[], prefix = ''): string[] {
  return errors.flatMap((error) => [
    ...Object.values(error.constraints ?? {}).map((message) => (prefix ? `${prefix}.${message}` : message)),
    ...describe(error.children ?? [], prefix ? `${prefix}.${error.property}` : error.property),
  ]);
}

/** Argument validation (class-validator) fails as BAD_USER_INPUT naming every offending field. */
async function validateArgument(value: unknown): Promise<void> {
  const values = Array.isArray(value) ? value : [value];
  for (const item of values) {
    if (item === null || typeof item !== 'object') continue;
    const errors = await validate(item, { forbidUnknownValues: false, skipMissingProperties: true });
    if (errors.length > 0) throw DomainError.badInput(describe(errors).join('; '));
  }
}

let built: Promise<GraphQLSchema> | undefined;

/** The schema, built once per process from the resolver classes. */
export function gatewaySchema(): Promise<GraphQLSchema> {
  built ??= buildSchema({
    resolvers,
    scalarsMap: [{ type: Date, scalar: DateTimeScalar }],
    validateFn: validateArgument,
    pubSub: subscriptionPubSub,
  });
  return built;
}
