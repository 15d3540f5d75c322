import type { EntityManager, Knex } from '@mikro-orm/postgresql';
import { OAuthSessionStatus, type OAuthProvider } from './oauth-session.entity';

/*
 * The consent sessions' statements that the ORM has no form for (an aggregate, a bounded delete that skips locked
 * rows), each run in the caller's transaction; src/oauth/oauth-session.ts holds the rules around them.
 */

/** Sessions of one organization and provider still waiting for their callback at `now`, and the first to expire. */
export async function countOpenSessions(
  tx: EntityManager,
  of: { organizationId: string; provider: OAuthProvider; now: Date },
): Promise<{ open: number; firstExpiry: Date | null }> {
  const [row] = await tx.getConnection().execute<{ open: number; first_expiry: Date | string | null }[]>(
    `select count(*)::int as open, min(expires_at) as first_expiry from oauth_session
      where organization_id = ? and provider = ? and status = ? and expires_at > ?`,
    [of.organizationId, of.provider, OAuthSessionStatus.PENDING, of.now],
    'all',
    tx.getTransactionContext<Knex.Transaction>(),
  );
  return { open: row!.open, firstExpiry: row!.first_expiry ? new Date(row!.first_expiry) : null };
}

/** At most `limit` sessions of any organization that expired before `before`, oldest first; rows another transaction is deleting are skipped. */
export async function deleteSessionsExpiredBefore(tx: EntityManager, before: Date, limit: number): Promise<void> {
  await tx.getConnection().execute(
    `delete from oauth_session where id in (
       select id from oauth_session where expires_at < ? order by expires_at limit ? for update skip locked)`,
    [before, limit],
    'run',
    tx.getTransactionContext<Knex.Transaction>(),
  );
}
