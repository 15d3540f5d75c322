import type { RunStatement } from './statements';

/**
 * A write that goes with a change, inside the change's own statement: a data-modifying CTE that reads `changed`
 * (the change's RETURNING rows), so it happens exactly when the change does (`… from changed`, or `… and exists
 * (select 1 from changed)`). docs/write-path.md.
 */
export interface FollowingWrite {
  /**
   * `?` placeholders, filled from `values` in order; or built from the names the statement gives its parts, for a
   * part that reads another's rows (the news of a write, src/events/change-news.ts).
   */
  sql: string | ((nameOf: (part: FollowingWrite) => string) => string);
  values: unknown[];
  /** Given the rows this part RETURNs (as JSON) once the statement has run, when the change changed a row. */
  returned?(rows: Record<string, unknown>[]): void;
  /**
   * Written whatever `changed` holds (a library's own insert, which cannot read it): the statement then requires its
   * change, and fails with UNCHANGED, writing nothing, when the change matched no row.
   */
  unconditional?: boolean;
  /**
   * An SQLSTATE of ours (`lg_refuse`): the statement fails with it, writing nothing, when its change changed a row but
   * this part wrote none. For a write that may find its row taken by another request (`on conflict … do update …
   * where`), which must not leave the change without it.
   */
  requiredOr?: string;
  /**
   * A SELECT run for its effect (`pg_notify`): the statement reads all of it, once, when its change (or read) answers
   * a row. PostgreSQL runs a SELECT in WITH only as far as the statement reads it; data-modifying parts always run.
   */
  sends?: boolean;
}

/** The SQL of each part, named as the statement names it (`prefix` and its index). */
function partsSql(parts: FollowingWrite[], prefix: string): string[] {
  const nameOf = (part: FollowingWrite) => {
    const index = parts.indexOf(part);
    if (index < 0) throw new Error('a part of a statement reads a part the statement does not have');
    return `${prefix}${index}`;
  };
  return parts.map((part) => (typeof part.sql === 'string' ? part.sql : part.sql(nameOf)));
}

/** The SQLSTATE of a statement whose change matched no row while a part of it is `unconditional` (lg_refuse). */
const UNCHANGED = 'LGNCH';

const SQLSTATE = /^[0-9A-Z]{5}$/;

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
  const sql = partsSql(along, 'along_');
  const parts = along.map((_part, index) => `along_${index} as (${sql[index]})`).join(', ');
  // The writes' rows ride on one row of the answer (the first PostgreSQL numbers), not on each.
  const answers = along.map((part, index) =>
    part.returned
      ? `, case when row_number() over () = 1 then (select coalesce(jsonb_agg(to_jsonb(a)), '[]'::jsonb) from along_${index} a) end as "along_${index}"`
      : part.sends
        ? `, case when row_number() over () = 1 then (select count(*) from along_${index}) end as "along_${index}"`
        : '',
  );
  const statement = `with ${parts}, lg_read as (${select.sql}) select lg_read.*${answers.join('')} from lg_read`;
  const rows = await run(statement, [...along.flatMap((part) => part.values), ...select.values]);
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
  const sql = partsSql(following, 'following_');
  const parts = following.map((_part, index) => `, following_${index} as (${sql[index]})`).join('');
  const answers = following
    .map((part, index) =>
      part.returned
        ? `, (select coalesce(jsonb_agg(to_jsonb(f)), '[]'::jsonb) from following_${index} f) as "following_${index}"`
        : part.sends
          ? `, (select count(*) from following_${index}) as "following_${index}"`
          : '',
    )
    .join('');
  const locks = change.locks ? `${change.locks.sql}, ` : '';
  // Read before `changed` is (a one-time filter): with no row changed, or a required part without its row, it ends
  // the statement and its writes. Each check answers true or raises.
  const checks = following.flatMap((part, index) => {
    if (part.requiredOr && !SQLSTATE.test(part.requiredOr)) throw new Error(`not an SQLSTATE: ${part.requiredOr}`);
    return part.requiredOr
      ? [`case when exists (select 1 from following_${index}) or not exists (select 1 from changed) then true else lg_refuse('${part.requiredOr}', '{}'::jsonb) end`]
      : [];
  });
  if (following.some((part) => part.unconditional)) checks.unshift(`case when exists (select 1 from changed) then true else lg_refuse('${UNCHANGED}', '{}'::jsonb) end`);
  const required = checks.length > 0 ? { cte: `, lg_required as (select ${checks.join(' and ')} as ok)`, where: ' where (select ok from lg_required)' } : { cte: '', where: '' };
  const rows = await run(`with ${locks}changed as (${change.sql})${parts}${required.cte} select changed.*${answers} from changed${required.where}`, [
    ...(change.locks?.values ?? []),
    ...change.values,
    ...following.flatMap((part) => part.values),
  ]);
  const row = rows[0];
  if (!row) return undefined;
  following.forEach((part, index) => {
    const key = `following_${index}`;
    part.returned?.(row[key] as Record<string, unknown>[]);
    delete row[key];
  });
  return row;
}
