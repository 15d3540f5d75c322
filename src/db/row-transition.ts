import { ReferenceKind, type EntityClass, type EntityProperty, type MetadataStorage } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isUnchanged, runChange, type Change, type FollowingWrite } from './change-statement';
import { statementsIn, type RunStatement } from './statements';
import { codecOf } from './entity-codec';

/** One transition's SQL, built once per shape (which properties it sets and tests); each call fills in its values. */
interface PreparedTransition {
  sql: string;
  /** updatedAt is set to the call's `now` (the entity has one, and the call does not set it itself). */
  stamped: boolean;
}
const preparedTransitions = new WeakMap<MetadataStorage, Map<string, PreparedTransition>>();

/**
 * Changes one row in one statement, `UPDATE … SET … WHERE <guard> RETURNING *`, for hot job transitions whose guard is
 * the whole rule: no read before it and no lock held between statements, unlike `changeLocked` (row-lock.ts). Answers
 * the row as committed (a plain instance) or null when no row holds the guard. Like a flush, it counts the version and
 * stamps `updatedAt` from `now`; `where` and `set` hold scalars only, a null in `where` tests IS NULL. Give it the
 * change's transaction's `em`, so what the transition records goes with it; or `following` writes, which then go in
 * the transition's own statement (src/db/change-statement.ts), no transaction needed.
 */
export async function transitionRow<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: Partial<Record<keyof T & string, string | number | boolean | null>>,
  set: Partial<Record<keyof T & string, string | Date | boolean | null>>,
  now: Date,
  following: FollowingWrite[] = [],
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
  const whereEntries = Object.entries(where) as [string, string | number | boolean | null][];
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
  const run = statementsIn(em);
  const row = following.length > 0 ? await runChanged(run, { sql: prepared.sql, values: bindings }, following) : (await run(prepared.sql, bindings))[0];
  if (!row) return null;
  // The row as `find` would map it (columns to properties), then a plain instance, as the prepared reads give.
  return codecOf(metadata, entity).decode(em.getComparator().mapResult<Record<string, unknown>>(entity.name, row));
}

/**
 * The entity as `transitionRow(…, where, set, now)` leaves it when `where` pins the version of `read` (the row as
 * read): `read` changed by `set`, its version counted and its update time stamped. For a record written with the
 * transition (its activity event), before the statement runs.
 */
export function transitionedFrom<T extends object>(
  em: EntityManager,
  entity: EntityClass<T>,
  read: T,
  set: Partial<Record<keyof T & string, string | Date | boolean | null>>,
  now: Date,
): T {
  const metadata = em.getMetadata();
  const meta = metadata.get<T>(entity.name);
  const codec = codecOf(metadata, entity);
  const version: string | undefined = meta.versionProperty;
  const stamped = 'updatedAt' in (meta.properties as object) && !('updatedAt' in set);
  const snapshot = codec.encode(read);
  return codec.decode({
    ...snapshot,
    ...Object.fromEntries(Object.entries(set).map(([key, value]) => [key, value instanceof Date ? value.toISOString() : value])),
    ...(version ? { [version]: Number(snapshot[version]) + 1 } : {}),
    ...(stamped ? { updatedAt: now.toISOString() } : {}),
  });
}

/** runChange, answering undefined as well when an `unconditional` part made the statement fail for want of a change. */
export async function runChanged(run: RunStatement, change: Change, following: FollowingWrite[]): Promise<Record<string, unknown> | undefined> {
  try {
    return await runChange(run, change, following);
  } catch (error) {
    if (isUnchanged(error)) return undefined;
    throw error;
  }
}
