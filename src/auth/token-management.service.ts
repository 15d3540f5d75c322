import { findAccountOfOrganization, requireOrganizationToken } from './guards';
import type { Context } from '../graphql/context';
import { AppError } from '../graphql/errors';
import { Organization } from '../organization/organization.entity';
import { isId } from '../shared/ids';
import { ApiToken } from './api-token.entity';
import { issueToken } from './token.service';

export async function listAccountTokens(
  ctx: Context,
  filter: { accountId?: string | null; includeRevoked: boolean },
): Promise<ApiToken[]> {
  const principal = requireOrganizationToken(ctx);
  if (filter.accountId) await findAccountOfOrganization(ctx, principal, filter.accountId);
  return ctx.em.find(
    ApiToken,
    {
      organization: principal.organizationId,
      account: filter.accountId ? filter.accountId : { $ne: null },
      ...(filter.includeRevoked ? {} : { revokedAt: null }),
    },
    { orderBy: { createdAt: 'desc', id: 'desc' } },
  );
}

export async function createAccountToken(
  ctx: Context,
  args: { accountId: string; label?: string | null },
): Promise<{ token: string; apiToken: ApiToken }> {
  const principal = requireOrganizationToken(ctx);
  const account = await findAccountOfOrganization(ctx, principal, args.accountId);
  const { secret, token } = issueToken(ctx.em, ctx.em.getReference(Organization, principal.organizationId), {
    account,
    label: args.label ?? null,
  });
  await ctx.em.flush();
  return { token: secret, apiToken: token };
}

/** Revocation is immediate: the next request with the token answers 401. Revoking twice is a no-op. */
export async function revokeAccountToken(ctx: Context, id: string): Promise<ApiToken> {
  const principal = requireOrganizationToken(ctx);
  const token = isId(id)
    ? await ctx.em.findOne(ApiToken, { id, organization: principal.organizationId, account: { $ne: null } })
    : null;
  if (!token) throw AppError.notFound('Account token');
  token.revokedAt ??= new Date();
  await ctx.em.flush();
  await ctx.runtime.events.publish('token.revoked', { tokenId: token.id });
  return token;
}
