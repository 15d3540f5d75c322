import type { EntityManager } from '@mikro-orm/postgresql';
import type { AsyncWorkKind, AsyncWorkStatus } from '../jobs/work-ledger';

/** Units of work of one kind in one status. */
export interface WorkCount {
  kind: AsyncWorkKind;
  status: AsyncWorkStatus;
  count: number;
}

/**
 * How much work an organization (or one of its accounts) has of each kind in each status, only the pairs it has
 * work of: one grouped count in the database, where the rows are, rather than rows brought back to be counted.
 */
export async function countWorkByKindAndStatus(em: EntityManager, reach: { organization: string; account?: string }): Promise<WorkCount[]> {
  const rows = await em.getConnection().execute<{ kind: AsyncWorkKind; status: AsyncWorkStatus; count: number }[]>(
    `select kind, status, count(*)::int as count from async_work
      where organization_id = ? ${reach.account ? 'and account_id = ?' : ''}
      group by kind, status order by kind, status`,
    reach.account ? [reach.organization, reach.account] : [reach.organization],
  );
  return rows.map((row) => ({ kind: row.kind, status: row.status, count: Number(row.count) }));
}
