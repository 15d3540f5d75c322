import { expectSucceeded, waitForWork, workAbout } from './support/async-work';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { eventually, pollPost, sandboxOf } from './support/posts';
import { TestClock } from './support/clock';
import { startTestStack, type TestStack } from './support/stack';
import { minimalLocationBody } from './support/locations';

let t: TestStack;
const clock = new TestClock();
let org: OrganizationFixture;
let other: OrganizationFixture;
let token: string;
let accountId: string;
/** Has a website (even index). */
let locationId: string;
/** Has no website. */
let bareLocationId: string;

const sandbox = () => sandboxOf(t.url);
/** Posts the provider holds for one of ours (its id is the provider request id). Earlier tests' jobs may still land. */
const atProvider = async (postId: string) => (await sandbox().state()).posts.filter((p) => p.requestId === postId);
const createPost = (body: unknown, headers: Record<string, string> = {}, as = token) =>
  http(t.url, 'POST', `/post?account_id=${accountId}`, { token: as, body, headers });
const standard = (summary = 'Fresh coffee every morning') => ({ summary, topicType: 'STANDARD', languageCode: 'en' });

beforeAll(async () => {
  // Quick retries, so the retry and dead-letter paths finish within a test.
  t = await startTestStack({ JOB_RETRY_DELAY_SECONDS: '1', JOB_RETRY_LIMIT: '2', POST_RATE_LIMIT_PER_MINUTE: '1000' }, { clock });
  org = await createOrganizationFixture(t.em(), { accounts: 2, locationsEach: 3, connected: true });
  other = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true });
  token = org.token;
  accountId = org.accounts[0]!.account.id;
  locationId = org.accounts[0]!.locations[0]!.id;
  bareLocationId = org.accounts[0]!.locations[1]!.id;
});
beforeEach(() => sandbox().reset());
afterEach(() => clock.release());
afterAll(() => t.close());

/** The states pg-boss holds for the jobs of one post in a queue. */
async function jobStates(queue: string, postId: string): Promise<string[]> {
  const rows = await t.em().getConnection().execute<{ state: string }[]>(
    `select state from pgboss.job where name = ? and data->>'postId' = ? order by created_on`,
    [queue, postId],
  );
  return rows.map((row) => row.state);
}

describe('POST /post and the post lifecycle', () => {
  it('answers 202 with the post in SENDING, then the post goes LIVE at the provider', async () => {
    const before = Date.now();
    const res = await createPost({ location_id: locationId, params: standard() });
    expect(res.status).toBe(202);
    const post = res.body.payload;
    expect(res.body.success).toBe(true);
    expect(post).toEqual({
      id: expect.any(String),
      post_id: null,
      location_id: locationId,
      account: accountId,
      state: 'SENDING',
      source: 'external_api',
      create_time: expect.any(Number),
      published_time: null,
      update_time: null,
      scheduled_time: null,
      search_url: null,
      last_error: null,
      params: standard(),
    });
    expect(post.create_time).toBeGreaterThanOrEqual(before - 1000);

    const live = await pollPost(t.url, token, accountId, post.id);
    expect(live.state).toBe('LIVE');
    expect(live.post_id).toMatch(/^accounts\/alpha-1\/locations\/1\/localPosts\/\w+$/);
    expect(live.search_url).toEqual(expect.stringContaining('http'));
    expect(live.published_time).toBeGreaterThanOrEqual(post.create_time);
    expect(live.update_time).toBeGreaterThanOrEqual(post.create_time);
    const provider = await atProvider(post.id);
    expect(provider).toHaveLength(1);
    expect(provider[0]).toMatchObject({ name: live.post_id, summary: 'Fresh coffee every morning', state: 'LIVE' });
  });

  it('fills placeholders and the website URL before sending', async () => {
    const res = await createPost({
      location_id: locationId,
      params: { summary: 'Hello {city}, {offer} today', callToAction: { actionType: 'BOOK' } },
      use_location_website_url: true,
      parameterMask: 'city, offer',
      parameters: { city: 'Springfield', offer: '2 for 1' },
    });
    expect(res.status).toBe(202);
    expect(res.body.payload.params).toEqual({
      summary: 'Hello Springfield, 2 for 1 today',
      topicType: 'STANDARD',
      callToAction: { actionType: 'BOOK', url: 'https://example.com/1/1' },
    });
    const live = await pollPost(t.url, token, accountId, res.body.payload.id);
    expect(live.state).toBe('LIVE');
  });

  it('takes the location as it is now, though an earlier post read it before it changed', async () => {
    // A location the provider knows (created through POST /location, connected by its job), so a change reaches it.
    const published = await createOrganizationFixture(t.em(), { name: 'Published', accounts: 1, alphaAccounts: true });
    const publishedAccount = published.accounts[0]!.account.id;
    const created = await http(t.url, 'POST', `/location?account_id=${publishedAccount}`, {
      token: published.token,
      body: minimalLocationBody({ name: 'Changing Bakery', website_uri: 'https://before.example/' }),
    });
    expect(created.status).toBe(200);
    const changing = created.body.payload.location_id as string;
    await eventually(async () => {
      const listed = await http(t.url, 'GET', `/location?account_id=${publishedAccount}&include_fields=connected`, { token: published.token });
      return listed.body.data.find((location: { id: string; connected: boolean }) => location.id === changing)?.connected ? true : undefined;
    }, 30000, 'the location to be connected');
    const post = () =>
      http(t.url, 'POST', `/post?account_id=${publishedAccount}`, {
        token: published.token,
        body: { location_id: changing, params: { summary: 'Book now', callToAction: { actionType: 'BOOK' } }, use_location_website_url: true },
      });
    const before = await post();
    expect(before.status).toBe(202);
    expect(before.body.payload.params.callToAction.url).toBe('https://before.example/');
    const update = await http(t.url, 'PATCH', `/location/update?account_id=${publishedAccount}&location_id=${changing}`, {
      token: published.token,
      body: { website_uri: 'https://after.example/' },
    });
    expect(update.status).toBe(200);
    await eventually(async () => {
      const job = await http(t.url, 'GET', `/location/updates?account_id=${publishedAccount}&id=${update.body.payload.id}`, { token: published.token });
      return job.body.payload.updates[0]?.status === 'SUCCEEDED' ? true : undefined;
    }, 30000, 'the website change to be applied');
    const after = await post();
    expect(after.status).toBe(202);
    expect(after.body.payload.params.callToAction.url).toBe('https://after.example/');
  });

  it('goes PROCESSING while the provider reviews, then LIVE', async () => {
    await sandbox().configure({ processingMs: 300 });
    const res = await createPost({ location_id: locationId, params: standard() });
    const processing = await pollPost(t.url, token, accountId, res.body.payload.id, (p) => p.state !== 'SENDING');
    expect(processing.state).toBe('PROCESSING');
    expect(processing.post_id).not.toBeNull();
    const live = await pollPost(t.url, token, accountId, res.body.payload.id, (p) => p.state === 'LIVE');
    expect(live.published_time).not.toBeNull();
  });

  it('ends REJECTED when the provider rejects the content, after review or at once', async () => {
    const atOnce = await createPost({ location_id: locationId, params: standard('Cheap [[reject]] pills') });
    expect((await pollPost(t.url, token, accountId, atOnce.body.payload.id)).state).toBe('REJECTED');

    await sandbox().configure({ processingMs: 200 });
    const reviewed = await createPost({ location_id: locationId, params: standard('More [[reject]] pills') });
    const final = await pollPost(t.url, token, accountId, reviewed.body.payload.id, (p) => p.state === 'REJECTED');
    expect(final.published_time).toBeNull();
  });

  it('is SCHEDULED with a future scheduledTime, and LIVE once the time has come', async () => {
    // Time is held, so however long the request takes, the scheduled time is still ahead when it is checked.
    clock.hold();
    const at = new Date(clock.now().getTime() + 3000);
    const res = await createPost({ location_id: locationId, params: { ...standard(), scheduledTime: at.toISOString() } });
    expect(res.status).toBe(202);
    expect(res.body.payload.scheduled_time).toBe(at.getTime());
    const scheduled = await pollPost(t.url, token, accountId, res.body.payload.id);
    expect(scheduled.state).toBe('SCHEDULED');
    expect(scheduled.published_time).toBeNull();
    // The time comes (for us and the provider alike): the check due at the scheduled time finds it live.
    clock.advance(4000);
    const live = await pollPost(t.url, token, accountId, res.body.payload.id, (p) => p.state === 'LIVE', 30000);
    expect(live.published_time).toBeGreaterThanOrEqual(at.getTime());
  });

  it('retries retryable provider failures with backoff and records the latest in last_error', async () => {
    await sandbox().fail({ count: 2, status: 503, method: 'POST' });
    const res = await createPost({ location_id: locationId, params: standard() });
    const live = await pollPost(t.url, token, accountId, res.body.payload.id, (p) => p.state === 'LIVE');
    expect(live.last_error).toMatchObject({ status: 503, reason: 'UNAVAILABLE', at: expect.any(Number) });
    expect(await atProvider(live.id)).toHaveLength(1);
  });

  it('ends in ERROR with last_error when retries are exhausted, and when the provider refuses the post', async () => {
    // A 503 counts against the retries (a 429 makes the job wait instead: test/jobs.waits.test.ts).
    await sandbox().fail({ count: 10, status: 503, method: 'POST' });
    const exhausted = await createPost({ location_id: locationId, params: standard() });
    const failed = await pollPost(t.url, token, accountId, exhausted.body.payload.id, (p) => p.state === 'ERROR', 40000);
    expect(failed.last_error).toMatchObject({ status: 503, reason: 'UNAVAILABLE' });
    // The post is marked ERROR just before its job is failed into its dead-letter queue, whose settling leaves the
    // post as its last attempt recorded it.
    await eventually(async () => ((await jobStates('post-publish-dead', failed.id)).includes('completed') ? true : undefined), 10000, 'the dead letter');
    expect((await pollPost(t.url, token, accountId, failed.id)).last_error).toMatchObject({ status: 503, reason: 'UNAVAILABLE' });

    await sandbox().reset();
    await sandbox().fail({ count: 1, status: 400, method: 'POST' });
    const refused = await createPost({ location_id: locationId, params: standard() });
    const error = await pollPost(t.url, token, accountId, refused.body.payload.id);
    expect(error.state).toBe('ERROR');
    expect(error.last_error).toMatchObject({ status: 400, reason: 'INVALID_ARGUMENT', details: expect.any(Array) });
    expect(await atProvider(error.id)).toHaveLength(0);
  }, 60000);
});

describe('DELETE /post/{id}', () => {
  it('deletes at once a post that never reached the provider, and it is never published later', async () => {
    await sandbox().fail({ count: 1, status: 503, method: 'POST' });
    const res = await createPost({ location_id: locationId, params: standard() });
    const id = res.body.payload.id;
    const deleted = await http(t.url, 'DELETE', `/post/${id}?account_id=${accountId}`, { token });
    expect(deleted.status).toBe(202);
    expect(deleted.body).toEqual({ success: true, payload: { id, post_id: null, state: 'DELETED', message: 'Post deleted' } });
    // The failed publish is retried: once that retry has run (its job completed), the post must still be deleted.
    await eventually(async () => ((await jobStates('post-publish', id)).includes('completed') ? true : undefined), 30000, 'the retried publish');
    expect((await pollPost(t.url, token, accountId, id)).state).toBe('DELETED');
    expect(await atProvider(id)).toHaveLength(0);
    // Deleted in the request: no deletion work.
    expect(await workAbout(t.url, token, { kind: 'POST_DELETE', subjectId: id })).toEqual([]);
  });

  it('queues the deletion of a published post (SENDING), then DELETED; deleting again changes nothing', async () => {
    const res = await createPost({ location_id: locationId, params: standard() });
    const live = await pollPost(t.url, token, accountId, res.body.payload.id);
    const queued = await http(t.url, 'DELETE', `/post/${live.id}?account_id=${accountId}`, { token });
    expect(queued.status).toBe(202);
    expect(queued.body.payload).toEqual({ id: live.id, post_id: live.post_id, state: 'SENDING', message: 'Post deletion queued' });
    const gone = await pollPost(t.url, token, accountId, live.id, (p) => p.state === 'DELETED');
    expect(gone.post_id).toBe(live.post_id);
    expect(await atProvider(live.id)).toHaveLength(0);

    const again = await http(t.url, 'DELETE', `/post/${live.id}?account_id=${accountId}`, { token });
    expect(again.status).toBe(202);
    expect(again.body.payload).toEqual({ id: live.id, post_id: live.post_id, state: 'DELETED', message: 'Post already deleted' });
    // The deletion at the provider is listed as one unit of work about the post, finished; deleting again queued none.
    const work = await waitForWork(t.url, token, 'POST_DELETE', live.id);
    expect(work).toHaveLength(1);
    expect(work[0]).toMatchObject({ kind: 'POST_DELETE', subjectId: live.id, accountId, organizationId: org.organization.id, retryable: false });
    expectSucceeded(work[0]!);

    const listed = await http(t.url, 'GET', `/post?account_id=${accountId}`, { token });
    expect(listed.body.payload.posts.map((p: { id: string }) => p.id)).not.toContain(live.id);
    const deletedOnly = await http(t.url, 'GET', `/post?account_id=${accountId}&state=DELETED`, { token });
    expect(deletedOnly.body.payload.posts.map((p: { id: string }) => p.id)).toContain(live.id);
  });

  it('wakes the workers of every process when the enqueuing transaction commits: publish on create, delete on a queued deletion', async () => {
    const woken: string[] = [];
    const unsubscribe = t.stack.runtime.events.subscribe('jobs.enqueued', ({ queue }) => {
      woken.push(queue);
    });
    try {
      const res = await createPost({ location_id: locationId, params: standard() });
      await eventually(async () => (woken.includes('post-publish') ? true : undefined), 10000, 'the publish wake-up');
      const live = await pollPost(t.url, token, accountId, res.body.payload.id);
      await http(t.url, 'DELETE', `/post/${live.id}?account_id=${accountId}`, { token });
      await eventually(async () => (woken.includes('post-delete') ? true : undefined), 10000, 'the delete wake-up');
      await pollPost(t.url, token, accountId, live.id, (p) => p.state === 'DELETED');
    } finally {
      unsubscribe();
    }
  });

  it('answers 404 for a post of another account or organization', async () => {
    const theirs = await http(t.url, 'POST', `/post?account_id=${other.accounts[0]!.account.id}`, {
      token: other.token,
      body: { location_id: other.accounts[0]!.locations[0]!.id, params: standard() },
    });
    for (const [method, path] of [['GET', `/post/${theirs.body.payload.id}?account_id=${accountId}`], ['DELETE', `/post/${theirs.body.payload.id}?account_id=${accountId}`]]) {
      const res = await http(t.url, method!, path!, { token });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: 404, message: 'Post not found' });
    }
  });
});

describe('Idempotency-Key', () => {
  it('replays the original post for the same key and body, and refuses another body with 422', async () => {
    const body = { location_id: locationId, params: standard('Once only') };
    const first = await createPost(body, { 'Idempotency-Key': 'order-1' });
    const second = await createPost(body, { 'Idempotency-Key': 'order-1' });
    expect(second.status).toBe(202);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    expect(second.body.payload.id).toBe(first.body.payload.id);

    const changed = await createPost({ ...body, params: standard('Twice?') }, { 'Idempotency-Key': 'order-1' });
    expect(changed.status).toBe(422);
    expect(changed.body).toEqual({ error: 422, message: 'This Idempotency-Key was used with a different request' });

    // Keys are scoped to the account: another account may use the same key.
    const elsewhere = await http(t.url, 'POST', `/post?account_id=${org.accounts[1]!.account.id}`, {
      token,
      body: { location_id: org.accounts[1]!.locations[0]!.id, params: standard('Once only') },
      headers: { 'Idempotency-Key': 'order-1' },
    });
    expect(elsewhere.status).toBe(202);
    expect(elsewhere.body.payload.id).not.toBe(first.body.payload.id);
  });

  it('makes a new post for a key past its 24 hours, and replays answer that one', async () => {
    const body = { location_id: locationId, params: standard('Once a day') };
    clock.hold();
    const first = await createPost(body, { 'Idempotency-Key': 'daily-1' });
    expect(first.status).toBe(202);
    clock.advance(24 * 60 * 60 * 1000 - 1000);
    const within = await createPost(body, { 'Idempotency-Key': 'daily-1' });
    expect(within.headers.get('idempotent-replayed')).toBe('true');
    expect(within.body.payload.id).toBe(first.body.payload.id);

    clock.advance(1000);
    const after = await createPost(body, { 'Idempotency-Key': 'daily-1' });
    expect(after.status).toBe(202);
    expect(after.headers.get('idempotent-replayed')).toBeNull();
    expect(after.body.payload.id).not.toBe(first.body.payload.id);
    // The key now names the new post, for the next 24 hours; another body is refused again.
    const replay = await createPost(body, { 'Idempotency-Key': 'daily-1' });
    expect(replay.headers.get('idempotent-replayed')).toBe('true');
    expect(replay.body.payload.id).toBe(after.body.payload.id);
    expect((await createPost({ ...body, params: standard('Another') }, { 'Idempotency-Key': 'daily-1' })).status).toBe(422);
  });

  it('makes exactly one post of 20 concurrent requests with one key', async () => {
    const body = { location_id: locationId, params: standard('Concurrent') };
    const answers = await Promise.all(Array.from({ length: 20 }, () => createPost(body, { 'Idempotency-Key': 'burst-1' })));
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(202));
    const ids = new Set(answers.map((a) => a.body.payload.id));
    expect(ids.size).toBe(1);
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === 'true')).toHaveLength(19);
    await pollPost(t.url, token, accountId, [...ids][0]);
    const listed = await http(t.url, 'GET', `/post?account_id=${accountId}&q=Concurrent`, { token });
    expect(listed.body.payload.found).toBe(1);
    const provider = await atProvider([...ids][0]);
    expect(provider).toHaveLength(1);
  });
});

describe('validation', () => {
  it.each([
    ['use_location_website_url on a location without a website', { location_id: '<bare>', params: standard(), use_location_website_url: true }, 'use_location_website_url is true but the location has no website'],
    ['a scheduledTime in the past', { location_id: '<loc>', params: { ...standard(), scheduledTime: '2020-01-01T00:00:00Z' } }, 'params.scheduledTime must be in the future'],
    ['a scheduledTime that is not RFC 3339', { location_id: '<loc>', params: { ...standard(), scheduledTime: 'tomorrow' } }, 'params.scheduledTime must be an RFC 3339 timestamp of a time that exists'],
    ['a scheduledTime of 30 February', { location_id: '<loc>', params: { ...standard(), scheduledTime: '2031-02-30T10:00:00Z' } }, 'params.scheduledTime must be an RFC 3339 timestamp of a time that exists'],
    ['a scheduledTime at 24:30', { location_id: '<loc>', params: { ...standard(), scheduledTime: '2031-02-03T24:30:00Z' } }, 'params.scheduledTime must be an RFC 3339 timestamp of a time that exists'],
    [
      'an event that ends on 31 February',
      { location_id: '<loc>', params: { topicType: 'EVENT', event: { title: 'Launch', schedule: { startDate: { year: 2031, month: 2, day: 1 }, endDate: { year: 2031, month: 2, day: 31 } } } } },
      'params.event.schedule.endDate is not a date that exists',
    ],
    ['an EVENT without schedule', { location_id: '<loc>', params: { topicType: 'EVENT', event: { title: 'Launch' } } }, 'params.event.schedule is required for EVENT posts'],
    ['an ALERT without alertType', { location_id: '<loc>', params: { topicType: 'ALERT', summary: 'Closed' } }, 'params.alertType is required for ALERT posts'],
    ['a CALL with a url', { location_id: '<loc>', params: { ...standard(), callToAction: { actionType: 'CALL', url: 'https://x.example' } } }, 'params.callToAction.url must be absent for CALL'],
    ['a missing placeholder value', { location_id: '<loc>', params: standard('Hi {name}'), parameterMask: 'name', parameters: {} }, 'parameters.name is required by parameterMask (a string or number)'],
    ['a STANDARD post without summary', { location_id: '<loc>', params: { topicType: 'STANDARD' } }, 'params.summary is required for STANDARD posts'],
    ['a missing location_id', { params: standard() }, 'location_id is required'],
    ['a missing params', { location_id: '<loc>' }, 'params is required'],
    ['an unknown topicType', { location_id: '<loc>', params: { topicType: 'NEWS' } }, 'params.topicType must be one of STANDARD, EVENT, OFFER, ALERT'],
  ])('answers 400 for %s', async (_case, body, message) => {
    const resolved = JSON.parse(JSON.stringify(body).replace('<bare>', bareLocationId).replace('<loc>', locationId));
    const res = await createPost(resolved);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 400, message });
  });

  it('answers 404 for a location of another account, 400 for one not connected, 400 without account_id', async () => {
    // Its owner posts to it first: what this process keeps of a location it read serves only that location's account.
    const owned = other.accounts[0]!.locations[0]!.id;
    const own = await http(t.url, 'POST', `/post?account_id=${other.accounts[0]!.account.id}`, { token: other.token, body: { location_id: owned, params: standard() } });
    expect(own.status).toBe(202);
    const foreign = await createPost({ location_id: owned, params: standard() });
    expect(foreign.status).toBe(404);
    expect(foreign.body).toEqual({ error: 404, message: 'Location not found' });
    // An organization token naming the location's own account, of another organization: the account is not found.
    const namedForeignAccount = await http(t.url, 'POST', `/post?account_id=${other.accounts[0]!.account.id}`, { token, body: { location_id: owned, params: standard() } });
    expect(namedForeignAccount.status).toBe(404);
    // Another account of the same organization, by an organization token: not that account's location.
    const ownerOrg = org.accounts[1]!.account.id;
    const mine = await http(t.url, 'POST', `/post?account_id=${accountId}`, { token, body: { location_id: locationId, params: standard() } });
    expect(mine.status).toBe(202);
    const otherAccount = await http(t.url, 'POST', `/post?account_id=${ownerOrg}`, { token, body: { location_id: locationId, params: standard() } });
    expect(otherAccount.status).toBe(404);
    expect(otherAccount.body).toEqual({ error: 404, message: 'Location not found' });

    const unconnected = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1 });
    const res = await http(t.url, 'POST', `/post?account_id=${unconnected.accounts[0]!.account.id}`, {
      token: unconnected.token,
      body: { location_id: unconnected.accounts[0]!.locations[0]!.id, params: standard() },
    });
    expect(res.body).toEqual({ error: 400, message: 'The location is not connected to the alpha provider' });

    const noAccount = await http(t.url, 'POST', '/post', { token, body: { location_id: locationId, params: standard() } });
    expect(noAccount.status).toBe(400);
    expect(noAccount.body).toEqual({ error: 400, message: 'account_id is required with an organization token' });
  });

  it('applies the same rules to the GraphQL twin, whose posts have source app', async () => {
    const bad = await graphql(
      t.url,
      `mutation ($a: ID, $l: ID!) { createPost(accountId: $a, input: { locationId: $l, params: { summary: "x", scheduledTime: "2020-01-01T00:00:00Z" } }) { post { id } } }`,
      { token, variables: { a: accountId, l: locationId } },
    );
    expect(bad.body.errors?.[0]).toMatchObject({ message: 'params.scheduledTime must be in the future', extensions: { code: 'BAD_USER_INPUT' } });

    const good = await graphql(
      t.url,
      `mutation ($l: ID!) { createPost(input: { locationId: $l, params: { summary: "From the dashboard" } }) { replayed post { id state source } } }`,
      { token: org.accounts[0]!.token, variables: { l: locationId } },
    );
    expect(good.body.data.createPost).toEqual({ replayed: false, post: { id: expect.any(String), state: 'SENDING', source: 'APP' } });
    const rest = await pollPost(t.url, token, accountId, good.body.data.createPost.post.id);
    expect(rest.source).toBe('app');
  });
});

describe('GET /post', () => {
  let listAccount: string;
  let listToken: string;
  let listLocations: string[];
  let campaignId: string;
  let campaignPostIds: string[];
  beforeAll(async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 2, connected: true });
    listToken = fixture.token;
    listAccount = fixture.accounts[0]!.account.id;
    const [first, second] = fixture.accounts[0]!.locations;
    listLocations = [first!.id, second!.id];
    const post = (location: string, summary: string, as = listToken) =>
      http(t.url, 'POST', `/post?account_id=${listAccount}`, { token: as, body: { location_id: location, params: standard(summary) } });
    await post(first!.id, 'Espresso tasting on Friday');
    await post(first!.id, 'New pastry menu');
    await post(second!.id, 'Espresso machine repaired');
    await graphql(t.url, `mutation ($l: ID!) { createPost(input: { locationId: $l, params: { summary: "Dashboard espresso" } }) { post { id } } }`, {
      token: fixture.accounts[0]!.token,
      variables: { l: first!.id },
    });
    const campaign = await graphql(
      t.url,
      `mutation ($a: ID, $l: [ID!]!) { createPostCampaign(accountId: $a, input: { locationIds: $l, params: { summary: "Campaign espresso" } }) { campaignId posts { id } } }`,
      { token: listToken, variables: { a: listAccount, l: [first!.id, second!.id] } },
    );
    campaignId = campaign.body.data.createPostCampaign.campaignId;
    campaignPostIds = campaign.body.data.createPostCampaign.posts.map((p: { id: string }) => p.id);
  });

  const list = (query: string) => http(t.url, 'GET', `/post?account_id=${listAccount}${query}`, { token: listToken });

  it('lists newest first with found, page and per_page, without campaign posts', async () => {
    const res = await list('');
    expect(res.status).toBe(200);
    expect(res.body.payload).toMatchObject({ found: 4, page: 1, per_page: 20 });
    const summaries = res.body.payload.posts.map((p: { params: { summary: string } }) => p.params.summary);
    expect(summaries).toEqual(['Dashboard espresso', 'Espresso machine repaired', 'New pastry menu', 'Espresso tasting on Friday']);
    const times = res.body.payload.posts.map((p: { create_time: number }) => p.create_time);
    expect([...times].sort((a, b) => b - a)).toEqual(times);
  });

  it('pages with page and per_page', async () => {
    const page2 = await list('&page=2&per_page=3');
    expect(page2.body.payload).toMatchObject({ found: 4, page: 2, per_page: 3 });
    expect(page2.body.payload.posts).toHaveLength(1);
    expect(page2.body.payload.posts[0].params.summary).toBe('Espresso tasting on Friday');
  });

  it('filters by location_id, source, state and full-text q', async () => {
    const byLocation = await list(`&location_id=${listLocations[1]}`);
    expect(byLocation.body.payload.posts.map((p: { params: { summary: string } }) => p.params.summary)).toEqual(['Espresso machine repaired']);
    expect(byLocation.body.payload.posts.every((p: { location_id: string }) => p.location_id === listLocations[1])).toBe(true);
    const byOtherLocation = await list(`&location_id=${listLocations[0]}&q=espresso`);
    expect(byOtherLocation.body.payload.found).toBe(2);
    const byText = await list('&q=espresso');
    expect(byText.body.payload.found).toBe(3);
    const bySource = await list('&source=app');
    expect(bySource.body.payload.posts.map((p: { source: string }) => p.source)).toEqual(['app']);
    const external = await list('&source=external_api&q=espresso');
    expect(external.body.payload.found).toBe(2);
    const sending = await list('&state=DELETED');
    expect(sending.body.payload.found).toBe(0);
  });

  it.each([
    ['&per_page=101', 'per_page must be between 1 and 100'],
    ['&per_page=0', 'per_page must be between 1 and 100'],
    ['&page=0', 'page must be at least 1'],
    ['&page=x', 'page must be an integer'],
    ['&state=GONE', 'state must be one of SENDING, SCHEDULED, LIVE, PROCESSING, REJECTED, ERROR, DELETED'],
    ['&source=mail', 'source must be one of app, external_api'],
  ])('answers 400 for %s', async (query, message) => {
    const res = await list(query);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: 400, message });
  });

  it('shows campaign posts in GraphQL only when their campaign is asked for', async () => {
    const hidden = await graphql(t.url, `{ posts(accountId: "${listAccount}", q: "Campaign") { totalCount } }`, { token: listToken });
    expect(hidden.body.data.posts.totalCount).toBe(0);
    const asked = await graphql(t.url, `{ posts(accountId: "${listAccount}", campaignId: "${campaignId}") { totalCount edges { node { id campaignId params { summary } } } } }`, {
      token: listToken,
    });
    expect(asked.body.data.posts.totalCount).toBe(2);
    expect(new Set(asked.body.data.posts.edges.map((e: { node: { id: string } }) => e.node.id))).toEqual(new Set(campaignPostIds));
    expect(asked.body.data.posts.edges.every((e: { node: { campaignId: string } }) => e.node.campaignId === campaignId)).toBe(true);
    const rest = await list('&q=Campaign');
    expect(rest.body.payload.found).toBe(0);
    const created = await graphql(
      t.url,
      `mutation ($a: ID) { createPostCampaign(accountId: $a, input: { locationIds: [], params: { summary: "x" } }) { campaignId } }`,
      { token: listToken, variables: { a: listAccount } },
    );
    expect(created.body.errors?.[0]?.message).toBe('input.locationIds must name at least one location');
  });

  it('pages the posts cursor backwards in time, newest first, each post once', async () => {
    const page = (after?: string) =>
      graphql(t.url, `query ($a: ID, $after: String) { posts(accountId: $a, first: 3, after: $after) { totalCount pageInfo { hasNextPage hasPreviousPage endCursor } edges { cursor node { id createTime } } } }`, {
        token: listToken,
        variables: { a: listAccount, after },
      });
    const first = (await page()).body.data.posts;
    expect(first.totalCount).toBe(4);
    expect(first.pageInfo).toMatchObject({ hasNextPage: true, hasPreviousPage: false, endCursor: first.edges[2].cursor });
    // A post created while paging is newer than every cursor: it never shows on a later page.
    const newer = await http(t.url, 'POST', `/post?account_id=${listAccount}`, { token: listToken, body: { location_id: listLocations[0], params: standard('Created while paging') } });
    const second = (await page(first.pageInfo.endCursor)).body.data.posts;
    expect(second.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: true });
    const ids = [...first.edges, ...second.edges].map((e: { node: { id: string } }) => e.node.id);
    expect(ids).toHaveLength(4);
    expect(new Set(ids).size).toBe(4);
    expect(ids).not.toContain(newer.body.payload.id);
    const times = [...first.edges, ...second.edges].map((e: { node: { createTime: string } }) => Date.parse(e.node.createTime));
    expect([...times].sort((a, b) => b - a)).toEqual(times);
    const restOrder = (await list('&per_page=4&page=2')).body.payload.posts;
    expect(restOrder).toHaveLength(1);
    const everything = (await list('&per_page=10')).body.payload.posts.map((p: { id: string }) => p.id);
    expect(everything).toEqual([newer.body.payload.id, ...ids]);
  });
});
