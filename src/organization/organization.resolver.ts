import { Ctx, FieldResolver, Query, Resolver, Root } from 'type-graphql';
import { Account } from '../account/account.entity';
import type { Context } from '../graphql/context';
import { Organization } from './organization.entity';
import { getOrganization } from './organization.service';

@Resolver(() => Organization)
export class OrganizationResolver {
  @Query(() => Organization, { description: "The caller's organization. Organization token only." })
  organization(@Ctx() ctx: Context): Promise<Organization> {
    return getOrganization(ctx);
  }

  @FieldResolver(() => [Account], { description: 'Accounts of the organization, oldest first.' })
  accounts(@Root() organization: Organization, @Ctx() ctx: Context): Promise<Account[]> {
    return ctx.loaders.accountsByOrganization.load(organization.id);
  }
}
