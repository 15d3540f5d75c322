import type { EntityManager, Knex } from '@mikro-orm/postgresql';
import type PgBoss from 'pg-boss';
import { announceOnCommit } from '../events/announce-on-commit';
import type { EventBus } from '../events/event-bus';
import type { Metrics } from '../observability/metrics';
import { currentOrigin } from '../observability/origin';
import { activeTraceContext } from '../observability/trace-context';
import type { Clock } from '../shared/clock';
import type { QueueDefinition } from './queue';
import { statementsIn } from '../db/statements';
import { AsyncWorkStatus, recordChange, recordQueued } from './work-ledger';

export interface EnqueueDeps {
  boss: PgBoss;
  events: EventBus;
  clock: Clock;
  metrics: Metrics | undefined;
  /** Attempts a unit of work is allowed: 1 + JOB_RETRY_LIMIT. */
  maxAttempts: number;
}

export interface EnqueueOptions {
  startAfter?: Date;
  /** A retry: the unit of work the job carries on (its row goes back to QUEUED). */
  workId?: string;
}

/** pg-boss writes `$1`-style SQL; MikroORM's knex transaction takes `?` bindings. */
function toKnexBindings(text: string, values: unknown[]): { sql: string; bindings: unknown[] } {
  const bindings: unknown[] = [];
  const sql = text.replace(/\?/g, '\\?').replace(/\$(\d+)/g, (_match, index: string) => {
    bindings.push(values[Number(index) - 1]);
    return '?';
  });
  return { sql, bindings };
}

/**
 * Adds a job and its unit of work's row in the transaction of `em` (no job without the state change, no change
 * without the job); when that transaction commits, the queue's workers in every process are woken.
 */
export async function enqueueJob<P extends object>(
  deps: EnqueueDeps,
  em: EntityManager,
  queue: QueueDefinition<P>,
  payload: P,
  options: EnqueueOptions,
): Promise<string> {
  const trx = em.getTransactionContext<Knex.Transaction>();
  if (!trx) throw new Error(`enqueue(${queue.name}) must run inside a transaction`);
  const execute = statementsIn(em);
  // pg-boss writes its job in the same transaction, through the same runner.
  const db = {
    executeSql: async (text: string, values: unknown[]) => {
      const { sql, bindings } = toKnexBindings(text, values);
      return { rows: await execute(sql, bindings) };
    },
  };
  // The clock may be held or moved (tests); pg-boss compares start times with real time: keep the delay.
  const startAfter = options.startAfter
    ? new Date(Date.now() + Math.max(0, options.startAfter.getTime() - deps.clock.now().getTime()))
    : undefined;
  // The request (or job) that caused this one: its id goes on the job's log lines; and the span enqueuing it (a
  // request's, or the job's when a job enqueues one), which the job's own span continues.
  const cause = currentOrigin();
  const origin = cause && { requestId: cause.requestId, ...activeTraceContext() };
  // Its unit of work (docs/async-work.md), in the same transaction: no job without its row.
  const work = options.workId
    ? await recordChange(execute, options.workId, { status: AsyncWorkStatus.QUEUED })
    : await recordQueued(execute, queue, payload, deps.maxAttempts);
  const data = { ...payload, ...(origin ? { origin } : {}), ...(work ? { workId: work.id } : {}) };
  const id = await deps.boss.send(queue.name, data, { db, ...(startAfter ? { startAfter } : {}) });
  // pg-boss answers null when it did not create the job (e.g. an unknown queue): never lose a job silently.
  if (!id) throw new Error(`pg-boss did not create a ${queue.name} job`);
  // Counted as sent: a transaction that rolls back afterwards takes the job with it (rare: a failed request).
  deps.metrics?.jobsCreated.inc({ queue: queue.name });
  if (work) announceOnCommit(em, deps.events, 'async-work.updated', () => work);
  // Woken after the transaction's own announcements: subscribers hear of the change before a job moves it on.
  if (!options.startAfter) announceOnCommit(em, deps.events, 'jobs.enqueued', () => ({ queue: queue.name }), { wakeKey: queue.name });
  return id;
}
