import { Arg, Args, Ctx, FieldResolver, ID, Mutation, Query, Resolver, Root } from 'type-graphql';
import { withLimitHeaders, type Context } from '../graphql/context';
import { defineNode } from '../graphql/node';
import { ConnectionArgs, ConnectionType, sliceOfList, sliceRequestOf, toConnection, type Connection } from '../graphql/relay-connection';
import { Account } from './account.entity';
import { AccountLookupArgs, AccountLookupInput, UpdateAccountInput } from './account.inputs';
import { getAccount, listAccounts, updateAccount } from './account.service';

export const AccountConnection = ConnectionType(Account, 'Account');

/** `node` reads an account as `account(id:)` does: organization tokens only. */
export const accountNode = defineNode({
  name: 'Account',
  types: [Account],
  key: ['id'],
  keyOf: (account: Account) => ({ id: account.id }),
  read: async (ctx, key) => withLimitHeaders(ctx, await getAccount(ctx, key)),
});

@Resolver(() => Account)
export class AccountResolver {
  @Query(() => [Account], {
    description: 'Accounts of the organization, oldest first. Organization token only.',
    deprecationReason: 'Use accountsConnection.',
  })
  async accounts(@Ctx() ctx: Context): Promise<Account[]> {
    return withLimitHeaders(ctx, await listAccounts(ctx));
  }

  @Query(() => AccountConnection, { description: 'Accounts of the organization, oldest first. Organization token only.' })
  async accountsConnection(@Args() args: ConnectionArgs, @Ctx() ctx: Context): Promise<Connection<Account>> {
    const request = sliceRequestOf(args);
    return toConnection(sliceOfList(withLimitHeaders(ctx, await listAccounts(ctx)), request, 'asc'), args.after);
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
}
