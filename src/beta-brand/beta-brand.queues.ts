import { defineQueue } from '../jobs/queue';

/** Push a beta brand's pending change (create, replace or delete) to the beta provider. */
export const brandSyncQueue = defineQueue({
  name: 'beta-brand-sync',
  payload: { brandId: 'string' },
  // A brand belongs to the organization as a whole: no account.
  work: {
    kind: 'BETA_BRAND_SYNC',
    subject: (payload) => payload.brandId,
    owner: { columns: 'organization_id, null::uuid', from: 'from "beta_brand" where id = ?', fromChanged: 'from changed' },
  },
  provider: 'beta',
});
