/** Who is calling: resolved once per request (or per WebSocket connection) from the bearer token. */
export interface Principal {
  tokenId: string;
  organizationId: string;
  /** Set for account tokens: every operation is confined to this account. */
  accountId: string | null;
  kind: 'organization' | 'account';
  flags: { betaApi: boolean; citationsApi: boolean };
}

/**
 * What a principal can see, as a key: two principals with the same key get the same answers (only the token
 * differs). Subscriptions of one key share their execution (src/graphql/subscription-groups.ts).
 */
export function visibilityKey(principal: Principal): string {
  return JSON.stringify([principal.organizationId, principal.accountId, principal.kind, principal.flags.betaApi, principal.flags.citationsApi]);
}

/** Whether something of this organization and account is the principal's to see (events, subscriptions). */
export function canSee(principal: Principal | null, owner: { organizationId: string; accountId: string }): principal is Principal {
  if (!principal || owner.organizationId !== principal.organizationId) return false;
  return !principal.accountId || owner.accountId === principal.accountId;
}
