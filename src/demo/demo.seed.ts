import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../account/account.entity';
import { AccountSyncStatus } from '../account/account.enums';
import { issueToken } from '../auth/token.service';
import { Location } from '../location/location.entity';
import { createOrganization } from '../auth/bootstrap';
import { seedDemoBrand, seedDemoScan } from './demo.extras';

export interface DemoSeed {
  organization_id: string;
  token: string;
  accounts: { id: string; token: string; location_ids: string[] }[];
}

const weekdayHours = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'].map((day) => ({
  openDay: day,
  openTime: { hours: '09', minutes: '00' },
  closeDay: day,
  closeTime: { hours: '18', minutes: '00' },
}));

/**
 * The demo organization (both feature flags on) with two accounts connected to the alpha provider and their
 * locations, with a website and without. The locations are created at the provider by the workers of the first
 * start (src/location/location.worker.ts), as any new location is; they are `connected` once it knows them. Its
 * third account, Alice's bakeries of the sandbox, is imported with its reviews; it has a beta brand and a completed
 * competitor scan (src/demo/demo.extras.ts).
 */
export async function seedDemo(em: EntityManager): Promise<DemoSeed> {
  return em.transactional(async (tx) => {
    const { organization, token } = await createOrganization(tx, { name: 'Demo Coffee Group', betaApi: true, citationsApi: true });
    organization.owners = ['demo-owner'];
    const plans = [
      { name: 'Demo Coffee Downtown', referenceId: 'demo-downtown', country: 'US', cities: ['Springfield', 'Shelbyville'] },
      { name: 'Demo Coffee Lakeside', referenceId: 'demo-lakeside', country: 'CA', cities: ['Toronto'] },
    ];
    const accounts: DemoSeed['accounts'] = [];
    const demoLocations: Location[] = [];
    for (const plan of plans) {
      const account = tx.create(Account, {
        organization,
        name: plan.name,
        referenceId: plan.referenceId,
        countryCodes: [plan.country],
        alphaAccountId: `alpha-${plan.referenceId}`,
      });
      const locations = plan.cities.map((city, index) =>
        tx.create(Location, {
          account,
          name: `${plan.name} ${city}`,
          referenceId: `${plan.referenceId}-${index + 1}`,
          categoryId: 'gcid:coffee_shop',
          address: `${100 + index} Main Street`,
          postal: index === 0 ? '12345' : '54321',
          city,
          countryCode: plan.country,
          // One location of each account has no website: the post rules treat it differently.
          websiteUri: index === 0 ? `https://example.com/${plan.referenceId}` : null,
          phoneNumber: '+1 555 0100',
          regularHours: weekdayHours,
          categories: { primaryCategory: { name: 'gcid:coffee_shop', displayName: 'Coffee shop' }, additionalCategories: [] },
          latitude: 39.7817 + index * 0.05,
          longitude: -89.6501 - index * 0.05,
          placeId: `demo-place-${plan.referenceId}-${index + 1}`,
        }),
      );
      demoLocations.push(...locations);
      const { secret } = issueToken(tx, organization, { account, label: 'demo account token' });
      accounts.push({ id: account.id, token: secret, location_ids: locations.map((location) => location.id) });
    }
    // An account of the alpha sandbox's own (Alice's bakeries), imported with its reviews by the first start's
    // workers as a connected account is: reviews answered, unanswered, pending and rejected.
    const bakery = tx.create(Account, {
      organization,
      name: 'Alice Bakery Group',
      referenceId: 'demo-alice',
      countryCodes: ['DE'],
      alphaAccountId: '1001',
      syncStatus: AccountSyncStatus.QUEUED,
      syncProgress: { locations: 0, reviews: 0 },
    });
    const { secret } = issueToken(tx, organization, { account: bakery, label: 'demo account token' });
    accounts.push({ id: bakery.id, token: secret, location_ids: [] });
    const now = new Date();
    seedDemoBrand(tx, organization, demoLocations[0]!, now);
    seedDemoScan(tx, organization, demoLocations[0]!, now);
    await tx.flush();
    return { organization_id: organization.id, token, accounts };
  });
}
