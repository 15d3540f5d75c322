import { requireOrganizationToken } from '../access/guards';
import { findAccountWithinReach } from '../account/account.access';
import type { RequestScope } from '../request-scope';
import { DomainError } from '../errors/domain-error';
import { Organization } from '../organization/organization.entity';
import { isId } from '../shared/ids';
import { ApiToken } from './api-token.entity';
import { issueToken } from './token.service';
import type { Authentication } from '../access/authentication';
import type { EventBus } from '../events/event-bus';

export async function listAccountTokens(
  scope: RequestScope,
  filter: { accountId?: string | null; includeRevoked: boolean },
): Promise<ApiToken[]> {
  const principal = requireOrganizationToken(scope);
  if (filter.accountId) await findAccountWithinReach(scope, principal, filter.accountId);
  return scope.em.find(
    ApiToken,
    {
      organization: principal.organizationId,
      account: filter.accountId ? filter.accountId : { $ne: null },
      ...(filter.includeRevoked ? {} : { revokedAt: null }),
    },
    { orderBy: { createdAt: 'desc', id: 'desc' } },
  );
}

/** One account token of the organization, revoked or not (what `apiTokens` lists with includeRevoked); 404 otherwise. */
export async function getAccountToken(scope: RequestScope, id: string): Promise<ApiToken> {
  const principal = requireOrganizationToken(scope);
  const token = isId(id) ? await scope.em.findOne(ApiToken, { id, organization: principal.organizationId, account: { $ne: null } }) : null;
  if (!token) throw DomainError.notFound('Account token');
  return token;
}

export async function createAccountToken(
  scope: RequestScope,
  args: { accountId: string; label?: string | null },
): Promise<{ token: string; apiToken: ApiToken }> {
  const principal = requireOrganizationToken(scope);
  const account = await findAccountWithinReach(scope, principal, args.accountId);
  const { secret, token } = issueToken(scope.em, scope.em.getReference(Organization, principal.organizationId), {
    account,
    label: args.label ?? null,
  });
  await scope.em.flush();
  return { token: secret, apiToken: token };
}

/** Revocation is immediate: the next request with the token answers 401. Revoking twice is a no-op. */
export async function revokeAccountToken(scope: RequestScope<TokenEndDeps>, id: string): Promise<ApiToken> {
  const principal = requireOrganizationToken(scope);
  const token = isId(id)
    ? await scope.em.findOne(ApiToken, { id, organization: principal.organizationId, account: { $ne: null } })
    : null;
  if (!token) throw DomainError.notFound('Account token');
  token.revokedAt ??= new Date();
  await scope.em.flush();
  await endTokens(scope.runtime, [token.id]);
  return token;
}

/**
 * Tokens that no longer authenticate (revoked, or deleted with their account) stop at once: evicted from this
 * process's cache now, and from every process's (this one again), with their WebSocket subscriptions, by the event.
 * The event is best effort: with the bus down, this process still ends them at once, and the other processes' caches
 * let the token go within TOKEN_CACHE_SECONDS.
 */
/** What ending tokens uses: this process's authentication cache, and the bus that tells the others. */
export type TokenEndDeps = { authentication: Authentication; events: EventBus };

export async function endTokens(runtime: TokenEndDeps, tokenIds: readonly string[]): Promise<void> {
  for (const tokenId of tokenIds) {
    runtime.authentication.forget(tokenId);
    // This process's sockets close now, bus or no bus; the others' when the event reaches them.
    runtime.events.emitHere('token.revoked', { tokenId });
  }
  for (const tokenId of tokenIds) await runtime.events.announce('token.revoked', { tokenId });
}
