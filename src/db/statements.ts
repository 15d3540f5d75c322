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

/** A connection of knex's pool: node-postgres's `Client`, of which this module uses `query` alone. */
interface PgConnection {
  query(config: { text: string; values: unknown[]; name?: string }): Promise<{ rows: Record<string, unknown>[] }>;
}

/** A text as the driver takes it (`$1`, `$2`, …) and its prepared statement's name, once per text. */
interface Statement {
  text: string;
  name: string | undefined;
}

/**
 * Each text this process prepared, converted and named once. A name is given once per text and the same text always
 * gets the same one, as each connection keeps what it prepared by name. Bounded: a text past the bound runs
 * unprepared, so a caller that builds texts from its data cannot fill every connection's memory.
 */
const preparedStatements = new Map<string, Statement>();
export const MAX_PREPARED_STATEMENTS = 400;

/** `?` to `$n`, as knex's PostgreSQL client numbers them (no text of ours escapes a `?`). */
function positional(sql: string): string {
  let count = 0;
  return sql.replace(/\?/g, () => `$${++count}`);
}

function statementOf(sql: string, prepared: boolean): Statement {
  if (!prepared) return { text: positional(sql), name: undefined };
  let statement = preparedStatements.get(sql);
  if (!statement) {
    if (preparedStatements.size >= MAX_PREPARED_STATEMENTS) return { text: positional(sql), name: undefined };
    statement = { text: positional(sql), name: `lg_${preparedStatements.size.toString(36)}` };
    preparedStatements.set(sql, statement);
  }
  return statement;
}

/** Who counts the statements sent on a knex instance's connections (the database's `statementCount`, src/db/orm.ts). */
const statementCounters = new WeakMap<object, () => void>();

/** `count` is called for each statement this module sends on `knex`'s connections. */
export function countStatementsOf(knex: object, count: () => void): void {
  statementCounters.set(knex, count);
}

/**
 * On a connection of the ORM's pool (knex's `acquireConnection`, its own pool and its checks of a broken connection),
 * or on the transaction's: the driver's query, without a query builder in between. These statements are the write
 * path's, sent at every call: knex's raw query converted the text and its values again at each one (its `?` to `$n`
 * twice over an 8 KB text), where the conversion here is made once per text.
 */
function statementsOn(em: EntityManager, transaction: Knex.Transaction | undefined, { prepared = true }: StatementOptions): RunStatement {
  const knex = em.getConnection().getKnex();
  const pool = knex.client as Knex.Client;
  return async (sql, values) => {
    const { text, name } = statementOf(sql, prepared);
    // The driver writes NULL for null; an undefined value is the same to the ORM's own statements.
    const query = { text, values: values.map((value) => (value === undefined ? null : value)), ...(name ? { name } : {}) };
    statementCounters.get(knex)?.();
    if (transaction) {
      // The transaction's connection is back in the pool once it has ended: a statement then must not run on it.
      if (transaction.isCompleted()) throw new Error('Transaction query already complete');
      const connection = (await (transaction.client as Knex.Client).acquireConnection()) as PgConnection;
      return (await connection.query(query)).rows;
    }
    const connection = (await pool.acquireConnection()) as PgConnection;
    try {
      return (await connection.query(query)).rows;
    } finally {
      await pool.releaseConnection(connection);
    }
  };
}
