import { defineQueue, ownedRow } from '../jobs/queue';

/** Run a queued competitor scan: a search at each dot of its grid. */
export const scanQueue = defineQueue({
  name: 'competitor-scan',
  payload: { scanId: 'string' },
  work: { kind: 'COMPETITOR_SCAN', subject: (payload) => payload.scanId, owner: ownedRow('competitor_scan') },
  provider: 'alpha',
  // Many calls a job, none of them awaited by a person: after the calls of the work people ask for one by one.
  bulk: true,
});
