import type { EntityManager, Knex } from '@mikro-orm/postgresql';
import { Location } from '../location/location.entity';
import { CitationsStatus } from '../location/location.enums';

/*
 * The citations' statements on the location row, in the caller's transaction. The disabling is one conditional
 * UPDATE rather than a locked read and a flush: of concurrent requests exactly one moves the row, and the others
 * learn it from the statement itself (src/citation/citation.service.ts decides what that means).
 */

/** ACTIVE to DISABLED, stamping `updatedAt`; false when the location is not ACTIVE (or gone). */
export async function disableActiveCitations(tx: EntityManager, locationId: string, now: Date): Promise<boolean> {
  const rows = await tx.getConnection().execute<{ id: string }[]>(
    `update "${tableOf(tx)}" set citations_status = ?, updated_at = ? where id = ? and citations_status = ? returning id`,
    [CitationsStatus.DISABLED, now, locationId, CitationsStatus.ACTIVE],
    'all',
    tx.getTransactionContext<Knex.Transaction>(),
  );
  return rows.length > 0;
}

/** The location's citations status as its row holds it now; null when the location is gone. */
export async function citationsStatusOf(tx: EntityManager, locationId: string): Promise<CitationsStatus | null> {
  const [row] = await tx.getConnection().execute<{ citations_status: CitationsStatus }[]>(
    `select citations_status from "${tableOf(tx)}" where id = ?`,
    [locationId],
    'all',
    tx.getTransactionContext<Knex.Transaction>(),
  );
  return row ? row.citations_status : null;
}

const tableOf = (em: EntityManager) => em.getMetadata().get(Location.name).tableName;
