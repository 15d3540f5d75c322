import type { EntityManager, Knex } from '@mikro-orm/postgresql';

/**
 * Runs one SQL statement (`?` placeholders) and gives its rows: what a typed SQL layer that is handed its
 * connection takes (the work ledger's `Execute`, src/jobs/work-ledger.ts). Where its statements run is the
 * caller's choice, made once by which of the two below it passes.
 *
 * Both send the values as parameters of a named prepared statement (docs/write-path.md, "Prepared statements"):
 * PostgreSQL parses and plans a statement's text once per connection instead of at every call, and only the values
 * cross the wire after the first. So a text must not grow with the data: a list of values is one array parameter
 * (`= any(?::uuid[])`, `unnest(?::text[])`), never one placeholder per item. A statement whose text does vary with
 * its data (a campaign's rows) asks for `{ prepared: false }`.
 */
export type RunStatement = (sql: string, values: unknown[]) => Promise<Record<string, unknown>[]>;

export interface StatementOptions {
  /** False: parameters, but no prepared statement (a text that varies with the data, kept by no connection). */
  prepared?: boolean;
}

/** Statements in `tx`'s transaction (when it has one), so they commit or roll back with the change they belong to. */
export function statementsIn(tx: EntityManager, options: StatementOptions = {}): RunStatement {
  return statementsOn(tx, tx.getTransactionContext<Knex.Transaction>(), options);
}

/**
 * Statements each on a pooled connection of its own, outside any transaction (even when called from inside one):
 * for a record that must be written whatever becomes of the caller's transaction.
 */
export function statementsApart(em: EntityManager, options: StatementOptions = {}): RunStatement {
  return statementsOn(em, undefined, options);
}

/**
 * The name of each statement text this process has prepared. A name is given once per text and the same text
 * always gets the same one, as each connection keeps what it prepared by name. Bounded: a text past the bound runs
 * unprepared, so a caller that builds texts from its data cannot fill every connection's memory.
 */
const preparedNames = new Map<string, string>();
export const MAX_PREPARED_STATEMENTS = 400;

function preparedNameOf(sql: string): string | undefined {
  let name = preparedNames.get(sql);
  if (name === undefined && preparedNames.size < MAX_PREPARED_STATEMENTS) {
    name = `lg_${preparedNames.size.toString(36)}`;
    preparedNames.set(sql, name);
  }
  return name;
}

function statementsOn(em: EntityManager, transaction: Knex.Transaction | undefined, { prepared = true }: StatementOptions): RunStatement {
  const knex = em.getConnection().getKnex();
  return async (sql, values) => {
    // knex refuses an undefined binding; the ORM's own statements write NULL for it.
    const bindings = values.map((value) => (value === undefined ? null : value)) as Knex.RawBinding[];
    const query = knex.raw(sql, bindings);
    const name = prepared ? preparedNameOf(sql) : undefined;
    // knex's documented `options()` hands these to the driver's query config: pg's named prepared statement.
    if (name) query.options({ name });
    if (transaction) query.transacting(transaction);
    const result = (await query) as { rows: Record<string, unknown>[] };
    return result.rows;
  };
}
