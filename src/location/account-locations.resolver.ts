import { Ctx, FieldResolver, Int, Resolver, Root } from 'type-graphql';
import { Account } from '../account/account.entity';
import type { Context } from '../graphql/context';
import { locationCountByAccount } from './location.loaders';

/** What an account shows of its locations: declared here, so accounts need not know locations. */
@Resolver(() => Account)
export class AccountLocationsResolver {
  @FieldResolver(() => Int, { description: 'Locations of the account (batched per request).' })
  numberOfLocations(@Root() account: Account, @Ctx() ctx: Context): Promise<number> {
    return locationCountByAccount(ctx).load(account.id);
  }
}
