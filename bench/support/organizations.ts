import 'reflect-metadata';
import { Account } from '../../src/account/account.entity';
import { createOrganization } from '../../src/auth/bootstrap';
import { openDatabase } from '../../src/db/orm';
import { Location } from '../../src/location/location.entity';
import { composition } from '../../src/modules';
import type { PostTarget } from './stack';

/**
 * Organizations beside the stack's demo one, written into the stack's throwaway database with the product's own
 * bootstrap (src/auth/bootstrap.ts, as `npm run cli -- org create` does): one account whose `locations` are already
 * connected to the alpha provider (`accounts/<alphaAccountId>/locations/<n>`; the sandbox takes posts for any such
 * name). A thousand locations created through the API would each cost a provider call, paced by the budget the bench
 * measures, before it even starts; test/support/fixtures.ts makes its organizations so too (not built into dist-dev).
 */
export interface BenchOrganization {
  name: string;
  /** An organization token. */
  token: string;
  accountId: string;
  alphaAccountId: string;
  locationIds: string[];
}

export async function createConnectedOrganizations(
  databaseUrl: string,
  plans: { name: string; alphaAccountId: string; locations: number }[],
): Promise<BenchOrganization[]> {
  const database = await openDatabase(databaseUrl, { entities: composition.entities });
  try {
    const em = database.orm.em.fork();
    const made: BenchOrganization[] = [];
    for (const plan of plans) {
      const { organization, token } = await createOrganization(em, { name: plan.name });
      const account = em.create(Account, { organization, name: `${plan.name} account`, referenceId: `${plan.alphaAccountId}-account`, countryCodes: ['US'] });
      const locations = Array.from({ length: plan.locations }, (_, index) =>
        em.create(Location, {
          account,
          name: `${plan.name} location ${index + 1}`,
          referenceId: `${plan.alphaAccountId}-${index + 1}`,
          websiteUri: `https://example.com/${plan.alphaAccountId}/${index + 1}`,
          connected: true,
          alphaLocationName: `accounts/${plan.alphaAccountId}/locations/${index + 1}`,
        }),
      );
      await em.flush();
      made.push({ name: plan.name, token, accountId: account.id, alphaAccountId: plan.alphaAccountId, locationIds: locations.map((location) => location.id) });
    }
    return made;
  } finally {
    await database.close();
  }
}

/** Where POST /post (bench/support/posting.ts) sends an organization's posts: its account's locations. */
export function targetsOf(organization: BenchOrganization): PostTarget[] {
  return organization.locationIds.map((locationId) => ({ accountId: organization.accountId, locationId }));
}
