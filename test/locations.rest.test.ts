import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { eventually, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';
import { minimalLocationBody } from './support/locations';

/**
 * POST /location and GET /location (and their GraphQL twins) through HTTP: the documented record, the publish job
 * to the alpha sandbox, the create rules with their exact 400 bodies, auth, and the list's paging and filters.
 */

let t: TestStack;
/** Accounts with an alphaAccountId: their new locations are published to the sandbox. */
let org: OrganizationFixture;
/** Accounts without one: nothing is published. */
let unpublished: OrganizationFixture;
let other: OrganizationFixture;

const sandbox = () => sandboxOf(t.url);
const alphaIdOf = (fixture: OrganizationFixture, index = 0) => fixture.accounts[index]!.account.alphaAccountId!;
const accountIdOf = (fixture: OrganizationFixture, index = 0) => fixture.accounts[index]!.account.id;

function createLocation(body: unknown, options: { fixture?: OrganizationFixture; account?: number; token?: string; query?: string } = {}) {
  const fixture = options.fixture ?? org;
  const query = options.query ?? `?account_id=${accountIdOf(fixture, options.account ?? 0)}`;
  return http(t.url, 'POST', `/location${query}`, { token: options.token ?? fixture.token, body });
}

function listLocations(query: string, token = org.token) {
  return http(t.url, 'GET', `/location${query}`, { token });
}

/** The one location of `id` in GET /location of the account. */
async function listed(fixture: OrganizationFixture, id: string, account = 0): Promise<any> {
  const res = await listLocations(`?account_id=${accountIdOf(fixture, account)}&per_page=250`, fixture.token);
  expect(res.status).toBe(200);
  return res.body.data.find((location: { id: string }) => location.id === id);
}

/** Waits until GET /location shows the location connected, and answers its record. */
function connectedRecord(fixture: OrganizationFixture, id: string, account = 0): Promise<any> {
  return eventually(async () => {
    const location = await listed(fixture, id, account);
    return location?.connected ? location : undefined;
  }, 30000, `location ${id} to be connected`);
}

/** The location the sandbox holds for one of ours (our id is its request id). */
async function atProvider(id: string) {
  return (await sandbox().state()).locations.filter((location) => location.requestId === id);
}

/** How many publish jobs pg-boss holds for a location. */
async function publishJobs(id: string): Promise<number> {
  const rows = await t.em().getConnection().execute<{ n: number }[]>(
    `select count(*)::int as n from pgboss.job where name = 'location-publish' and data->>'locationId' = ?`,
    [id],
  );
  return rows[0]!.n;
}


/** Every create field the record shows, each set. */
const bakery = {
  name: 'Crumb & Co',
  reference_id: 'LDN-001',
  category_id: 'gcid:bakery',
  address: '1 High Street',
  postal: 'EC1A 1BB',
  city: 'London',
  country_code: 'GB',
  administrative_area: 'Greater London',
  additional_address_lines: ['Unit 4'],
  description: 'Sourdough since 2009.',
  phone_number: '+44 20 7946 0000',
  additional_phone_numbers: ['+44 20 7946 0001', '+44 20 7946 0002'],
  website_uri: 'https://crumb.example/',
  latitude: 51.52,
  longitude: -0.1,
  // The document's create sample: a period with times only (every day).
  regular_hours: [{ open_time: { hours: '08', minutes: '00' }, close_time: { hours: '17', minutes: '30' } }],
  special_hours: [
    { open_date: '2031-12-25', is_closed: true },
    { open_date: '2031-12-24', close_date: '2031-12-24', open_time: { hours: '10', minutes: null }, close_time: { hours: '14', minutes: '00' } },
  ],
};

const DAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'];

/** The record's fields, in the order of product-decisions §6. */
const RECORD_FIELDS = [
  'id', 'reference_id', 'name', 'category_id', 'address', 'postal', 'city', 'country_code', 'administrative_area',
  'additional_address_lines', 'description', 'phone_number', 'additional_phone_numbers', 'website_uri', 'latitude',
  'longitude', 'regular_hours', 'special_hours', 'more_hours', 'categories', 'service_items', 'service_area',
  'citations_status', 'connected', 'alpha_location_name', 'created_at', 'updated_at',
];

beforeAll(async () => {
  t = await startTestStack({ JOB_RETRY_DELAY_SECONDS: '1', JOB_RETRY_LIMIT: '2' });
  org = await createOrganizationFixture(t.em(), { name: 'Bakeries', accounts: 2, alphaAccounts: true });
  unpublished = await createOrganizationFixture(t.em(), { name: 'Offline', accounts: 1 });
  other = await createOrganizationFixture(t.em(), { name: 'Other', accounts: 1, locationsEach: 1 });
});
afterAll(() => t.close());

describe('POST /location', () => {
  it('creates the location, lists it with the documented record, and publishes it to the provider', async () => {
    const before = Date.now();
    const res = await createLocation(bakery);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ success: true, payload: { location_id: expect.any(String) } });
    const id = res.body.payload.location_id;

    const record = await listed(org, id);
    expect(Object.keys(record)).toEqual(RECORD_FIELDS);
    expect(record).toEqual({
      id,
      reference_id: 'LDN-001',
      name: 'Crumb & Co',
      category_id: 'gcid:bakery',
      address: '1 High Street',
      postal: 'EC1A 1BB',
      city: 'London',
      country_code: 'GB',
      administrative_area: 'Greater London',
      additional_address_lines: ['Unit 4'],
      description: 'Sourdough since 2009.',
      phone_number: '+44 20 7946 0000',
      additional_phone_numbers: ['+44 20 7946 0001', '+44 20 7946 0002'],
      website_uri: 'https://crumb.example/',
      latitude: 51.52,
      longitude: -0.1,
      regular_hours: [{ open_day: null, open_time: { hours: '08', minutes: '00' }, close_day: null, close_time: { hours: '17', minutes: '30' } }],
      special_hours: [
        { open_date: '2031-12-25', close_date: null, is_closed: true, open_time: null, close_time: null },
        {
          open_date: '2031-12-24',
          close_date: '2031-12-24',
          is_closed: false,
          open_time: { hours: '10', minutes: null },
          close_time: { hours: '14', minutes: '00' },
        },
      ],
      more_hours: [],
      categories: null,
      service_items: [],
      service_area: null,
      citations_status: 'ACTIVE',
      connected: expect.any(Boolean),
      alpha_location_name: record.connected ? expect.any(String) : null,
      created_at: expect.any(Number),
      updated_at: expect.any(Number),
    });
    expect(Number.isInteger(record.created_at)).toBe(true);
    expect(Number.isInteger(record.updated_at)).toBe(true);
    expect(record.created_at).toBeGreaterThanOrEqual(before - 1000);
    expect(record.created_at).toBeLessThanOrEqual(Date.now() + 1000);
    expect(record.updated_at).toBeGreaterThanOrEqual(record.created_at);

    // The publish job: connected under the account's provider id, and the provider holds it in its own names.
    const connected = await connectedRecord(org, id);
    expect(connected.alpha_location_name).toMatch(new RegExp(`^accounts/${alphaIdOf(org)}/locations/[^/]+$`));
    expect(connected.updated_at).toBeGreaterThanOrEqual(record.updated_at);
    const provider = await atProvider(id);
    expect(provider).toHaveLength(1);
    expect(provider[0]).toMatchObject({
      name: connected.alpha_location_name,
      accountId: alphaIdOf(org),
      title: 'Crumb & Co',
      storeCode: 'LDN-001',
      storefrontAddress: {
        regionCode: 'GB',
        postalCode: 'EC1A 1BB',
        administrativeArea: 'Greater London',
        locality: 'London',
        addressLines: ['1 High Street', 'Unit 4'],
      },
      categories: { primaryCategory: { name: 'gcid:bakery' } },
      phoneNumbers: { primaryPhone: '+44 20 7946 0000', additionalPhones: ['+44 20 7946 0001', '+44 20 7946 0002'] },
      // A period sent without days is every day's.
      regularHours: {
        periods: DAYS.map((day) => ({ openDay: day, openTime: { hours: 8 }, closeDay: day, closeTime: { hours: 17, minutes: 30 } })),
      },
      specialHours: {
        specialHourPeriods: [
          { startDate: { year: 2031, month: 12, day: 25 }, closed: true },
          {
            startDate: { year: 2031, month: 12, day: 24 },
            endDate: { year: 2031, month: 12, day: 24 },
            openTime: { hours: 10 },
            closeTime: { hours: 14 },
          },
        ],
      },
      profile: { description: 'Sourdough since 2009.' },
      websiteUri: 'https://crumb.example/',
      latlng: { latitude: 51.52, longitude: -0.1 },
    });
    expect(provider[0]!.serviceArea).toBeUndefined();
  });

  it('sends a location changed while the provider creates it again whole, then connects it with the change', async () => {
    const name = 'Changed While Created';
    // The create is held at the provider long enough for the change below to land before its answer.
    await sandbox().fail({ count: 1, delayMs: 5000, method: 'POST', bodyContains: name });
    const res = await createLocation(minimalLocationBody({ name, reference_id: 'HELD-1' }));
    expect(res.status).toBe(200);
    const id = res.body.payload.location_id;
    await eventually(async () => ((await sandbox().state()).held >= 1 ? true : undefined), 30000, 'the create to be held at the provider');
    const update = await http(t.url, 'PATCH', `/location/update?account_id=${accountIdOf(org)}&location_id=${id}`, {
      token: org.token,
      body: { description: 'Changed meanwhile.' },
    });
    expect(update.status).toBe(200);
    // Not connected yet: applied at once, nothing sent by the update itself.
    expect(update.body.payload.message).toMatch(/not connected.*applied at once/);
    const connected = await connectedRecord(org, id);
    expect(connected.description).toBe('Changed meanwhile.');
    const provider = await atProvider(id);
    expect(provider).toHaveLength(1);
    expect(provider[0]).toMatchObject({ name: connected.alpha_location_name, title: name, profile: { description: 'Changed meanwhile.' } });
  });

  it('normalizes what it stores: trimmed text, upper-case country, two-digit hours, named days', async () => {
    const res = await createLocation(
      minimalLocationBody({
        name: '  Trimmed  ',
        country_code: 'us',
        regular_hours: [{ open_day: 'saturday', open_time: { hours: '9' }, close_day: 'SATURDAY', close_time: { hours: '13', minutes: '5' } }],
      }),
      { account: 1 },
    );
    expect(res.status).toBe(200);
    const record = await listed(org, res.body.payload.location_id, 1);
    expect(record).toMatchObject({
      name: 'Trimmed',
      country_code: 'US',
      regular_hours: [
        { open_day: 'SATURDAY', open_time: { hours: '09', minutes: null }, close_day: 'SATURDAY', close_time: { hours: '13', minutes: '05' } },
      ],
    });
    const connected = await connectedRecord(org, record.id, 1);
    const [provider] = await atProvider(record.id);
    expect(provider).toMatchObject({
      name: connected.alpha_location_name,
      accountId: alphaIdOf(org, 1),
      regularHours: { periods: [{ openDay: 'SATURDAY', openTime: { hours: 9 }, closeDay: 'SATURDAY', closeTime: { hours: 13, minutes: 5 } }] },
    });
  });

  it('accepts a service area without an address, and the provider gets a customer-location-only service area', async () => {
    const res = await createLocation({
      name: 'Mobile Plumber',
      category_id: 'gcid:plumber',
      country_code: 'GB',
      service_area_place_ids: ['ChIJislington', 'ChIJcamden'],
      service_area_place_names: ['Islington', 'Camden'],
    });
    expect(res.status).toBe(200);
    const id = res.body.payload.location_id;
    const record = await listed(org, id);
    expect(record).toMatchObject({
      address: null,
      city: null,
      postal: null,
      service_area: {
        businessType: 'CUSTOMER_LOCATION_ONLY',
        places: {
          placeInfos: [
            { placeId: 'ChIJislington', placeName: 'Islington' },
            { placeId: 'ChIJcamden', placeName: 'Camden' },
          ],
        },
      },
    });
    await connectedRecord(org, id);
    const [provider] = await atProvider(id);
    expect(provider!.serviceArea).toEqual(record.service_area);
    expect(provider!.storefrontAddress).toBeUndefined();
  });

  it('keeps the location of an account without a provider id unconnected, and sends the provider nothing', async () => {
    const res = await createLocation(minimalLocationBody({ reference_id: 'OFF-1' }), { fixture: unpublished });
    expect(res.status).toBe(200);
    const id = res.body.payload.location_id;
    // No job is queued for it at all, so nothing can reach the provider later either.
    expect(await publishJobs(id)).toBe(0);
    // A location created after it in a published account is connected: the worker is running.
    const witness = await createLocation(minimalLocationBody({ name: 'Witness' }));
    await connectedRecord(org, witness.body.payload.location_id);
    expect(await listed(unpublished, id)).toMatchObject({ connected: false, alpha_location_name: null });
    expect(await atProvider(id)).toEqual([]);
    const graph = await graphql(t.url, `query ($a: ID, $id: ID!) { location(accountId: $a, id: $id) { connected providerError { status } } }`, {
      token: unpublished.token,
      variables: { a: accountIdOf(unpublished), id },
    });
    expect(graph.body).toEqual({ data: { location: { connected: false, providerError: null } } });
  });

  it('records a provider refusal: the location stays unconnected and GraphQL shows the failure', async () => {
    await sandbox().fail({ count: 1, status: 400, method: 'POST', pathContains: `/accounts/${alphaIdOf(org, 1)}/locations` });
    const res = await createLocation(minimalLocationBody({ name: 'Refused' }), { account: 1 });
    expect(res.status).toBe(200);
    const id = res.body.payload.location_id;
    const query = `query ($a: ID, $id: ID!) {
      location(accountId: $a, id: $id) { id connected alphaLocationName providerError { status reason message } }
    }`;
    const failed = await eventually(async () => {
      const answer = await graphql(t.url, query, { token: org.token, variables: { a: accountIdOf(org, 1), id } });
      return answer.body.data?.location?.providerError ? answer.body.data.location : undefined;
    }, 30000, 'the provider refusal to be recorded');
    expect(failed).toEqual({
      id,
      connected: false,
      alphaLocationName: null,
      providerError: { status: 400, reason: 'INVALID_ARGUMENT', message: expect.any(String) },
    });
    expect(failed.providerError.message.length).toBeGreaterThan(0);
    // Not retried: the failure is used up, and the provider holds nothing for it.
    expect((await sandbox().state()).failures).toEqual([]);
    expect(await atProvider(id)).toEqual([]);
    expect(await listed(org, id, 1)).toMatchObject({ connected: false, alpha_location_name: null });
  });

  describe('refuses input with 400 and the generic body naming the field', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['a missing name', minimalLocationBody({ name: undefined }), 'name is required'],
      ['a missing category_id', minimalLocationBody({ category_id: undefined }), 'category_id is required'],
      ['a missing country_code', minimalLocationBody({ country_code: undefined }), 'country_code is required'],
      ['an empty name', minimalLocationBody({ name: '   ' }), 'name must not be empty'],
      [
        'neither address, city and postal nor a service area',
        minimalLocationBody({ postal: undefined }),
        'A location needs address, city and postal, or a service area (service_area_place_ids)',
      ],
      ['a description of 751 characters', minimalLocationBody({ description: 'd'.repeat(751) }), 'description must be at most 750 characters'],
      [
        'three additional phone numbers',
        minimalLocationBody({ phone_number: '+1 555 0100', additional_phone_numbers: ['+1 555 0101', '+1 555 0102', '+1 555 0103'] }),
        'additional_phone_numbers may hold at most 2 numbers',
      ],
      ['a country code of three letters', minimalLocationBody({ country_code: 'USA' }), 'country_code must be an ISO 3166-1 alpha-2 code (two letters)'],
      [
        'a website that is not http(s)',
        minimalLocationBody({ website_uri: 'ftp://files.example/' }),
        'website_uri scheme must be http or https, not ftp',
      ],
      ['a latitude without a longitude', minimalLocationBody({ latitude: 40.7 }), 'latitude and longitude go together'],
      [
        'an hour of 25',
        minimalLocationBody({ regular_hours: [{ open_time: { hours: '25' }, close_time: { hours: '17' } }] }),
        'regular_hours[0].open_time.hours must be 00 to 24',
      ],
      [
        'a nested field under its GraphQL name',
        minimalLocationBody({ regular_hours: [{ openDay: 'MONDAY', open_time: { hours: '09' }, close_time: { hours: '17' } }] }),
        'regular_hours[0].openDay is not a known field',
      ],
      ['a wrong-typed name', minimalLocationBody({ name: 5 }), 'name must be a string'],
      ['a wrong-typed latitude', minimalLocationBody({ latitude: 'north', longitude: 1 }), 'latitude must be a number'],
    ];

    it.each(cases)('%s', async (_case, body, message) => {
      const res = await createLocation(body);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 400, message });
    });

    it('creates nothing for a refused request', async () => {
      const res = await createLocation(minimalLocationBody({ name: 'Never', description: 'd'.repeat(751) }), { fixture: unpublished });
      expect(res.status).toBe(400);
      const all = await listLocations(`?account_id=${accountIdOf(unpublished)}&per_page=250&include_fields=name`, unpublished.token);
      expect(all.body.data.map((location: { name: string }) => location.name)).not.toContain('Never');
    });
  });

  it('answers 409 to a reference_id already used in the account, and accepts it in another account', async () => {
    const first = await createLocation(minimalLocationBody({ reference_id: 'DUP-1' }), { fixture: unpublished });
    expect(first.status).toBe(200);
    const again = await createLocation(minimalLocationBody({ reference_id: 'DUP-1', name: 'Second' }), { fixture: unpublished });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: 409, message: 'reference_id is already used by another location of the account' });
    const elsewhere = await createLocation(minimalLocationBody({ reference_id: 'DUP-1' }), { fixture: other });
    expect(elsewhere.status).toBe(200);
    const byCode = await listLocations(`?account_id=${accountIdOf(unpublished)}&store_code=DUP-1`, unpublished.token);
    expect(byCode.body.data.map((location: { id: string }) => location.id)).toEqual([first.body.payload.location_id]);
  });

  describe('authentication and scope', () => {
    it('answers 403 to an account token', async () => {
      const res = await createLocation(minimalLocationBody(), { token: org.accounts[0]!.token });
      expect(res.status).toBe(403);
      expect(res.body).toEqual({ error: 403, message: 'This operation requires an organization token' });
    });

    it('answers 400 to an organization token without account_id', async () => {
      const res = await createLocation(minimalLocationBody(), { query: '' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 400, message: 'account_id is required with an organization token' });
    });

    // Fails today, in test/support/http.ts's OpenAPI check: the route answers 404 as product-decisions §2 says, but
    // /openapi.json lists no 404 for POST /location (organization-only routes get no account-scope errors in
    // src/rest/openapi.ts, and location.routes.ts does not add NOT_FOUND). Left in place to show it.
    it('answers 404 for an account of another organization, and an unknown one', async () => {
      for (const account of [accountIdOf(other), '01a20148-0000-7000-8000-000000000000', 'not-an-id']) {
        const res = await createLocation(minimalLocationBody(), { query: `?account_id=${account}` });
        expect(res.status).toBe(404);
        expect(res.body).toEqual({ error: 404, message: 'Account not found' });
      }
    });

    it('answers 401 without a token or with an unknown one', async () => {
      for (const headers of [{}, { authorization: 'Bearer lgo_unknown' }] as Record<string, string>[]) {
        const res = await http(t.url, 'POST', `/location?account_id=${accountIdOf(org)}`, { body: minimalLocationBody(), headers });
        expect(res.status).toBe(401);
        expect(res.body).toEqual({ error: 401, message: 'Missing, unknown or revoked bearer token' });
      }
    });
  });
});

describe('GET /location', () => {
  let listing: OrganizationFixture;
  /** The fixture's 12 locations of account 1, in creation (id) order. */
  let ids: string[];

  beforeAll(async () => {
    listing = await createOrganizationFixture(t.em(), { name: 'Lister', accounts: 2, locationsEach: 12 });
    ids = listing.accounts[0]!.locations.map((location) => location.id).sort();
  });

  const list = (query: string, token = listing.token) => listLocations(query, token);

  it('answers the envelope {success, data, found, page, per_page}, 10 per page by default', async () => {
    const res = await list(`?account_id=${accountIdOf(listing)}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['data', 'found', 'page', 'per_page', 'success']);
    expect(res.body).toMatchObject({ success: true, found: 12, page: 1, per_page: 10 });
    expect(res.body.data.map((location: { id: string }) => location.id)).toEqual(ids.slice(0, 10));
    for (const location of res.body.data) expect(Object.keys(location)).toEqual(RECORD_FIELDS);
  });

  it('pages: page 2, per_page up to 250, and 400 over it or under 1', async () => {
    const second = await list(`?account_id=${accountIdOf(listing)}&page=2`);
    expect(second.body).toMatchObject({ success: true, found: 12, page: 2, per_page: 10 });
    expect(second.body.data.map((location: { id: string }) => location.id)).toEqual(ids.slice(10));

    const small = await list(`?account_id=${accountIdOf(listing)}&page=3&per_page=5`);
    expect(small.body).toMatchObject({ found: 12, page: 3, per_page: 5 });
    expect(small.body.data.map((location: { id: string }) => location.id)).toEqual(ids.slice(10, 12));

    const beyond = await list(`?account_id=${accountIdOf(listing)}&page=9`);
    expect(beyond.body).toEqual({ success: true, data: [], found: 12, page: 9, per_page: 10 });

    const max = await list(`?account_id=${accountIdOf(listing)}&per_page=250`);
    expect(max.status).toBe(200);
    expect(max.body.per_page).toBe(250);
    expect(max.body.data).toHaveLength(12);

    for (const perPage of ['251', '0']) {
      const over = await list(`?account_id=${accountIdOf(listing)}&per_page=${perPage}`);
      expect(over.status).toBe(400);
      expect(over.body).toEqual({ error: 400, message: 'per_page must be between 1 and 250' });
    }
    const page0 = await list(`?account_id=${accountIdOf(listing)}&page=0`);
    expect(page0.status).toBe(400);
    expect(page0.body).toEqual({ error: 400, message: 'page must be at least 1' });
  });

  it('filters by store_code (the reference_id)', async () => {
    const res = await list(`?account_id=${accountIdOf(listing)}&store_code=store-1-3`);
    expect(res.body).toMatchObject({ success: true, found: 1, page: 1, per_page: 10 });
    expect(res.body.data).toHaveLength(1);
    expect(res.body.data[0]).toMatchObject({ id: listing.accounts[0]!.locations[2]!.id, reference_id: 'store-1-3', name: 'Location 1.3' });
    const none = await list(`?account_id=${accountIdOf(listing)}&store_code=store-2-3`);
    expect(none.body).toEqual({ success: true, data: [], found: 0, page: 1, per_page: 10 });
  });

  it('keeps only id and the include_fields asked for, and refuses an unknown name naming it', async () => {
    const res = await list(`?account_id=${accountIdOf(listing)}&include_fields=name,city&per_page=2`);
    expect(res.status).toBe(200);
    expect(res.body.data).toEqual([
      { id: ids[0], name: 'Location 1.1', city: null },
      { id: ids[1], name: 'Location 1.2', city: null },
    ]);
    expect(Object.keys(res.body.data[0])).toEqual(['id', 'name', 'city']);

    const unknown = await list(`?account_id=${accountIdOf(listing)}&include_fields=name,colour`);
    expect(unknown.status).toBe(400);
    expect(unknown.body).toEqual({ error: 400, message: `include_fields: unknown field colour (known: ${RECORD_FIELDS.join(', ')})` });
    // The GraphQL name of a field is not its REST name.
    const camel = await list(`?account_id=${accountIdOf(listing)}&include_fields=websiteUri`);
    expect(camel.status).toBe(400);
    expect(camel.body.message).toMatch(/^include_fields: unknown field websiteUri /);
  });

  it("lists an account token's own locations, ignoring account_id", async () => {
    const second = listing.accounts[1]!;
    const res = await list(`?account_id=${accountIdOf(listing)}&per_page=250`, second.token);
    expect(res.status).toBe(200);
    expect(res.body.found).toBe(12);
    expect(res.body.data.map((location: { id: string }) => location.id)).toEqual(second.locations.map((location) => location.id).sort());
    const withoutId = await list('', second.token);
    expect(withoutId.body.found).toBe(12);
  });

  it('answers 400 without account_id, 404 for a foreign account, 401 without a token', async () => {
    const missing = await list('');
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: 400, message: 'account_id is required with an organization token' });
    const foreign = await list(`?account_id=${accountIdOf(other)}`);
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: 404, message: 'Account not found' });
    const anonymous = await http(t.url, 'GET', `/location?account_id=${accountIdOf(listing)}`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.body).toEqual({ error: 401, message: 'Missing, unknown or revoked bearer token' });
  });
});

describe('GraphQL twins', () => {
  const fields =
    'id accountId name referenceId categoryId countryCode serviceAreaPlaceIds regularHours { openDay openTime { hours minutes } } ' +
    'connected alphaLocationName createdAt';

  it('createLocation creates what POST /location creates, and location(accountId, id) reads it', async () => {
    const created = await graphql(
      t.url,
      `mutation ($a: ID, $input: CreateLocationInput!) { createLocation(accountId: $a, input: $input) { ${fields} } }`,
      {
        token: unpublished.token,
        variables: {
          a: accountIdOf(unpublished),
          input: {
            name: 'Graph Cafe',
            referenceId: 'GQL-1',
            categoryId: 'gcid:cafe',
            countryCode: 'de',
            address: 'Hauptstraße 1',
            city: 'Berlin',
            postal: '10115',
            regularHours: [{ openDay: 'MONDAY', openTime: { hours: '7' }, closeTime: { hours: '18' } }],
          },
        },
      },
    );
    expect(created.body.errors).toBeUndefined();
    const location = created.body.data.createLocation;
    expect(location).toEqual({
      id: expect.any(String),
      accountId: accountIdOf(unpublished),
      name: 'Graph Cafe',
      referenceId: 'GQL-1',
      categoryId: 'gcid:cafe',
      countryCode: 'DE',
      serviceAreaPlaceIds: [],
      regularHours: [{ openDay: 'MONDAY', openTime: { hours: '07', minutes: null } }],
      connected: false,
      alphaLocationName: null,
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });

    const read = await graphql(t.url, `query ($a: ID, $id: ID!) { location(accountId: $a, id: $id) { ${fields} } }`, {
      token: unpublished.token,
      variables: { a: accountIdOf(unpublished), id: location.id },
    });
    expect(read.body).toEqual({ data: { location } });
    // The same record in REST names.
    expect(await listed(unpublished, location.id)).toMatchObject({
      name: 'Graph Cafe',
      reference_id: 'GQL-1',
      country_code: 'DE',
      created_at: Date.parse(location.createdAt),
    });

    const foreign = await graphql(t.url, `query ($id: ID!) { location(accountId: "${accountIdOf(unpublished)}", id: $id) { id } }`, {
      token: other.token,
      variables: { id: location.id },
    });
    expect(foreign.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('refuses a rule with BAD_USER_INPUT and the message REST gives', async () => {
    const res = await graphql(
      t.url,
      `mutation ($a: ID, $input: CreateLocationInput!) { createLocation(accountId: $a, input: $input) { id } }`,
      {
        token: org.token,
        variables: {
          a: accountIdOf(org),
          input: { name: 'Long', categoryId: 'gcid:cafe', countryCode: 'US', address: 'a', city: 'b', postal: 'c', description: 'd'.repeat(751) },
        },
      },
    );
    expect(res.body.data ?? null).toBeNull();
    expect(res.body.errors).toHaveLength(1);
    expect(res.body.errors![0]).toMatchObject({ message: 'description must be at most 750 characters', extensions: { code: 'BAD_USER_INPUT' } });

    const area = await graphql(
      t.url,
      `mutation ($a: ID, $input: CreateLocationInput!) { createLocation(accountId: $a, input: $input) { id } }`,
      { token: org.token, variables: { a: accountIdOf(org), input: { name: 'Nowhere', categoryId: 'gcid:cafe', countryCode: 'US' } } },
    );
    expect(area.body.errors![0]).toMatchObject({
      message: 'A location needs address, city and postal, or a service area (service_area_place_ids)',
      extensions: { code: 'BAD_USER_INPUT' },
    });
  });

  it('locations(accountId, storeCode, first, after) is a connection over the same list', async () => {
    const listing = await createOrganizationFixture(t.em(), { name: 'Connection', accounts: 1, locationsEach: 5 });
    const accountId = accountIdOf(listing);
    const ids = listing.accounts[0]!.locations.map((location) => location.id).sort();
    const query = `query ($a: ID, $code: String, $first: Int, $after: String) {
      locations(accountId: $a, storeCode: $code, first: $first, after: $after) {
        totalCount edges { cursor node { id referenceId } } pageInfo { hasNextPage endCursor }
      }
    }`;
    const first = await graphql(t.url, query, { token: listing.token, variables: { a: accountId, first: 3 } });
    expect(first.body.errors).toBeUndefined();
    const page1 = first.body.data.locations;
    expect(page1.totalCount).toBe(5);
    expect(page1.edges.map((edge: { node: { id: string } }) => edge.node.id)).toEqual(ids.slice(0, 3));
    expect(page1.pageInfo.hasNextPage).toBe(true);

    const next = await graphql(t.url, query, { token: listing.token, variables: { a: accountId, first: 3, after: page1.pageInfo.endCursor } });
    expect(next.body.data.locations.edges.map((edge: { node: { id: string } }) => edge.node.id)).toEqual(ids.slice(3));
    expect(next.body.data.locations.pageInfo.hasNextPage).toBe(false);

    const byCode = await graphql(t.url, query, { token: listing.token, variables: { a: accountId, code: 'store-1-4' } });
    expect(byCode.body.data.locations).toMatchObject({
      totalCount: 1,
      edges: [{ node: { id: listing.accounts[0]!.locations[3]!.id, referenceId: 'store-1-4' } }],
    });

    const page = await graphql(
      t.url,
      `query ($a: ID) { locationsPage(accountId: $a, page: 2, perPage: 2) { found page perPage locations { id } } }`,
      { token: listing.token, variables: { a: accountId } },
    );
    expect(page.body).toEqual({ data: { locationsPage: { found: 5, page: 2, perPage: 2, locations: ids.slice(2, 4).map((id) => ({ id })) } } });

    const tooMany = await graphql(t.url, `query ($a: ID) { locationsPage(accountId: $a, perPage: 251) { found } }`, {
      token: listing.token,
      variables: { a: accountId },
    });
    expect(tooMany.body.errors?.[0]).toMatchObject({ message: 'perPage must be between 1 and 250', extensions: { code: 'BAD_USER_INPUT' } });
  });
});
