import { Account } from '../account/account.entity';
import { AppError } from '../graphql/errors';
import type { Context } from '../graphql/context';
import { isId } from '../shared/ids';
import type { Principal } from './principal';

/** Every operation but introspection needs a valid token (401 otherwise). */
export function requirePrincipal(ctx: Context): Principal {
  if (!ctx.principal) throw new AppError('UNAUTHENTICATED', 'Missing, unknown or revoked bearer token');
  return ctx.principal;
}

/** Operations the document reserves for organization tokens answer 403 to account tokens. */
export function requireOrganizationToken(ctx: Context): Principal {
  const principal = requirePrincipal(ctx);
  if (principal.kind !== 'organization') {
    throw new AppError('ORGANIZATION_TOKEN_REQUIRED', 'This operation requires an organization token');
  }
  return principal;
}

/**
 * The account an operation acts on: an account token's own account (any account_id is ignored), or for an
 * organization token the required account_id, which must belong to the organization. An account of another
 * organization is "not found", never "forbidden", so its existence is not revealed.
 */
export async function resolveAccountScope(ctx: Context, accountId: string | null | undefined): Promise<string> {
  const principal = requirePrincipal(ctx);
  if (principal.accountId) return principal.accountId;
  if (!accountId) {
    throw new AppError('ACCOUNT_ID_REQUIRED', 'account_id is required with an organization token');
  }
  await findAccountOfOrganization(ctx, principal, accountId);
  return accountId;
}

export async function findAccountOfOrganization(ctx: Context, principal: Principal, accountId: string): Promise<Account> {
  const account = isId(accountId)
    ? await ctx.em.findOne(Account, { id: accountId, organization: principal.organizationId })
    : null;
  if (!account) throw AppError.notFound('Account');
  return account;
}
