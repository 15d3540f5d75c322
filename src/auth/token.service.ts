import { createHash, randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Account } from '../account/account.entity';
import type { Organization } from '../organization/organization.entity';
import { ApiToken } from './api-token.entity';
import type { Principal } from '../access/principal';
import type { Authentication } from '../access/authentication';
import type { EventBus } from '../events/event-bus';
import type { Clock } from '../shared/clock';
import { PrincipalCache } from './principal-cache';

const TOKEN_PREFIX = { organization: 'lgo_', account: 'lga_' } as const;
/** 32 random bytes: 256 bits of entropy, base64url. */
const SECRET_BYTES = 32;

export function hashToken(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

/** Creates a token and returns its secret, which is never stored and cannot be shown again. */
export function issueToken(
  em: EntityManager,
  organization: Organization,
  options: { account?: Account | null; label?: string | null } = {},
): { secret: string; token: ApiToken } {
  const kind = options.account ? 'account' : 'organization';
  const secret = TOKEN_PREFIX[kind] + randomBytes(SECRET_BYTES).toString('base64url');
  const token = em.create(ApiToken, {
    organization,
    account: options.account ?? null,
    tokenHash: hashToken(secret),
    prefix: secret.slice(0, 10),
    label: options.label ?? null,
  });
  return { secret, token };
}

/** Reads `Authorization: Bearer <token>` (or the bare token, as graphql-ws clients sometimes send it). */
export function bearerSecret(header: unknown): string | undefined {
  if (typeof header !== 'string') return undefined;
  const match = /^\s*Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1];
}

/**
 * The principal behind a bearer token, or null when the token is missing, unknown or revoked: one indexed lookup
 * by the token's hash, reused for a while through `cache`.
 */
export async function authenticate(em: () => EntityManager, authorization: unknown, cache?: PrincipalCache): Promise<Principal | null> {
  const secret = bearerSecret(authorization);
  if (!secret || secret.length > 200) return null;
  const tokenHash = hashToken(secret);
  const cached = cache?.get(tokenHash);
  if (cached) return cached;
  const token = await em().findOne(
    ApiToken,
    { tokenHash, revokedAt: null },
    { populate: ['organization'], fields: ['id', 'account', 'organization.id', 'organization.betaApi', 'organization.citationsApi'] },
  );
  if (!token) return null;
  const principal: Principal = {
    tokenId: token.id,
    organizationId: token.organization.id,
    accountId: token.account?.id ?? null,
    kind: token.account ? 'account' : 'organization',
    flags: { betaApi: token.organization.betaApi, citationsApi: token.organization.citationsApi },
  };
  cache?.set(tokenHash, principal);
  return principal;
}

/** Bearer tokens, their principals reused for `cacheMs` (TOKEN_CACHE_SECONDS; a revocation evicts at once). */
export function tokenAuthentication(deps: { events: EventBus; clock: Clock; cacheMs: number }): Authentication {
  const cache = new PrincipalCache(deps.events, deps.clock, deps.cacheMs);
  return {
    authenticate: (em, authorization) => authenticate(em, authorization, cache),
    forget: (tokenId) => cache.evictToken(tokenId),
    close: () => cache.close(),
  };
}
