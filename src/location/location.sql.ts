import type { EntityManager } from '@mikro-orm/postgresql';
import { readAllWith, type WriteAlong } from '../db/change-statement';
import { codecOf } from '../db/entity-codec';
import { statementsApart } from '../db/statements';
import { Account } from '../account/account.entity';
import { LocationUpdateJob } from './location-update-job.entity';
import { Location } from './location.entity';
import { LocationUpdateStatus } from './location.enums';
import { updateJobRowWrites, type UpdateJobEventDeps } from './location.events';

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
    statementsApart(em),
    { sql: `select j.*, to_jsonb(l) as "lg_location" from "${jobs}" j join "${locations}" l on l.id = j.location_id where j.id = any(?::uuid[])`, values: [jobIds] },
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

/** What a location's publish job reads as it starts: the location and its account's alpha account id. */
export interface LocationToPublish {
  location: Location;
  alphaAccountId: string | null;
}

/**
 * What the publish jobs starting together read (src/db/batched-read.ts): each location, as a plain instance, with its
 * account's alpha account id, in one statement that also carries `along` (the jobs' work RUNNING). The job connects
 * the location by a guarded statement or under its row lock (location.worker.ts), so the read needs no unit of work.
 */
export async function readLocationsToPublish(em: EntityManager, locationIds: string[], along: WriteAlong[]): Promise<Map<string, LocationToPublish>> {
  const metadata = em.getMetadata();
  const locations = metadata.get<Location>(Location.name).tableName;
  const account = metadata.get<Account>(Account.name);
  const alphaAccountId = account.properties.alphaAccountId.fieldNames[0];
  const rows = await readAllWith(
    statementsApart(em),
    {
      sql: `select l.*, a."${alphaAccountId}" as "lg_alpha_account_id" from "${locations}" l join "${account.tableName}" a on a.id = l.account_id where l.id = any(?::uuid[])`,
      values: [locationIds],
    },
    along,
  );
  const codec = codecOf(metadata, Location);
  const found = new Map<string, LocationToPublish>();
  for (const { lg_alpha_account_id: accountAlphaId, ...row } of rows) {
    const location = codec.decode(em.getComparator().mapResult<Record<string, unknown>>(Location.name, row));
    found.set(location.id, { location, alphaAccountId: (accountAlphaId as string | null) ?? null });
  }
  return found;
}

/**
 * A QUEUED update job made RUNNING by the read that starts it (`readUpdatesToRun`'s `along`): the transition, its
 * activity event and its news ride in that read's statement, so starting a job costs no statement of its own
 * (docs/write-path.md). The guard is the status alone: the update waits for a concurrent change of the row and tests
 * it again. `started()` is the job as the statement left it once the read has run; undefined when the job was not
 * QUEUED (a retried job already RUNNING, or one that moved on), which the caller takes as read.
 */
export function startAlong(runtime: UpdateJobEventDeps, jobId: string, now: Date): { along: WriteAlong[]; started(): LocationUpdateJob | undefined } {
  const em = runtime.database.orm.em;
  const metadata = em.getMetadata();
  const jobs = metadata.get<LocationUpdateJob>(LocationUpdateJob.name).tableName;
  let started: LocationUpdateJob | undefined;
  const transition: WriteAlong = {
    sql: `update "${jobs}" set status = ?, started_at = ?, version = version + 1 where id = ? and status = ? returning *`,
    values: [LocationUpdateStatus.RUNNING, now, jobId, LocationUpdateStatus.QUEUED],
    returned: (rows) => {
      started = rows[0] ? codecOf(metadata, LocationUpdateJob).decode(em.getComparator().mapResult<Record<string, unknown>>(LocationUpdateJob.name, rows[0])) : undefined;
    },
  };
  return { along: [transition, ...updateJobRowWrites(runtime, transition)], started: () => started };
}
