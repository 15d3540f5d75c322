import DataLoader from 'dataloader';
import { defineLoader } from '../db/request-loaders';
import { Account } from './account.entity';

/** Accounts per organization, oldest first: one query for every organization asked for in the request. */
export const accountsByOrganization = defineLoader(
  (em) =>
    new DataLoader<string, Account[]>(async (organizationIds) => {
      const accounts = await em.find(
        Account,
        { organization: { $in: [...organizationIds] } },
        { orderBy: { createdAt: 'asc', id: 'asc' } },
      );
      return organizationIds.map((id) => accounts.filter((account) => account.organization.id === id));
    }),
);
