import { defineQueue, ownedRow } from '../jobs/queue';

/** Create a new location at the provider; it is connected once the provider knows it. */
export const locationPublishQueue = defineQueue({
  name: 'location-publish',
  payload: { locationId: 'string' },
  work: {
    kind: 'LOCATION_PUBLISH',
    subject: (payload) => payload.locationId,
    // A location names its organization through its account.
    owner: {
      columns: 'a.organization_id, l.account_id',
      from: 'from "location" l join "account" a on a.id = l.account_id where l.id = ?',
      fromChanged: 'from changed l join "account" a on a.id = l.account_id',
    },
  },
  provider: 'alpha',
});

/** Send a QUEUED location update to the provider, then apply it. */
export const locationUpdateQueue = defineQueue({
  name: 'location-update',
  payload: { jobId: 'string' },
  work: { kind: 'LOCATION_UPDATE', subject: (payload) => payload.jobId, owner: ownedRow('location_update_job') },
  provider: 'alpha',
});
