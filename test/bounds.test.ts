import { isObjectType } from 'graphql';
import { CompetitorScan } from '../src/competitor-scan/competitor-scan.entity';
import { CompetitorScanStatus } from '../src/competitor-scan/competitor-scan.enums';
import { BetaConnection } from '../src/oauth/beta-connection.entity';
import { Location } from '../src/location/location.entity';
import { pageSizeMaxOf } from '../src/graphql/relay-connection';
import { Organization } from '../src/organization/organization.entity';
import { gatewaySchema } from '../src/schema';
import { visit } from './support/browser';
import { TestClock } from './support/clock';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { startTestStack, type TestStack } from './support/stack';
import { minimalLocationBody } from './support/locations';

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
      SCANS_RUNNING_LIMIT: '3',
      SCAN_START_RATE_LIMIT_PER_HOUR: '5',
      SCAN_SEARCH_RATE_LIMIT_PER_HOUR: '60',
    },
    { clock },
  );
});
afterAll(() => t?.close());


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
      body: minimalLocationBody({ special_hours: [{ open_date: '2031-12-24', is_closed: true }, { open_date: date, is_closed: true }] }),
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
      body: minimalLocationBody({
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

describe('competitor scans an organization can start (item 18)', () => {
  /** An organization with one location a scan can run on (coordinates and a place id). */
  async function scanner(name: string): Promise<{ org: OrganizationFixture; accountId: string; locationId: string }> {
    const org = await createOrganizationFixture(t.em(), { name, accounts: 1, locationsEach: 1 });
    const em = t.em();
    const location = await em.findOneOrFail(Location, org.accounts[0]!.locations[0]!.id);
    Object.assign(location, { latitude: 48.85, longitude: 2.35, placeId: `place-${name}` });
    await em.flush();
    return { org, accountId: org.accounts[0]!.account.id, locationId: location.id };
  }

  /** One request starting a scan of each of `rings` (aliases s0, s1, …). */
  const startScans = (who: Awaited<ReturnType<typeof scanner>>, rings: number[]) =>
    graphql(
      t.url,
      `mutation ($a: ID, $l: ID!) { ${rings
        .map((r, i) => `s${i}: runCompetitorScan(accountId: $a, locationId: $l, text: "coffee shop", radiusKm: 50, rings: ${r}) { id status rings }`)
        .join(' ')} }`,
      { token: who.org.token, variables: { a: who.accountId, l: who.locationId } },
    );

  /** What a finished job would leave: the organization's scans completed. */
  async function finishScans(who: Awaited<ReturnType<typeof scanner>>): Promise<void> {
    await t.em().nativeUpdate(CompetitorScan, { account: who.accountId }, { status: CompetitorScanStatus.COMPLETED, finishedAt: new Date() });
  }

  const scansOf = async (who: Awaited<ReturnType<typeof scanner>>) =>
    (await graphql(t.url, 'query ($a: ID) { competitorScans(accountId: $a, first: 100) { totalCount } }', { token: who.org.token, variables: { a: who.accountId } })).body
      .data.competitorScans.totalCount;

  it('queues at most SCANS_RUNNING_LIMIT scans at once: of one request of 15 aliases, 3 start, the 4th is a 429', async () => {
    const who = await scanner('running');
    const answer = await startScans(who, Array.from({ length: 15 }, () => 0));
    // Mutations run one after another; the refused one ends the request (its field is non-null), so none after it runs.
    expect(answer.body.data).toBeNull();
    expect(answer.body.errors).toEqual([
      expect.objectContaining({
        message: '3 scans of the organization are queued or running, the most allowed at once (3): try again when one ends',
        path: ['s3'],
        extensions: { code: 'RATE_LIMIT_EXCEEDED', payload: { allowed: false, limit: 3, remaining: 0, retryAfter: 30 } },
      }),
    ]);
    expect(answer.headers.get('retry-after')).toBe('30');
    expect(await scansOf(who)).toBe(3);

    // Scans that end make room; refused requests were not counted against the hourly limit (5): two more pass.
    await finishScans(who);
    const more = await startScans(who, [0, 0]);
    expect(more.body.errors).toBeUndefined();
    expect(more.body.data.s1).toMatchObject({ status: 'QUEUED', rings: 0 });
    await finishScans(who);
    const sixth = await startScans(who, [0]);
    expect(sixth.body.errors).toEqual([
      expect.objectContaining({
        message: 'Rate limit of 5 per 3600 s exceeded',
        extensions: { code: 'RATE_LIMIT_EXCEEDED', payload: { allowed: false, limit: 5, remaining: 0, retryAfter: expect.any(Number) } },
      }),
    ]);
    const retryAfter = Number(sixth.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(3000);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect(sixth.body.errors![0]).toMatchObject({ extensions: { payload: { retryAfter } } });
    expect(sixth.headers.get('ratelimit')).toBe(`"scan-starts";r=0;t=${retryAfter}`);
    expect(sixth.headers.get('ratelimit-policy')).toBe('"scan-starts";q=5;w=3600');
    expect(await scansOf(who)).toBe(5);
  });

  it('lets exactly SCANS_RUNNING_LIMIT of concurrent requests through', async () => {
    const who = await scanner('concurrent');
    const answers = await Promise.all(Array.from({ length: 6 }, () => startScans(who, [0])));
    const codes = answers.map((answer) => answer.body.errors?.[0]?.extensions?.code ?? 'OK').sort();
    expect(codes).toEqual(['OK', 'OK', 'OK', 'RATE_LIMIT_EXCEEDED', 'RATE_LIMIT_EXCEEDED', 'RATE_LIMIT_EXCEEDED']);
    expect(await scansOf(who)).toBe(3);
  });

  it('counts the provider searches of the scans started per hour: one per dot, 1 + 4·rings·(rings + 1)', async () => {
    const who = await scanner('searches');
    // 49 + 9 of 60: both pass, and the headers show the limit nearer to refusing.
    const first = await startScans(who, [3, 1]);
    expect(first.body.errors).toBeUndefined();
    expect(first.headers.get('ratelimit')).toMatch(/^"scan-searches";r=2;t=\d+$/);
    expect(first.headers.get('ratelimit-policy')).toBe('"scan-searches";q=60;w=3600');
    await finishScans(who);
    // 9 more would make 67.
    const over = await startScans(who, [1]);
    expect(over.body.errors).toEqual([
      expect.objectContaining({
        message: 'Rate limit of 60 per 3600 s exceeded',
        extensions: { code: 'RATE_LIMIT_EXCEEDED', payload: { allowed: false, limit: 60, remaining: 0, retryAfter: expect.any(Number) } },
      }),
    ]);
    expect(over.headers.get('ratelimit')).toMatch(/^"scan-searches";r=0;t=\d+$/);
    // One dot still fits, twice; then nothing does.
    const small = await startScans(who, [0, 0]);
    expect(small.body.errors).toBeUndefined();
    await finishScans(who);
    expect((await startScans(who, [0])).body.errors?.[0]?.message).toBe('Rate limit of 60 per 3600 s exceeded');
    expect(await scansOf(who)).toBe(4);
  });
});

describe('consent sessions an organization can open, and the size of what they keep (item 18)', () => {
  const TTL = 900;
  let org: OrganizationFixture;
  const REDIRECT = 'https://app.example/return';
  const alphaUrls = (n: number, state = 's') =>
    graphql(t.url, `mutation { ${Array.from({ length: n }, (_, i) => `g${i}: generateAlphaConsentUrl(redirectUrl: "${REDIRECT}", state: "${state}-${i}") { url }`).join(' ')} }`, {
      token: org.token,
    });
  /** Our state, as the provider gets it in the consent URL. */
  const ourState = (consentUrl: string) => new URL(consentUrl).searchParams.get('state')!;

  beforeAll(async () => {
    org = await createOrganizationFixture(t.em(), { name: 'Consents', accounts: 1, betaApi: true });
    clock.hold(new Date('2031-05-01T10:00:00.000Z'));
  });
  afterAll(() => clock.release());

  it('keeps at most CONSENT_SESSIONS_OPEN_LIMIT (20) open per provider: the 21st is a 429 until the oldest expires', async () => {
    const fifteen = await alphaUrls(15);
    expect(fifteen.body.errors).toBeUndefined();
    const five = await alphaUrls(5);
    expect(five.body.errors).toBeUndefined();

    const refused = await http(t.url, 'POST', '/oauth/alpha/generate-url', { token: org.token, body: { redirect_url: REDIRECT, state: 'one-more' } });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ success: false, msg: 'RATE_LIMIT_EXCEEDED', payload: { allowed: false, limit: 20, remaining: 0, retryAfter: TTL } });
    expect(refused.headers.get('retry-after')).toBe(String(TTL));
    const viaGraphql = await alphaUrls(1);
    expect(viaGraphql.body.errors).toEqual([
      expect.objectContaining({
        message: '20 consents of the organization wait for their callback, the most allowed at once (20): try again when one ends',
        extensions: { code: 'RATE_LIMIT_EXCEEDED', payload: { allowed: false, limit: 20, remaining: 0, retryAfter: TTL } },
      }),
    ]);

    // The beta flow has its own 20.
    const beta = await http(t.url, 'POST', '/oauth/beta/generate-url', { token: org.token, body: { redirect_url: REDIRECT, state: 'b' } });
    expect(beta.status).toBe(200);

    // A session the callback took is no longer open: one more fits.
    const taken = await visit(`${t.url}/oauth/alpha/callback?state=${ourState(fifteen.body.data!.g0.url)}&error=access_denied`);
    expect(taken.status).toBe(302);
    expect(new URL(taken.location!).searchParams.get('error')).toBe('access_denied');
    expect((await alphaUrls(1, 'after-callback')).body.errors).toBeUndefined();
    expect((await alphaUrls(1, 'full-again')).body.errors?.[0]?.extensions?.code).toBe('RATE_LIMIT_EXCEEDED');

    // Retry-After counts down to the oldest open session's expiry; once it expires there is room again.
    clock.advance(600_000);
    expect((await alphaUrls(1)).body.errors?.[0]).toMatchObject({ extensions: { payload: { retryAfter: TTL - 600 } } });
    clock.advance((TTL - 600) * 1000 + 1);
    expect((await alphaUrls(1, 'later')).body.errors).toBeUndefined();
  });

  it('sends a late callback back with invalid_state for a day, then deletes the session', async () => {
    const started = await alphaUrls(1, 'late');
    const state = ourState(started.body.data!.g0.url);
    clock.advance(TTL * 1000 + 1);
    const late = await visit(`${t.url}/oauth/alpha/callback?state=${state}&code=any`);
    expect(late.status).toBe(302);
    expect(Object.fromEntries(new URL(late.location!).searchParams)).toEqual({ error: 'invalid_state', state: 'late-0' });

    // A day after it expired, the next consent started (by anyone) deletes it: its callback no longer knows it.
    clock.advance(24 * 3600_000);
    const other = await createOrganizationFixture(t.em(), { name: 'Another consent', accounts: 1 });
    expect((await http(t.url, 'POST', '/oauth/alpha/generate-url', { token: other.token, body: { redirect_url: REDIRECT } })).status).toBe(200);
    const deleted = await visit(`${t.url}/oauth/alpha/callback?state=${state}&code=any`);
    expect(deleted.status).toBe(400);
    // Of the sessions of this file so far, only the ones that have not been expired for a day are left.
    const [{ left }] = await t.em().getConnection().execute<[{ left: number }]>('select count(*)::int as left from oauth_session where organization_id = ?', [org.organization.id]);
    expect(left).toBe(0);
  });

  it('refuses a state over 1024 characters and a redirect_url over 2048 as written, on both providers', async () => {
    for (const path of ['/oauth/alpha/generate-url', '/oauth/beta/generate-url']) {
      for (const state of ['x'.repeat(1025), 'é'.repeat(1025), 'x'.repeat(99_000)]) {
        const refused = await http(t.url, 'POST', path, { token: org.token, body: { redirect_url: REDIRECT, state } });
        expect(refused.status).toBe(400);
        expect(refused.body).toEqual({ error: 400, message: 'state must be at most 1024 characters' });
      }
      const long = await http(t.url, 'POST', path, { token: org.token, body: { redirect_url: `${REDIRECT}?q=${'x'.repeat(2049 - REDIRECT.length - 3)}` } });
      expect(long.status).toBe(400);
      expect(long.body).toEqual({ error: 400, message: 'redirect_url must be at most 2048 characters' });
      // Under 2048 as typed, but each é is six characters once written as a URL.
      const encoded = await http(t.url, 'POST', path, { token: org.token, body: { redirect_url: `${REDIRECT}?q=${'é'.repeat(400)}` } });
      expect(encoded.status).toBe(400);
      expect(encoded.body).toEqual({ error: 400, message: 'redirect_url must be at most 2048 characters written as a URL (non-ASCII characters percent-encoded)' });
    }
  });

  it('keeps the redirect of the largest state and redirect_url within what browsers and proxies take (16 KiB)', async () => {
    const redirectUrl = `${REDIRECT}?q=${'x'.repeat(2048 - REDIRECT.length - 3)}`;
    const state = '€'.repeat(1024);
    const generated = await http(t.url, 'POST', '/oauth/alpha/generate-url', { token: org.token, body: { redirect_url: redirectUrl, state } });
    expect(generated.status).toBe(200);
    const back = await visit(`${t.url}/oauth/alpha/callback?state=${ourState(generated.body.url)}&error=access_denied`);
    expect(back.status).toBe(302);
    expect(new URL(back.location!).searchParams.get('state')).toBe(state);
    expect(back.location!.length).toBeLessThan(16 * 1024);
  });
});

describe('a location page bounded in bytes (item 19)', () => {
  const BUDGET = 2 * 1024 * 1024;
  const LOCATIONS = 12;
  let org: OrganizationFixture;
  let accountId: string;
  /** Ids in creation order (time-ordered ids). */
  let ids: string[];

  /** Text of exactly `n` characters. */
  const text = (n: number, seed: string) => `${seed}-`.padEnd(n, 'x').slice(0, n);
  const DAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'];
  const period = (i: number) => ({ open_day: DAYS[i % 7], open_time: { hours: '08', minutes: '30' }, close_day: DAYS[i % 7], close_time: { hours: '17', minutes: '45' } });
  const url = (what: string, n: number) => `https://example.com/${what}/${n}/`.padEnd(2048, 'p');

  /** POST /location's fields, each at the largest docs/locations.md allows. */
  const createFields = (n: number) => ({
    name: text(100, `name ${n}`),
    reference_id: text(64, `ref-${n}`),
    category_id: text(100, 'gcid:cat'),
    address: text(255, 'address'),
    postal: text(20, 'postal'),
    city: text(100, 'city'),
    country_code: 'US',
    administrative_area: text(100, 'area'),
    additional_address_lines: Array.from({ length: 4 }, (_, i) => text(255, `line ${i}`)),
    description: text(750, 'description'),
    phone_number: '+1 (555) 000-0000 0000 0000 00',
    additional_phone_numbers: ['+1 (555) 000-0000 0000 0000 01', '+1 (555) 000-0000 0000 0000 02'],
    website_uri: url('site', n),
    latitude: 48.85,
    longitude: 2.35,
    profile_logo_url: url('logo', n),
    cover_url: url('cover', n),
    additional_category_ids: Array.from({ length: 9 }, (_, i) => text(100, `gcid:extra${i}`)),
    service_area_place_ids: Array.from({ length: 20 }, (_, i) => text(200, `place${i}`)),
    service_area_place_names: Array.from({ length: 20 }, (_, i) => text(200, `place name ${i}`)),
    placeId: text(255, 'placeid'),
    regular_hours: Array.from({ length: 100 }, (_, i) => period(i)),
    special_hours: Array.from({ length: 100 }, (_, i) => ({
      open_date: `2031-01-${String((i % 28) + 1).padStart(2, '0')}`,
      close_date: `2031-02-${String((i % 28) + 1).padStart(2, '0')}`,
      open_time: { hours: '09', minutes: '00' },
      close_time: { hours: '18', minutes: '00' },
    })),
  });

  /** PATCH /location/update's fields a create does not take, each at the largest allowed. */
  const updateFields = () => ({
    more_hours: Array.from({ length: 20 }, (_, t) => ({ hoursTypeId: text(64, `TYPE${t}`).toUpperCase(), periods: Array.from({ length: 100 }, (_, i) => period(i)) })),
    categories: {
      primaryCategory: { name: text(100, 'gcid:cat'), displayName: text(100, 'Category') },
      additionalCategories: Array.from({ length: 9 }, (_, i) => ({ name: text(100, `gcid:extra${i}`), displayName: text(100, `Extra ${i}`) })),
    },
    service_items: Array.from({ length: 100 }, (_, i) => ({
      freeFormServiceItem: { category: text(100, 'gcid:cat'), label: { displayName: text(140, `service ${i}`), description: text(250, 'about'), languageCode: 'en-US-xxxx' } },
      price: { currencyCode: 'USD', units: '999999999999999999', nanos: 999999999 },
    })),
    service_area: {
      businessType: 'CUSTOMER_AND_BUSINESS_LOCATION',
      places: { placeInfos: Array.from({ length: 20 }, (_, i) => ({ placeName: text(200, `place name ${i}`), placeId: text(200, `place${i}`) })) },
      regionCode: 'US',
    },
  });

  const list = (query: string) => fetch(`${t.url}/location?account_id=${accountId}&${query}`, { headers: { authorization: `Bearer ${org.token}` } });
  /** The same through the checking client: each answer is checked against /openapi.json too. */
  const listed = async (query: string) => (await http(t.url, 'GET', `/location?account_id=${accountId}&${query}`, { token: org.token })).body;

  beforeAll(async () => {
    org = await createOrganizationFixture(t.em(), { name: 'Large locations', accounts: 1 });
    accountId = org.accounts[0]!.account.id;
    ids = [];
    for (let n = 0; n < LOCATIONS; n += 1) {
      const created = await http(t.url, 'POST', `/location?account_id=${accountId}`, { token: org.token, body: createFields(n) });
      expect(created.status).toBe(200);
      ids.push(created.body.payload.location_id);
      // The account is not connected: the change is applied at once.
      const updated = await http(t.url, 'PATCH', `/location/update?account_id=${accountId}&location_id=${created.body.payload.location_id}`, {
        token: org.token,
        body: updateFields(),
      });
      expect(updated.status).toBe(200);
    }
  });

  it('ends GET /location?per_page=250 before the record that would pass 2 MiB, and says how to read on', async () => {
    const started = performance.now();
    const first = await list('per_page=250');
    const body = await first.text();
    const elapsedMs = performance.now() - started;
    const page = JSON.parse(body);
    expect(first.status).toBe(200);
    // The documented members, then the additive one: found, page and per_page as they are.
    expect(Object.keys(page)).toEqual(['success', 'data', 'found', 'page', 'per_page', 'next_skip']);
    expect(page).toMatchObject({ success: true, found: LOCATIONS, page: 1, per_page: 250 });
    const records = page.data.length as number;
    expect(records).toBeGreaterThan(1);
    expect(records).toBeLessThan(LOCATIONS);
    expect(page.next_skip).toBe(records);
    expect(Buffer.byteLength(body)).toBeLessThanOrEqual(BUDGET);
    const recordBytes = Buffer.byteLength(JSON.stringify(page.data[0]));
    // Filled to the maxima: each record is about 370 KB (it was 20.4 MB for 60 such, in one answer).
    expect(recordBytes).toBeGreaterThan(300_000);
    console.log(
      `GET /location?per_page=250 over ${LOCATIONS} locations at the documented maxima (${recordBytes} bytes each as REST JSON): ` +
        `${records} records, ${Buffer.byteLength(body)} bytes, ${elapsedMs.toFixed(0)} ms`,
    );

    // Reading on with skip until the page is whole gives every record once, in order.
    const seen: string[] = page.data.map((record: { id: string }) => record.id);
    let skip: number | undefined = page.next_skip;
    while (skip !== undefined) {
      const next = await listed(`per_page=250&skip=${skip}`);
      expect(next).toMatchObject({ success: true, found: LOCATIONS, page: 1, per_page: 250 });
      seen.push(...next.data.map((record: { id: string }) => record.id));
      skip = next.next_skip;
      if (skip !== undefined) expect(skip).toBe(seen.length);
    }
    expect(seen).toEqual(ids);
  });

  it('keeps numbered pages where they are: a page that fits is whole, without next_skip', async () => {
    const second = await listed('per_page=4&page=2');
    expect(Object.keys(second)).toEqual(['success', 'data', 'found', 'page', 'per_page']);
    expect(second.data.map((record: { id: string }) => record.id)).toEqual(ids.slice(4, 8));
    // include_fields makes records smaller, not the page longer: the budget counts whole records.
    const named = await listed('per_page=250&include_fields=name');
    expect(named.data.length).toBeLessThan(LOCATIONS);
    expect(named.next_skip).toBe(named.data.length);
  });

  it('refuses a skip that is not within the page', async () => {
    expect(await listed('per_page=10&skip=10')).toEqual({ error: 400, message: 'skip must be less than per_page' });
    expect((await list('per_page=10&skip=-1')).status).toBe(400);
  });

  it('ends a GraphQL page early too, and the lists of one answer share its budget', async () => {
    const cursor = await graphql(t.url, 'query ($a: ID) { locations(accountId: $a, first: 100) { totalCount edges { node { id } } pageInfo { hasNextPage endCursor } } }', {
      token: org.token,
      variables: { a: accountId },
    });
    const connection = cursor.body.data.locations;
    expect(connection.totalCount).toBe(LOCATIONS);
    expect(connection.edges.length).toBeLessThan(LOCATIONS);
    expect(connection.pageInfo.hasNextPage).toBe(true);

    const two = await graphql(
      t.url,
      'query ($a: ID) { a: locationsPage(accountId: $a, perPage: 250) { found nextSkip locations { id } } b: locationsPage(accountId: $a, perPage: 250) { found nextSkip locations { id } } }',
      { token: org.token, variables: { a: accountId } },
    );
    // The lists are read one after the other, whichever comes first; the answer's budget is then spent, and the
    // other holds its first record only, and says so.
    const [whole, rest] = [two.body.data.a, two.body.data.b].sort((x, y) => y.locations.length - x.locations.length);
    expect(whole.locations.length).toBe(connection.edges.length);
    expect(whole).toMatchObject({ found: LOCATIONS, nextSkip: whole.locations.length });
    expect(rest.locations.map((location: { id: string }) => location.id)).toEqual([ids[0]]);
    expect(rest).toMatchObject({ found: LOCATIONS, nextSkip: 1 });
  });
});
