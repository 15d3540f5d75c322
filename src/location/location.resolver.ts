import { Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { ConnectionType, sliceRequestOf, toConnection, type Connection } from '../graphql/relay-connection';
import { withLimitHeaders, type Context } from '../graphql/context';
import { defineNode } from '../graphql/node';
import { PageType, type Page } from '../graphql/page';
import { Location } from './location.entity';
import { CreateLocationArgs, LocationRefArgs, LocationsArgs, LocationsPageArgs } from './location.inputs';
import { createLocation, getLocation, listLocations, listLocationsPage } from './location.service';

export const LocationConnection = ConnectionType(Location, 'Location');

export const LocationPage = PageType(Location, 'LocationPage', 'locations', { endsEarly: true });

/** A location's key is its account and its id: what `location(accountId:, id:)` takes. */
export const locationNode = defineNode({
  name: 'Location',
  types: [Location],
  key: ['accountId', 'id'],
  keyOf: (location: Location) => ({ accountId: location.account.id, id: location.id }),
  read: (ctx, key) => getLocation(ctx, key),
});

@Resolver(() => Location)
export class LocationResolver {
  @Query(() => LocationConnection, { description: 'Locations of an account, in creation order.' })
  async locations(@Args() args: LocationsArgs, @Ctx() ctx: Context): Promise<Connection<Location>> {
    return toConnection(withLimitHeaders(ctx, await listLocations(ctx, args, sliceRequestOf(args))), args.after);
  }

  @Query(() => LocationPage, { description: 'Locations of an account by page number, in creation order (the GET /location list).' })
  async locationsPage(@Args() args: LocationsPageArgs, @Ctx() ctx: Context): Promise<Page<'locations', Location> & { nextSkip: number | null }> {
    return withLimitHeaders(ctx, await listLocationsPage(ctx, args));
  }

  @Query(() => Location, { description: 'One location of the account.' })
  location(@Args() args: LocationRefArgs, @Ctx() ctx: Context): Promise<Location> {
    return getLocation(ctx, args);
  }

  @Mutation(() => Location, {
    description: 'Creates a location; a job creates it at the alpha provider (connected once it knows it). Organization token only.',
  })
  async createLocation(@Args() args: CreateLocationArgs, @Ctx() ctx: Context): Promise<Location> {
    return withLimitHeaders(ctx, await createLocation(ctx, args));
  }

  @FieldResolver(() => ID)
  accountId(@Root() location: Location): string {
    return location.account.id;
  }
}
