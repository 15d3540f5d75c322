import type { FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { requirePrincipal } from '../access/guards';
import type { Principal } from '../access/principal';
import { accountsWithinReach } from '../access/reach';
import { DomainError } from '../errors/domain-error';
import type { RequestScope } from '../request-scope';
import { findPlain } from '../db/prepared-reads';
import { isId, NO_MATCH_ID } from '../shared/ids';
import { Account } from './account.entity';
import { AlphaIdentity } from './alpha-identity.entity';

/**
 * The account a request names (by our id, or by the provider's account id), when it is within the principal's
 * reach; null otherwise, for unknown and out-of-reach accounts alike.
 */
export async function findNamedAccount(
  em: EntityManager,
  principal: Principal,
  named: { id: string } | { alphaAccountId: string },
): Promise<Account | null> {
  if ('id' in named && !isId(named.id)) return null;
  // Both conditions, never one spread over the other: a named id must not replace the reach's own.
  const where: FilterQuery<Account> = { $and: [named, accountsWithinReach(principal)] };
  return em.findOne(Account, where, { populate: ['alphaIdentity'] });
}

/**
 * The account an operation acts on: an account token's own account (the document: account_id "is ignored for
 * account-level tokens"), or for an organization token the required account_id, which must be within its reach.
 */
export async function resolveAccountScope(scope: RequestScope, accountId: string | null | undefined): Promise<string> {
  const principal = requirePrincipal(scope);
  const reach = accountsWithinReach(principal);
  if (reach.id) return reach.id;
  if (!accountId) {
    throw new DomainError('ACCOUNT_ID_REQUIRED', 'account_id is required with an organization token');
  }
  // Only whether it exists within reach matters here: a plain read, with its SQL prepared once.
  const [found] = isId(accountId) ? await findPlain(scope.em, Account, { organization: reach.organization, id: accountId }, { limit: 1 }) : [];
  if (!found) throw DomainError.notFound('Account');
  return accountId;
}

/**
 * The account an operation acts on, as resolveAccountScope decides it, without reading it: its id and a filter on
 * Account that holds only within the principal's reach, for a caller that reads a record of the account anyway and
 * so checks the account in that same statement. When that read finds nothing, resolveAccountScope tells an unknown
 * account from an unknown record.
 */
export function accountScopeFilter(scope: RequestScope, accountId: string | null | undefined): { accountId: string; account: FilterQuery<Account> } {
  const reach = accountsWithinReach(requirePrincipal(scope));
  if (reach.id) return { accountId: reach.id, account: reach.id };
  if (!accountId) throw new DomainError('ACCOUNT_ID_REQUIRED', 'account_id is required with an organization token');
  return { accountId, account: isId(accountId) ? { id: accountId, organization: reach.organization } : NO_MATCH_ID };
}

/** The account `accountId` within the principal's reach, as a managed entity (404 otherwise). */
export async function findAccountWithinReach(scope: RequestScope, principal: Principal, accountId: string): Promise<Account> {
  const account = isId(accountId) ? await scope.em.findOne(Account, { $and: [{ id: accountId }, accountsWithinReach(principal)] }) : null;
  if (!account) throw DomainError.notFound('Account');
  return account;
}

/**
 * A person's consent (their alpha identity) within the principal's reach: for an organization token any of the
 * organization's, for an account token only the one its own account was connected through. `subject` (the
 * document's alphaId) picks one person; without it, the latest consent within reach. Null when there is none.
 */
export async function findIdentityWithinReach(em: EntityManager, principal: Principal, subject?: string): Promise<AlphaIdentity | null> {
  const reach = accountsWithinReach(principal);
  if (reach.id === undefined) {
    return em.findOne(
      AlphaIdentity,
      { organization: reach.organization, ...(subject !== undefined ? { subject } : {}) },
      { orderBy: { updatedAt: 'desc', id: 'desc' } },
    );
  }
  const own = await em.findOne(Account, reach, { populate: ['alphaIdentity'] });
  const identity = own?.alphaIdentity ?? null;
  return identity && (subject === undefined || identity.subject === subject) ? identity : null;
}
