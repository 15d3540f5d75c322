import type { EntityManager } from '@mikro-orm/postgresql';
import { defineEventType, defineRecordType } from '../activity/activity.enums';
import { eventWrite, recordEvent } from '../activity/record-event';
import type { FollowingWrite } from '../db/change-statement';
import { announceOnCommit } from '../events/announce-on-commit';
import { ChangeNews } from '../events/change-news';
import type { TopicPayloads } from '../events/topics';
import { entityOfEvent, eventSnapshot } from '../events/entity-events';
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

export function loadUpdateJobForEvent(runtime: { database: Database }, event: TopicPayloads['location-update-job.updated']): Promise<LocationUpdateJob> {
  return entityOfEvent(runtime.database.orm, LocationUpdateJob, event);
}
