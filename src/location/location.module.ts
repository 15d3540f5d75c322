import { defineWorkType } from '../async-work/work-type.resolver';
import { defineWorkKind, retryWith } from '../async-work/work-kinds';
import { defineModule } from '../resource-module';
import { AccountLocationsResolver } from './account-locations.resolver';
import { LocationUpdateJob } from './location-update-job.entity';
import { LocationUpdateJobResolver } from './location-update-job.resolver';
import { Location } from './location.entity';
import {
  locationCitationsDisabled,
  locationConnected,
  locationRecordType,
  locationRefused,
  updateJobRecordType,
  updateJobStatusChanged,
} from './location.events';
import { locationPublishQueue, locationUpdateQueue } from './location.queues';
import { LocationResolver } from './location.resolver';
import { enqueueUnpublishedLocations, locationWorkers, reopenLocationPublish, reopenLocationUpdate } from './location.worker';

/** Work on a location; the citations module records its own kind of it. */
export const locationWork = defineWorkType({
  name: 'LocationWork',
  description: 'Work on a location: publishing it, disabling its citations.',
  field: 'location',
  record: Location,
});
const updateWork = defineWorkType({ name: 'LocationUpdateWork', description: 'A location update sent to the provider.', field: 'updateJob', record: LocationUpdateJob });

export const locationModule = defineModule({
  name: 'location',
  entities: [Location, LocationUpdateJob],
  resolvers: [LocationResolver, LocationUpdateJobResolver, AccountLocationsResolver],
  queues: [locationPublishQueue, locationUpdateQueue],
  workKinds: [
    defineWorkKind({ name: 'LOCATION_PUBLISH', type: locationWork, retry: retryWith(locationPublishQueue, reopenLocationPublish) }),
    defineWorkKind({ name: 'LOCATION_UPDATE', type: updateWork, retry: retryWith(locationUpdateQueue, reopenLocationUpdate) }),
  ],
  recordTypes: [locationRecordType, updateJobRecordType],
  eventTypes: [updateJobStatusChanged, locationConnected, locationRefused, locationCitationsDisabled],
  workers: locationWorkers,
  // Locations created where no job could be queued (the CLI's demo seed) are published once workers run.
  catchUp: async (runtime) => {
    await enqueueUnpublishedLocations(runtime);
  },
});
