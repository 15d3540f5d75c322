import { DeadlockException, LockMode, type EntityClass, type FilterQuery } from '@mikro-orm/core';
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
        const row = await tx.findOne(entity, where, LOCKED);
        if (!row) return null;
        return { row, result: await change(row, tx) };
      });
    } catch (error) {
      if (!(error instanceof DeadlockException) || attempt >= MAX_ATTEMPTS) throw error;
    }
  }
}

const MAX_ATTEMPTS = 3;

/** Locks another row inside a `changeLocked` transaction (a child after its parent); null when it is gone. */
export function lockRow<T extends object>(tx: EntityManager, entity: EntityClass<T>, where: FilterQuery<T>): Promise<T | null> {
  return tx.findOne(entity, where, LOCKED);
}

/**
 * The row locked and read as committed: `refresh`, because a copy the transaction read before (unlocked) would
 * otherwise keep its older values and version, and its flush would then fail the version check.
 */
const LOCKED = { lockMode: LockMode.PESSIMISTIC_WRITE, refresh: true } as const;
