import type { EntityManager } from '@mikro-orm/postgresql';
import { announceOnCommit } from '../events/announce-on-commit';
import type { TopicPayloads } from '../events/topics';
import type { Runtime } from '../runtime';
import { entityOfEvent, eventSnapshot } from '../shared/entity-events';
import { LocationUpdateJob } from './location-update-job.entity';

/** What announcing an update job's change uses. */
export type UpdateJobEventDeps = Pick<Runtime, 'events' | 'database'>;

/** Tells every subscriber, in every process, that an update job changed, once the transaction of `em` commits. */
export function announceUpdateJobChange(em: EntityManager, runtime: UpdateJobEventDeps, job: LocationUpdateJob): void {
  announceOnCommit(em, runtime.events, 'location-update-job.updated', () => ({
    id: job.id,
    organizationId: job.organization.id,
    accountId: job.account.id,
    locationId: job.location.id,
    version: job.version,
    snapshot: eventSnapshot(runtime.database.orm, LocationUpdateJob, job),
  }));
}

export function loadUpdateJobForEvent(runtime: Pick<Runtime, 'database'>, event: TopicPayloads['location-update-job.updated']): Promise<LocationUpdateJob> {
  return entityOfEvent(runtime.database.orm, LocationUpdateJob, event);
}
