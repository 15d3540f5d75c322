import type { RunStatement } from './statements';

/**
 * A write that goes with a change, inside the change's own statement: a data-modifying CTE that reads `changed`
 * (the change's RETURNING rows), so it happens exactly when the change does (`… from changed`, or `… and exists
 * (select 1 from changed)`). docs/write-path.md.
 */
export interface FollowingWrite {
  /** `?` placeholders, filled from `values` in order. */
  sql: string;
  values: unknown[];
  /** Given the rows this part RETURNs (as JSON) once the statement has run, when the change changed a row. */
  returned?(rows: Record<string, unknown>[]): void;
  /**
   * Written whatever `changed` holds (a library's own insert, which cannot read it): the statement then requires its
   * change, and fails with UNCHANGED, writing nothing, when the change matched no row.
   */
  unconditional?: boolean;
}

/** The SQLSTATE of a statement whose change matched no row while a part of it is `unconditional` (lg_refuse). */
const UNCHANGED = 'LGNCH';

/** The statement's change matched no row, so nothing of it was written (`FollowingWrite.unconditional`). */
export function isUnchanged(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === UNCHANGED;
}

/**
 * A write carried by a read's statement (`with along_0 as (…) select …`): it runs whatever the read finds, and
 * `returned` gets its rows when the read answers a row.
 */
export type WriteAlong = FollowingWrite;

/**
 * Runs `select` (which must not begin with WITH) with `along` written in the same statement; answers its first row,
 * without the writes' columns.
 */
export async function readWith(run: RunStatement, select: Change, along: WriteAlong[]): Promise<Record<string, unknown> | undefined> {
  return (await readAllWith(run, select, along))[0];
}

/**
 * `readWith` answering every row `select` finds: for the reads of several jobs at once (src/db/batched-read.ts).
 * Each write's `returned` gets its rows when the read found any (they ride on the first row).
 */
export async function readAllWith(run: RunStatement, select: Change, along: WriteAlong[]): Promise<Record<string, unknown>[]> {
  if (along.length === 0) return run(select.sql, select.values);
  const parts = along.map((part, index) => `along_${index} as (${part.sql})`).join(', ');
  // The writes' rows ride on one row of the answer (the first PostgreSQL numbers), not on each.
  const answers = along.map((part, index) =>
    part.returned ? `, case when row_number() over () = 1 then (select coalesce(jsonb_agg(to_jsonb(a)), '[]'::jsonb) from along_${index} a) end as "along_${index}"` : '',
  );
  const sql = `with ${parts}, lg_read as (${select.sql}) select lg_read.*${answers.join('')} from lg_read`;
  const rows = await run(sql, [...along.flatMap((part) => part.values), ...select.values]);
  along.forEach((part, index) => {
    const key = `along_${index}`;
    const carrier = rows.find((row) => row[key] != null);
    if (carrier && part.returned) part.returned(carrier[key] as Record<string, unknown>[]);
    for (const row of rows) delete row[key];
  });
  return rows;
}

/** A change: `UPDATE … RETURNING *` or `INSERT … RETURNING *` of one row. */
export interface Change {
  sql: string;
  values: unknown[];
  /**
   * CTEs before it (`name as (…), …`): rows it locks first, in the order every transaction takes them, or the count
   * that admits it (src/limits/rate-limiter.ts `rateLimitInChange`).
   */
  locks?: { sql: string; values: unknown[] };
}

/**
 * Runs a change and the writes that go with it (its activity event, its job's completion, its unit of work) as ONE
 * statement: PostgreSQL runs it in one implicit transaction, so all or none of it commits, with no BEGIN or COMMIT
 * and one round trip. The parts run on one snapshot and see none of each other's rows: each reads what it needs
 * from `changed`. Answers the changed row (its raw columns), or undefined when the change matched none (nothing
 * else was written then; with an `unconditional` part, the statement fails instead: `isUnchanged`).
 */
export async function runChange(run: RunStatement, change: Change, following: FollowingWrite[]): Promise<Record<string, unknown> | undefined> {
  const parts = following.map((part, index) => `, following_${index} as (${part.sql})`).join('');
  const answers = following
    .map((part, index) => (part.returned ? `, (select coalesce(jsonb_agg(to_jsonb(f)), '[]'::jsonb) from following_${index} f) as "following_${index}"` : ''))
    .join('');
  const locks = change.locks ? `${change.locks.sql}, ` : '';
  // Read before `changed` is (a one-time filter): with no row changed, it ends the statement and its writes.
  const required = following.some((part) => part.unconditional)
    ? {
        cte: `, lg_required as (select case when exists (select 1 from changed) then true else lg_refuse('${UNCHANGED}', '{}'::jsonb) end as ok)`,
        where: ' where (select ok from lg_required)',
      }
    : { cte: '', where: '' };
  const rows = await run(`with ${locks}changed as (${change.sql})${parts}${required.cte} select changed.*${answers} from changed${required.where}`, [
    ...(change.locks?.values ?? []),
    ...change.values,
    ...following.flatMap((part) => part.values),
  ]);
  const row = rows[0];
  if (!row) return undefined;
  following.forEach((part, index) => {
    if (!part.returned) return;
    const key = `following_${index}`;
    part.returned(row[key] as Record<string, unknown>[]);
    delete row[key];
  });
  return row;
}
