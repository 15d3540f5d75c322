/** Who is calling: resolved once per request (or per WebSocket connection) from the bearer token. */
export interface Principal {
  tokenId: string;
  organizationId: string;
  /** Set for account tokens: every operation is confined to this account (the rule: src/access/reach.ts). */
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
