import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { pollPost } from './support/posts';
import { startServerProcess, type ServerProcess } from './support/process';
import { startTestStack, type TestStack } from './support/stack';
import { PUBLISHES_AT_ONCE } from '../src/post/post.worker';

/**
 * Interactive before bulk (docs/jobs.md; issue 29): a campaign's posts and then one post a person asked for are
 * queued while no worker runs (the API alone); the worker that then starts takes the single post in its first fetch,
 * ahead of the campaign queued before it. The campaign is larger than a fetch, so the first cannot take it all.
 */

const CAMPAIGN_POSTS = PUBLISHES_AT_ONCE + 8;

let t: TestStack;
let fixture: OrganizationFixture;
let worker: ServerProcess | undefined;
let dataDir: string;

beforeAll(async () => {
  t = await startTestStack({ ROLE: 'api', POST_RATE_LIMIT_PER_MINUTE: '1000' });
  fixture = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: CAMPAIGN_POSTS + 1, connected: true });
  dataDir = mkdtempSync(path.join(tmpdir(), 'lg-priority-'));
});

afterAll(async () => {
  if (worker && worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGTERM');
  await worker?.exited();
  await t?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

it('takes a post asked for by a person before a campaign’s posts queued ahead of it', async () => {
  const accountId = fixture.accounts[0]!.account.id;
  const [single, ...others] = fixture.accounts[0]!.locations;
  const campaign = await graphql(
    t.url,
    'mutation ($a: ID, $input: CreatePostCampaignInput!) { createPostCampaign(accountId: $a, input: $input) { posts { id } } }',
    { token: fixture.token, variables: { a: accountId, input: { locationIds: others.map((location) => location.id), params: { summary: 'A campaign', languageCode: 'en' } } } },
  );
  expect(campaign.body.errors).toBeUndefined();
  const campaignIds = (campaign.body.data!.createPostCampaign.posts as { id: string }[]).map((found) => found.id);
  expect(campaignIds).toHaveLength(CAMPAIGN_POSTS);
  const asked = await http(t.url, 'POST', `/post?account_id=${accountId}`, {
    token: fixture.token,
    body: { location_id: single!.id, params: { topicType: 'STANDARD', summary: 'Asked for by a person', languageCode: 'en' } },
  });
  expect(asked.status).toBe(202);
  const askedId = asked.body.payload.id as string;

  worker = startServerProcess({
    DATABASE_URL: t.databaseUrl,
    DATA_DIR: dataDir,
    ROLE: 'worker',
    ALPHA_API_URL: `${t.url}/sandbox/alpha`,
    BETA_API_URL: `${t.url}/sandbox/beta`,
  });
  await worker.waitFor(/worker is up/, 60_000);
  for (const id of [askedId, ...campaignIds]) await pollPost(t.url, fixture.token, accountId, id, (found) => found.state === 'LIVE', 60_000);

  // A fetch takes at most a batch (PUBLISHES_AT_ONCE): the single post is in the first, whose jobs pg-boss starts
  // together.
  const started = await t.em().getConnection().execute<{ post_id: string; started_on: Date }[]>(
    `select data->>'postId' as post_id, started_on from pgboss.job where name = 'post-publish'`,
  );
  const first = Math.min(...started.map((job) => new Date(job.started_on).getTime()));
  expect(new Date(started.find((job) => job.post_id === askedId)!.started_on).getTime()).toBe(first);
  expect(started.filter((job) => new Date(job.started_on).getTime() === first).length).toBeLessThanOrEqual(PUBLISHES_AT_ONCE);
});
