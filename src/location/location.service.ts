import { resolveAccountScope } from '../auth/guards';
import { decodeCursor, toConnection, type Connection } from '../graphql/connection';
import type { Context } from '../graphql/context';
import { Location } from './location.entity';

export interface LocationFilter {
  accountId?: string | null;
  /** The provider's store code, which is our reference id. */
  storeCode?: string | null;
  first: number;
  after?: string | null;
}

/** Locations of one account, in creation order. */
export async function listLocations(ctx: Context, filter: LocationFilter): Promise<Connection<Location>> {
  const accountId = await resolveAccountScope(ctx, filter.accountId);
  const where = { account: accountId, ...(filter.storeCode ? { referenceId: filter.storeCode } : {}) };
  const afterId = filter.after ? decodeCursor(filter.after) : undefined;
  const [rows, totalCount] = await Promise.all([
    ctx.em.find(Location, afterId ? { ...where, id: { $gt: afterId } } : where, {
      orderBy: { id: 'asc' },
      limit: filter.first + 1,
    }),
    ctx.em.count(Location, where),
  ]);
  return toConnection(rows, filter, totalCount);
}
