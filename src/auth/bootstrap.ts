import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../account/account.entity';
import { issueToken } from './token.service';
import { DomainError } from '../errors/domain-error';
import { isId } from '../shared/ids';
import { Organization } from '../organization/organization.entity';

/**
 * Bootstrap operations for the CLI: no token exists before them, so they run with the database's authority,
 * never through the API.
 */
export async function createOrganization(
  em: EntityManager,
  input: { name: string; betaApi?: boolean; citationsApi?: boolean },
): Promise<{ organization: Organization; token: string }> {
  const name = input.name.trim();
  if (!name) throw DomainError.badInput('--name must not be empty');
  const organization = em.create(Organization, {
    name,
    betaApi: input.betaApi ?? false,
    citationsApi: input.citationsApi ?? false,
  });
  const { secret } = issueToken(em, organization, { label: 'created by the CLI' });
  await em.flush();
  return { organization, token: secret };
}

/** A new token for an organization, or for one of its accounts. */
export async function createToken(
  em: EntityManager,
  input: { organizationId: string; accountId?: string },
): Promise<{ token: string }> {
  const organization = isId(input.organizationId) ? await em.findOne(Organization, input.organizationId) : null;
  if (!organization) throw DomainError.notFound('Organization');
  let account: Account | null = null;
  if (input.accountId) {
    account = isId(input.accountId) ? await em.findOne(Account, { id: input.accountId, organization }) : null;
    if (!account) throw DomainError.notFound('Account');
  }
  const { secret } = issueToken(em, organization, { account, label: 'created by the CLI' });
  await em.flush();
  return { token: secret };
}
