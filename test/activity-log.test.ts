import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { eventually, pollPost } from './support/posts';
import { TestClock } from './support/clock';
import { startTestStack, type TestStack } from './support/stack';

/**
 * The activity log (docs/activity-log.md) through HTTP: every state change leaves exactly one event, whose record
 * is what the record's own REST route answers; GET /events and GraphQL `events` filter, page and isolate them; old
 * events go with the retention.
 */

let t: TestStack;
const clock = new TestClock();
let org: OrganizationFixture;
let other: OrganizationFixture;
let accountId: string;
let locationId: string;

const events = (query: string, token = org.token) => http(t.url, 'GET', `/events${query}`, { token });
/** The events of one record, oldest first, once there are `count` of them (never more: checked after). */
async function eventsOf(recordId: string, count: number): Promise<any[]> {
  const found = await eventually(async () => {
    const res = await events(`?record_id=${recordId}&per_page=100`);
    return res.body.payload.found >= count ? (res.body.payload.events as any[]) : undefined;
  }, 30000, `${count} events of ${recordId}`);
  expect(found).toHaveLength(count);
  return [...found].reverse();
}

beforeAll(async () => {
  t = await startTestStack({ POST_RATE_LIMIT_PER_MINUTE: '1000', EVENT_RETENTION_DAYS: '7' }, { clock });
  org = await createOrganizationFixture(t.em(), { accounts: 2, locationsEach: 2, connected: true });
  other = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true });
  accountId = org.accounts[0]!.account.id;
  locationId = org.accounts[0]!.locations[0]!.id;
});
afterEach(() => clock.release());
afterAll(() => t.close());

describe('events of state changes', () => {
  it('a post: one post.state_changed per state, its record what GET /post/{id} answers', async () => {
    const created = await http(t.url, 'POST', `/post?account_id=${accountId}`, {
      token: org.token,
      body: { location_id: locationId, params: { summary: 'Fresh bread', topicType: 'STANDARD', languageCode: 'en' } },
    });
    expect(created.status).toBe(202);
    const live = await pollPost(t.url, org.token, accountId, created.body.payload.id);
    expect(live.state).toBe('LIVE');
    const [sending, published] = await eventsOf(live.id, 2);
    expect(sending).toEqual({
      id: expect.any(String),
      type: 'post.state_changed',
      occurred_at: expect.any(Number),
      organization_id: org.organization.id,
      account_id: accountId,
      record_type: 'post',
      record_id: live.id,
      sequence: expect.stringMatching(/^\d+$/),
      record: created.body.payload,
    });
    expect(published).toMatchObject({ type: 'post.state_changed', record: live });
    expect(BigInt(published.sequence)).toBeGreaterThan(BigInt(sending.sequence));
  });

  it('a location update: QUEUED, RUNNING and its end once each, as GET /location/updates writes the update', async () => {
    const res = await http(t.url, 'PATCH', `/location/update?account_id=${accountId}&location_id=${locationId}`, {
      token: org.token,
      body: { description: 'Now with a terrace' },
    });
    expect(res.status).toBe(200);
    const jobId = res.body.payload.id as string;
    const recorded = await eventsOf(jobId, 3);
    const updates = await http(t.url, 'GET', `/location/updates?account_id=${accountId}&id=${jobId}`, { token: org.token });
    const ended = updates.body.payload.updates[0];
    expect(['SUCCEEDED', 'FAILED']).toContain(ended.status);
    expect(recorded.map((event) => [event.type, event.record.status])).toEqual([
      ['location_update_job.status_changed', 'QUEUED'],
      ['location_update_job.status_changed', 'RUNNING'],
      ['location_update_job.status_changed', ended.status],
    ]);
    expect(recorded[2].record).toEqual(ended);
  });

  it('citations disabled: one location.citations_disabled with the location as GET /location shows it', async () => {
    const citations = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true, citationsApi: true });
    const location = citations.accounts[0]!.locations[0]!;
    const account = citations.accounts[0]!.account.id;
    const res = await http(t.url, 'POST', `/citations/disable?account_id=${account}`, { token: citations.token, body: { location_id: location.id } });
    expect(res.status).toBe(200);
    const list = await events(`?type=location.citations_disabled`, citations.token);
    expect(list.body.payload.found).toBe(1);
    const listed = await http(t.url, 'GET', `/location?account_id=${account}`, { token: citations.token });
    expect(list.body.payload.events[0].record).toEqual(listed.body.data.find((l: any) => l.id === location.id));
    expect(list.body.payload.events[0].record.citations_status).toBe('DISABLED');
  });
});

describe('GET /events and GraphQL events', () => {
  it('filters by type and account, pages with page and per_page, and refuses bad paging in the generic error body', async () => {
    const all = await events('?per_page=100');
    expect(all.status).toBe(200);
    const found = all.body.payload.found as number;
    expect(found).toBeGreaterThanOrEqual(5);
    const second = await events('?per_page=1&page=2');
    expect(second.body).toEqual({ success: true, payload: { found, page: 2, per_page: 1, events: [all.body.payload.events[1]] } });
    const posts = await events('?type=post.state_changed');
    expect(posts.body.payload.events.every((event: any) => event.type === 'post.state_changed')).toBe(true);
    expect((await events(`?account_id=${org.accounts[1]!.account.id}`)).body.payload.found).toBe(0);
    for (const bad of ['?per_page=0', '?per_page=101', '?page=0', '?type=post.nothing', '?occurred_after=yesterday']) {
      const res = await events(bad);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error: 400, message: expect.any(String) });
    }
  });

  it('reads a page and its found in one statement, whatever the times asked, so found always counts the rows it pages', async () => {
    // Its own organization with two events (citations disabled at two locations), so the test stands alone.
    const own = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 2, connected: true, citationsApi: true });
    const account = own.accounts[0]!.account.id;
    for (const location of own.accounts[0]!.locations) {
      expect((await http(t.url, 'POST', `/citations/disable?account_id=${account}`, { token: own.token, body: { location_id: location.id } })).status).toBe(200);
    }
    const statementsFor = async (query: string) => {
      const before = t.statementCount();
      const res = await events(query, own.token);
      expect(res.status).toBe(200);
      return { statements: t.statementCount() - before, found: res.body.payload.found as number, rows: (res.body.payload.events as unknown[]).length };
    };
    await statementsFor('?per_page=1'); // the token's session, read once and kept
    const all = await statementsFor('?per_page=100');
    expect(all).toEqual({ statements: 1, found: 2, rows: 2 });
    const hour = 3_600_000;
    const window = `occurred_after=${new Date(Date.now() - hour).toISOString()}&occurred_before=${new Date(Date.now() + hour).toISOString()}`;
    expect(await statementsFor(`?per_page=100&${window}`)).toEqual(all);
    expect(await statementsFor(`?per_page=1&page=2&${window}`)).toEqual({ statements: 1, found: 2, rows: 1 });
  });

  it('reads on with a cursor, newest first, and filters by record', async () => {
    const query = `query($after: String, $recordType: EventRecordType) { events(first: 2, after: $after, recordType: $recordType) {
      totalCount pageInfo { hasNextPage endCursor } nodes { id type recordType record { __typename ... on Post { state } ... on LocationUpdateJob { status } } } } }`;
    const first = await graphql(t.url, query, { token: org.token });
    expect(first.body.errors).toBeUndefined();
    const page = first.body.data.events;
    expect(page.nodes).toHaveLength(2);
    const next = await graphql(t.url, query, { token: org.token, variables: { after: page.pageInfo.endCursor } });
    const ids = [...page.nodes, ...next.body.data.events.nodes].map((node: any) => node.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect([...ids].sort().reverse()).toEqual(ids);
    const jobs = await graphql(t.url, query, { token: org.token, variables: { recordType: 'LOCATION_UPDATE_JOB' } });
    expect(jobs.body.data.events.totalCount).toBe(3);
    expect(jobs.body.data.events.nodes.map((node: any) => node.record.__typename)).toEqual(['LocationUpdateJob', 'LocationUpdateJob']);
  });

  it('shows no organization another’s events, and an account token only its own account’s', async () => {
    expect((await events('', other.token)).body.payload.found).toBe(0);
    expect((await events(`?record_id=${locationId}`, other.token)).body.payload.found).toBe(0);
    const own = await events('?per_page=100', org.accounts[0]!.token);
    expect(own.body.payload.found).toBeGreaterThan(0);
    expect(own.body.payload.events.every((event: any) => event.account_id === accountId)).toBe(true);
    expect((await events('', org.accounts[1]!.token)).body.payload.found).toBe(0);
    // Naming another account does not widen an account token's reach.
    expect((await events(`?account_id=${org.accounts[1]!.account.id}`, org.accounts[0]!.token)).body.payload.found).toBe(0);
  });

  it('keeps events for EVENT_RETENTION_DAYS: older ones are no longer listed', async () => {
    const before = (await events('')).body.payload.found as number;
    expect(before).toBeGreaterThan(0);
    clock.hold();
    clock.advance(6 * 24 * 60 * 60 * 1000);
    expect((await events('')).body.payload.found).toBe(before);
    clock.advance(2 * 24 * 60 * 60 * 1000);
    expect((await events('')).body.payload.found).toBe(0);
  });
});
