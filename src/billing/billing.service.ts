import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../account/account.entity';
import { Location } from '../location/location.entity';
import { BillingSubscription } from './billing-subscription.entity';

/**
 * Sets the organization's subscription quantity to its connected locations, in the caller's transaction (one
 * statement: counted and written together, so two concurrent changes cannot leave a stale count).
 */
export async function updateSubscriptionQuantity(em: EntityManager, organizationId: string, now: Date): Promise<number> {
  const locations = em.getMetadata().get(Location.name).tableName;
  const accounts = em.getMetadata().get(Account.name).tableName;
  const subscriptions = em.getMetadata().get(BillingSubscription.name).tableName;
  const [row] = await em.getConnection().execute<{ quantity: number }[]>(
    `insert into "${subscriptions}" (organization_id, quantity, updated_at)
       select ?, count(*)::int, ? from "${locations}" l join "${accounts}" a on a.id = l.account_id
        where a.organization_id = ? and l.connected
     on conflict (organization_id) do update set quantity = excluded.quantity, updated_at = excluded.updated_at
     returning quantity`,
    [organizationId, now, organizationId],
    'all',
    em.getTransactionContext(),
  );
  return row!.quantity;
}
