import { Arg, Args, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import { withLimitHeaders, type Context } from '../graphql/context';
import { Account } from './account.entity';
import { AccountLookupArgs, AccountLookupInput, UpdateAccountInput } from './account.inputs';
import { getAccount, listAccounts, updateAccount } from './account.service';

@Resolver(() => Account)
export class AccountResolver {
  @Query(() => [Account], { description: 'Accounts of the organization, oldest first. Organization token only.' })
  async accounts(@Ctx() ctx: Context): Promise<Account[]> {
    return withLimitHeaders(ctx, await listAccounts(ctx));
  }

  @Query(() => Account, { description: 'One account by id and/or reference id. Organization token only.' })
  async account(@Args() lookup: AccountLookupArgs, @Ctx() ctx: Context): Promise<Account> {
    return withLimitHeaders(ctx, await getAccount(ctx, lookup));
  }

  @Mutation(() => Account, { description: 'Renames an account or changes its reference id. Organization token only.' })
  async updateAccount(
    @Arg('where', () => AccountLookupInput) where: AccountLookupInput,
    @Arg('input', () => UpdateAccountInput) input: UpdateAccountInput,
    @Ctx() ctx: Context,
  ): Promise<Account> {
    return withLimitHeaders(ctx, await updateAccount(ctx, where, input));
  }

  @FieldResolver(() => ID)
  organizationId(@Root() account: Account): string {
    return account.organization.id;
  }

  @FieldResolver(() => Int, { description: 'Locations of the account (batched per request).' })
  numberOfLocations(@Root() account: Account, @Ctx() ctx: Context): Promise<number> {
    return ctx.loaders.locationCountByAccount.load(account.id);
  }
}
