import { createOrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { eventually } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';

let t: TestStack;
beforeAll(async () => {
  t = await startTestStack();
});
afterAll(() => t.close());

/**
 * SQL statements the server sends while answering one request: the fewest of three answers, as a statement of the
 * process's background work (its look for due jobs every 2 s, a sweep) may fall in one request's window.
 */
async function statementsFor(request: () => Promise<unknown>): Promise<number> {
  let fewest = Infinity;
  for (let attempt = 0; attempt < 3; attempt += 1) {
    const before = t.statementCount();
    await request();
    fewest = Math.min(fewest, t.statementCount() - before);
  }
  return fewest;
}

describe('relations followed by resolvers are batched per request', () => {
  const query = '{ organization { id accounts { id name numberOfLocations } } }';

  it('answers organization { accounts { numberOfLocations } } with the same statements for 2 and for 50 accounts', async () => {
    const small = await createOrganizationFixture(t.em(), { name: 'Small', accounts: 2, locationsEach: 2 });
    const large = await createOrganizationFixture(t.em(), { name: 'Large', accounts: 50, locationsEach: 2 });

    let smallResult: any;
    let largeResult: any;
    const smallCount = await statementsFor(async () => {
      smallResult = await graphql(t.url, query, { token: small.token });
    });
    const largeCount = await statementsFor(async () => {
      largeResult = await graphql(t.url, query, { token: large.token });
    });

    expect(smallResult.body.data.organization.accounts).toHaveLength(2);
    expect(largeResult.body.data.organization.accounts).toHaveLength(50);
    expect(largeResult.body.data.organization.accounts.every((a: { numberOfLocations: number }) => a.numberOfLocations === 2)).toBe(true);
    expect(largeCount).toBe(smallCount);
    // Token, organization, its accounts, one grouped count: anything more is a per-parent load creeping in.
    expect(largeCount).toBeLessThanOrEqual(4);
  });

  it('keeps the REST twins flat too', async () => {
    const large = await createOrganizationFixture(t.em(), { name: 'Large REST', accounts: 50, locationsEach: 1 });
    const small = await createOrganizationFixture(t.em(), { name: 'Small REST', accounts: 2, locationsEach: 1 });
    for (const path of ['/organization', '/organization/accounts', '/business-profile']) {
      const smallCount = await statementsFor(() => http(t.url, 'GET', path, { token: small.token }));
      const largeCount = await statementsFor(() => http(t.url, 'GET', path, { token: large.token }));
      expect({ path, count: largeCount }).toEqual({ path, count: smallCount });
    }
  });

  it('lists posts with the same statements for 2 and for 40 posts, over REST and GraphQL', async () => {
    const fixture = await createOrganizationFixture(t.em(), { name: 'Posts', accounts: 2, locationsEach: 1, connected: true });
    const create = (account: number) =>
      http(t.url, 'POST', `/post?account_id=${fixture.accounts[account]!.account.id}`, {
        token: fixture.token,
        body: { location_id: fixture.accounts[account]!.locations[0]!.id, params: { summary: 'Counted' } },
      });
    for (let i = 0; i < 2; i += 1) await create(0);
    for (let i = 0; i < 40; i += 1) await create(1);
    const [few, many] = fixture.accounts.map(({ account }) => account.id);
    // The workers share the statement counter: measure once every post is LIVE (published and checked), when no job
    // of theirs runs any more.
    for (const [accountId, count] of [[few, 2], [many, 40]] as const) {
      await eventually(async () => {
        const live = await http(t.url, 'GET', `/post?account_id=${accountId}&state=LIVE`, { token: fixture.token });
        return live.body.payload.found === count ? true : undefined;
      }, 30000, 'the posts to be LIVE');
    }
    // A job's last statement records its unit of work as ended (docs/async-work.md): wait for that too.
    await eventually(async () => {
      const [{ open }] = await t.em().getConnection().execute<[{ open: number }]>(
        `select count(*)::int as open from async_work where organization_id = ? and status not in ('SUCCEEDED', 'FAILED', 'DEAD_LETTERED')`,
        [fixture.organization.id],
      );
      return open === 0 ? true : undefined;
    }, 30000, 'every job of the posts to end');
    const rest = async (accountId: string) =>
      statementsFor(() => http(t.url, 'GET', `/post?account_id=${accountId}&per_page=100`, { token: fixture.token }));
    const query = (accountId: string) =>
      statementsFor(() =>
        graphql(t.url, `{ posts(accountId: "${accountId}", first: 100) { totalCount edges { node { id postId locationId accountId state params { summary } } } } }`, {
          token: fixture.token,
        }),
      );
    expect(await rest(many!)).toBe(await rest(few!));
    expect(await query(many!)).toBe(await query(few!));
  });

  it('lists locations and their update jobs with the same statements for 2 and for 60, over REST and GraphQL', async () => {
    const few = await createOrganizationFixture(t.em(), { name: 'Few locations', accounts: 1, locationsEach: 2 });
    const many = await createOrganizationFixture(t.em(), { name: 'Many locations', accounts: 1, locationsEach: 60 });
    // An update job for every location (applied at once: the locations are not connected).
    for (const fixture of [few, many]) {
      for (const location of fixture.accounts[0]!.locations) {
        const answer = await http(t.url, 'PATCH', `/location/update?account_id=${fixture.accounts[0]!.account.id}&location_id=${location.id}`, {
          token: fixture.token,
          body: { description: `Counted ${location.id}` },
        });
        expect(answer.status).toBe(200);
      }
    }
    const counts = async (fixture: typeof few) => {
      const accountId = fixture.accounts[0]!.account.id;
      return {
        rest: await statementsFor(() => http(t.url, 'GET', `/location?account_id=${accountId}&per_page=250`, { token: fixture.token })),
        updates: await statementsFor(() => http(t.url, 'GET', `/location/updates?account_id=${accountId}&per_page=100`, { token: fixture.token })),
        graphql: await statementsFor(() =>
          graphql(t.url, `{ locations(accountId: "${accountId}", first: 100) { totalCount edges { node { id accountId name regularHours { openDay } } } } }`, {
            token: fixture.token,
          }),
        ),
        jobs: await statementsFor(() =>
          graphql(t.url, `{ locationUpdateJobs(accountId: "${accountId}", perPage: 100) { found updates { id locationId accountId status fields } } }`, {
            token: fixture.token,
          }),
        ),
      };
    };
    const small = await counts(few);
    const large = await counts(many);
    expect(large).toEqual(small);
    // Token, account check, the rate-limit count, one statement for the page and its count.
    expect(large.rest).toBeLessThanOrEqual(4);
  });
});
