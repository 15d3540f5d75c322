import type { Principal } from './principal';

/** The accounts a principal reaches, as a filter on Account. */
export interface AccountReach {
  organization: string;
  /** Set for an account token: the one account it reaches. */
  id?: string;
}

/**
 * Whose accounts a principal may act on: THE rule, in code here only (docs/decisions.md, "Whose accounts a token
 * reaches"). Every lookup of an account a request names goes through it (src/account/account.access.ts), so an
 * account out of reach is "not found" exactly as an unknown one is: never "forbidden", which would tell it exists.
 */
export function accountsWithinReach(principal: Principal): AccountReach {
  return principal.accountId ? { organization: principal.organizationId, id: principal.accountId } : { organization: principal.organizationId };
}

/** The rule for something already in hand (an event's owner): whether its account is within the principal's reach. */
export function isWithinReach(principal: Principal | null, owner: { organizationId: string; accountId: string | null }): principal is Principal {
  if (!principal) return false;
  const reach = accountsWithinReach(principal);
  return owner.organizationId === reach.organization && (reach.id === undefined || owner.accountId === reach.id);
}

/** Whether the principal reaches the whole organization, so also what belongs to no account (consent sessions). */
export function reachesWholeOrganization(principal: Principal): boolean {
  return accountsWithinReach(principal).id === undefined;
}
