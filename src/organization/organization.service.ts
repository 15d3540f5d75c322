import { requireOrganizationToken } from '../access/guards';
import type { RequestScope } from '../request-scope';
import { DomainError } from '../errors/domain-error';
import { Organization } from './organization.entity';

export async function getOrganization(scope: RequestScope): Promise<Organization> {
  const principal = requireOrganizationToken(scope);
  const organization = await scope.em.findOne(Organization, principal.organizationId);
  if (!organization) throw new DomainError('ORGANIZATION_NOT_FOUND', 'Organization not found');
  return organization;
}
