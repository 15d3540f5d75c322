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
}

/** A change: `UPDATE … RETURNING *` or `INSERT … RETURNING *` of one row. */
export interface Change {
  sql: string;
  values: unknown[];
}

/**
 * Runs a change and the writes that go with it (its activity event, its job's completion, its unit of work) as ONE
 * statement: PostgreSQL runs it in one implicit transaction, so all or none of it commits, with no BEGIN or COMMIT
 * and one round trip. The parts run on one snapshot and see none of each other's rows: each reads what it needs
 * from `changed`. Answers the changed row (its raw columns), or undefined when the change matched none (nothing
 * else was written then).
 */
export async function runChange(run: RunStatement, change: Change, following: FollowingWrite[]): Promise<Record<string, unknown> | undefined> {
  const parts = following.map((part, index) => `, following_${index} as (${part.sql})`).join('');
  const answers = following
    .map((part, index) => (part.returned ? `, (select coalesce(jsonb_agg(to_jsonb(f)), '[]'::jsonb) from following_${index} f) as "following_${index}"` : ''))
    .join('');
  const rows = await run(`with changed as (${change.sql})${parts} select changed.*${answers} from changed`, [
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
