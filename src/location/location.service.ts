import { resolveAccountScope } from '../account/account.access';
import type { RequestScope } from '../request-scope';
import { sliceOf, type Slice, type SliceRequest } from '../shared/slice';
import { Location } from './location.entity';

export interface LocationFilter {
  accountId?: string | null;
  /** The provider's store code, which is our reference id. */
  storeCode?: string | null;
}

/** Locations of one account, in creation order, a slice at a time. */
export async function listLocations(scope: RequestScope, filter: LocationFilter, slice: SliceRequest): Promise<Slice<Location>> {
  const accountId = await resolveAccountScope(scope, filter.accountId);
  const where = { account: accountId, ...(filter.storeCode ? { referenceId: filter.storeCode } : {}) };
  const [rows, totalCount] = await Promise.all([
    scope.em.find(Location, slice.afterId ? { ...where, id: { $gt: slice.afterId } } : where, {
      orderBy: { id: 'asc' },
      limit: slice.first + 1,
    }),
    scope.em.count(Location, where),
  ]);
  return sliceOf(rows, slice.first, totalCount);
}
