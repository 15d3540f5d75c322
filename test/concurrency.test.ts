import { describeLine, ERROR_LEVEL, serverLog } from './support/server-log';
import { randomBytes } from 'node:crypto';
import { createBetaSandboxControl } from '../sandboxes/beta/beta-sandbox.control';
import { formOf, submit, visit } from './support/browser';
import { connect, importEnded, runConsent } from './support/consent';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http, type JsonResponse } from './support/http';
import { eventually, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';

/**
 * Records that a request and a job both change (docs/decisions.md, "Records that requests and jobs both change"),
 * each pair driven concurrently many times through HTTP against the sandboxes: no 5xx, the record ends as the last
 * writer asked, nothing is lost (here and at the provider), no job fails because of the other writer, and nothing
 * is logged as an error. Every write request is tallied per pair; the figures are printed at the end.
 */

let t: TestStack;

// ---------------------------------------------------------------------------------------------------------------
// The server's log, one parsed JSON object a line

const { destination: logDestination, lines: logLines } = serverLog();

// ---------------------------------------------------------------------------------------------------------------
// The tally: every write request of a pair, by status (and GraphQL error code)

interface Tally {
  requests: number;
  serverErrors: number;
  answers: Map<string, number>;
}
const tallies = new Map<string, Tally>();

function tallied<T extends JsonResponse>(pair: string, answer: T): T {
  let tally = tallies.get(pair);
  if (!tally) tallies.set(pair, (tally = { requests: 0, serverErrors: 0, answers: new Map() }));
  const codes: string[] = Array.isArray(answer.body?.errors) ? answer.body.errors.map((error: { extensions?: { code?: string } }) => error.extensions?.code ?? '?') : [];
  const key = codes.length > 0 ? `${answer.status} ${codes.join(',')}` : String(answer.status);
  tally.requests += 1;
  tally.answers.set(key, (tally.answers.get(key) ?? 0) + 1);
  if (answer.status >= 500 || codes.includes('INTERNAL_SERVER_ERROR')) tally.serverErrors += 1;
  return answer;
}

const serverErrorsOf = (pair: string) => tallies.get(pair)?.serverErrors ?? 0;

// ---------------------------------------------------------------------------------------------------------------
// Waiting for the jobs, and what they left

async function sql<T = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<T[]> {
  return await t.em().getConnection().execute<T[]>(text, values);
}

const queueNames = (queues: string[]) => queues.flatMap((queue) => [queue, `${queue}-dead`]);
const placeholders = (values: unknown[]) => values.map(() => '?').join(', ');

/** Until no job of these queues (or their dead letters) is waiting, delayed or running. */
async function jobsSettled(queues: string[]): Promise<void> {
  const names = queueNames(queues);
  await eventually(async () => {
    const [row] = await sql<{ n: number }>(
      `select count(*)::int as n from pgboss.job where name in (${placeholders(names)}) and state in ('created', 'retry', 'active')`,
      names,
    );
    return row!.n === 0 ? true : undefined;
  }, 60000, `the jobs of ${queues.join(', ')} to finish`);
}

/** Jobs of these queues created since `since` (the database's time) that pg-boss holds as failed. */
async function failedJobs(queues: string[], since: Date): Promise<unknown[]> {
  const names = queueNames(queues);
  return sql(
    `select name, data, output from pgboss.job where name in (${placeholders(names)}) and state = 'failed' and created_on >= ?`,
    [...names, since],
  );
}

/**
 * What every pair ends with: its jobs finished, none of them failed, no 5xx, and nothing logged as an error (nor a
 * job failure of any level, but for the provider failures the pair scripts itself: `scriptedFailures`) since the
 * pair began.
 */
function pairBookkeeping(pair: string, queues: string[], options: { scriptedFailures?: () => number } = {}) {
  let logMark = 0;
  let since = new Date(0);
  beforeAll(async () => {
    logMark = logLines.length;
    since = (await sql<{ now: Date }>('select now() as now'))[0]!.now;
  });
  return {
    async expectCleanEnd(): Promise<void> {
      await jobsSettled(queues);
      expect(serverErrorsOf(pair)).toBe(0);
      expect(await failedJobs(queues, since)).toEqual([]);
      const lines = logLines.slice(logMark);
      expect(lines.filter((line) => line.level >= ERROR_LEVEL).map(describeLine)).toEqual([]);
      const jobFailures = lines.filter((line) => /job failed/.test(line.msg ?? '')).map(describeLine);
      const scripted = options.scriptedFailures?.() ?? 0;
      // A scripted provider failure is retried: a warning each, nothing else.
      expect(jobFailures).toEqual(Array.from({ length: scripted }, () => 'job failed at the provider (will be retried) (Error: The service is currently unavailable.)'));
    },
  };
}

// ---------------------------------------------------------------------------------------------------------------
// The stack and the sandboxes

const alpha = () => sandboxOf(t.url);
const beta = () => createBetaSandboxControl(`${t.url}/sandbox/beta`);

beforeAll(async () => {
  t = await startTestStack(
    {
      JOB_RETRY_DELAY_SECONDS: '1',
      POST_RATE_LIMIT_PER_MINUTE: '100000',
      LOCATION_UPDATE_RATE_LIMIT_PER_HOUR: '100000',
      LOCATION_READ_RATE_LIMIT_PER_MINUTE: '100000',
      BUSINESS_PROFILE_READ_RATE_LIMIT_PER_MINUTE: '100000',
      BUSINESS_PROFILE_UPDATE_RATE_LIMIT_PER_MINUTE: '100000',
      CITATIONS_RATE_LIMIT_PER_MINUTE: '100000',
    },
    { log: { destination: logDestination } },
  );
  // Location edits are limited per minute at the provider; these tests edit one location many times a minute.
  await alpha().configure({ locationEditsPerMinute: 100000 });
});

afterAll(async () => {
  const rows = [...tallies.entries()].map(([pair, tally]) => {
    const answers = [...tally.answers.entries()].map(([key, n]) => `${key}: ${n}`).join(', ');
    return `${pair}: ${tally.requests} requests, ${tally.serverErrors} 5xx (${answers})`;
  });
  if (rows.length > 0) console.log(`Concurrent pairs, write requests sent:\n${rows.join('\n')}`);
  await t?.close();
});

// ---------------------------------------------------------------------------------------------------------------
// Alpha accounts of our own at the sandbox, connected through the consent flow

let sandboxAccounts = 0;

interface SandboxAccount {
  sub: string;
  alphaAccountId: string;
}

/** A new person at the alpha sandbox owning one account of `locations` locations with `reviewsEach` reviews each. */
async function sandboxAccount(locations: number, reviewsEach: number): Promise<SandboxAccount> {
  sandboxAccounts += 1;
  const tag = `${sandboxAccounts}x${randomBytes(3).toString('hex')}`;
  const sub = `concurrency-${tag}`;
  const alphaAccountId = `c${tag}`;
  const stars = ['ONE', 'TWO', 'THREE', 'FOUR', 'FIVE'] as const;
  await alpha().addIdentity({
    sub,
    email: `${sub}@sandbox.example`,
    name: `Concurrency ${tag}`,
    accounts: [{
      accountId: alphaAccountId,
      accountName: `Concurrency Group ${tag}`,
      locations: Array.from({ length: locations }, (_, l) => ({
        locationId: `${alphaAccountId}l${l + 1}`,
        location: {
          title: `Concurrency Bakery ${tag}.${l + 1}`,
          storeCode: `conc-${tag}-${l + 1}`,
          languageCode: 'en',
          phoneNumbers: { primaryPhone: `+1 555 01${String(l).padStart(2, '0')}` },
          categories: { primaryCategory: { name: 'gcid:bakery', displayName: 'Bakery' } },
          storefrontAddress: { regionCode: 'US', postalCode: '12345', administrativeArea: 'IL', locality: 'Springfield', addressLines: [`${l + 1} Main Street`] },
          websiteUri: `https://bakery.example/${tag}/${l + 1}`,
          profile: { description: 'Bread since the morning' },
          latlng: { latitude: 39.78 + l / 1000, longitude: -89.65 },
        },
        reviews: Array.from({ length: reviewsEach }, (_, r) => ({
          reviewId: `${alphaAccountId}-${l + 1}-${r + 1}`,
          reviewer: { displayName: `Guest ${r + 1}` },
          starRating: stars[r % stars.length]!,
          comment: `Visit number ${r + 1}`,
        })),
      })),
    }],
  });
  return { sub, alphaAccountId };
}

let consents = 0;

/**
 * A consent of the person, then their account connected: its id here (its import is queued, not awaited). The
 * connect is tallied with `pair`'s requests when it is one of them.
 */
async function connectAccount(token: string, person: SandboxAccount, pair?: string): Promise<string> {
  consents += 1;
  const consent = await runConsent(t.url, token, { person: person.sub, state: `consent-${consents}` });
  const connected = await connect(t.url, token, consent.landed, person.alphaAccountId);
  if (pair) tallied(pair, connected);
  expect(connected.status).toBe(200);
  const outcome = new URL(connected.body.url).searchParams;
  expect(outcome.get('status')).toBe('success');
  return outcome.get('alpha_profile_id')!;
}

/** connectAccount, and its import ended SUCCEEDED. */
async function connectedAndImported(token: string, person: SandboxAccount, pair?: string): Promise<string> {
  const accountId = await connectAccount(token, person, pair);
  expect((await importEnded(t.url, token, accountId)).syncStatus).toBe('SUCCEEDED');
  return accountId;
}

function reconnect(token: string, person: SandboxAccount, accountId: string, state: string): Promise<JsonResponse> {
  const query = new URLSearchParams({ alphaId: person.sub, id: accountId, external_api: 'true', state });
  return http(t.url, 'POST', `/reconnect/account?${query}`, { token });
}

function disconnect(token: string, accountId: string, state: string): Promise<JsonResponse> {
  const query = new URLSearchParams({ alphaId: accountId, external_api: 'true', state });
  return http(t.url, 'DELETE', `/disconnect/account?${query}`, { token });
}

const flowStatus = (answer: JsonResponse) => new URL(answer.body.url).searchParams;

/** A reconnect's answer: 200 and the re-sync queued. */
function expectResync(answer: JsonResponse): void {
  expect(answer.status).toBe(200);
  expect(Object.fromEntries(flowStatus(answer))).toMatchObject({ status: 'success_reconnect' });
}

/** Until the account's sync is neither QUEUED nor RUNNING. */
function syncEnded(token: string, accountId: string): Promise<{ syncStatus: string; syncError: string | null }> {
  return eventually(async () => {
    const answer = await graphql(t.url, 'query ($id: ID) { account(id: $id) { syncStatus syncError } }', { token, variables: { id: accountId } });
    const account = answer.body.data?.account;
    return account && account.syncStatus !== 'QUEUED' && account.syncStatus !== 'RUNNING' ? account : undefined;
  }, 30000, `the sync of account ${accountId} to end`);
}

async function locationsOf(token: string, accountId: string): Promise<any[]> {
  const answer = await http(t.url, 'GET', `/location?account_id=${accountId}&per_page=250`, { token });
  expect(answer.status).toBe(200);
  return answer.body.data;
}

async function providerLocation(alphaLocationName: string): Promise<any> {
  return (await alpha().state()).locations.find((location) => location.name === alphaLocationName);
}

// ---------------------------------------------------------------------------------------------------------------

describe('a beta brand: PATCH over REST and GraphQL vs its sync jobs', () => {
  const PAIR = 'brand PATCH vs brand sync';
  const ROUNDS = 10;
  const books = pairBookkeeping(PAIR, ['beta-brand-sync']);
  let org: OrganizationFixture;
  let companyId: string;
  let segmentId: string;

  /** The beta consent of the organization, linking the company (as a browser goes through it). */
  async function betaConsent(company: string): Promise<void> {
    const generated = await http(t.url, 'POST', '/oauth/beta/generate-url', { token: org.token, body: { redirect_url: 'https://app.example/beta-return', state: 'brands' } });
    expect(generated.status).toBe(200);
    const page = await visit(generated.body.url);
    const toCallback = await submit(formOf(page.body, generated.body.url), { button: ['decision', 'approve'], select: company });
    const landed = new URL((await visit(toCallback.location!)).location!).searchParams;
    expect(landed.get('company_id')).toBe(company);
  }

  const camel = (name: string) => name.replace(/_([a-z])/g, (_match, letter: string) => letter.toUpperCase());
  const BRAND_FIELDS = 'segmentId betaSyncStatus brandName countryCode primaryCategory additionalCategories websiteUrl appStoreUrl ownershipType useLocationName';

  /** A PATCH of the brand in REST names, sent over REST or as GraphQL updateBetaBrand: 200 and the change answered. */
  async function patchBrand(body: Record<string, unknown>, over: 'rest' | 'graphql'): Promise<void> {
    if (over === 'rest') {
      const answer = tallied(PAIR, await http(t.url, 'PATCH', `/beta/brands/${segmentId}`, { token: org.token, body }));
      expect(answer.status).toBe(200);
      expect(answer.body.payload).toMatchObject({ ...body, beta_sync_status: 'PENDING' });
      return;
    }
    const input = Object.fromEntries(Object.entries(body).map(([key, value]) => [camel(key), value]));
    const answer = tallied(PAIR, await graphql(t.url, `mutation ($s: String!, $input: UpdateBetaBrandInput!) { updateBetaBrand(segmentId: $s, input: $input) { ${BRAND_FIELDS} } }`, {
      token: org.token,
      variables: { s: segmentId, input },
    }));
    expect(answer.status).toBe(200);
    expect(answer.body.errors).toBeUndefined();
    expect(answer.body.data.updateBetaBrand).toMatchObject({ ...input, betaSyncStatus: 'PENDING' });
  }

  /** Until the brand's sync has ended; it must be SYNCED. */
  async function synced(): Promise<any> {
    const brand = await eventually(async () => {
      const answer = await http(t.url, 'GET', `/beta/brands/${segmentId}`, { token: org.token });
      return answer.status === 200 && answer.body.payload.beta_sync_status !== 'PENDING' ? answer.body.payload : undefined;
    }, 30000, `brand ${segmentId} to be synced`);
    expect(brand.beta_sync_status).toBe('SYNCED');
    return brand;
  }

  /** The brand here holds `expected`, and the provider holds exactly it, once. */
  async function expectEverywhere(expected: Record<string, any>): Promise<void> {
    const brand = await synced();
    expect(brand).toMatchObject(expected);
    const atProvider = (await beta().state()).brands.filter((item) => item.companyId === companyId);
    expect(atProvider).toHaveLength(1);
    expect(atProvider[0]!.id).toBe(brand.beta_brand_id);
    expect(atProvider[0]!.brandDetails).toEqual({
      displayNames: [{ name: expected.brand_name, locale: 'en-US', primary: true }],
      countryCodes: [expected.country_code],
      categories: { primary: expected.primary_category, additional: expected.additional_categories },
      urls: [
        ...(expected.website_url ? [{ url: expected.website_url, type: 'HOMEPAGE' }] : []),
        ...(expected.app_store_url ? [{ url: expected.app_store_url, type: 'APP_STORE' }] : []),
      ],
      ownershipType: expected.ownership_type,
    });
  }

  beforeAll(async () => {
    org = await createOrganizationFixture(t.em(), { accounts: 0, betaApi: true });
    // A company of this test's own, so the provider's brands of it are this brand's alone.
    companyId = (await beta().addCompany({ name: 'Concurrency Brands' })).id;
    await betaConsent(companyId);
    const created = await graphql(t.url, `mutation ($input: CreateBetaBrandInput!) { createBetaBrand(input: $input) { segmentId } }`, {
      token: org.token,
      variables: { input: { betaCompanyId: companyId, brandName: 'Brand 0', countryCode: 'US', primaryCategory: 'bakery', ownershipType: 'BRAND_OWNER' } },
    });
    expect(created.body.errors).toBeUndefined();
    segmentId = created.body.data.createBetaBrand.segmentId;
    await synced();
  });

  it(`${ROUNDS} rounds of a sequential and a concurrent burst: every PATCH 200, the brand and the provider end with the last values`, async () => {
    const categories = ['coffee_shop', 'cafe', 'bakery'];
    const expected: Record<string, unknown> = {
      brand_name: 'Brand 0',
      country_code: 'US',
      primary_category: 'bakery',
      additional_categories: [],
      website_url: null,
      app_store_url: null,
      ownership_type: 'BRAND_OWNER',
      use_location_name: false,
    };
    for (let round = 1; round <= ROUNDS; round += 1) {
      // One field, three times in a row, alternating the transports: each PATCH meets the job of the one before.
      for (let k = 1; k <= 3; k += 1) {
        const name = `Brand ${round}.${k}`;
        await patchBrand({ brand_name: name }, (round + k) % 2 === 0 ? 'rest' : 'graphql');
        expected.brand_name = name;
      }
      // Every other field at once: six writers and their jobs on one row; none of the changes may be lost.
      const burst: Record<string, unknown>[] = [
        { website_url: `https://brand.example/${round}` },
        { app_store_url: round % 3 === 0 ? null : `https://apps.example/brand-${round}` },
        { primary_category: categories[round % 3], additional_categories: [categories[(round + 1) % 3]] },
        { country_code: round % 2 === 0 ? 'US' : 'DE' },
        { ownership_type: round % 2 === 0 ? 'BRAND_OWNER' : 'FRANCHISEE' },
        { use_location_name: round % 2 === 1 },
      ];
      await Promise.all(burst.map((body, index) => patchBrand(body, (round + index) % 2 === 0 ? 'rest' : 'graphql')));
      for (const body of burst) Object.assign(expected, body);
      // Every other round the next bursts meet the jobs still running; the others check the outcome so far.
      if (round % 2 === 0 || round === ROUNDS) await expectEverywhere(expected);
    }
    await books.expectCleanEnd();
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('an account: reconnect (its import job) vs disconnect', () => {
  const PAIR = 'reconnect + disconnect';
  const ROUNDS = 9;
  const books = pairBookkeeping(PAIR, ['account-import', 'location-update', 'review-reply-send', 'review-reply-check']);
  let org: OrganizationFixture;
  let person: SandboxAccount;

  beforeAll(async () => {
    org = await createOrganizationFixture(t.em(), { accounts: 0 });
    person = await sandboxAccount(3, 4);
    // Each provider answer takes a little while, so a disconnect lands in the middle of an import.
    await alpha().configure({ latencyMs: 15 });
  });
  afterAll(() => alpha().configure({ latencyMs: 0 }));

  it(`${ROUNDS} rounds of connect, reconnect and disconnect: no 5xx, no failed job, nothing left running`, async () => {
    for (let round = 1; round <= ROUNDS; round += 1) {
      const accountId = await connectAccount(org.token, person, PAIR);
      const mode = round % 3;
      if (mode === 0) {
        // A reconnect and two disconnects at once: the reconnect finds the account or answers as for an unknown
        // one; one disconnect removes it, the other finds it unknown.
        const [reconnected, ...disconnected] = await Promise.all([
          reconnect(org.token, person, accountId, `r${round}`).then((answer) => tallied(PAIR, answer)),
          disconnect(org.token, accountId, `d${round}`).then((answer) => tallied(PAIR, answer)),
          disconnect(org.token, accountId, `d${round}`).then((answer) => tallied(PAIR, answer)),
        ]);
        expect(reconnected.status).toBe(200);
        const outcome = Object.fromEntries(flowStatus(reconnected));
        expect([{ status: 'success_reconnect', state: `r${round}`, account_id: accountId }, { status: 'error', error_message: 'NotFoundException', state: `r${round}` }]).toContainEqual(outcome);
        expect(disconnected.map((answer) => answer.status).sort()).toEqual([200, 404]);
        const done = disconnected.find((answer) => answer.status === 200)!;
        expect(Object.fromEntries(flowStatus(done))).toEqual({ status: 'success_disconnect', state: `d${round}`, account_id: accountId });
        expect(disconnected.find((answer) => answer.status === 404)!.body).toEqual({ error: 404, message: 'Account not found' });
        continue;
      }
      expectResync(tallied(PAIR, await reconnect(org.token, person, accountId, `r${round}`)));
      if (mode === 2) {
        // The disconnect once the import is seen running.
        await eventually(async () => {
          const answer = await graphql(t.url, 'query ($id: ID) { account(id: $id) { syncStatus } }', { token: org.token, variables: { id: accountId } });
          const status = answer.body.data?.account?.syncStatus;
          return status === 'RUNNING' || status === 'SUCCEEDED' ? true : undefined;
        }, 30000, 'the import to run');
      }
      const disconnected = tallied(PAIR, await disconnect(org.token, accountId, `d${round}`));
      expect(disconnected.status).toBe(200);
      expect(Object.fromEntries(flowStatus(disconnected))).toEqual({ status: 'success_disconnect', state: `d${round}`, account_id: accountId });
    }
    // Connected once more, and left: its import ends; nothing else of the rounds is left.
    const kept = await connectedAndImported(org.token, person, PAIR);
    await jobsSettled(['account-import']);
    const accounts = await graphql(t.url, '{ accounts { id syncStatus syncError numberOfLocations } }', { token: org.token });
    expect(accounts.body.data.accounts).toEqual([{ id: kept, syncStatus: 'SUCCEEDED', syncError: null, numberOfLocations: 3 }]);
    expect((await locationsOf(org.token, kept)).map((location) => location.reference_id).sort()).toEqual(
      [1, 2, 3].map((l) => `conc-${person.alphaAccountId.slice(1)}-${l}`),
    );
    await books.expectCleanEnd();
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('a location: PATCH /location/update vs its update job and an account re-sync', () => {
  const PAIR = 'location PATCH vs update job + re-sync';
  const ROUNDS = 12;
  const books = pairBookkeeping(PAIR, ['location-update', 'account-import']);
  let org: OrganizationFixture;
  let person: SandboxAccount;
  let accountId: string;
  let locations: any[];

  const patch = (locationId: string, body: unknown) =>
    http(t.url, 'PATCH', `/location/update?account_id=${accountId}&location_id=${locationId}`, { token: org.token, body }).then((answer) => tallied(PAIR, answer));

  async function updateJobs(locationId: string): Promise<any[]> {
    const answer = await http(t.url, 'GET', `/location/updates?account_id=${accountId}&location_id=${locationId}&per_page=100`, { token: org.token });
    expect(answer.status).toBe(200);
    return answer.body.payload.updates;
  }

  beforeAll(async () => {
    org = await createOrganizationFixture(t.em(), { accounts: 0 });
    person = await sandboxAccount(2, 1);
    accountId = await connectedAndImported(org.token, person);
    locations = await locationsOf(org.token, accountId);
    expect(locations.map((location) => location.connected)).toEqual([true, true]);
  });

  it(`${ROUNDS} rounds of two concurrent PATCHes of each location and a re-sync: one accepted or 409, every accepted job SUCCEEDED, the last one held`, async () => {
    /** What each accepted job asked for, by job id. */
    const asked = new Map<string, string>();
    for (let round = 1; round <= ROUNDS; round += 1) {
      const writes = locations.flatMap((location, l) =>
        ['a', 'b'].map((twin) => {
          const description = `Round ${round} ${twin} of location ${l + 1}`;
          return patch(location.id, { description }).then((answer) => ({ answer, description }));
        }),
      );
      const [resync, ...patched] = await Promise.all([
        reconnect(org.token, person, accountId, `r${round}`).then((answer) => tallied(PAIR, answer)),
        ...writes,
      ]);
      expectResync(resync);
      for (const { answer, description } of patched) {
        if (answer.status === 409) {
          expect(answer.body).toEqual({ success: false, msg: expect.any(String) });
          continue;
        }
        expect(answer.status).toBe(200);
        asked.set(answer.body.payload.id, description);
      }
      // Round by round: the re-sync ended and every accepted update finished before the next round.
      await syncEnded(org.token, accountId);
      await jobsSettled(['location-update', 'account-import']);
      for (const location of locations) {
        const jobs = await updateJobs(location.id);
        for (const job of jobs) expect({ id: job.id, status: job.status, error: job.error }).toEqual({ id: job.id, status: 'SUCCEEDED', error: null });
        // Newest first: the last accepted change is the location's, here and at the provider.
        const latest = asked.get(jobs[0].id)!;
        const stored = (await locationsOf(org.token, accountId)).find((item) => item.id === location.id);
        expect({ round, description: stored.description }).toEqual({ round, description: latest });
        expect({ round, description: (await providerLocation(location.alpha_location_name)).profile.description }).toEqual({ round, description: latest });
      }
    }
    expect((await syncEnded(org.token, accountId)).syncStatus).toBe('SUCCEEDED');
    // At least one update per location and round was accepted.
    expect(asked.size).toBeGreaterThanOrEqual(ROUNDS * locations.length);
    await books.expectCleanEnd();
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('a post: DELETE /post vs its publish and check jobs', () => {
  const PAIR = 'post DELETE vs publish + check';
  const POSTS = 24;
  const books = pairBookkeeping(PAIR, ['post-publish', 'post-check', 'post-delete']);
  let org: OrganizationFixture;
  let accountId: string;
  let locationId: string;

  const getPost = async (id: string) => (await http(t.url, 'GET', `/post/${id}?account_id=${accountId}`, { token: org.token })).body.payload;
  const deletePost = (id: string) => http(t.url, 'DELETE', `/post/${id}?account_id=${accountId}`, { token: org.token }).then((answer) => tallied(PAIR, answer));

  /** Until pg-boss has started a job of this queue for the post (its provider call then takes `latencyMs`), or `instead` holds. */
  const jobStarted = (queue: string, postId: string, instead: () => Promise<boolean> = async () => false) =>
    eventually(async () => {
      const rows = await sql(`select 1 from pgboss.job where name = ? and data->>'postId' = ? and started_on is not null`, [queue, postId]);
      return rows.length > 0 || (await instead()) ? true : undefined;
    }, 30000, `a ${queue} job of post ${postId} to start`);

  beforeAll(async () => {
    org = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true });
    accountId = org.accounts[0]!.account.id;
    locationId = org.accounts[0]!.locations[0]!.id;
    // Posts are PROCESSING for a while, so each is checked again by a job; each provider call takes a little while.
    await alpha().configure({ processingMs: 600, latencyMs: 100 });
  });
  afterAll(() => alpha().configure({ processingMs: 0, latencyMs: 0 }));

  it(`${POSTS} posts deleted while published, while checked, and twice at once: every one DELETED, none left at the provider`, async () => {
    const created = await Promise.all(Array.from({ length: POSTS }, async (_, index) => {
      const answer = await http(t.url, 'POST', `/post?account_id=${accountId}`, {
        token: org.token,
        body: { location_id: locationId, params: { summary: `Concurrency post ${index}`, topicType: 'STANDARD', languageCode: 'en' } },
      });
      expect(answer.status).toBe(202);
      return answer.body.payload.id as string;
    }));
    await Promise.all(created.map(async (id, index) => {
      const moment = index % 4;
      if (moment === 1) await jobStarted('post-publish', id);
      // (A post the provider showed LIVE at once, on a slow machine, gets no check.)
      if (moment === 2) await jobStarted('post-check', id, async () => (await getPost(id)).state === 'LIVE');
      if (moment === 3) {
        // Once the provider's answer to the publish is recorded: PROCESSING, with its check queued (or LIVE already).
        await eventually(async () => ((await getPost(id)).state !== 'SENDING' ? true : undefined), 30000, `post ${id} to be published`);
      }
      // Twice at once every other time: the second finds the deletion under way (or done).
      const answers = await Promise.all(index % 2 === 0 ? [deletePost(id), deletePost(id)] : [deletePost(id)]);
      for (const answer of answers) {
        expect(answer.status).toBe(202);
        expect(['SENDING', 'DELETED']).toContain(answer.body.payload.state);
      }
    }));
    await jobsSettled(['post-publish', 'post-check', 'post-delete']);
    const states = await Promise.all(created.map(async (id) => ({ id, state: (await getPost(id)).state })));
    expect(states.filter((post) => post.state !== 'DELETED')).toEqual([]);
    const atProvider = (await alpha().state()).posts.filter((post) => created.includes(post.requestId ?? ''));
    expect(atProvider.map((post) => ({ requestId: post.requestId, state: post.state }))).toEqual([]);
    await books.expectCleanEnd();
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('a review: POST /review/answer vs an account re-sync and the reply’s send and check jobs', () => {
  const PAIR = 'review answer vs re-sync + reply jobs';
  const ROUNDS = 12;
  let providerBusy = 0;
  const books = pairBookkeeping(PAIR, ['review-reply-send', 'review-reply-check', 'account-import'], { scriptedFailures: () => providerBusy });
  let org: OrganizationFixture;
  let person: SandboxAccount;
  let accountId: string;
  let reviewNames: string[];

  const answerReview = (name: string, text: string) =>
    http(t.url, 'POST', `/review/answer?account_id=${accountId}`, { token: org.token, body: { review_id: name, answer: text } }).then((answer) => tallied(PAIR, answer));

  async function review(name: string): Promise<any> {
    const answer = await graphql(t.url, 'query ($a: ID, $id: ID!) { review(accountId: $a, id: $id) { name reviewReplyState replyComment replyError { reason message } } }', {
      token: org.token,
      variables: { a: accountId, id: name },
    });
    expect(answer.body.errors).toBeUndefined();
    return answer.body.data.review;
  }

  beforeAll(async () => {
    org = await createOrganizationFixture(t.em(), { accounts: 0 });
    person = await sandboxAccount(1, 4);
    accountId = await connectedAndImported(org.token, person);
    const [location] = await locationsOf(org.token, accountId);
    const listed = await graphql(t.url, 'query ($a: ID, $l: ID!) { reviews(accountId: $a, locationId: $l) { edges { node { name } } } }', {
      token: org.token,
      variables: { a: accountId, l: location.id },
    });
    reviewNames = listed.body.data.reviews.edges.map((edge: { node: { name: string } }) => edge.node.name);
    expect(reviewNames).toHaveLength(4);
  });

  it(`${ROUNDS} rounds of two replies in a row beside a re-sync: 200 or 409, every reply ends decided as last asked`, async () => {
    for (let round = 1; round <= ROUNDS; round += 1) {
      const name = reviewNames[round % reviewNames.length]!;
      // Every third round the provider is busy at the first send: the reply waits for its retry across the re-sync.
      if (round % 3 === 0) {
        await alpha().fail({ count: 1, status: 503, method: 'PUT', pathContains: '/reply' });
        providerBusy += 1;
      }
      const first = `Thank you, round ${round}${round % 4 === 0 ? ' [[reject]]' : ''}`;
      const second = `Thank you again, round ${round}`;
      const replies = (async () => {
        const a = await answerReview(name, first);
        const b = await answerReview(name, second);
        return [a, b];
      })();
      const [resync, [a, b]] = await Promise.all([reconnect(org.token, person, accountId, `r${round}`).then((answer) => tallied(PAIR, answer)), replies]);
      expectResync(resync);
      expect(a!.status).toBe(200);
      if (b!.status === 409) expect(b!.body).toEqual({ success: false, msg: 'REPLY_IN_PROGRESS', payload: { msg: expect.any(String) } });
      else expect(b!.status).toBe(200);
      const last = b!.status === 200 ? second : first;

      await syncEnded(org.token, accountId);
      await jobsSettled(['review-reply-send', 'review-reply-check', 'account-import']);
      const ended = await review(name);
      expect({ round, state: ended.reviewReplyState, comment: ended.replyComment }).toEqual({
        round,
        state: last.includes('[[reject]]') ? 'REJECTED' : 'ACTIVE',
        comment: last,
      });
      const remote = (await alpha().state()).reviews.find((item) => item.name === name);
      expect({ round, reply: remote?.reviewReply?.comment }).toEqual({ round, reply: last });
    }
    const states = await Promise.all(reviewNames.map(async (name) => (await review(name)).reviewReplyState));
    expect(states.filter((state) => state === 'PENDING')).toEqual([]);
    await books.expectCleanEnd();
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('an account: PATCH /business-profile vs its import', () => {
  const PAIR = 'business-profile PATCH vs import';
  const ROUNDS = 10;
  const books = pairBookkeeping(PAIR, ['account-import']);
  let org: OrganizationFixture;
  let person: SandboxAccount;
  let accountId: string;

  beforeAll(async () => {
    org = await createOrganizationFixture(t.em(), { accounts: 0 });
    person = await sandboxAccount(2, 2);
    accountId = await connectedAndImported(org.token, person);
  });

  it(`${ROUNDS} rounds of three renames in a row beside a re-sync: every one 200, the name is the last one's`, async () => {
    let last = '';
    for (let round = 1; round <= ROUNDS; round += 1) {
      const renames = (async () => {
        for (let k = 1; k <= 3; k += 1) {
          const name = `Concurrency Account ${round}.${k}`;
          const answer = (round + k) % 2 === 0
            ? tallied(PAIR, await http(t.url, 'PATCH', `/business-profile?account_id=${accountId}`, { token: org.token, body: { name } }))
            : tallied(PAIR, await graphql(t.url, 'mutation ($id: ID!, $name: String!) { updateAccount(where: { id: $id }, input: { name: $name }) { name } }', {
              token: org.token,
              variables: { id: accountId, name },
            }));
          expect(answer.status).toBe(200);
          expect(answer.body.errors).toBeUndefined();
          last = name;
        }
      })();
      const [resync] = await Promise.all([reconnect(org.token, person, accountId, `r${round}`).then((answer) => tallied(PAIR, answer)), renames]);
      expectResync(resync);
      if (round % 2 === 0) {
        await syncEnded(org.token, accountId);
        const profile = await http(t.url, 'GET', `/business-profile?account_id=${accountId}`, { token: org.token });
        expect(profile.status).toBe(200);
        expect(profile.body.payload.name).toBe(last);
      }
    }
    expect((await syncEnded(org.token, accountId)).syncStatus).toBe('SUCCEEDED');
    await books.expectCleanEnd();
  });
});

// ---------------------------------------------------------------------------------------------------------------

describe('citations: POST /citations/disable vs a location update job of the same location', () => {
  const PAIR = 'citations disable vs location update job';
  const LOCATIONS = 10;
  const books = pairBookkeeping(PAIR, ['location-update']);
  let org: OrganizationFixture;
  let accountId: string;
  let locations: any[];

  const disableOverRest = (locationId: string) =>
    http(t.url, 'POST', `/citations/disable?account_id=${accountId}`, { token: org.token, body: { location_id: locationId } }).then((answer) => tallied(PAIR, answer));
  const disableOverGraphql = (locationId: string) =>
    graphql(t.url, 'mutation ($a: ID, $l: ID!) { disableCitations(accountId: $a, locationId: $l) { removed } }', {
      token: org.token,
      variables: { a: accountId, l: locationId },
    }).then((answer) => tallied(PAIR, answer));

  beforeAll(async () => {
    org = await createOrganizationFixture(t.em(), { accounts: 0, citationsApi: true });
    accountId = await connectedAndImported(org.token, await sandboxAccount(LOCATIONS, 0));
    locations = await locationsOf(org.token, accountId);
    expect(locations).toHaveLength(LOCATIONS);
  });

  it(`${LOCATIONS} locations each updated and disabled three times at once: one disable succeeds, the update SUCCEEDED`, async () => {
    const jobIds = await Promise.all(locations.map(async (location, l) => {
      const [update, ...disables] = await Promise.all([
        http(t.url, 'PATCH', `/location/update?account_id=${accountId}&location_id=${location.id}`, {
          token: org.token,
          body: { description: `Citations round of location ${l + 1}` },
        }).then((answer) => tallied(PAIR, answer)),
        disableOverRest(location.id),
        disableOverGraphql(location.id),
        disableOverRest(location.id),
      ]);
      expect(update.status).toBe(200);
      const succeeded = disables.filter((answer) => answer.status === 200 && !answer.body.errors);
      expect(succeeded).toHaveLength(1);
      for (const refused of disables.filter((answer) => !succeeded.includes(answer))) {
        if (refused.body.errors) expect(refused.body.errors[0].extensions.code).toBe('NOT_ACTIVE');
        else expect(refused.body).toEqual({ success: false, code: 'NOT_ACTIVE', msg: expect.any(String), missing_fields: [] });
      }
      return update.body.payload.id as string;
    }));
    await jobsSettled(['location-update']);
    for (const id of jobIds) {
      const job = (await http(t.url, 'GET', `/location/updates?account_id=${accountId}&id=${id}`, { token: org.token })).body.payload.updates[0];
      expect({ id, status: job.status, error: job.error }).toEqual({ id, status: 'SUCCEEDED', error: null });
    }
    const stored = await locationsOf(org.token, accountId);
    expect(stored.map((location) => location.citations_status)).toEqual(locations.map(() => 'DISABLED'));
    expect(stored.map((location) => location.description)).toEqual(locations.map((_, l) => `Citations round of location ${l + 1}`));
    await books.expectCleanEnd();
  });
});
