import { createBetaSandboxControl } from '../sandboxes/beta/beta-sandbox.control';
import { formOf, submit, visit } from './support/browser';
import { waitForWork } from './support/async-work';
import { TestClock } from './support/clock';
import { connect, importEnded, runConsent } from './support/consent';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { minimalLocationBody } from './support/locations';
import { eventually, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';

/**
 * The activity log's state changes not covered by test/activity-log.test.ts, each driven through HTTP against the
 * provider sandboxes: locations connected and refused, accounts connected, imported, reconnected and disconnected,
 * competitor scans, beta brands and review replies. Each change leaves exactly one event of its type for its record,
 * of its organization and account, whose record is what the record's own REST route answers (or, for a review,
 * what GraphQL answers in REST's names). Last, the retention sweep of a worker started on a moved clock deletes the
 * rows past EVENT_RETENTION_DAYS and keeps the others.
 */

const DAY_MS = 24 * 60 * 60 * 1000;
const RETENTION_DAYS = 7;
/** Each test waits on jobs and providers, some through every retry: generous for a loaded machine. */
const SLOW = 240_000;

let t: TestStack;
const clock = new TestClock();

const alpha = () => sandboxOf(t.url);
const beta = () => createBetaSandboxControl(`${t.url}/sandbox/beta`);

/** Every event of one record, oldest first (all pages: GET /events is newest first). */
async function eventsOfRecord(token: string, recordId: string, type?: string): Promise<any[]> {
  const answer = await http(t.url, 'GET', `/events?record_id=${recordId}&per_page=100${type ? `&type=${type}` : ''}`, { token });
  expect(answer.status).toBe(200);
  expect(answer.body.payload.found).toBeLessThanOrEqual(100);
  return [...(answer.body.payload.events as any[])].reverse();
}

/**
 * Until the record has an event of `type` whose record satisfies `done` (the change's outcome is observable in the
 * log itself); then its events of that type, oldest first.
 */
async function untilEvent(token: string, recordId: string, type: string, done: (record: any) => boolean = () => true): Promise<any[]> {
  return eventually(async () => {
    const found = await eventsOfRecord(token, recordId, type);
    return found.some((event) => done(event.record)) ? found : undefined;
  }, 120_000, `a ${type} event of ${recordId}`);
}

/** The envelope every event has: its type, record, organization and account. */
function expectEnvelope(event: any, expected: { type: string; recordType: string; recordId: string; organizationId: string; accountId: string | null }) {
  expect(event).toEqual({
    id: expect.any(String),
    type: expected.type,
    occurred_at: expect.any(Number),
    organization_id: expected.organizationId,
    account_id: expected.accountId,
    record_type: expected.recordType,
    record_id: expected.recordId,
    sequence: expect.stringMatching(/^\d+$/),
    record: expect.any(Object),
  });
}

/** Sequences strictly increase along one record's events (oldest first). */
function expectOrdered(events: any[]) {
  for (let i = 1; i < events.length; i += 1) expect(BigInt(events[i].sequence)).toBeGreaterThan(BigInt(events[i - 1].sequence));
}

/** The location as GET /location lists it (the REST record of a location). */
async function restLocation(token: string, accountId: string, id: string): Promise<any> {
  const answer = await http(t.url, 'GET', `/location?account_id=${accountId}&per_page=250`, { token });
  expect(answer.status).toBe(200);
  return answer.body.data.find((location: { id: string }) => location.id === id);
}

/** The account as GET /organization/accounts lists it; undefined when it is not listed. */
async function restAccount(token: string, accountId: string): Promise<any> {
  const answer = await http(t.url, 'GET', '/organization/accounts', { token });
  // The document's 404 for an organization without accounts.
  if (answer.status === 404 && answer.body.message === 'Organization accounts not found') return undefined;
  expect(answer.status).toBe(200);
  return answer.body.payload.find((account: { id: string }) => account.id === accountId);
}

beforeAll(async () => {
  t = await startTestStack(
    {
      EVENT_RETENTION_DAYS: String(RETENTION_DAYS),
      JOB_RETRY_DELAY_SECONDS: '1',
      JOB_RETRY_LIMIT: '2',
      LOCATION_READ_RATE_LIMIT_PER_MINUTE: '100000',
    },
    { clock },
  );
});
afterEach(() => clock.release());
afterAll(() => t?.close());

describe('locations', () => {
  let org: OrganizationFixture;
  beforeAll(async () => {
    // Accounts known to the alpha provider: a location created here is created there by a job.
    org = await createOrganizationFixture(t.em(), { accounts: 2, alphaAccounts: true });
  });

  it('location.connected: once, when the provider created it, with the location as GET /location shows it', async () => {
    const accountId = org.accounts[0]!.account.id;
    const created = await http(t.url, 'POST', `/location?account_id=${accountId}`, { token: org.token, body: minimalLocationBody({ name: 'Connected Shop' }) });
    expect(created.status).toBe(200);
    const id = created.body.payload.location_id as string;
    const listed = await eventually(async () => {
      const location = await restLocation(org.token, accountId, id);
      return location?.connected ? location : undefined;
    }, 60000, `location ${id} connected`);

    const connected = await eventsOfRecord(org.token, id, 'location.connected');
    expect(connected).toHaveLength(1);
    expectEnvelope(connected[0], { type: 'location.connected', recordType: 'location', recordId: id, organizationId: org.organization.id, accountId });
    expect(connected[0].record).toEqual(listed);
    expect(connected[0].record).toMatchObject({ connected: true, alpha_location_name: expect.stringMatching(/^accounts\/.+\/locations\//) });
    // Creating a location here is not an event; its connection is the one.
    expect((await eventsOfRecord(org.token, id)).map((event) => event.type)).toEqual(['location.connected']);
  }, SLOW);

  it('location.refused: once, when the provider refused it for good, with the location as GET /location shows it', async () => {
    const accountId = org.accounts[1]!.account.id;
    // The provider refuses the next create of this account (a 400 is final: not retried).
    await alpha().fail({ count: 1, status: 400, method: 'POST', pathContains: `/accounts/${org.accounts[1]!.account.alphaAccountId}/locations` });
    const created = await http(t.url, 'POST', `/location?account_id=${accountId}`, { token: org.token, body: minimalLocationBody({ name: 'Refused Shop' }) });
    expect(created.status).toBe(200);
    const id = created.body.payload.location_id as string;
    const refused = await untilEvent(org.token, id, 'location.refused');
    expect(refused).toHaveLength(1);
    expectEnvelope(refused[0], { type: 'location.refused', recordType: 'location', recordId: id, organizationId: org.organization.id, accountId });
    expect(refused[0].record).toEqual(await restLocation(org.token, accountId, id));
    expect(refused[0].record).toMatchObject({ connected: false, alpha_location_name: null });
    expect((await eventsOfRecord(org.token, id)).map((event) => event.type)).toEqual(['location.refused']);

    // GraphQL's record carries the failure REST does not show: the provider's refusal.
    const viaGraphQL = await graphql(t.url, `query ($r: ID) { events(recordId: $r, type: LOCATION_REFUSED) { totalCount nodes { record { ... on Location { id providerError { status reason } } } } } }`, {
      token: org.token,
      variables: { r: id },
    });
    expect(viaGraphQL.body.errors).toBeUndefined();
    expect(viaGraphQL.body.data.events).toEqual({ totalCount: 1, nodes: [{ record: { id, providerError: { status: 400, reason: 'INVALID_ARGUMENT' } } }] });
  }, SLOW);

  it('location.refused once when a lasting fault outlives the retries, however often the failure is reported', async () => {
    const lasting = await createOrganizationFixture(t.em(), { accounts: 1, alphaAccounts: true });
    const accountId = lasting.accounts[0]!.account.id;
    // Every create of this account fails with a 503 (retryable): the last attempt's failure is final, and the dead
    // letter reports it once more (RETRIES_EXHAUSTED).
    await alpha().fail({ count: 50, status: 503, method: 'POST', pathContains: `/accounts/${lasting.accounts[0]!.account.alphaAccountId}/locations` });
    const created = await http(t.url, 'POST', `/location?account_id=${accountId}`, { token: lasting.token, body: minimalLocationBody({ name: 'Unlucky Shop' }) });
    const id = created.body.payload.location_id as string;
    await untilEvent(lasting.token, id, 'location.refused');
    // Until its work is dead-lettered: the dead letter's report (RETRIES_EXHAUSTED) has been handled too.
    await waitForWork(t.url, lasting.token, 'LOCATION_PUBLISH', id, (work) => work.length > 0 && work.every((node) => node.status === 'DEAD_LETTERED'), 120_000);
    const all = await eventsOfRecord(lasting.token, id);
    expect(all.map((event) => event.type)).toEqual(['location.refused']);
    expectEnvelope(all[0], { type: 'location.refused', recordType: 'location', recordId: id, organizationId: lasting.organization.id, accountId });
    expect(all[0].record).toEqual(await restLocation(lasting.token, accountId, id));
  }, SLOW);
});

describe('accounts', () => {
  const flowQuery = (params: Record<string, string>) => new URLSearchParams({ external_api: 'true', ...params });

  /** A consent as Alice and her account 1001 connected to a new organization: the organization and the account's id. */
  async function connectedAlice(): Promise<{ org: OrganizationFixture; accountId: string }> {
    const org = await createOrganizationFixture(t.em(), { accounts: 0 });
    const consent = await runConsent(t.url, org.token, { state: `events-${org.organization.id}` });
    const connected = await connect(t.url, org.token, consent.landed, '1001');
    expect(connected.status).toBe(200);
    const outcome = new URL(connected.body.url).searchParams;
    expect(outcome.get('status')).toBe('success');
    return { org, accountId: outcome.get('alpha_profile_id')! };
  }

  it('account.connected once, then the import: import_progressed at its start and after each location, import_ended once', async () => {
    const { org, accountId } = await connectedAlice();
    const ended = await importEnded(t.url, org.token, accountId);
    expect(ended).toEqual({ syncStatus: 'SUCCEEDED', syncProgress: { locations: 2, reviews: 7 }, syncError: null });
    const account = await restAccount(org.token, accountId);
    const envelope = { recordType: 'account', recordId: accountId, organizationId: org.organization.id, accountId };

    const connected = await eventsOfRecord(org.token, accountId, 'account.connected');
    expect(connected).toHaveLength(1);
    expectEnvelope(connected[0], { ...envelope, type: 'account.connected' });
    // As connect committed it: queued, nothing imported yet (its country codes are the import's to set).
    expect(connected[0].record).toEqual({
      ...account,
      country_codes: expect.any(Array),
      sync_status: 'QUEUED',
      sync_progress: { locations: 0, reviews: 0 },
      sync_error: null,
    });

    const progressed = await eventsOfRecord(org.token, accountId, 'account.import_progressed');
    progressed.forEach((event) => expectEnvelope(event, { ...envelope, type: 'account.import_progressed' }));
    // RUNNING at the start, then after each of Alice's two locations, with what it brought in so far.
    expect(progressed.map((event) => [event.record.sync_status, event.record.sync_progress.locations])).toEqual([
      ['RUNNING', 0],
      ['RUNNING', 1],
      ['RUNNING', 2],
    ]);
    expect(progressed[2].record.sync_progress).toEqual({ locations: 2, reviews: 7 });

    const importEndedEvents = await eventsOfRecord(org.token, accountId, 'account.import_ended');
    expect(importEndedEvents).toHaveLength(1);
    expectEnvelope(importEndedEvents[0], { ...envelope, type: 'account.import_ended' });
    expect(importEndedEvents[0].record).toEqual({ ...account, sync_status: 'SUCCEEDED', sync_progress: { locations: 2, reviews: 7 }, sync_error: null });

    // Nothing else about the account, in the order the changes were made.
    const all = await eventsOfRecord(org.token, accountId);
    expect(all.map((event) => event.type)).toEqual([
      'account.connected',
      'account.import_progressed',
      'account.import_progressed',
      'account.import_progressed',
      'account.import_ended',
    ]);
    expectOrdered(all);
  }, SLOW);

  it('account.import_ended once with FAILED when the provider refuses the import for good', async () => {
    const { org, accountId } = await connectedAlice();
    // The connect's import may already be running: wait for its end, then make the re-sync fail.
    await importEnded(t.url, org.token, accountId);
    await alpha().fail({ count: 1, status: 400, method: 'GET', pathContains: '/accounts/1001/locations' });
    const reconnected = await http(t.url, 'POST', `/reconnect/account?${flowQuery({ alphaId: 'alpha-user-alice', id: accountId, state: 'fail' })}`, { token: org.token });
    expect(new URL(reconnected.body.url).searchParams.get('status')).toBe('success_reconnect');
    const failedImport = await untilEvent(org.token, accountId, 'account.import_ended', (record) => record.sync_status === 'FAILED');
    expect(failedImport.map((event) => event.record.sync_status)).toEqual(['SUCCEEDED', 'FAILED']);
    expectEnvelope(failedImport[1], { type: 'account.import_ended', recordType: 'account', recordId: accountId, organizationId: org.organization.id, accountId });
    const graphqlAccount = await graphql(t.url, `query ($id: ID) { account(id: $id) { syncStatus syncProgress { locations reviews } syncError } }`, { token: org.token, variables: { id: accountId } });
    const { syncStatus, syncProgress, syncError } = graphqlAccount.body.data.account;
    expect(syncStatus).toBe('FAILED');
    expect(failedImport[1].record).toEqual({ ...(await restAccount(org.token, accountId)), sync_status: syncStatus, sync_progress: syncProgress, sync_error: syncError });
  }, SLOW);

  it('account.reconnected once per reconnect, then account.disconnected once with the account as it was last', async () => {
    const { org, accountId } = await connectedAlice();
    await importEnded(t.url, org.token, accountId);
    const envelope = { recordType: 'account', recordId: accountId, organizationId: org.organization.id, accountId };

    const reconnected = await http(t.url, 'POST', `/reconnect/account?${flowQuery({ alphaId: 'alpha-user-alice', id: accountId, state: 're' })}`, { token: org.token });
    expect(reconnected.status).toBe(200);
    expect(new URL(reconnected.body.url).searchParams.get('status')).toBe('success_reconnect');
    const resynced = await importEnded(t.url, org.token, accountId);
    expect(resynced.syncStatus).toBe('SUCCEEDED');
    const account = await restAccount(org.token, accountId);
    const reconnectedEvents = await eventsOfRecord(org.token, accountId, 'account.reconnected');
    expect(reconnectedEvents).toHaveLength(1);
    expectEnvelope(reconnectedEvents[0], { ...envelope, type: 'account.reconnected' });
    // As the reconnect committed it: its re-sync queued, the previous import's progress still on it.
    expect(reconnectedEvents[0].record).toEqual({ ...account, sync_status: 'QUEUED', sync_progress: { locations: 2, reviews: 7 }, sync_error: null });
    // The re-sync is an import like the first: two ends in all.
    expect((await eventsOfRecord(org.token, accountId, 'account.import_ended')).map((event) => event.record.sync_status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);

    const disconnected = await http(t.url, 'DELETE', `/disconnect/account?${flowQuery({ alphaId: accountId, state: 'bye' })}`, { token: org.token });
    expect(disconnected.status).toBe(200);
    expect(new URL(disconnected.body.url).searchParams.get('status')).toBe('success_disconnect');
    expect(await restAccount(org.token, accountId)).toBeUndefined();
    // The history outlives the account: its disconnection is listed, with the account as it was last.
    const disconnectedEvents = await eventsOfRecord(org.token, accountId, 'account.disconnected');
    expect(disconnectedEvents).toHaveLength(1);
    expectEnvelope(disconnectedEvents[0], { ...envelope, type: 'account.disconnected' });
    // number_of_locations is computed when read: the account's locations went with it.
    expect(disconnectedEvents[0].record).toEqual({ ...account, number_of_locations: expect.any(Number), sync_status: 'SUCCEEDED', sync_progress: { locations: 2, reviews: 7 }, sync_error: null });

    const all = await eventsOfRecord(org.token, accountId);
    expect(all.map((event) => event.type).filter((type) => !type.startsWith('account.import_'))).toEqual(['account.connected', 'account.reconnected', 'account.disconnected']);
    expect(all[all.length - 1].type).toBe('account.disconnected');
    expectOrdered(all);
  }, SLOW);
});

describe('a competitor scan', () => {
  let org: OrganizationFixture;
  let accountId: string;
  let locationId: string;
  beforeAll(async () => {
    org = await createOrganizationFixture(t.em(), { accounts: 1, alphaAccounts: true });
    accountId = org.accounts[0]!.account.id;
    // A location the provider knows, with coordinates and (from the provider) a place id: what a scan needs.
    const created = await http(t.url, 'POST', `/location?account_id=${accountId}`, {
      token: org.token,
      body: minimalLocationBody({ name: 'Scan Coffee', category_id: 'gcid:coffee_shop', latitude: 48.85, longitude: 2.35 }),
    });
    locationId = created.body.payload.location_id as string;
    await untilEvent(org.token, locationId, 'location.connected');
  });

  /** Starts a scan through GraphQL; its id. */
  async function startScan(text: string): Promise<string> {
    const started = await graphql(
      t.url,
      `mutation ($a: ID, $l: ID!, $text: String!) { runCompetitorScan(accountId: $a, locationId: $l, text: $text, radiusKm: 2, rings: 0) { id status } }`,
      { token: org.token, variables: { a: accountId, l: locationId, text } },
    );
    expect(started.body.errors).toBeUndefined();
    return started.body.data.runCompetitorScan.id as string;
  }

  /** Until the scan's log shows it finished; its events, and the scan as GET /competitor-scan answers it. */
  async function finished(scanId: string): Promise<{ changes: any[]; rest: any }> {
    const changes = await untilEvent(org.token, scanId, 'competitor_scan.status_changed', (record) => record.status !== 'queued' && record.status !== 'running');
    const rest = await http(t.url, 'GET', `/competitor-scan?account_id=${accountId}&scanId=${scanId}`, { token: org.token });
    expect(rest.status).toBe(200);
    changes.forEach((event) => expectEnvelope(event, { type: 'competitor_scan.status_changed', recordType: 'competitor_scan', recordId: scanId, organizationId: org.organization.id, accountId }));
    expectOrdered(changes);
    return { changes, rest: rest.body.payload };
  }

  it('competitor_scan.status_changed once per status (queued, running, completed), as GET /competitor-scan answers it', async () => {
    const scanId = await startScan('coffee shop');
    const { changes, rest } = await finished(scanId);
    // REST writes a scan's status in the document's lower case.
    expect(rest.status).toBe('completed');
    expect(changes.map((event) => event.record.status)).toEqual(['queued', 'running', 'completed']);
    expect(changes[2].record).toEqual(rest);
    expect(await eventsOfRecord(org.token, scanId)).toHaveLength(3);
  }, SLOW);

  it('a scan retried until it fails for good: queued again for each retry, failed once', async () => {
    // Every search of this text fails with a 503 (retryable): each retry queues the scan again; the last is final.
    await alpha().fail({ count: 50, status: 503, method: 'POST', pathContains: 'places:searchText', bodyContains: 'lasting fault' });
    const scanId = await startScan('lasting fault bakery');
    const { changes, rest } = await finished(scanId);
    expect(rest.status).toBe('failed');
    // JOB_RETRY_LIMIT 2: three attempts, each started once, the first two queued again.
    expect(changes.map((event) => event.record.status)).toEqual(['queued', 'running', 'queued', 'running', 'queued', 'running', 'failed']);
    expect(changes[6].record).toEqual(rest);
    // Until its work is dead-lettered: the dead letter's report of the failure has been handled too.
    await waitForWork(t.url, org.token, 'COMPETITOR_SCAN', scanId, (work) => work.length > 0 && work.every((node) => node.status === 'DEAD_LETTERED'), 120_000);
    expect(await eventsOfRecord(org.token, scanId)).toHaveLength(7);
  }, SLOW);
});

describe('a beta brand', () => {
  it('beta_brand.sync_status_changed once per status (PENDING, SYNCED; PENDING, FAILED; PENDING, SYNCED), as GET /beta/brands/{segment_id} answers it', async () => {
    const org = await createOrganizationFixture(t.em(), { accounts: 1, betaApi: true });
    // The organization's beta consent, as a browser goes through it: it links company-1001.
    const generated = await http(t.url, 'POST', '/oauth/beta/generate-url', { token: org.token, body: { redirect_url: 'https://app.example/beta-return', state: 'brands' } });
    expect(generated.status).toBe(200);
    const page = await visit(generated.body.url);
    const toCallback = await submit(formOf(page.body, generated.body.url), { button: ['decision', 'approve'] });
    const landed = new URL((await visit(toCallback.location!)).location!).searchParams;
    expect(landed.get('company_id')).toBe('company-1001');

    const created = await graphql(t.url, `mutation ($input: CreateBetaBrandInput!) { createBetaBrand(input: $input) { segmentId betaSyncStatus } }`, {
      token: org.token,
      variables: { input: { betaCompanyId: 'company-1001', brandName: 'Event Coffee', countryCode: 'us', primaryCategory: 'coffee_shop', ownershipType: 'BRAND_OWNER' } },
    });
    expect(created.body.errors).toBeUndefined();
    const { segmentId } = created.body.data.createBetaBrand;
    const restBrand = async () => {
      const answer = await http(t.url, 'GET', `/beta/brands/${segmentId}`, { token: org.token });
      expect(answer.status).toBe(200);
      return answer.body.payload;
    };
    // The brand's own id is the events' record id (REST shows the segment id): found by the brand's first event.
    const brandEvents = () => http(t.url, 'GET', '/events?type=beta_brand.sync_status_changed&per_page=100', { token: org.token });
    const first = (await brandEvents()).body.payload.events.find((event: any) => event.record.segment_id === segmentId);
    expect(first).toBeDefined();
    const brandId = first.record_id as string;
    const envelope = { type: 'beta_brand.sync_status_changed', recordType: 'beta_brand', recordId: brandId, organizationId: org.organization.id, accountId: null };

    const synced = await untilEvent(org.token, brandId, envelope.type, (record) => record.beta_sync_status === 'SYNCED');
    expect(synced.map((event) => event.record.beta_sync_status)).toEqual(['PENDING', 'SYNCED']);
    expect(synced[1].record).toEqual(await restBrand());

    // A change the provider refuses: PENDING once with the change, then FAILED once.
    await beta().fail({ count: 1, status: 400, method: 'PUT' });
    const changed = await http(t.url, 'PATCH', `/beta/brands/${segmentId}`, { token: org.token, body: { brand_name: 'Refused Coffee' } });
    expect(changed.status).toBe(200);
    const failed = await untilEvent(org.token, brandId, envelope.type, (record) => record.beta_sync_status === 'FAILED');
    expect(failed.map((event) => event.record.beta_sync_status)).toEqual(['PENDING', 'SYNCED', 'PENDING', 'FAILED']);
    expect(failed[2].record).toMatchObject({ brand_name: 'Refused Coffee', beta_sync_status: 'PENDING' });
    const brand = await restBrand();
    expect(brand.beta_sync_status).toBe('FAILED');
    expect(failed[3].record).toEqual(brand);

    // Changed again while FAILED: PENDING once more, then SYNCED.
    expect((await http(t.url, 'PATCH', `/beta/brands/${segmentId}`, { token: org.token, body: { brand_name: 'Second Coffee' } })).status).toBe(200);
    const all = await untilEvent(org.token, brandId, envelope.type, (record) => record.brand_name === 'Second Coffee' && record.beta_sync_status === 'SYNCED');
    expect(all.map((event) => event.record.beta_sync_status)).toEqual(['PENDING', 'SYNCED', 'PENDING', 'FAILED', 'PENDING', 'SYNCED']);
    expect(all[5].record).toEqual(await restBrand());
    all.forEach((event) => expectEnvelope(event, envelope));
    expectOrdered(all);
    expect(await eventsOfRecord(org.token, brandId)).toHaveLength(6);
  }, SLOW);
});

describe('a review reply', () => {
  const REVIEW_FIELDS = 'id name locationId accountId starRating comment createTime updateTime replyComment replyUpdateTime reviewReplyState replyError { status reason message } deletedAt';
  const TIMES = ['createTime', 'updateTime', 'replyUpdateTime', 'deletedAt'];
  /** The review as GraphQL answers it, in REST's names (snake_case, times in ms): how the log writes a review. */
  const inRestNames = (review: Record<string, unknown>) =>
    Object.fromEntries(
      Object.entries(review).map(([key, value]) => [
        key.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`),
        TIMES.includes(key) && typeof value === 'string' ? Date.parse(value) : value,
      ]),
    );

  it('review.reply_state_changed once per state (PENDING, then ACTIVE, REJECTED or FAILED), as GraphQL answers the review', async () => {
    const org = await createOrganizationFixture(t.em(), { accounts: 0 });
    const consent = await runConsent(t.url, org.token, { state: 'reviews' });
    const accountId = new URL((await connect(t.url, org.token, consent.landed, '1001')).body.url).searchParams.get('alpha_profile_id')!;
    expect((await importEnded(t.url, org.token, accountId)).syncStatus).toBe('SUCCEEDED');
    const locations = await http(t.url, 'GET', `/location?account_id=${accountId}&store_code=alice-1`, { token: org.token });
    const listed = await graphql(t.url, `query ($a: ID, $l: ID!) { reviews(accountId: $a, locationId: $l) { nodes { id name reviewReplyState } } }`, {
      token: org.token,
      variables: { a: accountId, l: locations.body.data[0].id },
    });
    const unreplied = (listed.body.data.reviews.nodes as { id: string; name: string; reviewReplyState: string | null }[]).filter((review) => !review.reviewReplyState);
    const review = async (name: string) =>
      (await graphql(t.url, `query ($a: ID, $id: ID!) { review(accountId: $a, id: $id) { ${REVIEW_FIELDS} } }`, { token: org.token, variables: { a: accountId, id: name } })).body.data.review;

    // The import brought the reviews in: not an event of theirs.
    expect(unreplied.length).toBeGreaterThanOrEqual(3);
    for (const [target, text, decided] of [
      [unreplied[0]!, 'Thank you!', 'ACTIVE'],
      [unreplied[1]!, 'No thanks [[reject]]', 'REJECTED'],
      [unreplied[2]!, 'Refused at the provider', 'FAILED'],
    ] as const) {
      expect(await eventsOfRecord(org.token, target.id)).toEqual([]);
      // The provider refuses this reply's send (a 400 is final): the reply fails for good.
      if (decided === 'FAILED') await alpha().fail({ count: 1, status: 400, method: 'PUT', pathContains: `${target.name.split('/').pop()}/reply` });
      const sent = await http(t.url, 'POST', `/review/answer?account_id=${accountId}`, { token: org.token, body: { review_id: target.name, answer: text } });
      expect(sent.status).toBe(200);
      const changes = await untilEvent(org.token, target.id, 'review.reply_state_changed', (record) => record.review_reply_state !== 'PENDING');
      expect(changes.map((event) => event.record.review_reply_state)).toEqual(['PENDING', decided]);
      changes.forEach((event) =>
        expectEnvelope(event, { type: 'review.reply_state_changed', recordType: 'review', recordId: target.id, organizationId: org.organization.id, accountId }),
      );
      expect(changes[0].record).toMatchObject({ reply_comment: text, reply_error: null });
      expect(changes[1].record).toEqual(inRestNames(await review(target.name)));
      expectOrdered(changes);
      expect(await eventsOfRecord(org.token, target.id)).toHaveLength(2);
    }
  }, SLOW);
});

describe('the retention sweep', () => {
  it('deletes the events older than EVENT_RETENTION_DAYS when a worker starts, and keeps the newer ones', async () => {
    const org = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true });
    const accountId = org.accounts[0]!.account.id;
    const locationId = org.accounts[0]!.locations[0]!.id;
    /** A location update, run to its end: its three events, dated by the held clock. */
    const update = async (description: string) => {
      const res = await http(t.url, 'PATCH', `/location/update?account_id=${accountId}&location_id=${locationId}`, { token: org.token, body: { description } });
      expect(res.status).toBe(200);
      const jobId = res.body.payload.id as string;
      await untilEvent(org.token, jobId, 'location_update_job.status_changed', (record) => ['SUCCEEDED', 'FAILED'].includes(record.status));
      return jobId;
    };

    clock.hold();
    const start = clock.now().getTime();
    const old = await update('Dated at the start');
    clock.advance(5 * DAY_MS);
    const recent = await update('Dated five days later');
    // Both within the retention five days on: the old one is listed until the sweep deletes it.
    expect(await eventsOfRecord(org.token, old)).toHaveLength(3);
    expect(await eventsOfRecord(org.token, recent)).toHaveLength(3);

    // The sweep runs where jobs run, at the process's start: a worker of this database whose clock is an hour past
    // the old events' retention. Its stop waits for that sweep, so once stopped, the sweep is done.
    const sweepClock = new TestClock();
    sweepClock.hold(new Date(start + RETENTION_DAYS * DAY_MS + 60 * 60 * 1000));
    const worker = await startTestStack(
      { ROLE: 'worker', EVENT_RETENTION_DAYS: String(RETENTION_DAYS), ALPHA_API_URL: `${t.url}/sandbox/alpha`, BETA_API_URL: `${t.url}/sandbox/beta`, SANDBOX: 'off' },
      { clock: sweepClock, sharedDatabaseUrl: t.databaseUrl },
    );
    await worker.close();

    // Still five days on here, where the old events would be listed had they been kept: they are gone for good.
    expect(await eventsOfRecord(org.token, old)).toEqual([]);
    const kept = await eventsOfRecord(org.token, recent);
    expect(kept.map((event) => event.record.status)).toEqual(['QUEUED', 'RUNNING', expect.stringMatching(/^(SUCCEEDED|FAILED)$/)]);
    // Back to real time too (earlier than the moved clock): nothing older comes back.
    clock.release();
    expect(await eventsOfRecord(org.token, old)).toEqual([]);
  }, SLOW);
});
