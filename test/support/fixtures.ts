import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { Account } from '../../src/account/account.entity';
import { issueToken } from '../../src/auth/token.service';
import { Location } from '../../src/location/location.entity';
import { Organization } from '../../src/organization/organization.entity';
import { createOrganization } from '../../src/auth/bootstrap';

export interface OrganizationFixture {
  organization: Organization;
  token: string;
  accounts: { account: Account; token: string; locations: Location[] }[];
}

/** An organization with `accounts` accounts of `locationsEach` locations, and a token for each account. */
export async function createOrganizationFixture(
  em: EntityManager,
  options: {
    name?: string;
    accounts?: number;
    locationsEach?: number;
    betaApi?: boolean;
    citationsApi?: boolean;
    /** Locations known to the alpha provider (they can receive posts); default false. */
    connected?: boolean;
    /**
     * Accounts connected at the alpha provider: each gets an `alphaAccountId` (`alpha-<unique>-<n>`), so the new
     * locations created through the API are published there by a job. Default false (none set).
     */
    alphaAccounts?: boolean;
  } = {},
): Promise<OrganizationFixture> {
  const { organization, token } = await createOrganization(em, {
    name: options.name ?? 'Test Org',
    betaApi: options.betaApi,
    citationsApi: options.citationsApi,
  });
  const accounts: OrganizationFixture['accounts'] = [];
  // Unique per fixture: tests sharing one sandbox tell their accounts apart by it.
  const alphaPrefix = `alpha-${randomBytes(4).toString('hex')}`;
  for (let a = 0; a < (options.accounts ?? 1); a += 1) {
    const account = em.create(Account, {
      organization,
      name: `Account ${a + 1}`,
      referenceId: `ref-${a + 1}`,
      countryCodes: ['US'],
      createdAt: new Date(Date.now() + a),
      ...(options.alphaAccounts ? { alphaAccountId: `${alphaPrefix}-${a + 1}` } : {}),
    });
    const locations = Array.from({ length: options.locationsEach ?? 0 }, (_, l) =>
      em.create(Location, {
        account,
        name: `Location ${a + 1}.${l + 1}`,
        referenceId: `store-${a + 1}-${l + 1}`,
        // Every other location has a website: the post rules differ with and without one.
        websiteUri: l % 2 === 0 ? `https://example.com/${a + 1}/${l + 1}` : null,
        connected: options.connected ?? false,
        alphaLocationName: options.connected ? `accounts/alpha-${a + 1}/locations/${l + 1}` : null,
      }),
    );
    const { secret } = issueToken(em, organization, { account });
    accounts.push({ account, token: secret, locations });
  }
  await em.flush();
  return { organization, token, accounts };
}

/** Another organization token of an existing organization (each token has its own per-token limits). */
export async function createOrganizationToken(em: EntityManager, organization: Organization): Promise<string> {
  const { secret } = issueToken(em, em.getReference(Organization, organization.id));
  await em.flush();
  return secret;
}
