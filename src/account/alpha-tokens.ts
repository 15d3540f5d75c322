import { LRUCache } from 'lru-cache';
import { consentAccessToken, type ConsentTokenDeps, type ConsentTokens, type RefreshOptions } from '../providers/shared/consent-tokens';
import { Account } from './account.entity';
import { AlphaIdentity } from './alpha-identity.entity';

export type AlphaTokenDeps = ConsentTokenDeps;

/** An alpha identity as the consent whose tokens it keeps. */
function alphaConsent(identityId: string): ConsentTokens<AlphaIdentity> {
  return {
    provider: 'alpha',
    entity: AlphaIdentity,
    where: { id: identityId },
    lost: {
      // Its last account was disconnected meanwhile.
      gone: 'The alpha consent of this account was removed: reconnect the account',
      noRefreshToken: 'The alpha consent gave no refresh token: reconnect the account',
      refused: 'The alpha provider no longer accepts this consent: reconnect the account',
    },
  };
}

/**
 * A usable access token of an identity: the stored one, or a new one from its refresh token when it is about to
 * expire (or always, `force`). Throws ConsentLostError when the provider refuses the refresh token (or there is
 * none, or the identity is gone).
 */
export function identityAccessToken(runtime: AlphaTokenDeps, identityId: string, options?: RefreshOptions): Promise<string> {
  return consentAccessToken(runtime, alphaConsent(identityId), options);
}

/**
 * Which consent each account calls the provider with (null: none, the service's own token), per runtime. An
 * account's consent never changes (a disconnect removes the account; a new connection makes a new one), so a
 * worker asks the database once per account, not once per call. Keyed by the object passed: callers pass the
 * process's runtime itself, not a copy of its parts.
 */
const consentOfAccount = new WeakMap<AlphaTokenDeps, LRUCache<string, Promise<string | null>>>();
const MAX_CACHED_ACCOUNTS = 10_000;

/**
 * The access token for the provider calls of an account: its consent's, or undefined for an account connected
 * without one (the service's own token, e.g. the demo's).
 */
export async function accountAccessToken(runtime: AlphaTokenDeps, accountId: string): Promise<string | undefined> {
  let known = consentOfAccount.get(runtime);
  if (!known) consentOfAccount.set(runtime, (known = new LRUCache<string, Promise<string | null>>({ max: MAX_CACHED_ACCOUNTS })));
  // The lookup itself is kept, so the jobs of one batch (run together) share one query.
  let lookup = known.get(accountId);
  if (!lookup) {
    const em = runtime.database.orm.em.fork();
    lookup = em.findOne(Account, accountId, { fields: ['alphaIdentity'] }).then((account) => account?.alphaIdentity?.id ?? null);
    known.set(accountId, lookup);
    lookup.catch(() => known.delete(accountId));
  }
  const identityId = await lookup;
  return identityId ? identityAccessToken(runtime, identityId) : undefined;
}
