import type { PoolSnapshot } from '../observability/metrics';
import { ChangeSetType, type EntityClass, type EventSubscriber, type FlushEventArgs } from '@mikro-orm/core';
import { MikroORM, type Options } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import { systemClock, type Clock } from '../shared/clock';
import { Migrator } from '@mikro-orm/migrations';
import { countStatementsOf } from './statements';
import { migrations } from '../../migrations';

export interface Database {
  orm: MikroORM;
  /** SQL statements sent since start; read by tests and benchmarks to prove batching. */
  statementCount(): number;
  close(): Promise<void>;
}

/** Every entity of the service: the modules' (src/modules.ts composition.entities). */
export type Entities = readonly EntityClass<object>[];

export function ormOptions(clientUrl: string, entities: Entities): Options {
  return {
    clientUrl,
    entities: [...entities],
    extensions: [Migrator],
    // Entities carry explicit column types, so discovery needs no TypeScript metadata at run time.
    discovery: { warnWhenNoEntities: true },
    allowGlobalContext: false,
    forceUtcTimezone: true,
    pool: { min: 0, max: 10 },
    // The write path's named prepared statements (src/db/statements.ts) run their generic plan from the first call:
    // they are key lookups and guarded writes whose plan does not depend on the values, and PostgreSQL's own choice
    // kept planning some of them at every call (docs/write-path.md, "Prepared statements"). Statements with their
    // values in the text (the ORM's) are planned at every call whatever this says.
    driverOptions: { connection: { options: '-c plan_cache_mode=force_generic_plan' } },
    migrations: {
      tableName: 'mikro_orm_migrations',
      // Applied migrations are reported through our own structured log, not the migrator's console.
      silent: true,
      path: 'migrations',
      pathTs: 'migrations',
      // Listed in code (migrations/index.ts), so the same list runs from TypeScript, from dist/ and under jest.
      migrationsList: migrations,
      snapshot: false,
      transactional: true,
      allOrNothing: true,
      emit: 'ts',
    },
  };
}

/**
 * Every update of an entity with an `updatedAt` stamps it from the runtime's clock (tests move that clock), in
 * the same flush; the ORM's `version` property counts the changes.
 */
function updateTimeStamper(clock: Clock): EventSubscriber {
  return {
    onFlush({ uow }: FlushEventArgs) {
      for (const changeSet of uow.getChangeSets()) {
        if (changeSet.type !== ChangeSetType.UPDATE || !changeSet.meta.properties['updatedAt' as never]) continue;
        (changeSet.entity as { updatedAt: Date | null }).updatedAt = clock.now();
        uow.recomputeSingleChangeSet(changeSet.entity);
      }
    },
  };
}

/**
 * A transaction whose BEGIN (or SAVEPOINT) failed is handed out by knex as if it had begun: its first statement then
 * fails with "Transaction query already complete", which names no cause, and the cause (the connection was lost or
 * terminated: a 503) only rejects the transaction's execution promise. The begin fails with that cause instead.
 */
function beginFailsWithItsCause(orm: MikroORM): void {
  const connection = orm.em.getConnection();
  const begin = connection.begin.bind(connection);
  connection.begin = async (options) => {
    const trx = await begin(options);
    if (trx.isCompleted()) {
      await trx.executionPromise;
      throw new Error('The transaction ended before it began');
    }
    return trx;
  };
}

/**
 * knex's own messages (a pooled connection found broken: "Connection Error: …") go to the service's log as
 * structured lines, instead of console.log beside it.
 */
function driverLog(log: FastifyBaseLogger): Options['driverOptions'] {
  return {
    log: {
      warn: (message: unknown) => log.warn({ driverMessage: String(message) }, 'database driver warning'),
      error: (message: unknown) => log.error({ driverMessage: String(message) }, 'database driver error'),
      deprecate: (message: unknown) => log.debug({ driverMessage: String(message) }, 'database driver deprecation'),
      debug: (message: unknown) => log.debug({ driverMessage: String(message) }, 'database driver debug'),
    },
  };
}

export async function openDatabase(clientUrl: string, options: { entities: Entities; clock?: Clock; log?: FastifyBaseLogger }): Promise<Database> {
  const base = ormOptions(clientUrl, options.entities);
  const orm = await MikroORM.init({
    ...base,
    ...(options.log ? { driverOptions: { ...base.driverOptions, ...driverLog(options.log) } } : {}),
    subscribers: [updateTimeStamper(options.clock ?? systemClock)],
  });
  beginFailsWithItsCause(orm);
  let statements = 0;
  const count = () => {
    statements += 1;
  };
  // The ORM's statements through knex, and the write path's on knex's connections (src/db/statements.ts).
  orm.em.getConnection().getKnex().on('query', count);
  countStatementsOf(orm.em.getConnection().getKnex(), count);
  return {
    orm,
    statementCount: () => statements,
    close: () => orm.close(true),
  };
}

/** Applies every pending migration; returns the names applied. */
export async function migrate(database: Database): Promise<string[]> {
  const applied = await database.orm.getMigrator().up();
  return applied.map((migration) => migration.name);
}

/** The ORM pool's connections now (knex's tarn pool), for the metrics scrape; undefined before the pool exists. */
export function poolSnapshot(database: Database): PoolSnapshot | undefined {
  const { pool } = database.orm.em.getConnection().getKnex().client as { pool?: { numUsed(): number; numFree(): number; numPendingAcquires(): number } };
  return pool ? { inUse: pool.numUsed(), idle: pool.numFree(), waiting: pool.numPendingAcquires() } : undefined;
}
