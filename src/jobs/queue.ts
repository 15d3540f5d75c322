/**
 * A job queue, declared by the module whose workers take its jobs (docs/jobs.md). Payloads carry ids, never
 * records: a worker reloads the entity and checks its state, so running a job twice is harmless.
 */

type FieldKind = 'string' | 'number';

/** The payload a field list describes: `{ postId: 'string' }` -> `{ postId: string }`. */
export type PayloadOf<S extends Record<string, FieldKind>> = { [K in keyof S]: S[K] extends 'number' ? number : string };

/**
 * Who owns the record a job's work is about: a FROM clause naming the row `?`, and the columns it gives as
 * `organization_id, account_id` (the work's row is inserted from it, in one statement).
 */
export interface WorkOwner {
  columns: string;
  from: string;
  /** The same FROM clause over the row a statement writes (`changed`, src/db/change-statement.ts) instead of the row `?`. */
  fromChanged: string;
}

/** The owner of a row of a table that has `organization_id` and `account_id` columns. */
export function ownedRow(table: string): WorkOwner {
  return { columns: 'organization_id, account_id', from: `from "${table}" where id = ?`, fromChanged: 'from changed' };
}

/** What a job of the queue is as a unit of asynchronous work (docs/async-work.md). */
export interface QueueWork<P> {
  /** The work's kind (AsyncWorkKind), declared by a module's work kinds. */
  kind: string;
  /** The id of the record the work is about. */
  subject(payload: P): string;
  owner: WorkOwner;
}

export interface QueueDefinition<P extends object = object> {
  readonly name: string;
  /** Payloads come back from the database as `unknown`: this check is the only way to a typed one. */
  isPayload(data: unknown): data is P;
  /** Null for jobs that are not units of work a client follows (webhook deliveries have their own log). */
  readonly work: QueueWork<P> | null;
  /** The provider its jobs call, if any: what the fault tests aim at, and what a pause of that provider holds back. */
  readonly provider?: 'alpha' | 'beta';
  /**
   * Its jobs are bulk work (an import's pages, a scan's searches): their calls take their provider budget's slots
   * after the calls of work a person asked for (docs/jobs.md, "Provider budgets").
   */
  readonly bulk?: boolean;
}

export function defineQueue<const S extends Record<string, FieldKind>>(definition: {
  name: string;
  payload: S;
  work: QueueWork<PayloadOf<S>> | null;
  provider?: 'alpha' | 'beta';
  bulk?: boolean;
}): QueueDefinition<PayloadOf<S>> {
  const fields = Object.entries(definition.payload);
  return {
    name: definition.name,
    work: definition.work,
    provider: definition.provider,
    bulk: definition.bulk,
    isPayload: (data): data is PayloadOf<S> =>
      typeof data === 'object' && data !== null && !Array.isArray(data) && fields.every(([field, kind]) => typeof (data as Record<string, unknown>)[field] === kind),
  };
}

/**
 * Where a queue's jobs go when their retries are exhausted (or their worker died on the last attempt): the engine
 * takes them from there to settle their records (src/jobs/dead-letters.ts), and they stay listed for inspection.
 */
export function deadLetterQueueOf(queue: string): string {
  return `${queue}-dead`;
}

/** The payload of a queue's jobs: `JobPayload<typeof postPublishQueue>`. */
export type JobPayload<Q> = Q extends QueueDefinition<infer P> ? P : never;
