import { Ctx, Query, Resolver } from 'type-graphql';
import type { Context } from '../graphql/context';
import { Organization } from './organization.entity';
import { getOrganization } from './organization.service';

@Resolver(() => Organization)
export class OrganizationResolver {
  @Query(() => Organization, { description: "The caller's organization. Organization token only." })
  organization(@Ctx() ctx: Context): Promise<Organization> {
    return getOrganization(ctx);
  }
}
