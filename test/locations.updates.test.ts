import { Account } from '../src/account/account.entity';
import { TestClock } from './support/clock';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http, type JsonResponse } from './support/http';
import { eventually, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';
import { subscribe, updateJobProbe } from './support/ws';
import { minimalLocationBody } from './support/locations';

/**
 * PATCH /location/update and its GraphQL twins through HTTP and graphql-ws, against the alpha sandbox: the
 * document's rules and bodies, update jobs from QUEUED to SUCCEEDED or FAILED, the one-at-a-time 409, the hourly
 * limit, and provider 429s retried. The sandbox reads the test's clock, so its per-minute edit limit is passed by
 * moving the clock, not by waiting.
 */

const clock = new TestClock();
let t: TestStack;
let org: OrganizationFixture;
let other: OrganizationFixture;

const JOB_FIELDS = 'id status version fields locationId accountId error { status reason message } createdAt startedAt finishedAt';
const JOB_UPDATED = `subscription ($jobId: ID, $locationId: ID) { locationUpdateJobUpdated(jobId: $jobId, locationId: $locationId) { ${JOB_FIELDS} } }`;

beforeAll(async () => {
  // No waiting for a 429 (JOB_MAX_WAIT_SECONDS 0): the provider's edit limit is met on the test's held clock, which
  // a wait (real time, as pg-boss counts it) could not follow; waiting is test/jobs.waits.test.ts's.
  t = await startTestStack({ JOB_RETRY_DELAY_SECONDS: '1', JOB_MAX_WAIT_SECONDS: '0', LOCATION_READ_RATE_LIMIT_PER_MINUTE: '100000' }, { clock });
  org = await createOrganizationFixture(t.em(), { accounts: 3, locationsEach: 2 });
  other = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1 });
  // The first account is connected to the provider: its new locations are created there by a job.
  const em = t.em();
  const account = await em.findOneOrFail(Account, org.accounts[0]!.account.id);
  account.alphaAccountId = 'alpha-updates';
  await em.flush();
});
beforeEach(async () => {
  clock.release();
  await sandboxOf(t.url).reset();
});
afterAll(() => t?.close());

const accountOf = (fixture: OrganizationFixture, index = 0) => fixture.accounts[index]!.account.id;

function patch(locationId: string, body: unknown, options: { token?: string; accountId?: string; query?: string } = {}): Promise<JsonResponse> {
  const accountId = options.accountId ?? accountOf(org);
  return http(t.url, 'PATCH', `/location/update?account_id=${accountId}&location_id=${locationId}${options.query ?? ''}`, {
    token: options.token ?? org.token,
    body,
  });
}

async function updateJob(id: string, accountId = accountOf(org)): Promise<any> {
  const answer = await http(t.url, 'GET', `/location/updates?account_id=${accountId}&id=${id}`, { token: org.token });
  expect(answer.status).toBe(200);
  return answer.body.payload.updates[0];
}

/** Polls GET /location/updates as a REST client does, until the job is finished (or `done` holds). */
function finishedJob(id: string, done: (job: any) => boolean = (job) => job.status === 'SUCCEEDED' || job.status === 'FAILED'): Promise<any> {
  return eventually(async () => {
    const job = await updateJob(id);
    return done(job) ? job : undefined;
  }, 30000, `update ${id}`);
}

async function storedLocation(id: string, accountId = accountOf(org)): Promise<any> {
  const answer = await http(t.url, 'GET', `/location?account_id=${accountId}&per_page=250`, { token: org.token });
  return answer.body.data.find((location: { id: string }) => location.id === id);
}

let created = 0;
/** A location created through POST /location and connected by its publish job (the first account's). */
async function connectedLocation(extra: Record<string, unknown> = {}): Promise<string> {
  created += 1;
  const answer = await http(t.url, 'POST', `/location?account_id=${accountOf(org)}`, {
    token: org.token,
    body: minimalLocationBody({
      name: `Updated Bakery ${created}`,
      reference_id: `upd-${created}`,
      category_id: 'gcid:bakery',
      phone_number: '+1 555 0100',
      description: 'Fresh bread',
      ...extra,
    }),
  });
  expect(answer.status).toBe(200);
  const id = answer.body.payload.location_id as string;
  await eventually(async () => ((await storedLocation(id))?.connected ? true : undefined), 30000, `location ${id} to be connected`);
  return id;
}

async function providerLocation(id: string): Promise<any> {
  const name = (await storedLocation(id)).alpha_location_name;
  return (await sandboxOf(t.url).state()).locations.find((location) => location.name === name);
}

describe('an update of a connected location', () => {
  it('answers with the job id at once; the job sends only the changed fields to the provider, then applies them', async () => {
    const id = await connectedLocation();
    const before = await storedLocation(id);
    const answer = await patch(id, { name: 'Renamed Bakery', description: 'Fresh bread', website_uri: 'https://bakery.example' });
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ success: true, payload: { message: 'The update was added to the update queue', id: expect.any(String) } });

    const job = await finishedJob(answer.body.payload.id);
    // description was sent with its current value: not a change.
    expect(job).toEqual({
      id: answer.body.payload.id,
      location_id: id,
      account: accountOf(org),
      status: 'SUCCEEDED',
      fields: ['name', 'website_uri'],
      error: null,
      created_at: expect.any(Number),
      started_at: expect.any(Number),
      finished_at: expect.any(Number),
    });
    expect(job.started_at).toBeGreaterThanOrEqual(job.created_at);
    expect(job.finished_at).toBeGreaterThanOrEqual(job.started_at);

    const after = await storedLocation(id);
    expect(after).toMatchObject({ name: 'Renamed Bakery', website_uri: 'https://bakery.example', description: 'Fresh bread', phone_number: '+1 555 0100' });
    expect(after.updated_at).toBeGreaterThan(before.updated_at - 1);
    const remote = await providerLocation(id);
    expect(remote).toMatchObject({ title: 'Renamed Bakery', websiteUri: 'https://bakery.example', profile: { description: 'Fresh bread' } });
    expect(remote.edits).toBe(1);
  });

  it('sends phone numbers as a pair, the address as a whole, and hours, categories, service items and area in the provider’s shapes', async () => {
    const id = await connectedLocation();
    const answer = await patch(id, {
      phone_number: '+1 555 0199',
      additional_phone_numbers: ['+1 555 0198'],
      city: 'Shelbyville',
      regular_hours: [{ open_day: 'MONDAY', open_time: { hours: '08', minutes: '30' }, close_day: 'MONDAY', close_time: { hours: '17', minutes: null } }],
      special_hours: [{ open_date: '2031-12-24', is_closed: true }],
      more_hours: [{ hoursTypeId: 'DELIVERY', periods: [{ open_day: 'FRIDAY', open_time: { hours: '18', minutes: '00' }, close_day: 'FRIDAY', close_time: { hours: '22', minutes: '00' } }] }],
      categories: { primaryCategory: { name: 'gcid:cafe', displayName: 'Café' }, additionalCategories: [{ name: 'gcid:bakery', displayName: 'Bakery' }] },
      service_items: [{ structuredServiceItem: { serviceTypeId: 'job_type_id:bread' } }, { freeFormServiceItem: { category: 'gcid:cafe', label: { displayName: 'Cakes' } } }],
      service_area: { businessType: 'CUSTOMER_AND_BUSINESS_LOCATION', places: { placeInfos: [{ placeName: 'Springfield', placeId: 'ChIJspring' }] } },
    });
    expect(answer.body).toEqual({ success: true, payload: expect.any(Object) });
    const job = await finishedJob(answer.body.payload.id);
    expect(job.status).toBe('SUCCEEDED');
    expect(job.fields).toEqual(['city', 'phone_number', 'additional_phone_numbers', 'regular_hours', 'special_hours', 'more_hours', 'categories', 'service_items', 'service_area']);

    const after = await storedLocation(id);
    expect(after).toMatchObject({
      city: 'Shelbyville',
      phone_number: '+1 555 0199',
      additional_phone_numbers: ['+1 555 0198'],
      category_id: 'gcid:cafe',
      regular_hours: [{ open_day: 'MONDAY', open_time: { hours: '08', minutes: '30' }, close_day: 'MONDAY', close_time: { hours: '17', minutes: null } }],
      special_hours: [{ open_date: '2031-12-24', close_date: null, is_closed: true, open_time: null, close_time: null }],
      more_hours: [{ hoursTypeId: 'DELIVERY', periods: [{ open_day: 'FRIDAY', open_time: { hours: '18', minutes: '00' }, close_day: 'FRIDAY', close_time: { hours: '22', minutes: '00' } }] }],
      categories: { primaryCategory: { name: 'gcid:cafe', displayName: 'Café' }, additionalCategories: [{ name: 'gcid:bakery', displayName: 'Bakery' }] },
    });
    const remote = await providerLocation(id);
    expect(remote.phoneNumbers).toEqual({ primaryPhone: '+1 555 0199', additionalPhones: ['+1 555 0198'] });
    expect(remote.storefrontAddress).toMatchObject({ locality: 'Shelbyville', regionCode: 'US', postalCode: '12345', addressLines: ['1 Main Street'] });
    expect(remote.regularHours).toEqual({ periods: [{ openDay: 'MONDAY', openTime: { hours: 8, minutes: 30 }, closeDay: 'MONDAY', closeTime: { hours: 17 } }] });
    expect(remote.specialHours).toEqual({ specialHourPeriods: [{ startDate: { year: 2031, month: 12, day: 24 }, closed: true }] });
    expect(remote.moreHours).toEqual([{ hoursTypeId: 'DELIVERY', periods: [{ openDay: 'FRIDAY', openTime: { hours: 18 }, closeDay: 'FRIDAY', closeTime: { hours: 22 } }] }]);
    expect(remote.categories).toEqual({ primaryCategory: { name: 'gcid:cafe', displayName: 'Café' }, additionalCategories: [{ name: 'gcid:bakery', displayName: 'Bakery' }] });
    expect(remote.serviceItems).toHaveLength(2);
    expect(remote.serviceArea).toMatchObject({ businessType: 'CUSTOMER_AND_BUSINESS_LOCATION' });
    // One edit at the provider for the whole update.
    expect(remote.edits).toBe(1);
  });

  it('records a provider refusal: FAILED with the provider’s error, the location unchanged', async () => {
    const id = await connectedLocation();
    await sandboxOf(t.url).fail({ count: 1, status: 400, method: 'PATCH', pathContains: '/locations/' });
    const answer = await patch(id, { name: 'Never Applied' });
    const job = await finishedJob(answer.body.payload.id);
    expect(job).toMatchObject({ status: 'FAILED', fields: ['name'], error: { status: 400, reason: 'INVALID_ARGUMENT', message: expect.any(String) } });
    expect(job.finished_at).toEqual(expect.any(Number));
    expect((await storedLocation(id)).name).not.toBe('Never Applied');
    // A finished job does not block the next update.
    const next = await patch(id, { name: 'Applied After All' });
    expect(next.status).toBe(200);
    expect((await finishedJob(next.body.payload.id)).status).toBe('SUCCEEDED');
    expect((await storedLocation(id)).name).toBe('Applied After All');
  });

  it('without waiting allowed, retries the provider’s 429 (its edit limit) with backoff, keeping the latest error on the running job', async () => {
    const id = await connectedLocation();
    clock.hold();
    // The provider takes 10 edits of a location per minute of its clock.
    for (let edit = 1; edit <= 10; edit += 1) {
      const answer = await patch(id, { description: `Edit ${edit}` });
      expect(answer.status).toBe(200);
      expect((await finishedJob(answer.body.payload.id)).status).toBe('SUCCEEDED');
    }
    const eleventh = await patch(id, { description: 'Edit 11' });
    const throttled = await finishedJob(eleventh.body.payload.id, (job) => job.error !== null);
    expect(throttled).toMatchObject({ status: 'RUNNING', error: { status: 429, reason: 'RESOURCE_EXHAUSTED' }, finished_at: null });
    // Still one at a time while it waits for its retry.
    expect((await patch(id, { description: 'Edit 12' })).status).toBe(409);
    clock.advance(61_000);
    const done = await finishedJob(eleventh.body.payload.id);
    expect(done).toMatchObject({ status: 'SUCCEEDED', error: null });
    expect((await providerLocation(id)).profile).toEqual({ description: 'Edit 11' });
  });
});

describe('an update of a location the provider does not know yet', () => {
  it('is applied at once: the job is SUCCEEDED from the start and nothing goes to the provider', async () => {
    const location = org.accounts[1]!.locations[0]!;
    const answer = await patch(location.id, { description: 'Applied here' }, { accountId: accountOf(org, 1) });
    expect(answer.status).toBe(200);
    expect(answer.body.payload.message).toMatch(/not connected.*applied at once/);
    const job = await updateJob(answer.body.payload.id, accountOf(org, 1));
    expect(job).toMatchObject({ status: 'SUCCEEDED', fields: ['description'], error: null });
    expect(job.started_at).toBe(job.created_at);
    expect(job.finished_at).toBe(job.created_at);
    expect((await storedLocation(location.id, accountOf(org, 1))).description).toBe('Applied here');
    expect((await sandboxOf(t.url).state()).calls['location-update'] ?? 0).toBe(0);
  });
});

describe('the rules of an update, each with the document’s {success: false, msg} body', () => {
  const accountId = () => accountOf(org, 1);
  const locationId = () => org.accounts[1]!.locations[1]!.id;
  const refused = async (body: unknown, msg: string | RegExp, query = '') => {
    const answer = await patch(locationId(), body, { accountId: accountId(), query });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ success: false, msg: typeof msg === 'string' ? msg : expect.stringMatching(msg) });
  };

  it('description at most 750 characters (counted as characters, not bytes)', async () => {
    await refused({ description: 'x'.repeat(751) }, 'description must be at most 750 characters');
    const answer = await patch(locationId(), { description: 'é'.repeat(750) }, { accountId: accountId() });
    expect(answer.status).toBe(200);
  });

  it('phone numbers only together, at most 2 additional ones', async () => {
    await refused({ phone_number: '+1 555 0111' }, 'phone_number and additional_phone_numbers must be updated together');
    await refused({ additional_phone_numbers: ['+1 555 0112'] }, 'phone_number and additional_phone_numbers must be updated together');
    await refused(
      { phone_number: '+1 555 0111', additional_phone_numbers: ['+1 555 0112', '+1 555 0113', '+1 555 0114'] },
      'additional_phone_numbers may hold at most 2 numbers',
    );
    expect((await patch(locationId(), { phone_number: '+1 555 0111', additional_phone_numbers: ['+1 555 0112'] }, { accountId: accountId() })).status).toBe(200);
  });

  it('duplicate service items (by service type id or display name), within one request or combined with the stored ones', async () => {
    const bread = { structuredServiceItem: { serviceTypeId: 'job_type_id:bread' } };
    const cakes = { freeFormServiceItem: { category: 'gcid:cafe', label: { displayName: 'Cakes' } } };
    await refused({ service_items: [bread, bread] }, /^Duplicate service items: service type id job_type_id:bread/);
    await refused(
      { service_items: [cakes, { freeFormServiceItem: { category: 'gcid:cafe', label: { displayName: 'CAKES' } } }] },
      /^Duplicate service items: display name CAKES/,
    );
    expect((await patch(locationId(), { service_items: [bread] }, { accountId: accountId() })).status).toBe(200);
    // Combined with the stored items: bread again is a duplicate; cakes joins it.
    await refused({ service_items: [bread] }, /^Duplicate service items/, '&service_items_combination=true');
    expect((await patch(locationId(), { service_items: [cakes] }, { accountId: accountId(), query: '&service_items_combination=true' })).status).toBe(200);
    expect((await storedLocation(locationId(), accountId())).service_items).toEqual([bread, cakes]);
    // false (the default) replaces them.
    expect((await patch(locationId(), { service_items: [bread] }, { accountId: accountId(), query: '&service_items_combination=false' })).status).toBe(200);
    expect((await storedLocation(locationId(), accountId())).service_items).toEqual([bread]);
    await refused({ service_items: [cakes] }, 'service_items_combination must be true or false', '&service_items_combination=maybe');
    await refused({ service_items: [{ structuredServiceItem: { serviceTypeId: 'x' }, freeFormServiceItem: cakes.freeFormServiceItem }] }, /^service_items\[0\]/);
  });

  it('only changed fields: a request that changes nothing is refused', async () => {
    const current = await storedLocation(locationId(), accountId());
    await refused({ name: current.name, city: current.city }, /^Nothing to update/);
  });

  it('input that is malformed, unknown or missing, in the same shape', async () => {
    await refused({ name: 5 }, 'name must be a string');
    await refused({ regular_hours: [{ openDay: 'MONDAY' }] }, 'regular_hours[0].openDay is not a known field');
    await refused({ regular_hours: [{ open_day: 'MONDAY', open_time: { hours: '25' }, close_time: { hours: '18' } }] }, 'regular_hours[0].open_time.hours must be 00 to 24');
    await refused({ categories: { additionalCategories: [] } }, 'categories.primaryCategory is required');
    await refused({ name: null }, 'name must not be null');
    const placed = await http(t.url, 'POST', `/location?account_id=${accountId()}`, {
      token: org.token,
      body: { name: 'Placed', category_id: 'gcid:bakery', country_code: 'US', address: '2 Main Street', city: 'Springfield', postal: '12345' },
    });
    const cleared = await patch(placed.body.payload.location_id, { address: null, city: null }, { accountId: accountId() });
    expect(cleared.body).toEqual({ success: false, msg: 'A location needs address, city and postal, or a service area (service_area_place_ids)' });
    const missing = await http(t.url, 'PATCH', `/location/update?account_id=${accountId()}`, { token: org.token, body: { name: 'x' } });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ success: false, msg: 'location_id is required' });
  });

  it('answers 404 for a location outside the account, and 403/401 as every route does', async () => {
    const elsewhere = await patch(other.accounts[0]!.locations[0]!.id, { name: 'Mine now' }, { accountId: accountId() });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body).toEqual({ error: 404, message: 'Location not found' });
    const otherAccount = await patch(org.accounts[0]!.locations[0]!.id, { name: 'Wrong account' }, { accountId: accountId() });
    expect(otherAccount.status).toBe(404);
    const unauthenticated = await http(t.url, 'PATCH', `/location/update?location_id=${locationId()}`, { body: { name: 'x' } });
    expect(unauthenticated.status).toBe(401);
    // An account token acts on its own account whatever account_id says.
    const own = await patch(locationId(), { name: 'By the account token' }, { token: org.accounts[1]!.token, accountId: accountOf(org, 2) });
    expect(own.status).toBe(200);
  });
});

describe('the limit of 200 update requests per account per rolling hour', () => {
  it('refuses the 201st with the document’s body, remaining counting down and retryAfter within the hour', async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 4 });
    const accountId = fixture.accounts[0]!.account.id;
    const started = Date.now();
    for (let request = 1; request <= 200; request += 1) {
      const location = fixture.accounts[0]!.locations[request % 4]!;
      const answer = await patch(location.id, { description: `Version ${request}` }, { token: fixture.token, accountId });
      expect(answer.status).toBe(200);
      if (request === 1) expect(answer.headers.get('ratelimit')).toBe('"location-updates";r=199;t=3600');
      if (request === 200) expect(answer.headers.get('ratelimit')).toMatch(/^"location-updates";r=0;t=\d+$/);
    }
    const refused = await patch(fixture.accounts[0]!.locations[0]!.id, { description: 'One too many' }, { token: fixture.token, accountId });
    expect(refused.status).toBe(429);
    expect(refused.body).toEqual({ success: false, msg: 'RATE_LIMIT_EXCEEDED', payload: { allowed: false, limit: 200, remaining: 0, retryAfter: expect.any(Number) } });
    const elapsed = Math.ceil((Date.now() - started) / 1000);
    expect(refused.body.payload.retryAfter).toBeLessThanOrEqual(3600);
    expect(refused.body.payload.retryAfter).toBeGreaterThanOrEqual(3600 - elapsed - 1);
    expect(refused.headers.get('retry-after')).toBe(String(refused.body.payload.retryAfter));
    expect(refused.headers.get('ratelimit-policy')).toBe('"location-updates";q=200;w=3600');
    // Per account: another account of the organization is not limited by it.
    expect((await patch(org.accounts[1]!.locations[0]!.id, { description: 'Other account' }, { accountId: accountOf(org, 1) })).status).toBe(200);
  });

  it('accepts exactly 200 of 250 concurrent updates over many locations', async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 250 });
    const accountId = fixture.accounts[0]!.account.id;
    const answers = await Promise.all(
      fixture.accounts[0]!.locations.map((location, index) => patch(location.id, { description: `Burst ${index}` }, { token: fixture.token, accountId })),
    );
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(200);
    expect(statuses.filter((status) => status === 429)).toHaveLength(50);
    // The refused ones changed nothing and recorded no job.
    const jobs = await http(t.url, 'GET', `/location/updates?account_id=${accountId}&per_page=1`, { token: fixture.token });
    expect(jobs.body.payload.found).toBe(200);
  });
});

describe('GraphQL: updateLocation, locationUpdateJobs and locationUpdateJob', () => {
  it('follow the same rules and show the same jobs', async () => {
    const location = org.accounts[2]!.locations[0]!;
    const mutation = `mutation ($a: ID, $l: ID!, $input: UpdateLocationInput!) {
      updateLocation(accountId: $a, locationId: $l, input: $input) { id message job { status fields } }
    }`;
    const ok = await graphql(t.url, mutation, { token: org.token, variables: { a: accountOf(org, 2), l: location.id, input: { description: 'From GraphQL', websiteUri: 'https://graphql.example' } } });
    expect(ok.body.errors).toBeUndefined();
    expect(ok.body.data.updateLocation.job).toEqual({ status: 'SUCCEEDED', fields: ['DESCRIPTION', 'WEBSITE_URI'] });
    const jobId = ok.body.data.updateLocation.id;

    const tooLong = await graphql(t.url, mutation, { token: org.token, variables: { a: accountOf(org, 2), l: location.id, input: { description: 'x'.repeat(751) } } });
    expect(tooLong.body.errors?.[0]).toMatchObject({ message: 'description must be at most 750 characters', extensions: { code: 'BAD_USER_INPUT' } });

    const list = await graphql(t.url, `query ($a: ID, $l: ID) { locationUpdateJobs(accountId: $a, locationId: $l, status: SUCCEEDED) { found page perPage updates { id status } } }`, {
      token: org.token,
      variables: { a: accountOf(org, 2), l: location.id },
    });
    expect(list.body.data.locationUpdateJobs).toEqual({ found: 1, page: 1, perPage: 20, updates: [{ id: jobId, status: 'SUCCEEDED' }] });

    const one = await graphql(t.url, `query ($a: ID, $id: ID!) { locationUpdateJob(accountId: $a, id: $id) { id locationId accountId } }`, {
      token: org.token,
      variables: { a: accountOf(org, 2), id: jobId },
    });
    expect(one.body.data.locationUpdateJob).toEqual({ id: jobId, locationId: location.id, accountId: accountOf(org, 2) });
    const hidden = await graphql(t.url, `query ($a: ID, $id: ID!) { locationUpdateJob(accountId: $a, id: $id) { id } }`, {
      token: other.token,
      variables: { a: accountOf(other), id: jobId },
    });
    expect(hidden.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  });

  it('GET /location/updates filters by location, status and id, newest first, by page', async () => {
    const accountId = accountOf(org, 2);
    const location = org.accounts[2]!.locations[1]!;
    for (const text of ['First', 'Second', 'Third']) {
      expect((await patch(location.id, { description: text }, { accountId })).status).toBe(200);
    }
    const page = await http(t.url, 'GET', `/location/updates?account_id=${accountId}&location_id=${location.id}&per_page=2`, { token: org.token });
    expect(page.status).toBe(200);
    expect(page.body.payload).toMatchObject({ found: 3, page: 1, per_page: 2 });
    expect(page.body.payload.updates).toHaveLength(2);
    const second = await http(t.url, 'GET', `/location/updates?account_id=${accountId}&location_id=${location.id}&per_page=2&page=2`, { token: org.token });
    expect(second.body.payload.updates).toHaveLength(1);
    const newestFirst = [...page.body.payload.updates, ...second.body.payload.updates].map((job: { created_at: number }) => job.created_at);
    expect(newestFirst).toEqual([...newestFirst].sort((a, b) => b - a));
    const failed = await http(t.url, 'GET', `/location/updates?account_id=${accountId}&status=FAILED`, { token: org.token });
    expect(failed.body.payload.found).toBe(0);
    const badStatus = await http(t.url, 'GET', `/location/updates?account_id=${accountId}&status=DONE`, { token: org.token });
    expect(badStatus.status).toBe(400);
    expect(badStatus.body).toEqual({ error: 400, message: 'status must be one of QUEUED, RUNNING, SUCCEEDED, FAILED' });
  });
});

describe('locationUpdateJobUpdated over graphql-ws', () => {
  const probeFor = (fixture: OrganizationFixture, locationId: string, jobId?: string) =>
    updateJobProbe(t.stack.runtime.events, { organizationId: fixture.organization.id, accountId: accountOf(fixture), locationId, jobId });

  it('follows one job from QUEUED to SUCCEEDED and another to FAILED, in order; other organizations see nothing', async () => {
    const id = await connectedLocation();
    const watcher = await subscribe(t.url, org.token, JOB_UPDATED, { locationId: id }, probeFor(org, id));
    const stranger = await subscribe(t.url, other.token, JOB_UPDATED, {}, probeFor(other, other.accounts[0]!.locations[0]!.id));
    try {
      const succeeding = await patch(id, { name: 'Watched Bakery' });
      await finishedJob(succeeding.body.payload.id);
      await sandboxOf(t.url).fail({ count: 1, status: 400, method: 'PATCH', pathContains: '/locations/' });
      const failing = await patch(id, { name: 'Refused Bakery' });
      await finishedJob(failing.body.payload.id);
      await watcher.waitFor(6);
      const seen = watcher.events.map((event) => event.locationUpdateJobUpdated);
      expect(seen.filter((job) => job.id === succeeding.body.payload.id).map((job) => [job.status, job.version])).toEqual([
        ['QUEUED', 1],
        ['RUNNING', 2],
        ['SUCCEEDED', 3],
      ]);
      const failed = seen.filter((job) => job.id === failing.body.payload.id);
      expect(failed.map((job) => job.status)).toEqual(['QUEUED', 'RUNNING', 'FAILED']);
      expect(failed[2]).toMatchObject({ fields: ['NAME'], locationId: id, accountId: accountOf(org), error: { status: 400, reason: 'INVALID_ARGUMENT' } });
      expect(watcher.errors).toEqual([]);
      // Everything published before the stranger's probe has reached it by then: nothing of ours.
      await stranger.sync();
      expect(stranger.events).toEqual([]);
    } finally {
      await watcher.close();
      await stranger.close();
    }
  });

  it('filters by job id: a later job of the same location is not delivered', async () => {
    const id = await connectedLocation();
    const first = await patch(id, { name: 'First Watched' });
    const jobId = first.body.payload.id as string;
    await finishedJob(jobId);
    const watcher = await subscribe(t.url, org.token, JOB_UPDATED, { jobId }, probeFor(org, id, jobId));
    try {
      const second = await patch(id, { name: 'Second Unwatched' });
      await finishedJob(second.body.payload.id);
      await watcher.sync();
      expect(watcher.events).toEqual([]);
    } finally {
      await watcher.close();
    }
  });
});

describe('one update in progress per location', () => {
  let apiOnly: TestStack;
  let fixture: OrganizationFixture;

  beforeAll(async () => {
    // No workers: queued updates stay QUEUED, so every later request meets one in progress.
    apiOnly = await startTestStack({ ROLE: 'api' });
    fixture = await createOrganizationFixture(apiOnly.em(), { accounts: 1, locationsEach: 6, connected: true });
  });
  afterAll(() => apiOnly?.close());

  it('of two concurrent updates of one location, exactly one is accepted; the other answers 409 with the document’s body', async () => {
    const accountId = fixture.accounts[0]!.account.id;
    const [raced, spare] = [fixture.accounts[0]!.locations.slice(0, 5), fixture.accounts[0]!.locations[5]!];
    for (const location of raced) {
      const send = (description: string) =>
        http(apiOnly.url, 'PATCH', `/location/update?account_id=${accountId}&location_id=${location.id}`, { token: fixture.token, body: { description } });
      const answers = await Promise.all([send('Racer A'), send('Racer B')]);
      expect(answers.map((answer) => answer.status).sort()).toEqual([200, 409]);
      const conflict = answers.find((answer) => answer.status === 409)!;
      expect(conflict.body).toEqual({ success: false, msg: 'Another update of this location is in progress; try again when it has finished' });
      // And so on while it stays queued; the refused requests are not counted by the hourly limit.
      const again = await send('Later');
      expect(again.status).toBe(409);
    }
    const accepted = await http(apiOnly.url, 'GET', `/location/updates?account_id=${accountId}&status=QUEUED`, { token: fixture.token });
    expect(accepted.body.payload.found).toBe(5);
    // Five accepted before it; the ten refused are not counted.
    const counted = await http(apiOnly.url, 'PATCH', `/location/update?account_id=${accountId}&location_id=${spare.id}`, {
      token: fixture.token,
      body: { description: 'Sixth accepted' },
    });
    expect(counted.status).toBe(200);
    expect(counted.headers.get('ratelimit')).toMatch(/^"location-updates";r=194;/);
  });
});
