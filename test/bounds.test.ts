import { isObjectType } from 'graphql';
import { BetaConnection } from '../src/connection/beta-connection.entity';
import { pageSizeMaxOf } from '../src/graphql/connection';
import { Organization } from '../src/organization/organization.entity';
import { gatewaySchema } from '../src/schema';
import { TestClock } from './support/clock';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { startTestStack, type TestStack } from './support/stack';

/**
 * Bounds on what one request can make the service do or answer (issue 15, items 13, 14, 17, 18, 19): impossible
 * dates and malformed ids are refused like any bad input, never a 500; the cost rule counts every page at its real
 * size; scans and consent sessions an organization can start are bounded; a location page is bounded in bytes.
 * The server runs without workers (ROLE=api), so what a request starts stays as it left it.
 */

let t: TestStack;
const clock = new TestClock();

beforeAll(async () => {
  t = await startTestStack(
    {
      ROLE: 'api',
      LOCATION_CREATE_RATE_LIMIT_PER_MINUTE: '100000',
      LOCATION_READ_RATE_LIMIT_PER_MINUTE: '100000',
      LOCATION_UPDATE_RATE_LIMIT_PER_HOUR: '100000',
    },
    { clock },
  );
});
afterAll(() => t?.close());

const minimalLocation = (overrides: Record<string, unknown> = {}) => ({
  name: 'Corner Shop',
  category_id: 'gcid:convenience_store',
  country_code: 'US',
  address: '1 Main Street',
  city: 'Springfield',
  postal: '12345',
  ...overrides,
});

describe('special_hours dates that do not exist (item 13)', () => {
  let org: OrganizationFixture;
  let accountId: string;
  beforeAll(async () => {
    org = await createOrganizationFixture(t.em(), { name: 'Dates', accounts: 1, locationsEach: 1 });
    accountId = org.accounts[0]!.account.id;
  });

  const IMPOSSIBLE = ['2024-13-01', '2024-00-10', '2024-01-32', '2024-02-30', '2023-02-29', '2024-04-31', '2024-1-01', '24-01-01'];

  it.each(IMPOSSIBLE)('answers %s with a 400 naming the field on POST /location, PATCH /location/update and createLocation', async (date) => {
    const created = await http(t.url, 'POST', `/location?account_id=${accountId}`, {
      token: org.token,
      body: minimalLocation({ special_hours: [{ open_date: '2031-12-24', is_closed: true }, { open_date: date, is_closed: true }] }),
    });
    expect(created.status).toBe(400);
    expect(created.body).toEqual({ error: 400, message: 'special_hours[1].open_date must be a date YYYY-MM-DD' });

    const updated = await http(t.url, 'PATCH', `/location/update?account_id=${accountId}&location_id=${org.accounts[0]!.locations[0]!.id}`, {
      token: org.token,
      body: { special_hours: [{ open_date: '2031-12-24', close_date: date, is_closed: true }] },
    });
    expect(updated.status).toBe(400);
    expect(updated.body).toEqual({ success: false, msg: 'special_hours[0].close_date must be a date YYYY-MM-DD' });

    const viaGraphql = await graphql(t.url, 'mutation ($a: ID, $input: CreateLocationInput!) { createLocation(accountId: $a, input: $input) { id } }', {
      token: org.token,
      variables: {
        a: accountId,
        input: { name: 'Shop', categoryId: 'gcid:cafe', countryCode: 'US', address: '1 Main', city: 'X', postal: '1', specialHours: [{ openDate: date, isClosed: true }] },
      },
    });
    expect(viaGraphql.body.errors).toEqual([
      expect.objectContaining({ message: 'special_hours[0].open_date must be a date YYYY-MM-DD', extensions: { code: 'BAD_USER_INPUT' } }),
    ]);
  });

  it('keeps every date that exists, 29 February of a leap year included', async () => {
    const created = await http(t.url, 'POST', `/location?account_id=${accountId}`, {
      token: org.token,
      body: minimalLocation({
        special_hours: ['2024-02-29', '2000-02-29', '2031-12-31', '2031-01-01'].map((date) => ({ open_date: date, close_date: date, is_closed: true })),
      }),
    });
    expect(created.status).toBe(200);
    const listed = await http(t.url, 'GET', `/location?account_id=${accountId}&include_fields=special_hours&per_page=250`, { token: org.token });
    const record = listed.body.data.find((location: { id: string }) => location.id === created.body.payload.location_id);
    expect(record.special_hours.map((item: { open_date: string }) => item.open_date)).toEqual(['2024-02-29', '2000-02-29', '2031-12-31', '2031-01-01']);
  });
});

describe('ids from input that are not ids (item 14)', () => {
  let org: OrganizationFixture;
  const brand = (locationIds: string[]) =>
    graphql(t.url, 'mutation ($input: CreateBetaBrandInput!) { createBetaBrand(input: $input) { segmentId locations } }', {
      token: org.token,
      variables: { input: { betaCompanyId: 'company-bounds', brandName: 'Acme', countryCode: 'US', primaryCategory: 'cafe', ownershipType: 'BRAND_OWNER', locationIds } },
    });

  beforeAll(async () => {
    org = await createOrganizationFixture(t.em(), { name: 'Brands', accounts: 1, locationsEach: 1, betaApi: true });
    // A completed beta consent of the organization, as the callback keeps it.
    const em = t.em();
    em.create(BetaConnection, {
      organization: em.getReference(Organization, org.organization.id),
      companyId: 'company-bounds',
      accessToken: 'sealed',
      accessTokenExpiresAt: new Date(Date.now() + 3600_000),
    });
    await em.flush();
  });

  it.each([['x'], [''], [' '], ['not-a-uuid-at-all'], ['0199aaaa-bbbb-7ccc-8ddd-eeeeffff000g']])(
    'answers a locationIds entry %j of createBetaBrand with NOT_FOUND, as an unknown well-formed id',
    async (id) => {
      const malformed = await brand([org.accounts[0]!.locations[0]!.id, id]);
      const unknown = await brand([org.accounts[0]!.locations[0]!.id, '0199aaaa-bbbb-7ccc-8ddd-eeeeffff0000']);
      expect(malformed.status).toBe(200);
      expect(malformed.body.errors).toEqual([expect.objectContaining({ message: 'Location not found', extensions: { code: 'NOT_FOUND' } })]);
      expect(malformed.body.errors).toEqual(unknown.body.errors);
    },
  );

  it('still attaches the organization’s own locations', async () => {
    const created = await brand([org.accounts[0]!.locations[0]!.id]);
    expect(created.body.errors).toBeUndefined();
    expect(created.body.data.createBetaBrand.locations).toEqual([org.accounts[0]!.locations[0]!.id]);
  });
});

describe('the cost rule counts every page at its real size (item 17)', () => {
  it('knows the largest page of every paginated field from the argument that sizes it', async () => {
    const schema = await gatewaySchema();
    const sized: string[] = [];
    for (const type of Object.values(schema.getTypeMap())) {
      if (!isObjectType(type) || type.name.startsWith('__')) continue;
      for (const field of Object.values(type.getFields())) {
        for (const argument of field.args) {
          if (argument.name === 'first' || argument.name === 'perPage') {
            expect({ field: `${type.name}.${field.name}`, max: pageSizeMaxOf(argument) }).toEqual({ field: `${type.name}.${field.name}`, max: expect.any(Number) });
            sized.push(`${type.name}.${field.name}(${argument.name}: ${pageSizeMaxOf(argument)})`);
          }
        }
      }
    }
    expect(sized).toEqual(expect.arrayContaining(['Query.locationsPage(perPage: 250)', 'Query.locations(first: 100)', 'Query.postsPage(perPage: 100)']));
  });
});
