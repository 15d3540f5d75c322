import DataLoader from 'dataloader';
import { defineLoader } from '../db/request-loaders';
import { Location } from './location.entity';

/** Number of locations per account: one grouped COUNT for every account asked for in the request. */
export const locationCountByAccount = defineLoader(
  (em) =>
    new DataLoader<string, number>(async (accountIds) => {
      const rows: { account_id: string; count: string }[] = await em
        .getKnex()(em.getMetadata(Location).tableName)
        .select('account_id')
        .count({ count: '*' })
        .whereIn('account_id', [...accountIds])
        .groupBy('account_id');
      const counts = new Map(rows.map((row) => [row.account_id, Number(row.count)]));
      return accountIds.map((id) => counts.get(id) ?? 0);
    }),
);
