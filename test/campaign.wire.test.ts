import type { Client } from 'pg';
import type { WireCounter, WireCounts } from '../dev/pg-wire-counter';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql } from './support/http';
import type { TestStack } from './support/stack';
import { startWireStack, type WireStack } from './support/wire-stack';

/*
 * What a post campaign costs on the wire, from createPostCampaign to its answer, every connection counted (the ORM's,
 * pg-boss's, the event bus's) by a protocol proxy (dev/pg-wire-counter.ts); and that it writes all of it or nothing.
 * The API alone runs (ROLE=api): no worker takes the jobs, so the window holds the request's statements only.
 * docs/write-path.md, "A campaign".
 */

let wire: WireStack;
let counter: WireCounter;
let stack: TestStack;
let org: OrganizationFixture;
let other: OrganizationFixture;
let direct: Client;

/** The monthly quota: room for the campaigns below but the last (20 + 20 + 100, then 20 more). */
const QUOTA = 150;

beforeAll(async () => {
  wire = await startWireStack({ ROLE: 'api', POST_RATE_LIMIT_PER_MINUTE: '1000', POST_QUOTA_PER_MONTH: String(QUOTA) });
  ({ counter, stack, direct } = wire);
  org = await createOrganizationFixture(stack.em(), { accounts: 1, locationsEach: 101, connected: true });
  other = await createOrganizationFixture(stack.em(), { name: 'Other Org', accounts: 1, locationsEach: 1, connected: true });
});
afterAll(async () => {
  await wire?.close();
});

const accountId = () => org.accounts[0]!.account.id;
const locations = () => org.accounts[0]!.locations.map((location) => location.id);

function campaign(locationIds: string[], summary: string) {
  return graphql(
    stack.url,
    'mutation ($a: ID, $input: CreatePostCampaignInput!) { createPostCampaign(accountId: $a, input: $input) { campaignId posts { id state campaignId locationId } } }',
    { token: org.token, variables: { a: accountId(), input: { locationIds, params: { summary } } } },
  );
}

/** The window's counts, printed with the statements' shapes. */
function report(what: string): WireCounts {
  const counts = counter.counts();
  console.log(
    `${what}: ${counts.statements} statements, ${counts.roundTrips} round trips, ${counts.notifies} NOTIFYs, ${counts.begins} transactions\n` +
      Object.entries(counts.shapes)
        .sort((a, b) => b[1] - a[1])
        .map(([shape, n]) => `${n}  ${shape.slice(0, 160)}`)
        .join('\n'),
  );
  return counts;
}

/** What a campaign writes, counted in every table it writes to. */
interface Written {
  posts: number;
  events: number;
  jobs: number;
  works: number;
  quota: number;
  window: number;
  turns: number;
}

async function written(): Promise<Written> {
  const count = async (sql: string) => Number((await direct.query(sql)).rows[0].count);
  return {
    posts: await count('select count(*) from post'),
    events: await count(`select count(*) from activity_event where type = 'post.state_changed'`),
    jobs: await count(`select count(*) from pgboss.job where name = 'post-publish'`),
    works: await count(`select count(*) from async_work where kind = 'POST_PUBLISH'`),
    quota: await count('select coalesce(sum(used), 0) as count from usage_counter'),
    window: await count('select count(*) from rate_limit_event'),
    turns: await count(`select coalesce(sum(last_turn), 0) as count from bulk_turn`),
  };
}

it('creates a campaign of 20 posts in few statements, counted on the wire, with all that goes with them', async () => {
  const warmUp = await campaign(locations().slice(0, 20), 'warm-up');
  expect(warmUp.body.errors).toBeUndefined();
  const before = await written();
  counter.reset();
  const answer = await campaign(locations().slice(20, 40), 'Twenty at once');
  const counts = report('createPostCampaign of 20 posts, mutation to answer');
  expect(answer.body.errors).toBeUndefined();
  // docs/write-path.md: the locations in one read; the posts and all that goes with them in one statement.
  expect(counts.statements).toBeLessThanOrEqual(5);
  expect(counts.begins).toBe(0);

  const { campaignId, posts } = answer.body.data!.createPostCampaign as { campaignId: string; posts: { id: string; state: string; campaignId: string; locationId: string }[] };
  expect(posts.map((post) => post.locationId)).toEqual(locations().slice(20, 40));
  expect(posts.every((post) => post.state === 'SENDING' && post.campaignId === campaignId)).toBe(true);
  const ids = posts.map((post) => post.id);
  const after = await written();
  expect(after).toEqual({ ...before, posts: before.posts + 20, events: before.events + 20, jobs: before.jobs + 20, works: before.works + 20, quota: before.quota + 20, window: before.window + 1, turns: after.turns });

  // Each post has its event, its job (its work's id in its data) and its work, QUEUED.
  const { rows: events } = await direct.query(`select record_id, record->>'state' as state from activity_event where record_id = any($1)`, [ids]);
  expect(new Set(events.map((event: { record_id: string }) => event.record_id))).toEqual(new Set(ids));
  expect(events.every((event: { state: string }) => event.state === 'SENDING')).toBe(true);
  const { rows: jobs } = await direct.query(
    `select j.data->>'postId' as post_id, j.priority, w.status from pgboss.job j join async_work w on w.id = (j.data->>'workId')::uuid
      where j.name = 'post-publish' and j.data->>'postId' = any($1)`,
    [ids],
  );
  expect(jobs.map((job: { post_id: string }) => job.post_id).sort()).toEqual([...ids].sort());
  expect(jobs.every((job: { status: string }) => job.status === 'QUEUED')).toBe(true);
  // The bulk turns (docs/jobs.md, "Interactive before bulk"): the warm-up's 20, then these, one turn each, in order.
  const priority = new Map(jobs.map((job: { post_id: string; priority: number }) => [job.post_id, job.priority]));
  expect(ids.map((id) => priority.get(id))).toEqual(ids.map((_id, index) => -(21 + index)));
  expect(after.turns).toBe(40);
}, 60000);

it('creates a campaign of 100 posts in as many statements as one of 20', async () => {
  counter.reset();
  const answer = await campaign(locations().slice(0, 100), 'A hundred at once');
  const counts = report('createPostCampaign of 100 posts, mutation to answer');
  expect(answer.body.errors).toBeUndefined();
  expect(answer.body.data!.createPostCampaign.posts).toHaveLength(100);
  expect(counts.statements).toBeLessThanOrEqual(5);
  expect(counts.begins).toBe(0);
}, 60000);

it('writes nothing of a campaign with one location of another organization, one not connected, or over the quota', async () => {
  const before = await written();
  const foreign = await campaign([...locations().slice(0, 19), other.accounts[0]!.locations[0]!.id], 'One foreign');
  expect(foreign.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');
  expect(foreign.body.errors?.[0]?.message).toBe('Location not found');

  await direct.query('update location set connected = false where id = $1', [locations()[100]]);
  const unconnected = await campaign([...locations().slice(0, 19), locations()[100]!], 'One not connected');
  expect(unconnected.body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');

  // 140 of 150 used: 20 more are refused by the statement itself, its count taken back with it.
  const over = await campaign(locations().slice(0, 20), 'Over the quota');
  expect(over.body.errors?.[0]?.extensions?.code).toBe('QUOTA_REACHED');
  expect(await written()).toEqual(before);
}, 60000);
