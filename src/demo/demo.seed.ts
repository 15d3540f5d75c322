import { existsSync, promises as fs } from 'node:fs';
import path from 'node:path';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Config } from '../config';
import type { Database } from '../db/orm';
import { Organization } from '../organization/organization.entity';
import { Account } from '../account/account.entity';
import { AccountSyncStatus } from '../account/account.enums';
import { issueToken } from '../auth/token.service';
import type { JobEngine } from '../jobs/job-engine';
import { Location } from '../location/location.entity';
import { createOrganization } from '../auth/bootstrap';
import { seedDemoBrand, seedDemoScan } from './demo.extras';
import { accountImportQueue } from '../account-import/account-import.queues';
import { locationPublishQueue } from '../location/location.queues';

export interface DemoSeed {
  organization_id: string;
  token: string;
  accounts: { id: string; token: string; location_ids: string[] }[];
}

/** Where a data directory keeps the demo's tokens, so that every start can print them again. */
export const DEMO_FILE = 'demo.json';

/** What marks a demo organization (its owners): the demo's preparation looks for these (src/demo/demo.preparation.ts). */
export const DEMO_OWNER = 'demo-owner';

/** The demo's own accounts, by their reference: their locations are created at the provider by jobs. */
export const DEMO_ACCOUNTS = [
  { name: 'Demo Coffee Downtown', referenceId: 'demo-downtown', country: 'US', cities: ['Springfield', 'Shelbyville'] },
  { name: 'Demo Coffee Lakeside', referenceId: 'demo-lakeside', country: 'CA', cities: ['Toronto'] },
] as const;

/** The account of the alpha sandbox's own that the demo imports (Alice's bakeries): reviews in every reply state. */
export const DEMO_IMPORTED_ACCOUNT = { name: 'Alice Bakery Group', referenceId: 'demo-alice', alphaAccountId: '1001', country: 'DE' } as const;

const weekdayHours = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY'].map((day) => ({
  openDay: day,
  openTime: { hours: '09', minutes: '00' },
  closeDay: day,
  closeTime: { hours: '18', minutes: '00' },
}));

export interface SeedDemoOptions {
  /**
   * Queue the jobs that bring the demo to the provider (its locations' publishes, the import) in the seed's own
   * transaction, so that whichever process runs workers takes them at once (a running server is woken by the
   * commit). Left out by a process that registers workers itself right after seeding: their start queues what is
   * owed (src/location/location.worker.ts, src/account-import/account-import.worker.ts), and once is enough.
   */
  jobs?: Pick<JobEngine, 'enqueue'>;
}

/**
 * The demo organization (both feature flags on): two accounts connected to the alpha provider, their locations (with
 * a website and without) created at the provider by jobs as any new location is, and Alice's bakeries of the sandbox,
 * imported with their reviews, a beta brand and a completed competitor scan (demo.extras.ts). What needs the
 * locations at the provider first is the demo's preparation (demo.prepare.ts), in the process that runs the workers.
 */
export async function seedDemo(em: EntityManager, options: SeedDemoOptions = {}): Promise<DemoSeed> {
  return em.transactional(async (tx) => {
    const { organization, token } = await createOrganization(tx, { name: 'Demo Coffee Group', betaApi: true, citationsApi: true });
    organization.owners = [DEMO_OWNER];
    const accounts: DemoSeed['accounts'] = [];
    const demoLocations: Location[] = [];
    for (const plan of DEMO_ACCOUNTS) {
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
    // An account of the alpha sandbox's own (Alice's bakeries), imported with its reviews as a connected account
    // is: reviews answered, unanswered, pending and rejected.
    const bakery = tx.create(Account, {
      organization,
      name: DEMO_IMPORTED_ACCOUNT.name,
      referenceId: DEMO_IMPORTED_ACCOUNT.referenceId,
      countryCodes: [DEMO_IMPORTED_ACCOUNT.country],
      alphaAccountId: DEMO_IMPORTED_ACCOUNT.alphaAccountId,
      syncStatus: AccountSyncStatus.QUEUED,
      syncProgress: { locations: 0, reviews: 0 },
    });
    const { secret } = issueToken(tx, organization, { account: bakery, label: 'demo account token' });
    accounts.push({ id: bakery.id, token: secret, location_ids: [] });
    const now = new Date();
    seedDemoBrand(tx, organization, demoLocations[0]!, now);
    seedDemoScan(tx, organization, demoLocations[0]!, now);
    await tx.flush();
    if (options.jobs) {
      for (const location of demoLocations) await options.jobs.enqueue(tx, locationPublishQueue, { locationId: location.id });
      await options.jobs.enqueue(tx, accountImportQueue, { accountId: bakery.id });
    }
    return { organization_id: organization.id, token, accounts };
  });
}

/**
 * The demo organization is seeded into a brand-new database (one with no organization) outside production,
 * and its tokens kept in <data dir>/demo.json (owner-only) so every start can print them again. A process without
 * workers queues the seed's jobs itself (`jobs`); one with workers leaves them to its workers' start.
 */
export async function demoFor(config: Pick<Config, 'nodeEnv'>, dataDir: string, database: Database, jobs: JobEngine | undefined): Promise<DemoSeed | undefined> {
  const file = path.resolve(dataDir, DEMO_FILE);
  const em = database.orm.em.fork();
  if ((await em.count(Organization, {})) === 0 && config.nodeEnv !== 'production') {
    const demo = await seedDemo(em, { jobs });
    await fs.mkdir(dataDir, { recursive: true });
    await fs.writeFile(file, JSON.stringify(demo, null, 2), { mode: 0o600 });
    return demo;
  }
  if (!existsSync(file)) return undefined;
  const demo = JSON.parse(await fs.readFile(file, 'utf8')) as DemoSeed;
  // The file may belong to another database (DATABASE_URL changed): only trust it if its organization is here.
  return (await em.count(Organization, { id: demo.organization_id })) > 0 ? demo : undefined;
}
