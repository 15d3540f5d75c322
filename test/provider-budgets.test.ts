import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { pollPost, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';

/**
 * Provider budgets (docs/jobs.md, "Provider budgets"; issue 29), scaled to seconds: the alpha sandbox's project quota
 * is 20 calls a second and the service's budget 18. Organization A runs campaigns of 200 posts, organization C one
 * of 20 queued after them, and organization B posts one at a time meanwhile. Every post ends LIVE, the provider
 * refuses at most 1% of the calls, B's posts go ahead of the campaigns, and C's campaign is taken in turn with A's
 * instead of after them. How fast (the drain rate, B's wait) is bench/campaign's to print, not a test's to assert.
 */

const QUOTA_PER_SECOND = 20;
const CAMPAIGN_SIZE = 100;

let t: TestStack;
let a: OrganizationFixture;
let b: OrganizationFixture;
let c: OrganizationFixture;

beforeAll(async () => {
  t = await startTestStack({ ALPHA_BUDGET: '18/s', POST_RATE_LIMIT_PER_MINUTE: '1000' });
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

async function singlePost(fixture: OrganizationFixture, summary: string): Promise<string> {
  const account = fixture.accounts[0]!;
  const created = await http(t.url, 'POST', `/post?account_id=${account.account.id}`, {
    token: fixture.token,
    body: { location_id: account.locations[0]!.id, params: { topicType: 'STANDARD', summary, languageCode: 'en' } },
  });
  expect(created.status).toBe(202);
  return created.body.payload.id as string;
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
    const id = await singlePost(b, `One of B's, number ${n + 1}`);
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
  expect(Number(counted?.live)).toBe(all.length);
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
