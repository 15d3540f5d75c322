import type { EntityManager, Knex } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import type PgBoss from 'pg-boss';
import { announceOnCommit } from '../events/announce-on-commit';
import type { ChangeNews } from '../events/change-news';
import type { EventBus } from '../events/event-bus';
import type { Metrics } from '../observability/metrics';
import { currentOrigin } from '../observability/origin';
import { activeTraceContext } from '../observability/trace-context';
import type { Clock } from '../shared/clock';
import type { QueueDefinition } from './queue';
import { statementsIn } from '../db/statements';
import type { FollowingWrite } from '../db/change-statement';
import { AsyncWorkStatus, queuedRowsWrite, queuedWrite, recordChange, recordQueued, type AsyncWorkSnapshot } from './work-ledger';

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

/** pg-boss's statement in `?` form, and which of its `$n` values each `?` takes (0-based). */
interface KnexForm {
  sql: string;
  order: number[];
}

/** pg-boss sends a few statement texts, each the same at every call: converted once each (their regexes cost). */
const knexForms = new Map<string, KnexForm>();
const MAX_KNEX_FORMS = 64;

/** pg-boss writes `$1`-style SQL; MikroORM's knex transaction takes `?` bindings. */
function toKnexBindings(text: string, values: unknown[]): { sql: string; bindings: unknown[] } {
  let form = knexForms.get(text);
  if (!form) {
    const order: number[] = [];
    const sql = text.replace(/\?/g, '\\?').replace(/\$(\d+)/g, (_match, index: string) => {
      order.push(Number(index) - 1);
      return '?';
    });
    form = { sql, order };
    // Bounded, in case a text ever carried a value: then it is converted at every call, as before.
    if (knexForms.size < MAX_KNEX_FORMS) knexForms.set(text, form);
  }
  return { sql: form.sql, bindings: form.order.map((index) => values[index]) };
}

/**
 * A job's data: its payload; the request (or job) that caused it, whose id goes on the job's log lines (and whether
 * it expects a refusal), and the
 * span enqueuing it (a request's, or a job's), which the job's own span continues; and its unit of work's id.
 */
function jobData<P extends object>(payload: P, workId: string | undefined): P & { origin?: object; workId?: string } {
  const cause = currentOrigin();
  const origin = cause && { requestId: cause.requestId, ...(cause.refusalExpected ? { refusalExpected: true } : {}), ...activeTraceContext() };
  return { ...payload, ...(origin ? { origin } : {}), ...(workId ? { workId } : {}) };
}

/**
 * A start time of the runtime's clock as pg-boss takes it: the clock may be held or moved (tests), and pg-boss
 * compares start times with real time, so the delay is kept.
 */
function bossStartAfter(deps: EnqueueDeps, startAfter: Date | undefined): Date | undefined {
  return startAfter ? new Date(Date.now() + Math.max(0, startAfter.getTime() - deps.clock.now().getTime())) : undefined;
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
  const startAfter = bossStartAfter(deps, options.startAfter);
  // Its unit of work (docs/async-work.md), in the same transaction: no job without its row.
  const work = options.workId
    ? await recordChange(execute, options.workId, { status: AsyncWorkStatus.QUEUED })
    : await recordQueued(execute, queue, payload, deps.maxAttempts);
  const data = jobData(payload, work?.id);
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

/** What pg-boss asks its `db` to run; `sending` is its call, which ends once `answer` (or `fail`) has been given. */
interface BossStatement<R> {
  insert: { text: string; values: unknown[] };
  answer: (rows: Record<string, unknown>[]) => void;
  fail: (error: unknown) => void;
  sending: Promise<R>;
}

/**
 * The statement a pg-boss call (`send`, `insert`) builds, taken from the `db` it is given (its documented way into a
 * caller's transaction) to go into a change's statement instead of running on its own.
 */
async function bossStatement<R>(queue: string, call: (db: { executeSql(text: string, values: unknown[]): Promise<{ rows: Record<string, unknown>[] }> }) => Promise<R>): Promise<BossStatement<R>> {
  let answer!: (rows: Record<string, unknown>[]) => void;
  let fail!: (error: unknown) => void;
  const answered = new Promise<{ rows: Record<string, unknown>[] }>((resolve, reject) => {
    answer = (rows) => resolve({ rows });
    fail = reject;
  });
  let capture!: (insert: { text: string; values: unknown[] }) => void;
  let refuse!: (error: unknown) => void;
  const captured = new Promise<{ text: string; values: unknown[] }>((resolve, reject) => {
    capture = resolve;
    refuse = reject;
  });
  const sending = call({ executeSql: (text, values) => (capture({ text, values }), answered) });
  // pg-boss hands over its statement, or fails before it (a settled promise ignores the later outcome).
  sending.then(() => refuse(new Error(`pg-boss wrote ${queue} jobs without their statement`)), refuse);
  return { insert: await captured, answer, fail, sending };
}

/** A job enqueued by the statement that inserts its record (src/db/change-statement.ts). */
export interface EnqueueInChange {
  /** The job's row (pg-boss's own insert) and its unit of work's, for that statement. */
  writes: FollowingWrite[];
  /** Once the statement has run: the job's id, as pg-boss answers it. */
  sent(): Promise<string>;
  /** Adds the news of its work and the wake-up of its workers to the statement's, after the record's own. */
  tell(news: ChangeNews): void;
  /** The statement failed: nothing was written. */
  abandon(error: unknown): void;
  /**
   * Runs the statement that carries `writes` (`change`, answering what it changed or nothing): the job is sent when
   * it changed something, abandoned when it failed (the error is thrown on) or changed nothing (null).
   */
  within<T>(change: () => Promise<T | null | undefined>): Promise<T | null>;
}

/**
 * The job of a record's change, and its unit of work's row, as writes of the change's own statement: pg-boss builds
 * its insert as `send` always does and hands it to the `db` it is given (its documented way into a caller's
 * transaction), which here puts it in the change's statement instead of running it. pg-boss's insert cannot read
 * `changed`: it is `unconditional`, so a change that matches no row (a guarded update) fails the statement, job
 * and all (src/db/change-statement.ts); an insert always changes its row.
 */
export async function enqueueWrites<P extends object>(
  deps: EnqueueDeps,
  queue: QueueDefinition<P>,
  payload: P,
  options: Pick<EnqueueOptions, 'startAfter'> = {},
): Promise<EnqueueInChange> {
  let work: AsyncWorkSnapshot | undefined;
  const queued = queue.work ? queuedWrite(queue.work, queue, payload, deps.maxAttempts, (recorded) => (work = recorded)) : undefined;
  const data = jobData(payload, queued?.workId);
  const startAfter = bossStartAfter(deps, options.startAfter);
  const { insert, answer, fail, sending } = await bossStatement(queue.name, (db) => deps.boss.send(queue.name, data, { db, ...(startAfter ? { startAfter } : {}) }));
  const { sql, bindings } = toKnexBindings(insert.text, insert.values);
  let jobRows: Record<string, unknown>[] = [];
  const inChange: EnqueueInChange = {
    writes: [{ sql, values: bindings, returned: (rows) => (jobRows = rows), unconditional: true }, ...(queued ? [queued.write] : [])],
    async sent() {
      answer(jobRows);
      const id = await sending;
      if (!id) throw new Error(`pg-boss did not create a ${queue.name} job`);
      deps.metrics?.jobsCreated.inc({ queue: queue.name });
      return id;
    },
    tell(news) {
      if (queued) news.addRows('async-work.updated', queued.write, () => work);
      // A job that starts later is taken by the poll that finds it due, as enqueueJob's.
      if (!startAfter) news.add('jobs.enqueued', { queue: queue.name });
    },
    abandon(error) {
      fail(error);
      sending.catch(() => undefined); // send fails with the statement's own error, which the caller throws and logs
    },
    async within(change) {
      let changed;
      try {
        changed = await change();
      } catch (error) {
        inChange.abandon(error);
        throw error;
      }
      if (changed === null || changed === undefined) {
        inChange.abandon(new Error(`the change of a ${queue.name} job matched no row`));
        return null;
      }
      await inChange.sent();
      return changed;
    },
  };
  return inChange;
}

/** The bulk jobs of records a statement creates together (`enqueueBulkWrites`), with their units of work. */
export interface BulkEnqueueInChange {
  /** The organization's turns, the jobs' rows (pg-boss's own insert) and their units of work's, for that statement. */
  writes: FollowingWrite[];
  /** Adds the news of their work and the wake-up of their workers to the statement's, after the records' own. */
  tell(news: ChangeNews): void;
  /**
   * Runs the statement that carries `writes`: the jobs are counted as sent when it changed something, abandoned
   * when it failed (the error is thrown on) or changed nothing (null). Answers the jobs' ids with its answer.
   */
  within<T>(change: () => Promise<T | null | undefined>): Promise<{ changed: T; jobIds: string[] } | null>;
}

/** pg-boss's `insert` reads its jobs from its first value, as JSON. */
const JOBS_OF_INSERT = 'json_to_recordset($1)';
/** Where the turns' part goes, once the statement names its parts. */
const TURNS = 'lg_turns_part';

/**
 * An organization's bulk jobs (a campaign's posts) as writes of the statement that inserts their records, each job's
 * subject one of those records, with one unit of work each (`queuedRowsWrite`). Bulk work is queued below the default
 * priority 0 of the work a person asked for one by one, which pg-boss's fetch takes first (`priority desc`), so a
 * campaign of thousands does not hold a single post behind it in the same queue; and in turns between organizations:
 * the n-th bulk job of each organization's backlog gets priority -n, counted from the turn being served when it was
 * queued (`lg_take_bulk_turns`, a part of the statement), so two organizations' campaigns are taken one job of each
 * in turn (docs/jobs.md, "Interactive before bulk"). The jobs are pg-boss's own `insert` (taken from its `db`, as
 * `enqueueWrites` takes `send`'s), each priority set by the statement from the turns it takes; a refused statement
 * takes its turns back with it.
 */
export async function enqueueBulkWrites<P extends object>(deps: EnqueueDeps, queue: QueueDefinition<P>, organizationId: string, payloads: readonly P[]): Promise<BulkEnqueueInChange> {
  let works: AsyncWorkSnapshot[] = [];
  const queued = queue.work ? queuedRowsWrite(queue.work, queue, payloads, deps.maxAttempts, (recorded) => (works = recorded)) : undefined;
  const jobs = payloads.map((payload, index) => ({ id: randomUUID(), name: queue.name, data: jobData(payload, queued?.workIds[index]) }));
  const { insert, answer, fail, sending } = await bossStatement(queue.name, (db) => deps.boss.insert(jobs, { db }));
  // The n-th job (ordinality n, from 1) takes the n-th turn: priority -(first turn + n - 1).
  const text = insert.text.replace(
    JOBS_OF_INSERT,
    `json_to_recordset((select jsonb_agg(j.job || jsonb_build_object('priority', -(t.first_turn + j.n::int - 1))) from jsonb_array_elements($1::jsonb) with ordinality as j(job, n), ${TURNS} t)::json)`,
  );
  if (text === insert.text) {
    fail(new Error('pg-boss insert statement not recognized'));
    sending.catch(() => undefined); // the error below says it
    throw new Error(`pg-boss's insert no longer reads its jobs as ${JOBS_OF_INSERT}: the bulk turns cannot be set`);
  }
  const { sql, bindings } = toKnexBindings(text, insert.values);
  const turns: FollowingWrite = { sql: 'select lg_take_bulk_turns(?, ?, ?) as first_turn', values: [queue.name, organizationId, payloads.length] };
  const abandon = (error: unknown) => {
    fail(error);
    sending.catch(() => undefined); // insert fails with the statement's own error, which the caller throws and logs
  };
  return {
    // pg-boss's insert returns no rows: the statement reads nothing of it, and the ids are the ones given above.
    writes: [turns, { sql: (nameOf) => sql.replace(TURNS, nameOf(turns)), values: bindings, unconditional: true }, ...(queued ? [queued.write] : [])],
    tell(news) {
      if (queued) news.addRows('async-work.updated', queued.write, () => works);
      news.add('jobs.enqueued', { queue: queue.name });
    },
    async within(change) {
      let changed;
      try {
        changed = await change();
      } catch (error) {
        abandon(error);
        throw error;
      }
      if (changed === null || changed === undefined) {
        abandon(new Error(`the change of ${queue.name} jobs matched no row`));
        return null;
      }
      answer([]);
      await sending;
      deps.metrics?.jobsCreated.inc({ queue: queue.name }, jobs.length);
      return { changed, jobIds: jobs.map((job) => job.id) };
    },
  };
}
