import type { EntityManager } from '@mikro-orm/postgresql';
import { defineEventType, defineRecordType } from '../activity/activity.enums';
import { eventOfRowWrite, eventWrite, recordEvent } from '../activity/record-event';
import type { FollowingWrite } from '../db/change-statement';
import { announceOnCommit } from '../events/announce-on-commit';
import { ChangeNews } from '../events/change-news';
import type { TopicPayloads } from '../events/topics';
import { entityOfEvent, eventSnapshot, eventSnapshotSql } from '../events/entity-events';
import { payloadsFromRows } from '../events/event-codec';
import type { EntitySnapshot } from '../db/entity-codec';
import { LocationUpdateJob } from './location-update-job.entity';
import { Location } from './location.entity';
import type { LocationUpdateStatus } from './location.enums';
import type { Clock } from '../shared/clock';
import type { Database } from '../db/orm';
import type { EventBus } from '../events/event-bus';

export const locationRecordType = defineRecordType({ name: 'location', key: 'LOCATION', entity: Location });
export const updateJobRecordType = defineRecordType({ name: 'location_update_job', key: 'LOCATION_UPDATE_JOB', entity: LocationUpdateJob });

export const updateJobStatusChanged = defineEventType({
  name: 'location_update_job.status_changed',
  key: 'LOCATION_UPDATE_JOB_STATUS_CHANGED',
  record: updateJobRecordType,
});
export const locationConnected = defineEventType({ name: 'location.connected', key: 'LOCATION_CONNECTED', record: locationRecordType });
export const locationRefused = defineEventType({ name: 'location.refused', key: 'LOCATION_REFUSED', record: locationRecordType });
export const locationCitationsDisabled = defineEventType({
  name: 'location.citations_disabled',
  key: 'LOCATION_CITATIONS_DISABLED',
  record: locationRecordType,
});

export type UpdateJobEventDeps = { events: EventBus; database: Database; clock: Clock };

/**
 * Tells every subscriber, in every process, that an update job changed, once the transaction of `em` commits; a
 * change of its status (`statusBefore`: null for a new job) is also recorded in the activity log, in that
 * transaction. An error noted while the job is retried is not a status change.
 */
export function announceUpdateJobChange(em: EntityManager, runtime: UpdateJobEventDeps, job: LocationUpdateJob, statusBefore: LocationUpdateStatus | null): void {
  if (job.status !== statusBefore) recordEvent(em, runtime, updateJobStatusChanged, job);
  announceOnCommit(em, runtime.events, 'location-update-job.updated', () => updateJobUpdated(runtime, job));
}

function updateJobUpdated(runtime: UpdateJobEventDeps, job: LocationUpdateJob): TopicPayloads['location-update-job.updated'] {
  return {
    id: job.id,
    organizationId: job.organization.id,
    accountId: job.account.id,
    locationId: job.location.id,
    version: job.version,
    snapshot: eventSnapshot(runtime.database.orm, LocationUpdateJob, job),
  };
}

/**
 * The same for a change made by one statement (src/db/change-statement.ts): its activity event as a write of that
 * statement (`after`: the job as the statement leaves it), and its news (`updateJobChangeNews`), which the statement
 * sends.
 */
export function updateJobChangeWrites(runtime: UpdateJobEventDeps, after: LocationUpdateJob, statusBefore: LocationUpdateStatus | null): FollowingWrite[] {
  return after.status === statusBefore ? [] : [eventWrite(runtime.database.orm.getMetadata(), runtime, updateJobStatusChanged, after)];
}

/** The news of a change made by one statement: the job as the statement leaves it (`after`), first of its news. */
export function updateJobChangeNews(runtime: UpdateJobEventDeps, after: LocationUpdateJob): ChangeNews {
  return new ChangeNews(runtime.events).add('location-update-job.updated', updateJobUpdated(runtime, after));
}

/**
 * The payload of `location-update-job.updated` as a statement builds it from the job's row (`updateJobRowNews`): the
 * same fields as `updateJobUpdated`, the snapshot encoded by PostgreSQL (null when too large, as `eventSnapshot`).
 */
function payloadOfUpdateJobRow(row: Record<string, unknown>): TopicPayloads['location-update-job.updated'] {
  return {
    id: row.id as string,
    organizationId: row.organizationId as string,
    accountId: row.accountId as string,
    locationId: row.locationId as string,
    version: Number(row.version),
    snapshot: (row.snapshot as EntitySnapshot | null) ?? undefined,
  };
}
payloadsFromRows('location-update-job.updated', payloadOfUpdateJobRow);

/**
 * The activity event and the news of a change of update jobs made by a part of a statement that PostgreSQL alone
 * sees the rows of (`part` returns the job as changed, one row at most: a job made RUNNING by its own read,
 * location.sql.ts): writes of that statement, after `part`. A bus the statement cannot reach is told once the
 * statement has run.
 */
export function updateJobRowWrites(runtime: UpdateJobEventDeps, part: FollowingWrite): FollowingWrite[] {
  const metadata = runtime.database.orm.getMetadata();
  let payload: TopicPayloads['location-update-job.updated'] | undefined;
  const payloadPart: FollowingWrite = {
    sql: (nameOf) => `select r.id, r.organization_id as "organizationId", r.account_id as "accountId", r.location_id as "locationId", r.version,
      ${eventSnapshotSql(metadata, LocationUpdateJob, 'r')} as snapshot from ${nameOf(part)} r`,
    values: [],
    returned: (rows) => {
      payload = rows[0] ? payloadOfUpdateJobRow(rows[0]) : undefined;
      // Where the bus announces after the statement: now, before the writes after it announce theirs (never throws;
      // it logs what it loses).
      void news.announced();
    },
  };
  const news = new ChangeNews(runtime.events).addRows('location-update-job.updated', payloadPart, () => payload);
  return [eventOfRowWrite(metadata, runtime, updateJobStatusChanged, part), payloadPart, ...news.writes()];
}

export function loadUpdateJobForEvent(runtime: { database: Database }, event: TopicPayloads['location-update-job.updated']): Promise<LocationUpdateJob> {
  return entityOfEvent(runtime.database.orm, LocationUpdateJob, event);
}
