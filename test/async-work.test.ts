import { AsyncWorkStatus } from '../src/jobs/work-ledger';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { eventually, pollPost, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';
import { subscribe, type Probe } from './support/ws';
import { workProbe } from './support/async-work';

/**
 * One view of asynchronous work (docs/async-work.md), through GraphQL over HTTP and graphql-ws: each unit of work
 * listed with its kind, status, attempts and record; followed live; counted; retried once its retries ran out.
 */

let t: TestStack;
let org: OrganizationFixture;
let other: OrganizationFixture;

beforeAll(async () => {
  // Two attempts, a second apart: a lasting failure dead-letters within seconds.
  t = await startTestStack({ JOB_RETRY_LIMIT: '1', JOB_RETRY_DELAY_SECONDS: '1', POST_RATE_LIMIT_PER_MINUTE: '1000' });
  org = await createOrganizationFixture(t.em(), { accounts: 2, locationsEach: 1, connected: true, citationsApi: true });
  other = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true });
});
afterAll(() => t?.close());

const WORK_FIELDS = `id kind status attempts maxAttempts error organizationId accountId subjectId retryable version createdAt startedAt endedAt
  ... on PostWork { post { id state } }
  ... on LocationWork { location { id } }`;

async function createPost(fixture: OrganizationFixture, accountIndex: number, summary: string): Promise<string> {
  const account = fixture.accounts[accountIndex]!;
  const created = await http(t.url, 'POST', `/post?account_id=${account.account.id}`, {
    token: fixture.token,
    body: { location_id: account.locations[0]!.id, params: { topicType: 'STANDARD', summary, languageCode: 'en' } },
  });
  expect(created.status).toBe(202);
  return created.body.payload.id as string;
}

async function workOf(token: string, filters: Record<string, unknown> = {}) {
  const answer = await graphql(
    t.url,
    `query ($accountId: ID, $kinds: [AsyncWorkKind!], $statuses: [AsyncWorkStatus!], $first: Int!, $after: String) {
      asyncWork(accountId: $accountId, kinds: $kinds, statuses: $statuses, first: $first, after: $after) {
        totalCount pageInfo { hasNextPage endCursor } edges { cursor node { ${WORK_FIELDS} } } } }`,
    { token, variables: { first: 50, ...filters } },
  );
  expect(answer.body.errors).toBeUndefined();
  return answer.body.data!.asyncWork as { totalCount: number; pageInfo: { hasNextPage: boolean; endCursor: string | null }; edges: { node: any }[] };
}

const publishOf = async (token: string, postId: string) =>
  (await workOf(token, { kinds: ['POST_PUBLISH'] })).edges.map(({ node }) => node).find((node) => node.subjectId === postId);

/** Probes for asyncWorkUpdated of an organization (and account). */
const workProbeOf = (fixture: OrganizationFixture, accountId: string | null): Probe =>
  workProbe(t.stack.runtime.events, { organizationId: fixture.organization.id, accountIds: [accountId] });

describe('asyncWork', () => {
  it('lists a post’s publish with its record: QUEUED, then RUNNING, then SUCCEEDED, attempts counted, newest first', async () => {
    const postId = await createPost(org, 0, 'Listed as work');
    await pollPost(t.url, org.token, org.accounts[0]!.account.id, postId, (post) => post.state === 'LIVE');
    const publish = await eventually(async () => {
      const found = await publishOf(org.token, postId);
      return found?.status === AsyncWorkStatus.SUCCEEDED ? found : undefined;
    }, 15000, 'the publish to be SUCCEEDED');
    expect(publish).toMatchObject({
      kind: 'POST_PUBLISH',
      attempts: 1,
      maxAttempts: 2,
      error: null,
      organizationId: org.organization.id,
      accountId: org.accounts[0]!.account.id,
      retryable: false,
      post: { id: postId, state: 'LIVE' },
    });
    expect(publish.version).toBeGreaterThanOrEqual(3);
    expect(new Date(publish.endedAt).getTime()).toBeGreaterThanOrEqual(new Date(publish.startedAt).getTime());

    // Newest first: a later post's publish comes before it.
    const laterId = await createPost(org, 0, 'Listed later');
    const listed = (await workOf(org.token, { kinds: ['POST_PUBLISH'] })).edges.map(({ node }) => node.subjectId);
    expect(listed.indexOf(laterId)).toBeLessThan(listed.indexOf(postId));
    await pollPost(t.url, org.token, org.accounts[0]!.account.id, laterId, (post) => post.state === 'LIVE');
  });

  it('pages with a cursor, filters by kind, status and account, and counts by kind and status', async () => {
    for (let i = 0; i < 3; i += 1) await createPost(org, 1, `Paged ${i}`);
    const account = org.accounts[1]!.account.id;
    await eventually(async () => {
      const done = await workOf(org.token, { accountId: account, kinds: ['POST_PUBLISH'], statuses: [AsyncWorkStatus.SUCCEEDED] });
      return done.totalCount === 3 ? true : undefined;
    }, 20000, 'three publishes of the second account to succeed');
    const first = await workOf(org.token, { accountId: account, kinds: ['POST_PUBLISH'], first: 2 });
    expect(first.edges).toHaveLength(2);
    expect(first.totalCount).toBe(3);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const rest = await workOf(org.token, { accountId: account, kinds: ['POST_PUBLISH'], first: 2, after: first.pageInfo.endCursor });
    expect(rest.edges).toHaveLength(1);
    expect(rest.pageInfo.hasNextPage).toBe(false);
    expect(new Set([...first.edges, ...rest.edges].map(({ node }) => node.id)).size).toBe(3);
    expect([...first.edges, ...rest.edges].every(({ node }) => node.accountId === account)).toBe(true);

    const counts = await graphql(t.url, 'query ($a: ID) { asyncWorkCounts(accountId: $a) { kind status count } }', { token: org.token, variables: { a: account } });
    expect(counts.body.data.asyncWorkCounts).toContainEqual({ kind: 'POST_PUBLISH', status: 'SUCCEEDED', count: 3 });
    expect(counts.body.data.asyncWorkCounts.every((row: { count: number }) => row.count > 0)).toBe(true);
  });

  it('shows work only within reach: not another organization’s, and an account token only its own account’s', async () => {
    const theirs = await createPost(other, 0, 'Another organization’s');
    const theirWork = await eventually(() => publishOf(other.token, theirs), 15000, 'their publish to be listed');
    expect(await publishOf(org.token, theirs)).toBeUndefined();
    const item = await graphql(t.url, 'query ($id: ID!) { asyncWorkItem(id: $id) { id } }', { token: org.token, variables: { id: theirWork.id } });
    expect(item.body.data.asyncWorkItem).toBeNull();

    const accountToken = org.accounts[0]!.token;
    const seen = await workOf(accountToken, { accountId: org.accounts[1]!.account.id });
    expect(seen.edges.length).toBeGreaterThan(0);
    expect(seen.edges.every(({ node }) => node.accountId === org.accounts[0]!.account.id)).toBe(true);
  });

  it('lists a new location’s publish to the provider as LOCATION_PUBLISH work about the location', async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 0, alphaAccounts: true });
    const created = await http(t.url, 'POST', `/location?account_id=${fixture.accounts[0]!.account.id}`, {
      token: fixture.token,
      body: { name: 'Published as work', category_id: 'gcid:bakery', country_code: 'DE', address: '3 Main Street', city: 'Berlin', postal: '10115' },
    });
    expect(created.status).toBe(200);
    const locationId = created.body.payload.location_id as string;
    const work = await eventually(async () => {
      const [found] = (await workOf(fixture.token, { kinds: ['LOCATION_PUBLISH'] })).edges.map(({ node }) => node);
      return found?.status === AsyncWorkStatus.SUCCEEDED ? found : undefined;
    }, 15000, 'the location publish to succeed');
    expect(work).toMatchObject({ subjectId: locationId, accountId: fixture.accounts[0]!.account.id, organizationId: fixture.organization.id, location: { id: locationId } });
  });

  it('records disabling citations, done in the request, as SUCCEEDED work about the location', async () => {
    const account = org.accounts[0]!;
    const disabled = await http(t.url, 'POST', `/citations/disable?account_id=${account.account.id}`, { token: org.token, body: { location_id: account.locations[0]!.id } });
    expect(disabled.status).toBe(200);
    const [work] = (await workOf(org.token, { kinds: ['CITATIONS_DISABLE'] })).edges.map(({ node }) => node);
    expect(work).toMatchObject({ status: 'SUCCEEDED', attempts: 1, subjectId: account.locations[0]!.id, location: { id: account.locations[0]!.id } });
  });
});

describe('asyncWorkUpdated', () => {
  it('follows a post’s publish live, QUEUED to SUCCEEDED, in version order; another organization hears nothing of it', async () => {
    const accountId = org.accounts[0]!.account.id;
    const query = 'subscription ($k: [AsyncWorkKind!]) { asyncWorkUpdated(kinds: $k) { id kind status version subjectId } }';
    const ours = await subscribe(t.url, org.token, query, { k: ['POST_PUBLISH'] }, workProbeOf(org, accountId));
    const theirs = await subscribe(t.url, other.token, query, { k: ['POST_PUBLISH'] }, workProbeOf(other, other.accounts[0]!.account.id));
    try {
      const postId = await createPost(org, 0, 'Followed live');
      const events = await ours.waitFor(3, 15000);
      const mine = events.map((event) => event.asyncWorkUpdated).filter((work) => work.subjectId === postId);
      expect(mine.map((work) => work.status)).toEqual(['QUEUED', 'RUNNING', 'SUCCEEDED']);
      expect(mine.map((work) => work.version)).toEqual([...mine.map((work) => work.version)].sort((a, b) => a - b));
      await theirs.sync();
      expect(theirs.events.filter((event) => event.asyncWorkUpdated.subjectId === postId)).toEqual([]);
    } finally {
      await ours.close();
      await theirs.close();
    }
  });
});

describe('a publish whose retries run out', () => {
  it('is RETRYING with why, then DEAD_LETTERED and retryable; an organization token retries it and it succeeds', async () => {
    const accountId = org.accounts[1]!.account.id;
    // Both attempts answered 503 by the provider.
    await sandboxOf(t.url).fail({ count: 2, status: 503, method: 'POST', pathContains: '/localPosts' });
    const postId = await createPost(org, 1, 'Dead-lettered, then retried');
    const dead = await eventually(async () => {
      const found = await publishOf(org.token, postId);
      return found?.status === AsyncWorkStatus.DEAD_LETTERED ? found : undefined;
    }, 30000, 'the publish to be dead-lettered');
    expect(dead).toMatchObject({ attempts: 2, retryable: true, post: { state: 'ERROR' } });
    expect(dead.error).toMatch(/503|unavailable/i);

    const health = await graphql(t.url, '{ providerHealth { provider calls errors latencyP50Ms lastError } }', { token: org.token });
    const alpha = health.body.data.providerHealth.find((row: { provider: string }) => row.provider === 'alpha');
    expect(alpha.errors).toBeGreaterThanOrEqual(2);
    expect(alpha.lastError).toMatch(/^POST v4\/accounts\/\{id\}\/locations\/\{id\}\/localPosts: 503$/);

    const retry = (token: string) => graphql(t.url, 'mutation ($id: ID!) { retryAsyncWork(id: $id) { id status attempts retryable } }', { token, variables: { id: dead.id } });
    const byAccount = await retry(org.accounts[1]!.token);
    expect(byAccount.body.errors?.[0]?.extensions?.code).toBe('ORGANIZATION_TOKEN_REQUIRED');
    const byOther = await retry(other.token);
    expect(byOther.body.errors?.[0]?.extensions?.code).toBe('NOT_FOUND');

    const retried = await retry(org.token);
    expect(retried.body.errors).toBeUndefined();
    expect(retried.body.data.retryAsyncWork).toMatchObject({ id: dead.id, status: 'QUEUED', attempts: 2, retryable: false });
    const live = await pollPost(t.url, org.token, accountId, postId, (post) => post.state === 'LIVE');
    expect(live.state).toBe('LIVE');
    const after = await eventually(async () => {
      const found = await publishOf(org.token, postId);
      return found?.status === AsyncWorkStatus.SUCCEEDED ? found : undefined;
    }, 15000, 'the retried publish to succeed');
    expect(after).toMatchObject({ id: dead.id, attempts: 3, error: null });

    // Done work is not retried.
    const again = await retry(org.token);
    expect(again.body.errors?.[0]?.extensions?.code).toBe('NOT_RETRYABLE');
  });
});

describe('following the records of a page of work', () => {
  it('loads each kind of record in one statement, however many units of work name them', async () => {
    await workOf(org.token);
    const before = t.statementCount();
    const page = await workOf(org.token);
    const used = t.statementCount() - before;
    const kinds = new Set(page.edges.map(({ node }) => node.kind === 'CITATIONS_DISABLE' ? 'location' : 'post'));
    expect(page.edges.length).toBeGreaterThan(5);
    // The token, the page, its count, and one statement per kind of record followed.
    expect(used).toBeLessThanOrEqual(3 + kinds.size);
  });
});
