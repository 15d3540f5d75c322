import { ReferenceKind, type EntityClass, type EntityProperty, type MetadataStorage } from '@mikro-orm/core';
import type { EntityManager, Knex } from '@mikro-orm/postgresql';
import { codecOf } from './entity-codec';

/** One transition's SQL, built once per shape (which properties it sets and tests); each call fills in its values. */
interface PreparedTransition {
  sql: string;
  /** updatedAt is set to the call's `now` (the entity has one, and the call does not set it itself). */
  stamped: boolean;
}
const preparedTransitions = new WeakMap<MetadataStorage, Map<string, PreparedTransition>>();

/**
 * Changes one row in one statement, `UPDATE … SET … WHERE <guard> RETURNING *`, and answers it as committed by that
 * statement (a plain instance, as `findPlain` gives) or null when no row holds the guard any more. For the hot
 * transitions of jobs whose guard is the whole rule (a post still waiting for its publish): no read before it and
 * no lock held between two statements, where `changeLocked` (src/db/row-lock.ts) reads the row, locks it and
 * flushes the ORM's change set. As a flush would: the version is counted and `updatedAt` stamped from `now`
 * (src/db/orm.ts). `where` and `set` hold scalar properties only; a null in `where` tests IS NULL. The SQL is
 * written from the entity's metadata (table, columns, version property), the one description of its fields, once
 * per shape. Run it in the change's transaction (`em` is the transaction's), so what the transition records goes
 * with it.
 */
export async function transitionRow<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: Partial<Record<keyof T & string, string | null>>,
  set: Partial<Record<keyof T & string, string | Date | null>>,
  now: Date,
): Promise<T | null> {
  const metadata = em.getMetadata();
  const meta = metadata.get<T>(entity.name);
  const properties = meta.properties as Record<string, EntityProperty<T>>;
  const column = (property: string) => {
    const prop = properties[property];
    if (!prop || prop.kind !== ReferenceKind.SCALAR) throw new Error(`transitionRow(${entity.name}): ${property} is not a scalar property`);
    return `"${prop.fieldNames[0]}"`;
  };
  const setKeys = Object.keys(set);
  const whereEntries = Object.entries(where) as [string, string | null][];
  const shape = JSON.stringify([setKeys, whereEntries.map(([key, value]) => [key, value === null])]);
  let byShape = preparedTransitions.get(metadata);
  if (!byShape) preparedTransitions.set(metadata, (byShape = new Map<string, PreparedTransition>()));
  let prepared = byShape.get(`${entity.name}|${shape}`);
  if (!prepared) {
    const version: string | undefined = meta.versionProperty;
    const stamped = 'updatedAt' in properties && !setKeys.includes('updatedAt');
    const assignments = [
      ...setKeys.map((key) => `${column(key)} = ?`),
      ...(stamped ? [`${column('updatedAt')} = ?`] : []),
      ...(version ? [`${column(version)} = ${column(version)} + 1`] : []),
    ];
    const tests = whereEntries.map(([key, value]) => (value === null ? `${column(key)} is null` : `${column(key)} = ?`));
    const sql = `update "${meta.tableName}" set ${assignments.join(', ')} where ${tests.join(' and ')} returning *`;
    prepared = { sql, stamped };
    byShape.set(`${entity.name}|${shape}`, prepared);
  }
  const bindings = [
    ...setKeys.map((key) => set[key as keyof T & string] ?? null),
    ...(prepared.stamped ? [now] : []),
    ...whereEntries.flatMap(([, value]) => (value === null ? [] : [value])),
  ];
  const rows = await em.getConnection().execute<Record<string, unknown>[]>(prepared.sql, bindings, 'all', em.getTransactionContext<Knex.Transaction>());
  const row = rows[0];
  if (!row) return null;
  // The row as `find` would map it (columns to properties), then a plain instance, as the prepared reads give.
  return codecOf(metadata, entity).decode(em.getComparator().mapResult<Record<string, unknown>>(entity.name, row));
}
