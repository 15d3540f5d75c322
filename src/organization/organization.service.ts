import { requireOrganizationToken } from '../auth/guards';
import type { Context } from '../graphql/context';
import { AppError } from '../graphql/errors';
import { Organization } from './organization.entity';

export async function getOrganization(ctx: Context): Promise<Organization> {
  const principal = requireOrganizationToken(ctx);
  const organization = await ctx.em.findOne(Organization, principal.organizationId);
  if (!organization) throw new AppError('ORGANIZATION_NOT_FOUND', 'Organization not found');
  return organization;
}
