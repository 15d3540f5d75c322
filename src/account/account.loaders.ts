import type { EntityManager } from '@mikro-orm/postgresql';
import DataLoader from 'dataloader';
import { Account } from './account.entity';

/** Accounts per organization, oldest first: one query for every organization asked for in the request. */
export function accountsByOrganizationLoader(em: EntityManager): DataLoader<string, Account[]> {
  return new DataLoader(async (organizationIds) => {
    const accounts = await em.find(
      Account,
      { organization: { $in: [...organizationIds] } },
      { orderBy: { createdAt: 'asc', id: 'asc' } },
    );
    return organizationIds.map((id) => accounts.filter((account) => account.organization.id === id));
  });
}
