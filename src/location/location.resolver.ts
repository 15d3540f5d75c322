import { MaxLength } from 'class-validator';
import { Args, ArgsType, Ctx, Field, ID, Query, Resolver } from 'type-graphql';
import { ConnectionArgs, ConnectionType, sliceRequestOf, toConnection, type Connection } from '../graphql/connection';
import type { Context } from '../graphql/context';
import { Location } from './location.entity';
import { listLocations } from './location.service';

export const LocationConnection = ConnectionType(Location, 'Location');

@ArgsType()
export class LocationsArgs extends ConnectionArgs {
  @Field(() => ID, { nullable: true, description: 'Required with an organization token; ignored with an account token.' })
  accountId?: string | null;

  @Field(() => String, { nullable: true, description: "Only the location with this store code (reference id)." })
  @MaxLength(255, { message: 'storeCode must be at most 255 characters' })
  storeCode?: string | null;
}

@Resolver(() => Location)
export class LocationResolver {
  @Query(() => LocationConnection, { description: 'Locations of an account, in creation order.' })
  async locations(@Args() args: LocationsArgs, @Ctx() ctx: Context): Promise<Connection<Location>> {
    return toConnection(await listLocations(ctx, args, sliceRequestOf(args)), args.after);
  }
}
