import type { EntityManager, Knex } from '@mikro-orm/postgresql';

/**
 * Runs one SQL statement (`?` placeholders) and gives its rows: what a typed SQL layer that is handed its
 * connection takes (the work ledger's `Execute`, src/jobs/work-ledger.ts). Where its statements run is the
 * caller's choice, made once by which of the two below it passes.
 */
export type RunStatement = (sql: string, values: unknown[]) => Promise<Record<string, unknown>[]>;

/** Statements in `tx`'s transaction, so they commit or roll back with the change they belong to. */
export function statementsIn(tx: EntityManager): RunStatement {
  const connection = tx.getConnection();
  const transaction = tx.getTransactionContext<Knex.Transaction>();
  return (sql, values) => connection.execute(sql, values, 'all', transaction);
}

/**
 * Statements each on a pooled connection of its own, outside any transaction (even when called from inside one):
 * for a record that must be written whatever becomes of the caller's transaction.
 */
export function statementsApart(em: EntityManager): RunStatement {
  return (sql, values) => em.getConnection().execute(sql, values);
}
