import { DeadlockException, LockMode, type EntityClass, type FilterQuery } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';

/**
 * The one way to change a record that requests and jobs both change (brands, locations and their update jobs,
 * posts, reviews, accounts, citations): in a short transaction of its own that first takes the row's lock
 * (SELECT … FOR UPDATE) and reads the row as committed, so the change applies to the latest version and the
 * version check of the flush cannot fail; never across a provider call. A row that is gone is `null`, which each
 * caller treats as its own outcome (a 404, or a job with nothing left to do). Rows are locked parent first (a
 * location before its update job), so two transactions never wait on each other; should PostgreSQL still report a
 * deadlock, the transaction is run again. docs/decisions.md, "Records that requests and jobs both change".
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
