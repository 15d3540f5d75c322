import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { requireOrganizationToken } from '../auth/guards';
import type { Principal } from '../auth/principal';
import type { Context } from '../graphql/context';
import { AppError } from '../graphql/errors';
import { isId } from '../shared/ids';
import { trimmedText } from '../shared/text';
import { Account } from './account.entity';
import type { AccountLookup, UpdateAccountInput } from './account.inputs';

export async function listAccounts(ctx: Context): Promise<Account[]> {
  const principal = requireOrganizationToken(ctx);
  return ctx.loaders.accountsByOrganization.load(principal.organizationId);
}

async function findAccount(ctx: Context, principal: Principal, lookup: AccountLookup): Promise<Account> {
  if (!lookup.id && !lookup.referenceId) {
    throw AppError.badInput('account_id or reference_id is required to find an account');
  }
  if (lookup.id && !isId(lookup.id)) throw AppError.notFound('Account');
  const account = await ctx.em.findOne(Account, {
    organization: principal.organizationId,
    ...(lookup.id ? { id: lookup.id } : {}),
    ...(lookup.referenceId ? { referenceId: lookup.referenceId } : {}),
  });
  if (!account) throw AppError.notFound('Account');
  return account;
}

export async function getAccount(ctx: Context, lookup: AccountLookup): Promise<Account> {
  return findAccount(ctx, requireOrganizationToken(ctx), lookup);
}

/**
 * Renames an account or changes its reference id. The reference id is the key a caller may look the account up
 * by, so it can only change when the account is looked up by its own id.
 */
export async function updateAccount(ctx: Context, lookup: AccountLookup, input: UpdateAccountInput): Promise<Account> {
  const principal = requireOrganizationToken(ctx);
  const changesReference = input.referenceId !== undefined;
  if (input.name === undefined && !changesReference) {
    throw AppError.badInput('Nothing to update: send name and/or reference_id');
  }
  if (input.name === null) throw AppError.badInput('name must not be null');
  const name = input.name === undefined ? undefined : trimmedText(input.name, 'name', { min: 1, max: 200 });
  const newReference = input.referenceId ? trimmedText(input.referenceId, 'reference_id', { min: 0, max: 255 }) || null : null;
  const account = await findAccount(ctx, principal, lookup);
  if (changesReference && newReference !== account.referenceId && !lookup.id) {
    throw AppError.badInput('reference_id can only be changed when the account is looked up by account_id');
  }
  if (name !== undefined) account.name = name;
  if (changesReference) account.referenceId = newReference;
  try {
    await ctx.em.flush();
  } catch (error) {
    if (error instanceof UniqueConstraintViolationException) {
      throw new AppError('CONFLICT', 'reference_id is already used by another account of the organization');
    }
    throw error;
  }
  return account;
}
