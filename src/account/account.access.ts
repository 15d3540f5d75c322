import { requirePrincipal } from '../access/guards';
import type { Principal } from '../access/principal';
import { DomainError } from '../errors/domain-error';
import type { RequestScope } from '../request-scope';
import { findPlain } from '../shared/entity-snapshot';
import { isId } from '../shared/ids';
import { Account } from './account.entity';

/**
 * The account an operation acts on: an account token's own account (any account_id is ignored), or for an
 * organization token the required account_id, which must belong to the organization. An account of another
 * organization is "not found", never "forbidden", so its existence is not revealed.
 */
export async function resolveAccountScope(scope: RequestScope, accountId: string | null | undefined): Promise<string> {
  const principal = requirePrincipal(scope);
  if (principal.accountId) return principal.accountId;
  if (!accountId) {
    throw new DomainError('ACCOUNT_ID_REQUIRED', 'account_id is required with an organization token');
  }
  // Only whether it exists in the organization matters here: a plain read, with its SQL prepared once.
  const [found] = isId(accountId)
    ? await findPlain(scope.em, Account, { id: accountId, organization: principal.organizationId }, { limit: 1 })
    : [];
  if (!found) throw DomainError.notFound('Account');
  return accountId;
}

export async function findAccountOfOrganization(scope: RequestScope, principal: Principal, accountId: string): Promise<Account> {
  const account = isId(accountId)
    ? await scope.em.findOne(Account, { id: accountId, organization: principal.organizationId })
    : null;
  if (!account) throw DomainError.notFound('Account');
  return account;
}
