import type { EntityManager, Knex } from '@mikro-orm/postgresql';

/**
 * Takes the advisory lock of `key` for the rest of `tx`'s transaction (`pg_advisory_xact_lock`). For a check that
 * no row can be locked for (a count of rows, a key not yet stored): concurrent transactions of one key check one
 * after the other, so a limit or a uniqueness holds exactly, and PostgreSQL releases the lock at commit or
 * rollback, so no path can forget to. Keys hash to 32 bits (`hashtext`): two keys that collide only queue.
 */
export async function lockUntilCommit(tx: EntityManager, key: string): Promise<void> {
  await tx.getConnection().execute('select pg_advisory_xact_lock(hashtext(?))', [key], 'all', tx.getTransactionContext<Knex.Transaction>());
}
