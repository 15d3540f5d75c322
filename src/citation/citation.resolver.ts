import { Arg, Ctx, Field, ID, Mutation, ObjectType, Resolver } from 'type-graphql';
import { withLimitHeaders, type Context } from '../graphql/context';
import { disableCitations, type CitationsDisabled } from './citation.service';

@ObjectType()
export class CitationsDisabledPayload implements CitationsDisabled {
  @Field()
  message!: string;

  @Field(() => ID)
  locationId!: string;

  @Field({ description: 'Whether the citations were removed.' })
  removed!: boolean;
}

@Resolver()
export class CitationResolver {
  @Mutation(() => CitationsDisabledPayload, {
    description: 'Disables the citations of a location (only from ACTIVE, one request at a time). Needs citations API access.',
  })
  async disableCitations(
    @Arg('locationId', () => ID) locationId: string,
    @Arg('accountId', () => ID, { nullable: true }) accountId: string | null,
    @Ctx() ctx: Context,
  ): Promise<CitationsDisabledPayload> {
    return withLimitHeaders(ctx, await disableCitations(ctx, { accountId, locationId }));
  }
}
