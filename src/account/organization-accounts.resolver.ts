import { Args, Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import type { Context } from '../graphql/context';
import { ConnectionArgs, sliceOfList, sliceRequestOf, toConnection, type Connection } from '../graphql/relay-connection';
import { Organization } from '../organization/organization.entity';
import { Account } from './account.entity';
import { AccountConnection } from './account.resolver';
import { accountsByOrganization } from './account.loaders';

/**
 * `Organization.accounts` and `accountsConnection`: they live with accounts, which depend on organizations (never the
 * other way round). Both read the organization's accounts through one loader (one query per request).
 */
@Resolver(() => Organization)
export class OrganizationAccountsResolver {
  @FieldResolver(() => [Account], { description: 'Accounts of the organization, oldest first.', deprecationReason: 'Use accountsConnection.' })
  accounts(@Root() organization: Organization, @Ctx() ctx: Context): Promise<Account[]> {
    return accountsByOrganization(ctx).load(organization.id);
  }

  @FieldResolver(() => AccountConnection, { description: 'Accounts of the organization, oldest first.' })
  async accountsConnection(@Root() organization: Organization, @Args() args: ConnectionArgs, @Ctx() ctx: Context): Promise<Connection<Account>> {
    const request = sliceRequestOf(args);
    return toConnection(sliceOfList(await accountsByOrganization(ctx).load(organization.id), request, 'asc'), args.after);
  }
}
