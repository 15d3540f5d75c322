import { Account } from '../src/account/account.entity';
import { PROVIDER_QUEUES, type ProviderQueueName } from './support/queues';
import { Location } from '../src/location/location.entity';
import { createAlphaSandboxControl, type AlphaSandboxControl } from '../sandboxes/alpha/alpha-sandbox.control';
import { createBetaSandboxControl, type BetaSandboxControl } from '../sandboxes/beta/beta-sandbox.control';
import { connect, runConsent } from './support/consent';
import {
  ALL_FAULTS,
  betaConsent,
  expectedFailureText,
  faultRule,
  INTERNAL_TEXT,
  jobFigures,
  query,
  RETRYABLE_FAULTS,
  stuckRecords,
  until,
  type FaultKind,
  type StuckRecord,
} from './support/job-faults';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { startTestStack, type TestStack } from './support/stack';

/**
 * The providers slow, timing out, failing with 5xx and 429, dropping the connection and refusing (the sandboxes'
 * scripted faults, aimed at one record's calls), on every queue: each fault once (then the provider recovers) and
 * for longer than the retries. Every record ends in its documented terminal state (success after a transient
 * fault; the failure, with the provider's text, after a lasting one or a refusal), no record waits for a job that
 * no longer exists (test/support/job-faults.ts `stuckRecords`), and the provider holds no duplicate. The job settings
 * are small (2 retries, 1 s backoff, a 5 s provider time-out) so a lasting fault runs out of retries quickly. The
 * time-out is not smaller: every scenario runs at once, and on a loaded 2-core machine an unfaulted call (a reply's
 * read of its review, a connect's read of the account) took more than 2 s. A beta brand's push is faulted on its
 * create (every kind), and on a replace and a delete (a 5xx, once and lasting).
 *
 * A slow call is held past the client's time-out and then takes effect at the provider (the client only gave up
 * waiting): the retried create answers what the held one made (requestId), a retried delete sees it gone, a
 * retried update or reply sends the same again (an idempotent replace), a retried read reads again.
 */

const RETRY_LIMIT = 2;
const ATTEMPTS = RETRY_LIMIT + 1;
const TIMEOUT_SECONDS = 5;
/** A slow call: held this long, past the client's time-out. */
const SLOW_MS = 8_000;

type Duration = 'transient' | 'lasting';

interface Outcome {
  queue: ProviderQueueName;
  kind: FaultKind;
  duration: Duration;
  /** The record's id here, and its terminal state as a client reads it. */
  id: string;
  state: string;
  /** The failure text a client reads, when it failed. */
  error: string | null;
  /** The failure's status and reason, where the record keeps them. */
  status?: number;
  reason?: string;
}

let t: TestStack;
let alpha: AlphaSandboxControl;
let beta: BetaSandboxControl;
let org: OrganizationFixture;
/** Account 0: posts and scans; 1..PUBLISH_ACCOUNTS: one per location-create scenario; the last: updates. */
let postAccount: { id: string; alphaId: string };
let publishAccounts: { id: string; alphaId: string }[];
let updateAccount: { id: string; alphaId: string };
/** Locations known to the provider (ours, connected), each given to one scenario. */
const postLocations: { id: string; providerId: string }[] = [];
const scanLocations: string[] = [];
const updateLocations: { id: string; providerId: string }[] = [];
/** The account whose reviews are answered, with the provider's review ids handed out one per scenario. */
let reviewsOrg: OrganizationFixture;
let reviewsAccountId: string;
const REVIEWS_ACCOUNT = 'faults-rita';
const REVIEWS_LOCATION = 'faults-rita-1';
const reviewIds: string[] = [];
/** Companies of the beta consent, one per scenario. */
const companies: string[] = [];

const SCENARIOS_PER_QUEUE = RETRYABLE_FAULTS.length + ALL_FAULTS.length;
/** Besides creates, a brand's replace and delete meet a 5xx, once and lasting. */
const BRAND_CHANGES: { operation: 'replace' | 'delete'; duration: Duration }[] = [
  { operation: 'replace', duration: 'transient' },
  { operation: 'delete', duration: 'transient' },
  { operation: 'replace', duration: 'lasting' },
  { operation: 'delete', duration: 'lasting' },
];

/** Per queue: calls the sandbox failed or held, records (one per scenario), and those found terminal. */
const figures = new Map<ProviderQueueName, { faults: number; records: number; terminal: number }>(
  PROVIDER_QUEUES.map((queue) => [queue, { faults: 0, records: 0, terminal: 0 }]),
);

const two = (n: number) => String(n).padStart(2, '0');
let counter = 0;
const next = () => (counter += 1);

beforeAll(async () => {
  t = await startTestStack({
    JOB_RETRY_LIMIT: String(RETRY_LIMIT),
    JOB_RETRY_DELAY_SECONDS: '1',
    // A 429 here is a failure like the others (no waiting allowed): its retries and its end are what this file
    // checks on every queue. Waiting for a 429 instead is test/jobs.waits.test.ts's.
    JOB_MAX_WAIT_SECONDS: '0',
    PROVIDER_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS),
    POST_RATE_LIMIT_PER_MINUTE: '100000',
    LOCATION_CREATE_RATE_LIMIT_PER_MINUTE: '100000',
    LOCATION_READ_RATE_LIMIT_PER_MINUTE: '100000',
    LOCATION_UPDATE_RATE_LIMIT_PER_HOUR: '100000',
    BUSINESS_PROFILE_READ_RATE_LIMIT_PER_MINUTE: '100000',
  });
  alpha = createAlphaSandboxControl(`${t.url}/sandbox/alpha`);
  beta = createBetaSandboxControl(`${t.url}/sandbox/beta`);
  // Posts stay PROCESSING a moment, so a check job follows every publish; replies stay PENDING a moment, so
  // checks follow every reply (and a fault can be aimed at one after the reply was sent).
  await alpha.configure({ processingMs: 1_500, moderationMs: 3_000 });

  const scenarios = SCENARIOS_PER_QUEUE;
  org = await createOrganizationFixture(t.em(), { accounts: scenarios + 2, alphaAccounts: true, betaApi: true });
  const accounts = org.accounts.map(({ account }) => ({ id: account.id, alphaId: account.alphaAccountId! }));
  postAccount = accounts[0]!;
  publishAccounts = accounts.slice(1, 1 + scenarios);
  updateAccount = accounts[accounts.length - 1]!;

  // Posts' and scans' locations: ours, known to the provider (posts need no location there); scans need a place id.
  const em = t.em();
  const account = em.getReference(Account, postAccount.id);
  for (let n = 1; n <= 3 * scenarios; n += 1) {
    const location = em.create(Location, {
      account,
      name: `Post location ${n}`,
      connected: true,
      alphaLocationName: `accounts/${postAccount.alphaId}/locations/p${two(n)}`,
    });
    postLocations.push({ id: location.id, providerId: `p${two(n)}` });
  }
  for (let n = 1; n <= scenarios; n += 1) {
    const location = em.create(Location, {
      account,
      name: `Scan location ${n}`,
      connected: true,
      alphaLocationName: `accounts/${postAccount.alphaId}/locations/s${two(n)}`,
      placeId: `faults-place-${n}`,
      latitude: 52.52 + n / 100,
      longitude: 13.4,
    });
    scanLocations.push(location.id);
  }
  await (em).flush();

  // Updates need locations the provider has: created through the API, published by their jobs.
  for (let n = 1; n <= scenarios; n += 1) updateLocations.push(await publishedLocation(n));

  // Reviews to answer: an account of the provider's, connected through the consent and imported.
  reviewsOrg = await createOrganizationFixture(t.em(), { name: 'Reviews org', accounts: 0 });
  await alpha.addIdentity({
    sub: 'faults-rita',
    email: 'rita@faults.example',
    name: 'Rita Faults',
    accounts: [{
      accountId: REVIEWS_ACCOUNT,
      accountName: 'Rita Roastery',
      locations: [{
        locationId: REVIEWS_LOCATION,
        location: providerLocation('Rita Roastery'),
        reviews: [
          ...Array.from({ length: 2 * scenarios }, (_, index) => ({
            reviewId: `r${two(index + 1)}`,
            starRating: 'FOUR' as const,
            reviewer: { displayName: `Guest ${index + 1}` },
            comment: 'Good coffee',
          })),
          // Replied at the provider itself, still under moderation when imported: a job must follow it here too.
          { reviewId: 'pending-1', starRating: 'TWO', reviewer: { displayName: 'Pia' }, comment: 'Slow', reviewReply: { comment: 'Sorry, Pia', state: 'PENDING' } },
        ],
      }],
    }],
  });
  reviewsAccountId = await connectAndImport(reviewsOrg.token, 'faults-rita', REVIEWS_ACCOUNT);
  for (let n = 1; n <= 2 * scenarios; n += 1) reviewIds.push(`r${two(n)}`);

  // Brands: the organization's consent links one company per scenario (and per brand replaced or deleted).
  for (let n = 1; n <= scenarios + BRAND_CHANGES.length; n += 1) {
    const company = `faults-co-${two(n)}`;
    await beta.addCompany({ id: company, name: `Faults Company ${n}` });
    await betaConsent(t.url, org.token, company);
    companies.push(company);
  }
}, 180_000);

afterAll(async () => {
  try {
    if (t) await printFigures();
  } finally {
    await t?.close();
  }
});

/** The note's figures, per queue, once per file. */
async function printFigures(): Promise<void> {
  const rows = [];
  const stuck = await stuckRecords(t.databaseUrl);
  const duplicates = await providerDuplicates();
  for (const queue of PROVIDER_QUEUES) {
    const { faults, records, terminal } = figures.get(queue)!;
    const { jobs, attempts, deadLetters } = await jobFigures(t.databaseUrl, queue);
    rows.push({
      queue,
      scenarios: records,
      faultedCalls: faults,
      terminal,
      jobs,
      attempts,
      deadLetters,
      stuck: stuck.filter((r) => r.queue === queue).length + sampled.stuck.filter((r) => r.queue === queue).length,
      duplicates: duplicates[queue],
    });
  }
  console.log(`provider faults, per queue (stuck records looked for ${sampled.samples} times while the scenarios ran, and at the end):\n${rows.map((row) => JSON.stringify(row)).join('\n')}`);
}

/** A location in the provider's shape (for a sandbox identity). */
function providerLocation(title: string): Record<string, unknown> {
  return {
    title,
    categories: { primaryCategory: { name: 'gcid:coffee_shop' } },
    storefrontAddress: { regionCode: 'DE', locality: 'Berlin', addressLines: ['1 Kastanienallee'] },
  };
}

/** A location created through POST /location on the update account, once its job has created it at the provider. */
async function publishedLocation(n: number): Promise<{ id: string; providerId: string }> {
  const created = await http(t.url, 'POST', `/location?account_id=${updateAccount.id}`, {
    token: org.token,
    body: { name: `Update location ${n}`, category_id: 'gcid:bakery', country_code: 'DE', address: '1 Main Street', city: 'Berlin', postal: '10115' },
  });
  expect(created.status).toBe(200);
  const id = created.body.payload.location_id as string;
  const location = await until(async () => {
    const found = await locationOf(updateAccount.id, id);
    return found.connected ? found : undefined;
  }, `location ${id} at the provider`);
  return { id, providerId: (location.alphaLocationName as string).split('/')[3]! };
}

/** The consent as the sandbox person `sub`, then POST /connect/account for `alphaAccountId`: our account id. */
async function connectAccount(token: string, sub: string, alphaAccountId: string): Promise<string> {
  const consent = await runConsent(t.url, token, { person: sub, state: `faults-${sub}` });
  const connected = await connect(t.url, token, consent.landed, alphaAccountId);
  const url = new URL(connected.body.url);
  if (url.searchParams.get('status') !== 'success') throw new Error(`connect failed: ${connected.body.url}`);
  return url.searchParams.get('alpha_profile_id')!;
}

async function connectAndImport(token: string, sub: string, alphaAccountId: string): Promise<string> {
  const accountId = await connectAccount(token, sub, alphaAccountId);
  const account = await until(async () => {
    const found = await accountOf(token, accountId);
    return found.syncStatus === 'SUCCEEDED' || found.syncStatus === 'FAILED' ? found : undefined;
  }, `the import of ${alphaAccountId}`);
  expect(account.syncStatus).toBe('SUCCEEDED');
  return accountId;
}

async function data<T = any>(token: string, text: string, variables: Record<string, unknown>): Promise<T> {
  const answer = await graphql(t.url, text, { token, variables });
  if (answer.body.errors) throw new Error(`${text}: ${JSON.stringify(answer.body.errors)}`);
  return answer.body.data as T;
}

const FAILURE = '{ status reason message }';
const postOf = async (id: string) => (await data(org.token, `query ($a: ID, $id: ID!) { post(accountId: $a, id: $id) { state lastError ${FAILURE} } }`, { a: postAccount.id, id })).post;
const locationOf = async (accountId: string, id: string) =>
  (await data(org.token, `query ($a: ID, $id: ID!) { location(accountId: $a, id: $id) { connected alphaLocationName providerError ${FAILURE} } }`, { a: accountId, id })).location;
const updateOf = async (id: string) =>
  (await data(org.token, `query ($a: ID, $id: ID!) { locationUpdateJob(accountId: $a, id: $id) { status error ${FAILURE} } }`, { a: updateAccount.id, id })).locationUpdateJob;
const accountOf = async (token: string, id: string) => (await data(token, 'query ($id: ID) { account(id: $id) { syncStatus syncError } }', { id })).account;
const reviewOf = async (name: string) =>
  (await data(reviewsOrg.token, `query ($a: ID, $id: ID!) { review(accountId: $a, id: $id) { id reviewReplyState replyError ${FAILURE} } }`, { a: reviewsAccountId, id: name })).review;
const scanOf = async (id: string) => (await data(org.token, 'query ($a: ID, $id: ID) { competitorScan(accountId: $a, scanId: $id) { status error } }', { a: postAccount.id, id })).competitorScan;
const brandOf = async (segmentId: string) => (await data(org.token, 'query ($s: String!) { betaBrand(segmentId: $s) { betaSyncStatus syncError } }', { s: segmentId })).betaBrand;

/** Scripts `kind` at the sandbox for the calls `aim` names: once, or as often as the job will try. */
async function inject(queue: ProviderQueueName, provider: 'alpha' | 'beta', kind: FaultKind, duration: Duration, aim: Parameters<typeof faultRule>[2]): Promise<void> {
  const count = duration === 'transient' || kind === '4xx' ? 1 : ATTEMPTS;
  const rule = faultRule(kind, count, aim, SLOW_MS);
  await (provider === 'alpha' ? alpha.fail(rule) : beta.fail(rule));
  figures.get(queue)!.faults += count;
}

const reviewName = (reviewId: string) => `accounts/${REVIEWS_ACCOUNT}/locations/${REVIEWS_LOCATION}/reviews/${reviewId}`;

/** Runs one fault on one queue's job, from arranging its record to the record's terminal state. */
async function scenario(queue: ProviderQueueName, kind: FaultKind, duration: Duration): Promise<Outcome> {
  figures.get(queue)!.records += 1;
  const outcome = (id: string, state: string, failure: { status?: number; reason?: string; message?: string } | string | null): Outcome => {
    const error = typeof failure === 'string' ? failure : failure?.message ?? null;
    const structured = typeof failure === 'object' && failure ? { status: failure.status, reason: failure.reason } : {};
    return { queue, kind, duration, id, state, error, ...structured };
  };
  switch (queue) {
    case 'post-publish':
    case 'post-check':
    case 'post-delete': {
      const location = postLocations.shift()!;
      const localPosts = `/locations/${location.providerId}/localPosts`;
      if (queue === 'post-publish') await inject(queue, 'alpha', kind, duration, { method: 'POST', pathContains: localPosts });
      // Only check jobs read a post: a GET of this location's posts.
      if (queue === 'post-check') await inject(queue, 'alpha', kind, duration, { method: 'GET', pathContains: `${localPosts}/` });
      const created = await http(t.url, 'POST', `/post?account_id=${postAccount.id}`, {
        token: org.token,
        body: { location_id: location.id, params: { summary: `Fault ${queue} ${kind} ${duration}` } },
      });
      expect(created.status).toBe(202);
      const id = created.body.payload.id as string;
      if (queue === 'post-delete') {
        await until(async () => ((await postOf(id)).state === 'LIVE' ? true : undefined), `post ${id} LIVE before its delete`);
        await inject(queue, 'alpha', kind, duration, { method: 'DELETE', pathContains: `${localPosts}/` });
        expect((await http(t.url, 'DELETE', `/post/${id}?account_id=${postAccount.id}`, { token: org.token })).status).toBe(202);
      }
      const terminal = queue === 'post-delete' ? ['DELETED', 'ERROR'] : ['LIVE', 'ERROR', 'REJECTED'];
      const post = await until(async () => {
        const found = await postOf(id);
        return terminal.includes(found.state) ? found : undefined;
      }, `post ${id} (${queue}, ${kind}, ${duration})`);
      return outcome(id, post.state, post.state === 'ERROR' ? post.lastError : null);
    }
    case 'location-publish': {
      const account = publishAccounts.shift()!;
      await inject(queue, 'alpha', kind, duration, { method: 'POST', pathContains: `/accounts/${account.alphaId}/locations?requestId=` });
      const created = await http(t.url, 'POST', `/location?account_id=${account.id}`, {
        token: org.token,
        body: { name: `Fault ${kind} ${duration}`, category_id: 'gcid:bakery', country_code: 'DE', address: '2 Main Street', city: 'Berlin', postal: '10115' },
      });
      expect(created.status).toBe(200);
      const id = created.body.payload.location_id as string;
      const location = await until(async () => {
        const found = await locationOf(account.id, id);
        return found.connected || found.providerError ? found : undefined;
      }, `location ${id} (${kind}, ${duration})`);
      return outcome(id, location.connected ? 'connected' : 'providerError', location.providerError);
    }
    case 'location-update': {
      const location = updateLocations.shift()!;
      await inject(queue, 'alpha', kind, duration, { method: 'PATCH', pathContains: `/locations/${location.providerId}?updateMask=` });
      const answer = await http(t.url, 'PATCH', `/location/update?account_id=${updateAccount.id}&location_id=${location.id}`, {
        token: org.token,
        body: { name: `Renamed after ${kind} ${duration}` },
      });
      expect(answer.status).toBe(200);
      const id = answer.body.payload.id as string;
      const job = await until(async () => {
        const found = await updateOf(id);
        return found.status === 'SUCCEEDED' || found.status === 'FAILED' ? found : undefined;
      }, `update ${id} (${kind}, ${duration})`);
      return outcome(id, job.status, job.error);
    }
    case 'account-import': {
      // An organization of its own: connections in progress are limited per organization.
      const n = next();
      const sub = `faults-import-${two(n)}`;
      const alphaAccountId = `faults-import-acct-${two(n)}`;
      const own = await createOrganizationFixture(t.em(), { name: `Import org ${n}`, accounts: 0 });
      await alpha.addIdentity({
        sub,
        email: `${sub}@faults.example`,
        name: `Importer ${n}`,
        accounts: [{
          accountId: alphaAccountId,
          accountName: `Import ${n}`,
          locations: [{ location: providerLocation(`Import ${n}`), reviews: [{ starRating: 'FIVE', reviewer: { displayName: 'Ann' }, comment: 'Lovely' }] }],
        }],
      });
      // The import's listing of the account's locations (the connect itself reads one location, pageSize=1).
      await inject(queue, 'alpha', kind, duration, { method: 'GET', pathContains: `/accounts/${alphaAccountId}/locations?pageSize=100` });
      const id = await connectAccount(own.token, sub, alphaAccountId);
      const account = await until(async () => {
        const found = await accountOf(own.token, id);
        return found.syncStatus === 'SUCCEEDED' || found.syncStatus === 'FAILED' ? found : undefined;
      }, `import ${id} (${kind}, ${duration})`);
      return outcome(id, account.syncStatus, account.syncError);
    }
    case 'review-reply-send':
    case 'review-reply-check': {
      const name = reviewName(reviewIds.shift()!);
      const reply = `${queue} ${kind} ${duration}`;
      if (queue === 'review-reply-send') await inject(queue, 'alpha', kind, duration, { method: 'PUT', pathContains: `${name.split('/').slice(4).join('/')}/reply` });
      const answered = await http(t.url, 'POST', `/review/answer?account_id=${reviewsAccountId}`, { token: reviewsOrg.token, body: { review_id: name, answer: reply } });
      expect(answered.status).toBe(200);
      // The reply is being moderated (moderationMs) and followed by checks: the fault hits the next one.
      if (queue === 'review-reply-check') await inject(queue, 'alpha', kind, duration, { method: 'GET', pathContains: name.split('/').slice(4).join('/') });
      const review = await until(async () => {
        const found = await reviewOf(name);
        return ['ACTIVE', 'REJECTED', 'FAILED'].includes(found.reviewReplyState) ? found : undefined;
      }, `reply to ${name} (${queue}, ${kind}, ${duration})`);
      return outcome(review.id, review.reviewReplyState, review.replyError);
    }
    case 'competitor-scan': {
      // Every scan searches the same path: the scan's own text tells its search apart.
      const text = `espresso ${queue} ${two(next())}`;
      await inject(queue, 'alpha', kind, duration, { method: 'POST', pathContains: 'places:searchText', bodyContains: `"textQuery":"${text}"` });
      const started = await data(org.token, `mutation ($a: ID, $l: ID!, $text: String!) {
        runCompetitorScan(accountId: $a, locationId: $l, text: $text, radiusKm: 1, rings: 0) { id status } }`, { a: postAccount.id, l: scanLocations.shift()!, text });
      const id = started.runCompetitorScan.id as string;
      const scan = await until(async () => {
        const found = await scanOf(id);
        return found.status === 'COMPLETED' || found.status === 'FAILED' ? found : undefined;
      }, `scan ${id} (${kind}, ${duration})`);
      return outcome(id, scan.status, scan.error);
    }
    case 'beta-brand-sync': {
      const company = companies.shift()!;
      await inject(queue, 'beta', kind, duration, { method: 'POST', pathContains: `/orgs/${company}/brands` });
      const created = await data(org.token, 'mutation ($input: CreateBetaBrandInput!) { createBetaBrand(input: $input) { segmentId betaSyncStatus } }', {
        input: { betaCompanyId: company, brandName: `Brand ${kind} ${duration}`, countryCode: 'de', primaryCategory: 'cafe', ownershipType: 'BRAND_OWNER' },
      });
      const segmentId = created.createBetaBrand.segmentId as string;
      const brand = await until(async () => {
        const found = await brandOf(segmentId);
        return found.betaSyncStatus === 'SYNCED' || found.betaSyncStatus === 'FAILED' ? found : undefined;
      }, `brand ${segmentId} (${kind}, ${duration})`);
      return outcome(segmentId, brand.betaSyncStatus, brand.syncError);
    }
    default:
      throw new Error(`no scenario for ${String(queue)}`);
  }
}

/**
 * A brand created and synced, then replaced (PATCH) or deleted, with a 5xx on that push: SYNCED again (a replaced
 * brand) or gone (a deleted one) after a transient fault; FAILED after a lasting one. A brand whose deletion
 * failed for good is there again (it still exists at the provider), FAILED with the reason, to be deleted again.
 */
async function brandChange(operation: 'replace' | 'delete', duration: Duration): Promise<{ operation: string; duration: Duration; state: string; error: string | null }> {
  const queue = 'beta-brand-sync';
  figures.get(queue)!.records += 1;
  const company = companies.shift()!;
  const created = await data(org.token, 'mutation ($input: CreateBetaBrandInput!) { createBetaBrand(input: $input) { segmentId } }', {
    input: { betaCompanyId: company, brandName: `Brand to ${operation}`, countryCode: 'de', primaryCategory: 'cafe', ownershipType: 'BRAND_OWNER' },
  });
  const segmentId = created.createBetaBrand.segmentId as string;
  await until(async () => ((await brandOf(segmentId)).betaSyncStatus === 'SYNCED' ? true : undefined), `brand ${segmentId} synced before its ${operation}`);
  await inject(queue, 'beta', '5xx', duration, { method: operation === 'replace' ? 'PUT' : 'DELETE', pathContains: `/orgs/${company}/brands/` });
  const answer =
    operation === 'replace'
      ? await http(t.url, 'PATCH', `/beta/brands/${segmentId}`, { token: org.token, body: { brand_name: 'Brand replaced' } })
      : await http(t.url, 'DELETE', `/beta/brands/${segmentId}`, { token: org.token });
  expect(answer.status).toBe(200);
  const row = () => query(t.databaseUrl, 'select beta_sync_status as status, sync_error as error from beta_brand where segment_id = $1', [segmentId]) as Promise<{ status: string; error: string | null }[]>;
  const ended = await until(async () => {
    const [found] = await row();
    if (!found) return { state: 'gone', error: null };
    return found.status === 'PENDING' ? undefined : { state: found.status, error: found.error };
  }, `brand ${segmentId} ${operation} (${duration})`);
  if (operation === 'delete' && ended.state === 'FAILED') {
    const again = await http(t.url, 'GET', `/beta/brands/${segmentId}`, { token: org.token });
    expect([again.status, again.body.payload?.beta_sync_status]).toEqual([200, 'FAILED']);
  }
  figures.get(queue)!.terminal += 1;
  return { operation, duration, ...ended };
}

const SUCCESS: Record<ProviderQueueName, string> = {
  'post-publish': 'LIVE',
  'post-check': 'LIVE',
  'post-delete': 'DELETED',
  'location-publish': 'connected',
  'location-update': 'SUCCEEDED',
  'account-import': 'SUCCEEDED',
  'review-reply-send': 'ACTIVE',
  'review-reply-check': 'ACTIVE',
  'competitor-scan': 'COMPLETED',
  'beta-brand-sync': 'SYNCED',
};
const FAILED: Record<ProviderQueueName, string> = {
  'post-publish': 'ERROR',
  'post-check': 'ERROR',
  'post-delete': 'ERROR',
  'location-publish': 'providerError',
  'location-update': 'FAILED',
  'account-import': 'FAILED',
  'review-reply-send': 'FAILED',
  'review-reply-check': 'FAILED',
  'competitor-scan': 'FAILED',
  'beta-brand-sync': 'FAILED',
};
/** The status a final fault of this kind leaves where the record keeps one. */
const STATUS: Record<FaultKind, number> = { '429': 429, '5xx': 503, drop: 0, slow: 0, '4xx': 400 };

/** Looks for stuck records while scenarios run: a record waiting for a job that is gone is a fault at any moment. */
const sampled = { samples: 0, stuck: [] as StuckRecord[] };

/**
 * Runs every scenario at once (each aimed at its own record's calls), looking for stuck records meanwhile; fails
 * listing every scenario that failed.
 */
async function runAll(runs: { queue: ProviderQueueName; kind: FaultKind; duration: Duration }[]): Promise<Outcome[]> {
  let running = true;
  const sampler = (async () => {
    while (running) {
      const stuck = await stuckRecords(t.databaseUrl);
      sampled.samples += 1;
      sampled.stuck.push(...stuck);
      // A sampling interval, not a wait for an event: stuck records are looked for repeatedly while the scenarios run.
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  })();
  const settled = await Promise.allSettled(runs.map(({ queue, kind, duration }) => scenario(queue, kind, duration)));
  running = false;
  await sampler;
  expect(sampled.stuck).toEqual([]);
  const failed = settled.flatMap((result, index) => (result.status === 'rejected' ? [`${JSON.stringify(runs[index])}: ${String(result.reason)}`] : []));
  if (failed.length > 0) throw new Error(`${failed.length} scenarios did not end:\n${failed.join('\n')}`);
  const outcomes = settled.map((result) => (result as PromiseFulfilledResult<Outcome>).value);
  for (const { queue } of outcomes) figures.get(queue)!.terminal += 1;
  return outcomes;
}

/** Once the held calls have landed: every scripted fault was used, and no record waits for a job that is gone. */
async function settledAndNothingStuck(): Promise<void> {
  await until(async () => ((await alpha.state()).held === 0 && (await beta.state()).held === 0 ? true : undefined), 'held calls to land');
  expect((await alpha.state()).failures).toEqual([]);
  expect((await beta.state()).failures).toEqual([]);
  expect(await stuckRecords(t.databaseUrl)).toEqual([]);
}

/** Records the provider holds twice (per queue): posts and locations per requestId, brands per company, imports per provider name. */
async function providerDuplicates(): Promise<Record<ProviderQueueName, number>> {
  const state = await alpha.state();
  const moreThanOnce = (keys: (string | null)[]) => {
    const counts = new Map<string, number>();
    for (const key of keys) if (key) counts.set(key, (counts.get(key) ?? 0) + 1);
    return [...counts.values()].filter((count) => count > 1).length;
  };
  const posts = moreThanOnce(state.posts.map((post) => post.requestId));
  const brands = moreThanOnce((await beta.state()).brands.filter((brand) => brand.companyId.startsWith('faults-co-')).map((brand) => brand.companyId));
  const [imported] = (await query(
    t.databaseUrl,
    `select count(*)::int as n from (select 1 from location where alpha_location_name is not null group by account_id, alpha_location_name having count(*) > 1) d`,
  )) as { n: number }[];
  const [reviews] = (await query(t.databaseUrl, `select count(*)::int as n from (select 1 from review group by name having count(*) > 1) d`)) as { n: number }[];
  return {
    'post-publish': posts,
    'post-check': posts,
    'post-delete': posts,
    'location-publish': moreThanOnce(state.locations.map((location) => location.requestId)),
    // Updates replace fields (sent again, they change nothing more); scans and checks only read.
    'location-update': 0,
    'account-import': imported!.n + reviews!.n,
    'review-reply-send': reviews!.n,
    'review-reply-check': reviews!.n,
    'competitor-scan': 0,
    'beta-brand-sync': brands,
  };
}

/** The record's job: the attempts its last job made, and how pg-boss ended it. */
async function lastJobOf(queue: ProviderQueueName, id: string): Promise<{ state: string; attempts: number } | undefined> {
  const key = { 'post-publish': 'postId', 'post-check': 'postId', 'post-delete': 'postId', 'location-publish': 'locationId', 'location-update': 'jobId', 'account-import': 'accountId', 'review-reply-send': 'reviewId', 'review-reply-check': 'reviewId', 'competitor-scan': 'scanId', 'beta-brand-sync': 'brandId' }[queue];
  const lookup = queue === 'beta-brand-sync' ? `(select id::text from beta_brand where segment_id = $2)` : '$2';
  const [job] = (await query(
    t.databaseUrl,
    `select state::text, retry_count + 1 as attempts from pgboss.job where name = $1 and data->>'${key}' = ${lookup} order by retry_count desc, created_on desc limit 1`,
    [queue, id],
  )) as { state: string; attempts: number }[];
  return job;
}

describe('provider faults on every queue', () => {
  it('a fault once, then a provider that recovers: every record ends in its success, the job retried', async () => {
    const [outcomes, changes] = await Promise.all([
      runAll(PROVIDER_QUEUES.flatMap((queue) => RETRYABLE_FAULTS.map((kind) => ({ queue, kind, duration: 'transient' as const })))),
      Promise.all(BRAND_CHANGES.filter((change) => change.duration === 'transient').map(({ operation, duration }) => brandChange(operation, duration))),
    ]);
    expect(changes).toEqual([
      { operation: 'replace', duration: 'transient', state: 'SYNCED', error: null },
      { operation: 'delete', duration: 'transient', state: 'gone', error: null },
    ]);
    const unexpected = [];
    for (const outcome of outcomes) {
      // The faulted attempt failed, and the job's retry succeeded.
      const job = await lastJobOf(outcome.queue, outcome.id);
      if (outcome.state !== SUCCESS[outcome.queue] || job?.state !== 'completed' || job.attempts !== 2) unexpected.push({ ...outcome, job });
    }
    expect(unexpected).toEqual([]);
    await settledAndNothingStuck();
    expect(Object.values(await providerDuplicates()).every((count) => count === 0)).toBe(true);
  }, 240_000);

  it('a fault lasting past the retries, or a refusal: every record ends in its documented failure, with the provider’s text', async () => {
    const [outcomes, changes] = await Promise.all([
      runAll(PROVIDER_QUEUES.flatMap((queue) => ALL_FAULTS.map((kind) => ({ queue, kind, duration: 'lasting' as const })))),
      Promise.all(BRAND_CHANGES.filter((change) => change.duration === 'lasting').map(({ operation, duration }) => brandChange(operation, duration))),
    ]);
    expect(changes).toEqual([
      { operation: 'replace', duration: 'lasting', state: 'FAILED', error: expect.stringMatching(/\S/) },
      { operation: 'delete', duration: 'lasting', state: 'FAILED', error: expect.stringMatching(/\S/) },
    ]);
    for (const { error } of changes) expect(error).not.toMatch(INTERNAL_TEXT);
    const unexpected = [];
    for (const outcome of outcomes) {
      const provider = outcome.queue === 'beta-brand-sync' ? 'beta' : 'alpha';
      // A refusal ends the job at once (complete: the record holds the outcome); a lasting fault uses every attempt.
      const job = await lastJobOf(outcome.queue, outcome.id);
      const expectedJob = outcome.kind === '4xx' ? { state: 'completed', attempts: 1 } : { state: 'failed', attempts: ATTEMPTS };
      const right =
        outcome.state === FAILED[outcome.queue] &&
        expectedFailureText(outcome.kind, provider).test(outcome.error ?? '') &&
        !INTERNAL_TEXT.test(outcome.error ?? '') &&
        (outcome.status === undefined || outcome.status === STATUS[outcome.kind]) &&
        job?.state === expectedJob.state &&
        job.attempts === expectedJob.attempts;
      if (!right) unexpected.push({ ...outcome, job });
    }
    expect(unexpected).toEqual([]);
    await settledAndNothingStuck();
    expect(Object.values(await providerDuplicates()).every((count) => count === 0)).toBe(true);
  }, 240_000);
});
