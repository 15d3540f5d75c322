/** Who is calling: resolved once per request (or per WebSocket connection) from the bearer token. */
export interface Principal {
  tokenId: string;
  organizationId: string;
  /** Set for account tokens: every operation is confined to this account. */
  accountId: string | null;
  kind: 'organization' | 'account';
  flags: { betaApi: boolean; citationsApi: boolean };
}
