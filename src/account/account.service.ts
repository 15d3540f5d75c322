import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { requireOrganizationToken } from '../access/guards';
import type { Principal } from '../access/principal';
import type { RequestScope } from '../request-scope';
import { DomainError } from '../errors/domain-error';
import { countRequest, withCountedRequest, type Limited, type LimitDeps } from '../limits/request-limits';
import { isId } from '../shared/ids';
import { trimmedText } from '../shared/text';
import { Account } from './account.entity';
import type { AccountLookup, UpdateAccountInput } from './account.inputs';
import { accountsByOrganization } from './account.loaders';

export type AccountServiceDeps = LimitDeps;

/** Every account of the organization; counted against the per-token business-profile read limit. */
export async function listAccounts(scope: RequestScope<AccountServiceDeps>): Promise<Limited<Account[]>> {
  const principal = requireOrganizationToken(scope);
  const counted = await countRequest(scope, 'business-profile-reads');
  return { result: await accountsByOrganization(scope).load(principal.organizationId), rateLimit: counted.state };
}

async function findAccount(scope: RequestScope<AccountServiceDeps>, principal: Principal, lookup: AccountLookup): Promise<Account> {
  if (!lookup.id && !lookup.referenceId) {
    throw DomainError.badInput('account_id or reference_id is required to find an account');
  }
  if (lookup.id && !isId(lookup.id)) throw DomainError.notFound('Account');
  const account = await scope.em.findOne(Account, {
    organization: principal.organizationId,
    ...(lookup.id ? { id: lookup.id } : {}),
    ...(lookup.referenceId ? { referenceId: lookup.referenceId } : {}),
  });
  if (!account) throw DomainError.notFound('Account');
  return account;
}

/** One account by id and/or reference id; counted against the per-token business-profile read limit. */
export async function getAccount(scope: RequestScope<AccountServiceDeps>, lookup: AccountLookup): Promise<Limited<Account>> {
  const principal = requireOrganizationToken(scope);
  const counted = await countRequest(scope, 'business-profile-reads');
  // A lookup that finds nothing (404) is refused, not served: not counted.
  return { result: await withCountedRequest(counted, () => findAccount(scope, principal, lookup)), rateLimit: counted.state };
}

/**
 * Renames an account or changes its reference id. The reference id is the key a caller may look the account up
 * by, so it can only change when the account is looked up by its own id.
 */
export async function updateAccount(scope: RequestScope<AccountServiceDeps>, lookup: AccountLookup, input: UpdateAccountInput): Promise<Limited<Account>> {
  const principal = requireOrganizationToken(scope);
  const changesReference = input.referenceId !== undefined;
  if (input.name === undefined && !changesReference) {
    throw DomainError.badInput('Nothing to update: send name and/or reference_id');
  }
  if (input.name === null) throw DomainError.badInput('name must not be null');
  const name = input.name === undefined ? undefined : trimmedText(input.name, 'name', { min: 1, max: 200 });
  const newReference = input.referenceId ? trimmedText(input.referenceId, 'reference_id', { min: 0, max: 255 }) || null : null;
  const account = await findAccount(scope, principal, lookup);
  if (changesReference && newReference !== account.referenceId && !lookup.id) {
    throw DomainError.badInput('reference_id can only be changed when the account is looked up by account_id');
  }
  const counted = await countRequest(scope, 'business-profile-updates');
  await withCountedRequest(counted, async () => {
    if (name !== undefined) account.name = name;
    if (changesReference) account.referenceId = newReference;
    try {
      await scope.em.flush();
    } catch (error) {
      if (error instanceof UniqueConstraintViolationException) {
        throw new DomainError('CONFLICT', 'reference_id is already used by another account of the organization');
      }
      throw error;
    }
  });
  return { result: account, rateLimit: counted.state };
}
