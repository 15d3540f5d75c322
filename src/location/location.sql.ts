import type { EntityManager } from '@mikro-orm/postgresql';
import { readAllWith, type WriteAlong } from '../db/change-statement';
import { codecOf } from '../db/entity-codec';
import { LocationUpdateJob } from './location-update-job.entity';
import { Location } from './location.entity';

/**
 * The number of locations of each account asked for, in one grouped count (accounts without any are absent): the
 * ORM's `count` takes one filter per statement, so a page of accounts would otherwise cost a statement each.
 */
export async function countLocationsByAccount(em: EntityManager, accountIds: readonly string[]): Promise<Map<string, number>> {
  const rows: { account_id: string; count: string }[] = await em
    .getKnex()(em.getMetadata(Location).tableName)
    .select('account_id')
    .count({ count: '*' })
    .whereIn('account_id', [...accountIds])
    .groupBy('account_id');
  return new Map(rows.map((row) => [row.account_id, Number(row.count)]));
}

/** What an update job reads as it starts: the job and its location. */
export interface UpdateToRun {
  update: LocationUpdateJob;
  location: Location;
}

/**
 * What the update jobs starting together read (src/db/batched-read.ts): each job and its location, as plain
 * instances (src/db/entity-codec.ts), in one statement that also carries `along` (the jobs' work RUNNING). A job's
 * changes are guarded statements or locked transactions of their own (location.worker.ts), so the read needs no
 * unit of work.
 */
export async function readUpdatesToRun(em: EntityManager, jobIds: string[], along: WriteAlong[]): Promise<Map<string, UpdateToRun>> {
  const metadata = em.getMetadata();
  const jobs = metadata.get<LocationUpdateJob>(LocationUpdateJob.name).tableName;
  const locations = metadata.get<Location>(Location.name).tableName;
  const rows = await readAllWith(
    (sql, values) => em.getConnection().execute<Record<string, unknown>[]>(sql, values),
    { sql: `select j.*, to_jsonb(l) as "lg_location" from "${jobs}" j join "${locations}" l on l.id = j.location_id where j.id in (?)`, values: [jobIds] },
    along,
  );
  const mapped = (entity: string, values: Record<string, unknown>) => em.getComparator().mapResult<Record<string, unknown>>(entity, values);
  const found = new Map<string, UpdateToRun>();
  for (const { lg_location: locationRow, ...jobRow } of rows) {
    const update = codecOf(metadata, LocationUpdateJob).decode(mapped(LocationUpdateJob.name, jobRow));
    found.set(update.id, { update, location: codecOf(metadata, Location).decode(mapped(Location.name, locationRow as Record<string, unknown>)) });
  }
  return found;
}
