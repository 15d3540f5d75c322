import { LockMode, type EntityClass, type FilterQuery } from '@mikro-orm/core';
import { isRefusedGrant } from './oauth-error';
import { ConsentLostError, type ProviderName } from './provider-error';
import type { Runtime } from '../../runtime';
import type { AlphaOAuthClient } from '../alpha/alpha.oauth';
import type { BetaOAuthClient } from '../beta/beta.oauth';
import type { Clock } from '../../shared/clock';
import type { Database } from '../../db/orm';
import type { SecretBox } from '../../shared/secret-box';

/**
 * The one way to get a usable access token of a consent, for either provider: the row holding its sealed tokens
 * (an alpha identity, a beta connection) is locked and re-read, its access token returned while it stays valid
 * beyond TOKEN_REFRESH_MARGIN_MS, else refreshed through the provider's OAuth client and stored sealed.
 */

/** Refreshed this long before it expires, so a call never starts with a token about to lapse. */
export const TOKEN_REFRESH_MARGIN_MS = 60_000;

/** What a row keeping a consent's tokens has (src/shared/secret-box.ts seals them). */
export interface SealedTokens {
  accessToken: string;
  accessTokenExpiresAt: Date;
  refreshToken: string | null;
  updatedAt: Date;
}

/** Which row holds a consent's tokens, and the texts of the ConsentLostError for each way it can be lost. */
export interface ConsentTokens<T extends SealedTokens> {
  provider: ProviderName;
  entity: EntityClass<T>;
  where: FilterQuery<T>;
  lost: {
    /** The row is gone (the consent was removed, or never linked what was asked for). */
    gone: string;
    /** The consent gave no refresh token (no offline access). */
    noRefreshToken: string;
    /** The provider refused the refresh token. */
    refused: string;
  };
}

export type ConsentTokenDeps = { database: Database; secrets: SecretBox; clock: Clock; alphaOAuth: AlphaOAuthClient; betaOAuth: BetaOAuthClient };

export interface RefreshOptions {
  /** Refresh even a token still valid: a reconnect proves the consent still holds. */
  force?: boolean;
}

/**
 * A usable access token of the consent, refreshed when it is about to expire (or always, `force`). Throws
 * ConsentLostError when the row is gone, holds no refresh token, or the provider refuses it.
 */
export async function consentAccessToken<T extends SealedTokens>(runtime: ConsentTokenDeps, consent: ConsentTokens<T>, options: RefreshOptions = {}): Promise<string> {
  const em = runtime.database.orm.em.fork();
  if (!options.force) {
    // Most calls find a valid token: no transaction, no lock.
    const stored = await em.findOne(consent.entity, consent.where, { populate: ACCESS_TOKEN });
    if (!stored) throw new ConsentLostError(consent.provider, consent.lost.gone);
    if (stillValid(runtime, stored)) return runtime.secrets.open(stored.accessToken);
  }
  return em.transactional(async (tx) => {
    // Under the row's lock, so concurrent jobs refresh once; read as committed, after the wait.
    const row = await tx.findOne(consent.entity, consent.where, {
      lockMode: LockMode.PESSIMISTIC_WRITE,
      refresh: true,
      populate: BOTH_TOKENS,
    });
    if (!row) throw new ConsentLostError(consent.provider, consent.lost.gone);
    // Another job may have refreshed it while this one waited for the lock.
    if (!options.force && stillValid(runtime, row)) return runtime.secrets.open(row.accessToken);
    if (!row.refreshToken) throw new ConsentLostError(consent.provider, consent.lost.noRefreshToken);
    let refreshed;
    try {
      refreshed = await oauthClientOf(runtime, consent.provider).refresh(runtime.secrets.open(row.refreshToken));
    } catch (error) {
      if (isRefusedGrant(error)) throw new ConsentLostError(consent.provider, consent.lost.refused, error);
      throw error;
    }
    const now = runtime.clock.now();
    row.accessToken = runtime.secrets.seal(refreshed.access_token);
    row.accessTokenExpiresAt = new Date(now.getTime() + refreshed.expires_in * 1000);
    // An answer without one leaves the given refresh token valid.
    if (refreshed.refresh_token) row.refreshToken = runtime.secrets.seal(refreshed.refresh_token);
    row.updatedAt = now;
    return refreshed.access_token;
  });
}

// The sealed columns are lazy, so asked for by name; MikroORM cannot check names against an entity still generic.
const ACCESS_TOKEN = ['accessToken'] as never;
const BOTH_TOKENS = ['accessToken', 'refreshToken'] as never;

function stillValid(runtime: { clock: Clock }, tokens: SealedTokens): boolean {
  return tokens.accessTokenExpiresAt.getTime() - TOKEN_REFRESH_MARGIN_MS > runtime.clock.now().getTime();
}

function oauthClientOf(runtime: { alphaOAuth: AlphaOAuthClient; betaOAuth: BetaOAuthClient }, provider: ProviderName): Runtime['alphaOAuth'] | Runtime['betaOAuth'] {
  return provider === 'alpha' ? runtime.alphaOAuth : runtime.betaOAuth;
}
