import { LockMode } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { AlphaOAuthError } from '../providers/alpha/alpha.errors';
import { ConsentLostError } from '../providers/shared/provider-error';
import type { Runtime } from '../runtime';
import { Account } from './account.entity';
import { AlphaIdentity } from './alpha-identity.entity';

/** Refreshed this long before it expires, so a call never starts with a token about to lapse. */
const REFRESH_MARGIN_MS = 60_000;

/** The consent was removed meanwhile (its last account was disconnected). */
const consentGone = () => new ConsentLostError('alpha', 'The alpha consent of this account was removed: reconnect the account');

/**
 * A usable access token of an identity: the stored one, or a new one from its refresh token when it is about to
 * expire (under a row lock, so concurrent jobs refresh once). Throws ConsentLostError when the provider refuses
 * the refresh token (or there is none).
 */
export async function identityAccessToken(runtime: Runtime, identityId: string): Promise<string> {
  const em = runtime.database.orm.em.fork() as EntityManager;
  const now = () => runtime.clock.now().getTime();
  const current = await em.findOne(AlphaIdentity, identityId, { populate: ['accessToken'] });
  if (!current) throw consentGone();
  if (current.accessTokenExpiresAt.getTime() - REFRESH_MARGIN_MS > now()) return runtime.secrets.open(current.accessToken);
  return em.transactional(async (tx) => {
    const identity = await tx.findOne(AlphaIdentity, identityId, { lockMode: LockMode.PESSIMISTIC_WRITE, populate: ['accessToken', 'refreshToken'] });
    if (!identity) throw consentGone();
    // Another job may have refreshed it while this one waited for the lock.
    if (identity.accessTokenExpiresAt.getTime() - REFRESH_MARGIN_MS > now()) return runtime.secrets.open(identity.accessToken);
    if (!identity.refreshToken) throw new ConsentLostError('alpha', 'The alpha consent gave no refresh token: reconnect the account');
    let refreshed;
    try {
      refreshed = await runtime.alphaOAuth.refresh(runtime.secrets.open(identity.refreshToken));
    } catch (error) {
      if (error instanceof AlphaOAuthError && error.error === 'invalid_grant') {
        throw new ConsentLostError('alpha', 'The alpha provider no longer accepts this consent: reconnect the account', error);
      }
      throw error;
    }
    identity.accessToken = runtime.secrets.seal(refreshed.access_token);
    identity.accessTokenExpiresAt = new Date(now() + refreshed.expires_in * 1000);
    if (refreshed.refresh_token) identity.refreshToken = runtime.secrets.seal(refreshed.refresh_token);
    identity.updatedAt = runtime.clock.now();
    return refreshed.access_token;
  });
}

/**
 * Which consent each account calls the provider with (null: none, the service's own token), per runtime. An
 * account's consent never changes (a disconnect removes the account; a new connection makes a new one), so a
 * worker asks the database once per account, not once per call.
 */
const consentOfAccount = new WeakMap<Runtime, Map<string, Promise<string | null>>>();
const MAX_CACHED_ACCOUNTS = 10_000;

/**
 * The access token for the provider calls of an account: its consent's, or undefined for an account connected
 * without one (the service's own token, e.g. the demo's).
 */
export async function accountAccessToken(runtime: Runtime, accountId: string): Promise<string | undefined> {
  let known = consentOfAccount.get(runtime);
  if (!known) consentOfAccount.set(runtime, (known = new Map()));
  // The lookup itself is kept, so the jobs of one batch (run together) share one query.
  let lookup = known.get(accountId);
  if (!lookup) {
    const em = runtime.database.orm.em.fork() as EntityManager;
    lookup = em.findOne(Account, accountId, { fields: ['alphaIdentity'] }).then((account) => account?.alphaIdentity?.id ?? null);
    if (known.size >= MAX_CACHED_ACCOUNTS) known.delete(known.keys().next().value!);
    known.set(accountId, lookup);
    lookup.catch(() => known.delete(accountId));
  }
  const identityId = await lookup;
  return identityId ? identityAccessToken(runtime, identityId) : undefined;
}
