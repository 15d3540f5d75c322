import { Client } from 'pg';
import { Account } from '../src/account/account.entity';
import { statementsApart } from '../src/db/statements';
import { postgresSlotStore } from '../src/limits/provider-slots';
import { ProviderBudget } from '../src/providers/shared/provider-budget';
import { TestClock } from './support/clock';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { minimalLocationBody } from './support/locations';
import { createPostOf, eventually, pollPost, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';

/**
 * Provider budgets (docs/jobs.md, "Provider budgets"; issue 29), scaled to seconds: the alpha sandbox's project quota
 * is 20 calls a second and the service's budget 18. Organization A runs campaigns of 200 posts, organization C one
 * of 20 queued after them, and organization B posts one at a time meanwhile. Every post ends LIVE, the provider
 * refuses at most 1% of the calls, B's posts go ahead of the campaigns, and C's campaign is taken in turn with A's
 * instead of after them. How fast (the drain rate, B's wait) is bench/campaign's to print, not a test's to assert.
 * Then location updates of one location against the provider's 10 edits a minute: past them, they wait, and all
 * succeed.
 */

const QUOTA_PER_SECOND = 20;
const CAMPAIGN_SIZE = 100;

let t: TestStack;
let a: OrganizationFixture;
let b: OrganizationFixture;
let c: OrganizationFixture;
const clock = new TestClock();

beforeAll(async () => {
  t = await startTestStack({ ALPHA_BUDGET: '18/s', POST_RATE_LIMIT_PER_MINUTE: '1000' }, { clock });
  a = await createOrganizationFixture(t.em(), { name: 'A', accounts: 1, locationsEach: 2 * CAMPAIGN_SIZE, connected: true });
  b = await createOrganizationFixture(t.em(), { name: 'B', accounts: 1, locationsEach: 1, connected: true });
  c = await createOrganizationFixture(t.em(), { name: 'C', accounts: 1, locationsEach: 20, connected: true });
  await sandboxOf(t.url).configure({ quotaPerSecond: QUOTA_PER_SECOND });
}, 60_000);

afterAll(async () => {
  await t?.close();
});

async function campaign(fixture: OrganizationFixture, locationIds: string[]): Promise<string[]> {
  const created = await graphql(
    t.url,
    'mutation ($a: ID, $input: CreatePostCampaignInput!) { createPostCampaign(accountId: $a, input: $input) { posts { id } } }',
    { token: fixture.token, variables: { a: fixture.accounts[0]!.account.id, input: { locationIds, params: { summary: 'A campaign', languageCode: 'en' } } } },
  );
  expect(created.body.errors).toBeUndefined();
  return (created.body.data!.createPostCampaign.posts as { id: string }[]).map((post) => post.id);
}

interface JobRow {
  post_id: string;
  created_on: Date;
  started_on: Date;
  retry_count: number;
  state: string;
}

it('drains campaigns within the quota, a single post ahead of them, two organizations’ campaigns in turn', async () => {
  const locationsOf = (fixture: OrganizationFixture) => fixture.accounts[0]!.locations.map((location) => location.id);
  const aLocations = locationsOf(a);
  const aPosts = [...(await campaign(a, aLocations.slice(0, CAMPAIGN_SIZE))), ...(await campaign(a, aLocations.slice(CAMPAIGN_SIZE)))];
  const cPosts = await campaign(c, locationsOf(c));

  // B posts one at a time while the campaigns drain: each waits for the one before to be LIVE.
  const bPosts: string[] = [];
  for (let n = 0; n < 5; n += 1) {
    const id = await createPostOf(t.url, b, `One of B's, number ${n + 1}`);
    bPosts.push(id);
    await pollPost(t.url, b.token, b.accounts[0]!.account.id, id, (post) => post.state === 'LIVE', 60_000);
  }
  for (const id of aPosts) await pollPost(t.url, a.token, a.accounts[0]!.account.id, id, (post) => post.state !== 'PENDING' && post.state !== 'SENDING', 120_000);
  for (const id of cPosts) await pollPost(t.url, c.token, c.accounts[0]!.account.id, id, (post) => post.state !== 'PENDING' && post.state !== 'SENDING', 120_000);

  const jobs = await t.em().getConnection().execute<JobRow[]>(
    `select data->>'postId' as post_id, created_on, started_on, retry_count, state::text from pgboss.job where name = 'post-publish'`,
  );
  const byPost = new Map(jobs.map((job) => [job.post_id, job]));
  const all = [...aPosts, ...cPosts, ...bPosts];
  // Every post LIVE, none retried, none dead-lettered: a 429 would have made its job wait, never fail.
  const [counted] = await t.em().getConnection().execute<{ live: string }[]>(`select count(*) as live from post where id in (?) and state = 'LIVE'`, [all]);
  expect(Number(counted!.live)).toBe(all.length);
  expect(all.map((id) => byPost.get(id)?.state)).toEqual(all.map(() => 'completed'));
  expect(all.filter((id) => byPost.get(id)!.retry_count > 0)).toEqual([]);

  // The provider refused at most 1% of the calls.
  const quota = (await sandboxOf(t.url).state()).quota;
  expect(quota.admitted).toBeGreaterThanOrEqual(all.length);
  expect(quota.refused).toBeLessThanOrEqual(Math.floor((quota.admitted + quota.refused) / 100));

  const startedAt = (id: string) => new Date(byPost.get(id)!.started_on).getTime();
  const createdAt = (id: string) => new Date(byPost.get(id)!.created_on).getTime();
  const campaignStartedBetween = (from: number, to: number) => [...aPosts, ...cPosts].filter((id) => startedAt(id) > from && startedAt(id) < to).length;
  // A post of B's is taken ahead of the campaigns queued before it: between its creation and its start, no more
  // campaign posts start than a fetch's batch (16) and the slots reserved ahead (a quarter second's) hold.
  for (const id of bPosts) expect(campaignStartedBetween(createdAt(id), startedAt(id))).toBeLessThanOrEqual(16 + 2 * 5);

  // C's campaign, queued after A's 200 posts, is taken in turn with them: by the time its last post starts, A has
  // started about as many more (20, give or take a batch), not the rest of its 200.
  const cQueuedAt = Math.min(...cPosts.map(createdAt));
  const cDoneAt = Math.max(...cPosts.map(startedAt));
  const aStartedIn = aPosts.filter((id) => startedAt(id) > cQueuedAt && startedAt(id) <= cDoneAt).length;
  const aLeftWhenCQueued = aPosts.filter((id) => startedAt(id) > cQueuedAt).length;
  expect(aLeftWhenCQueued).toBeGreaterThan(100);
  expect(aStartedIn).toBeLessThanOrEqual(cPosts.length + 16 + 5);
}, 180_000);

it('lets updates of one location past its 10 edits a minute wait for them: every update SUCCEEDED, none FAILED', async () => {
  const em = t.em();
  const known = await em.findOneOrFail(Account, b.accounts[0]!.account.id);
  known.alphaAccountId = 'alpha-budgets';
  await em.flush();
  const accountId = known.id;
  const answer = await http(t.url, 'POST', `/location?account_id=${accountId}`, {
    token: b.token,
    body: minimalLocationBody({ name: 'Edited Often Bakery', reference_id: 'edited-often', category_id: 'gcid:bakery' }),
  });
  expect(answer.status).toBe(200);
  const locationId = answer.body.payload.location_id as string;
  await eventually(async () => {
    const listed = await http(t.url, 'GET', `/location?account_id=${accountId}&per_page=250`, { token: b.token });
    return listed.body.data.find((location: { id: string; connected: boolean }) => location.id === locationId)?.connected ? true : undefined;
  }, 30_000, 'the location to be connected');
  await sandboxOf(t.url).configure({ quotaPerSecond: null, locationEditsPerMinute: 10 });

  const update = (n: number) =>
    http(t.url, 'PATCH', `/location/update?account_id=${accountId}&location_id=${locationId}`, { token: b.token, body: { description: `Edit number ${n}` } });
  const ended = async (updateId: string) =>
    eventually(async () => {
      const listed = await http(t.url, 'GET', `/location/updates?account_id=${accountId}&id=${updateId}`, { token: b.token });
      const found = listed.body.payload.updates[0];
      return found.status === 'SUCCEEDED' || found.status === 'FAILED' ? found : undefined;
    }, 60_000, `update ${updateId} to end`);
  const waitedBefore = await waitedUpdates();
  // A location takes one update at a time (409 otherwise): each is sent once the one before has ended. Ten fill the
  // location's minute; the sandbox's minute is then brought near its end, and three more follow.
  const firstEditAt = clock.now().getTime();
  const updates = [];
  for (let n = 1; n <= 13; n += 1) {
    if (n === 11) clock.skip(58_000 - (clock.now().getTime() - firstEditAt));
    const sent = await update(n);
    expect(sent.status).toBe(200);
    updates.push(await ended(sent.body.payload.id as string));
  }
  for (const ended of updates) expect(ended).toMatchObject({ status: 'SUCCEEDED', error: null });
  // They did meet the edit quota: their jobs waited instead of failing.
  expect((await waitedUpdates()) - waitedBefore).toBeGreaterThan(0);
}, 120_000);

/** Location update jobs put back to wait for their provider, as the metrics count them. */
async function waitedUpdates(): Promise<number> {
  const text = await (await fetch(`${t.url}/metrics`)).text();
  return Number(/^lg_job_attempts_total\{queue="location-update",outcome="waited"\} (\d+)$/m.exec(text)?.[1] ?? 0);
}

/** Keeps the event loop busy for `ms`, as a process busy with other work is. */
function busy(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // Spinning on purpose: no timer may fire meanwhile.
  }
}

it('gives up a slot its busy process cannot use in time: no call starts later than the budget’s lateness after its slot', async () => {
  // A budget of its own on the deployment's store (beta: no call of this file's work uses its slots). 20 a second: a
  // slot every 50 ms, a call at most 15 ms late (1.5% of the window).
  const budget = new ProviderBudget('beta', { count: 20, windowMs: 1000 }, postgresSlotStore(statementsApart(t.em())), { warn: () => undefined, info: () => undefined });
  expect(budget.lateLimitMs).toBe(15);
  const startedAt: number[] = [];
  const calls = Array.from({ length: 8 }, (_, index) =>
    budget.take().then(() => {
      startedAt.push(Date.now());
      // The first call's process is then busy until 20 ms or more past the second call's slot (50 ms after the
      // first's): that slot is given up, and its call waits for a new one.
      if (index === 0) setTimeout(() => busy(45), 25);
    }),
  );
  await Promise.all(calls);
  expect(budget.reading()).toMatchObject({ granted: 8, waiting: 0 });
  expect(budget.reading().late).toBeGreaterThanOrEqual(1);
  // What the provider counts: any n + 1 calls span at least n slots, less the lateness one of them may have had (and
  // a millisecond or two of timers). A lower bound only: a busier machine spaces them more, never less.
  for (let i = 0; i < startedAt.length; i += 1) {
    for (let j = i + 1; j < startedAt.length; j += 1) expect(startedAt[j]! - startedAt[i]!).toBeGreaterThanOrEqual((j - i) * 50 - 15 - 2);
  }
});

it('dates a slot on the store’s clock: an answer that waited on the store does not bring its call forward', async () => {
  const store = postgresSlotStore(statementsApart(t.em()));
  const budget = new ProviderBudget('beta', { count: 20, windowMs: 1000 }, store, { warn: () => undefined, info: () => undefined });
  // A quick first exchange: the budget learns how the store's clock stands to its own.
  await budget.take();
  // Another process has reserved the next three seconds: the next free slot is after its sixty.
  const other = await store.reserve('beta', 60, 50);
  const freeAtMs = other.firstAtMs + 60 * 50;
  // The next reservation then waits on a row lock for about a second: its answer comes back late, and dated from the
  // middle of its wait its slot would be about 400 ms early (beside the other process's calls).
  const holder = new Client({ connectionString: t.databaseUrl, application_name: 'provider-budgets-test' });
  await holder.connect();
  try {
    await holder.query('begin');
    await holder.query(`select * from provider_budget where provider = 'beta' for update`);
    const call = budget.take().then(() => Date.now());
    // The lock is held until PostgreSQL shows the reservation has waited on it for 800 ms.
    await eventually(async () => {
      const { rows } = await holder.query<{ waited_ms: number }>(
        `select extract(epoch from clock_timestamp() - query_start) * 1000 as waited_ms from pg_stat_activity
          where wait_event_type = 'Lock' and query like '%lg_reserve_provider_slots%'`,
      );
      return rows.length > 0 && Number(rows[0]!.waited_ms) >= 800 ? true : undefined;
    }, 10_000, 'the reservation to wait on the lock for 800 ms');
    await holder.query('commit');
    // Both clocks are this machine's. The quickest exchange bounds the offset to half its time: 100 ms is room for
    // a loaded machine's, far from the 400 ms a late answer would put it off.
    expect(await call).toBeGreaterThanOrEqual(freeAtMs - 100);
  } finally {
    await holder.end();
  }
}, 30_000);
