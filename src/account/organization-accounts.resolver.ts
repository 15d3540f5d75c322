import { Ctx, FieldResolver, Resolver, Root } from 'type-graphql';
import type { Context } from '../graphql/context';
import { Organization } from '../organization/organization.entity';
import { Account } from './account.entity';

/** `Organization.accounts`: it lives with accounts, which depend on organizations (never the other way round). */
@Resolver(() => Organization)
export class OrganizationAccountsResolver {
  @FieldResolver(() => [Account], { description: 'Accounts of the organization, oldest first.' })
  accounts(@Root() organization: Organization, @Ctx() ctx: Context): Promise<Account[]> {
    return ctx.loaders.accountsByOrganization.load(organization.id);
  }
}
