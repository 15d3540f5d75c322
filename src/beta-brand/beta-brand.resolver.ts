import { Arg, Args, Ctx, Field, Mutation, ObjectType, Query, Resolver } from 'type-graphql';
import { generateBetaConsentUrl } from '../oauth/beta-connection.service';
import type { Context } from '../graphql/context';
import { defineNode } from '../graphql/node';
import { ConnectionArgs, ConnectionType, sliceOfList, sliceRequestOf, toConnection, type Connection } from '../graphql/relay-connection';
import { BetaBrand } from './beta-brand.entity';
import { CreateBetaBrandInput, UpdateBetaBrandInput } from './beta-brand.inputs';
import { createBetaBrand, deleteBetaBrand, getBetaBrand, listBetaBrands, updateBetaBrand } from './beta-brand.service';

@ObjectType()
export class BetaConsentUrl {
  @Field({ description: 'Where to send the person for the beta consent.' })
  url!: string;

  @Field({ description: 'Your state, returned unchanged (empty when none was given).' })
  state!: string;
}

@ObjectType()
export class DeletedBetaBrand {
  @Field()
  segmentId!: string;

  @Field()
  deleted!: boolean;
}

export const BetaBrandConnection = ConnectionType(BetaBrand, 'BetaBrand');

/** A brand's key is its segmentId (brand-<uuid>): what `betaBrand(segmentId:)` takes. */
export const betaBrandNode = defineNode({
  name: 'BetaBrand',
  types: [BetaBrand],
  key: ['segmentId'],
  keyOf: (brand: BetaBrand) => ({ segmentId: brand.segmentId }),
  read: (ctx, key) => getBetaBrand(ctx, key.segmentId),
});

@Resolver(() => BetaBrand)
export class BetaBrandResolver {
  @Mutation(() => BetaConsentUrl, { description: 'Starts a beta consent. Organization token with beta API access.' })
  generateBetaConsentUrl(
    @Arg('redirectUrl') redirectUrl: string,
    @Arg('state', () => String, { nullable: true }) state: string | null,
    @Ctx() ctx: Context,
  ): Promise<BetaConsentUrl> {
    return generateBetaConsentUrl(ctx, { redirectUrl, state });
  }

  @Query(() => [BetaBrand], { description: 'The organization’s beta brands, oldest first.', deprecationReason: 'Use betaBrandsConnection.' })
  betaBrands(@Ctx() ctx: Context): Promise<BetaBrand[]> {
    return listBetaBrands(ctx);
  }

  @Query(() => BetaBrandConnection, { description: 'The organization’s beta brands, oldest first.' })
  async betaBrandsConnection(@Args() args: ConnectionArgs, @Ctx() ctx: Context): Promise<Connection<BetaBrand>> {
    const request = sliceRequestOf(args);
    return toConnection(sliceOfList(await listBetaBrands(ctx), request, 'asc'), args.after);
  }

  @Query(() => BetaBrand)
  betaBrand(@Arg('segmentId') segmentId: string, @Ctx() ctx: Context): Promise<BetaBrand> {
    return getBetaBrand(ctx, segmentId);
  }

  @Mutation(() => BetaBrand, { description: 'Creates a brand of a company linked by a beta consent; a job creates it at the provider.' })
  createBetaBrand(@Arg('input', () => CreateBetaBrandInput) input: CreateBetaBrandInput, @Ctx() ctx: Context): Promise<BetaBrand> {
    return createBetaBrand(ctx, input);
  }

  @Mutation(() => BetaBrand, { description: 'Changes a brand; a job pushes the change (betaSyncStatus).' })
  updateBetaBrand(
    @Arg('segmentId') segmentId: string,
    @Arg('input', () => UpdateBetaBrandInput) input: UpdateBetaBrandInput,
    @Ctx() ctx: Context,
  ): Promise<BetaBrand> {
    return updateBetaBrand(ctx, segmentId, input);
  }

  @Mutation(() => DeletedBetaBrand, { description: 'Deletes a brand without attached locations.' })
  deleteBetaBrand(@Arg('segmentId') segmentId: string, @Ctx() ctx: Context): Promise<DeletedBetaBrand> {
    return deleteBetaBrand(ctx, segmentId);
  }
}
