import { defineQueue } from '../jobs/queue';

/** Import (or re-sync) a connected account's locations and reviews from the provider. */
export const accountImportQueue = defineQueue({
  name: 'account-import',
  payload: { accountId: 'string' },
  work: {
    kind: 'ACCOUNT_IMPORT',
    subject: (payload) => payload.accountId,
    owner: { columns: 'organization_id, id', from: 'from "account" where id = ?', fromChanged: 'from changed' },
  },
  provider: 'alpha',
  // Many calls a job, none of them awaited by a person: after the calls of the work people ask for one by one.
  bulk: true,
});
