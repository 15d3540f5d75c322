import { DeadlockException, LockMode, ReferenceKind, type EntityClass, type EntityDictionary, type FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * The one way to change a record that requests and jobs both change: a short transaction of its own that first takes
 * the row's lock and reads the row as committed, never across a provider call (docs/decisions.md, "Records that
 * requests and jobs both change"). A row that is gone is `null`, each caller's own outcome. Lock parents first (a
 * location before its update job); should PostgreSQL still report a deadlock, the transaction is run again.
 */
export async function changeLocked<T extends object, R>(
  em: EntityManager,
  entity: EntityClass<T>,
  where: FilterQuery<T>,
  change: (row: T, tx: EntityManager) => Promise<R> | R,
): Promise<{ row: T; result: R } | null> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      // A fork of its own: an identity map of the caller's could hold an older copy of the row.
      return await em.fork().transactional(async (tx) => {
        const row = await lockRow(tx, entity, where);
        if (!row) return null;
        return { row, result: await change(row, tx) };
      });
    } catch (error) {
      if (!(error instanceof DeadlockException) || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}

const MAX_ATTEMPTS = 3;

/**
 * Locks another row inside a `changeLocked` transaction (a child after its parent); null when it is gone; the row is
 * read as committed (`refresh`: a copy the transaction read before, unlocked, would otherwise keep its older values
 * and version, and its flush would then fail the version check).
 *
 * The lock is `FOR NO KEY UPDATE`, the one PostgreSQL's own UPDATE of the row takes: it guards the row's fields,
 * and queues every other change of them, but not the `FOR KEY SHARE` that an insert referencing the row takes for
 * its foreign key. So a transaction holding a parent (an account during its re-sync) and then waiting for a child
 * (a review) never waits in a cycle with one holding that child and queueing a job, whose unit of work references
 * the parent (docs/decisions.md, "Order"). A transaction that deletes the row takes `lockRowToDelete` instead.
 */
export async function lockRow<T extends object>(tx: EntityManager, entity: EntityClass<T>, where: FilterQuery<T>): Promise<T | null> {
  // As MikroORM's own lock modes: a lock outside a transaction would end with its statement.
  if (!tx.isInTransaction()) throw new Error(`lockRow(${entity.name}) must run inside a transaction`);
  // MikroORM's lock modes stop at FOR UPDATE: its query builder writes the select, knex the lock clause.
  const query = tx.createQueryBuilder(entity).select(storedFields(tx, entity)).where(where).limit(1).getKnexQuery().forNoKeyUpdate();
  const [row] = await tx.execute<EntityDictionary<T>[]>(query);
  return row ? tx.map(entity, row) : null;
}

/** The fields `findOne` reads: every one stored in the row, but the lazy ones (read only when asked for). */
function storedFields<T extends object>(tx: EntityManager, entity: EntityClass<T>): (keyof T & string)[] {
  return tx
    .getMetadata(entity)
    .props.filter((prop) => !prop.lazy && prop.persist !== false)
    .filter((prop) => prop.kind === ReferenceKind.SCALAR || prop.kind === ReferenceKind.MANY_TO_ONE || (prop.kind === ReferenceKind.ONE_TO_ONE && prop.owner))
    .map((prop) => prop.name);
}

/**
 * Locks a row the transaction deletes (`FOR UPDATE`, which a DELETE takes): from then on no insert may reference it,
 * as one waits for the delete and then fails, instead of committing a row the delete would miss (a disconnect
 * counting the accounts still connected through a consent before removing it).
 */
export function lockRowToDelete<T extends object>(tx: EntityManager, entity: EntityClass<T>, where: FilterQuery<T>): Promise<T | null> {
  return tx.findOne(entity, where, { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true });
}
