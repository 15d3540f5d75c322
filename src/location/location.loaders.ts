import DataLoader from 'dataloader';
import { defineLoader } from '../db/request-loaders';
import { countLocationsByAccount } from './location.sql';

/** Number of locations per account: one grouped COUNT for every account asked for in the request. */
export const locationCountByAccount = defineLoader(
  (em) =>
    new DataLoader<string, number>(async (accountIds) => {
      const counts = await countLocationsByAccount(em, accountIds);
      return accountIds.map((id) => counts.get(id) ?? 0);
    }),
);
