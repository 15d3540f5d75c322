import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql } from './support/http';
import { createPostOf, eventually, pollPost, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';

/**
 * A person's call before bulk calls within one process (docs/jobs.md, "Provider budgets"): the worker's post jobs
 * of a campaign all wait for slots of a slow budget (4 a second, one slot held ahead), and a single post taken then
 * gets the next slot, ahead of the campaign's calls that were waiting before it. pg-boss's fetch order alone
 * (test/jobs.priority.processes.test.ts) cannot do this: the campaign's jobs were taken first and wait in the
 * process, so it is the budget's queue, by the job's priority, that puts the single post first.
 */

let t: TestStack;
let a: OrganizationFixture;
let b: OrganizationFixture;

beforeAll(async () => {
  t = await startTestStack({ ALPHA_BUDGET: '4/s', POST_RATE_LIMIT_PER_MINUTE: '1000' });
  a = await createOrganizationFixture(t.em(), { name: 'A', accounts: 1, locationsEach: 40, connected: true });
  b = await createOrganizationFixture(t.em(), { name: 'B', accounts: 1, locationsEach: 1, connected: true });
}, 60_000);

afterAll(async () => {
  await t?.close();
});

interface JobRow {
  post_id: string;
  started_on: Date | null;
  provider_name: string | null;
}

it('gives a single post’s call the next slot, ahead of the campaign calls already waiting in the process', async () => {
  const accountId = a.accounts[0]!.account.id;
  const created = await graphql(
    t.url,
    'mutation ($a: ID, $input: CreatePostCampaignInput!) { createPostCampaign(accountId: $a, input: $input) { posts { id } } }',
    { token: a.token, variables: { a: accountId, input: { locationIds: a.accounts[0]!.locations.map((location) => location.id), params: { summary: 'A campaign', languageCode: 'en' } } } },
  );
  expect(created.body.errors).toBeUndefined();
  const campaign = (created.body.data!.createPostCampaign.posts as { id: string }[]).map((post) => post.id);
  const jobsOf = () =>
    t.em().getConnection().execute<JobRow[]>(
      `select j.data->>'postId' as post_id, j.started_on, p.provider_name
         from pgboss.job j join post p on p.id::text = j.data->>'postId' where j.name = 'post-publish'`,
    );

  // The campaign's jobs fill the worker, most of them waiting for a slot: a dozen taken, a few calls made.
  await eventually(async () => {
    const jobs = await jobsOf();
    const started = jobs.filter((job) => job.started_on).length;
    const called = jobs.filter((job) => job.provider_name).length;
    return started - called >= 10 ? true : undefined;
  }, 30_000, 'the campaign’s jobs to wait for slots');

  const single = await createPostOf(t.url, b, 'A person’s post');
  await pollPost(t.url, b.token, b.accounts[0]!.account.id, single, (post) => post.state === 'LIVE', 60_000);
  for (const id of campaign) await pollPost(t.url, a.token, accountId, id, (post) => post.state === 'LIVE', 60_000);

  const jobs = await jobsOf();
  const singleJob = jobs.find((job) => job.post_id === single)!;
  const singleStarted = new Date(singleJob.started_on!).getTime();
  // When the provider took each call (its clock and the database's are this machine's).
  const calledAt = new Map((await sandboxOf(t.url).state()).posts.map((post) => [post.name, Date.parse(post.createTime!)]));
  const singleCalled = calledAt.get(singleJob.provider_name!)!;
  const campaignJobs = jobs.filter((job) => job.post_id !== single);
  // Between the single post's job starting and its call, at most the slot held ahead (one, at 4 a second) and one
  // whose reservation was on its way went to the campaign ...
  const campaignCallsBetween = campaignJobs.filter((job) => {
    const at = calledAt.get(job.provider_name!)!;
    return at > singleStarted && at < singleCalled;
  });
  expect(campaignCallsBetween.length).toBeLessThanOrEqual(2);
  // ... while campaign calls waiting before it went after it. Taken in arrival order, every one of those would have
  // gone first, and the calls between would be all of them.
  const overtaken = campaignJobs.filter((job) => new Date(job.started_on!).getTime() < singleStarted && calledAt.get(job.provider_name!)! > singleCalled);
  expect(overtaken.length).toBeGreaterThanOrEqual(3);
}, 120_000);
