import { createOrganizationFixture } from './support/fixtures';
import { TestClock } from './support/clock';
import { connect, runConsent } from './support/consent';
import { graphql, http } from './support/http';
import { sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';

/**
 * After a completed consent, the accounts the person has at the provider (issue 18, item 6): GraphQL
 * `alphaConsentAccounts` and REST `GET /oauth/alpha/accounts`, driven after a consent a browser went through. The
 * list is the provider's, read with the person's tokens page by page; each account says whether the organization
 * already has it.
 */

const clock = new TestClock();
let t: TestStack;

beforeAll(async () => {
  t = await startTestStack({}, { clock });
});
beforeEach(async () => {
  clock.release();
  await sandboxOf(t.url).reset();
});
afterAll(() => t?.close());

const ACCOUNTS = `query ($p: ID!, $first: Int! = 20, $after: String) {
  alphaConsentAccounts(alphaId: $p, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor }
    edges { cursor node { id name type connected accountId } }
  }
}`;

/** The same page, without totalCount (which reads the rest of the provider's list). */
const PAGE_ONLY = `query ($p: ID!, $first: Int! = 20, $after: String) {
  alphaConsentAccounts(alphaId: $p, first: $first, after: $after) {
    pageInfo { hasNextPage endCursor }
    nodes { id }
  }
}`;

interface Page {
  totalCount: number;
  pageInfo: { hasNextPage: boolean; hasPreviousPage: boolean; startCursor: string | null; endCursor: string | null };
  edges: { cursor: string; node: { id: string; name: string; type: string; connected: boolean; accountId: string | null } }[];
}

async function accountsOf(token: string, variables: Record<string, unknown>, document = ACCOUNTS) {
  return graphql<{ alphaConsentAccounts: Page }>(t.url, document, { token, variables });
}

async function pageOf(token: string, variables: Record<string, unknown>): Promise<Page> {
  const answer = await accountsOf(token, variables);
  expect(answer.body.errors).toBeUndefined();
  return answer.body.data!.alphaConsentAccounts;
}

const listRest = (token: string, query: Record<string, string>) => http(t.url, 'GET', `/oauth/alpha/accounts?${new URLSearchParams(query)}`, { token });

/** Calls of the provider's account list the sandbox has answered since its reset. */
async function accountListCalls(): Promise<number> {
  return (await sandboxOf(t.url).state()).calls['account-list'] ?? 0;
}

describe('the accounts of the person who consented', () => {
  it('lists Carol’s accounts with their names and types, marks the one the organization has, and gives the ids connect takes', async () => {
    const org = await createOrganizationFixture(t.em(), { accounts: 0 });
    const consent = await runConsent(t.url, org.token, { person: 'alpha-user-carol', state: 'carol-1' });
    const alphaId = consent.landed.get('alphaId')!;
    expect(alphaId).toBe('alpha-user-carol');

    const before = await pageOf(org.token, { p: alphaId });
    expect(before.edges.map((edge) => edge.node)).toEqual([
      { id: '3003', name: 'Carol Coffee North', type: 'LOCATION_GROUP', connected: false, accountId: null },
      { id: '3004', name: 'Carol Coffee South', type: 'LOCATION_GROUP', connected: false, accountId: null },
    ]);
    expect(before.totalCount).toBe(2);
    expect(before.pageInfo).toMatchObject({ hasNextPage: false, hasPreviousPage: false, startCursor: before.edges[0]!.cursor, endCursor: before.edges[1]!.cursor });

    // The listed id is what connect takes.
    const first = await connect(t.url, org.token, consent.landed, before.edges[0]!.node.id);
    const connected = new URL(first.body.url).searchParams;
    expect(connected.get('status')).toBe('success');
    const accountId = connected.get('alpha_profile_id')!;

    // A new consent of Carol's: 3003 is now the organization's, with our id; 3004 is still to connect.
    const again = await runConsent(t.url, org.token, { person: 'alpha-user-carol', state: 'carol-2' });
    const after = await pageOf(org.token, { p: alphaId });
    expect(after.edges.map((edge) => edge.node)).toEqual([
      { id: '3003', name: 'Carol Coffee North', type: 'LOCATION_GROUP', connected: true, accountId },
      { id: '3004', name: 'Carol Coffee South', type: 'LOCATION_GROUP', connected: false, accountId: null },
    ]);

    // REST: the same list in the REST names, paged by the same cursors.
    const rest = await listRest(org.token, { alphaId });
    expect(rest.status).toBe(200);
    expect(rest.body).toEqual({
      success: true,
      data: [
        { id: '3003', name: 'Carol Coffee North', type: 'LOCATION_GROUP', connected: true, account_id: accountId },
        { id: '3004', name: 'Carol Coffee South', type: 'LOCATION_GROUP', connected: false, account_id: null },
      ],
      page_info: { has_next_page: false, end_cursor: expect.any(String) },
    });
    const second = await connect(t.url, org.token, again.landed, rest.body.data[1].id);
    expect(new URL(second.body.url).searchParams.get('status')).toBe('success');
  });

  it('answers an account token as generate-url and connect do: 403 ORGANIZATION_TOKEN_REQUIRED', async () => {
    const org = await createOrganizationFixture(t.em(), { accounts: 1 });
    await runConsent(t.url, org.token, { person: 'alpha-user-carol', state: 'org' });
    const accountToken = org.accounts[0]!.token;
    const rest = await listRest(accountToken, { alphaId: 'alpha-user-carol' });
    expect([rest.status, rest.body]).toEqual([403, { error: 403, message: 'This operation requires an organization token' }]);
    const viaGraphQL = await accountsOf(accountToken, { p: 'alpha-user-carol' });
    expect(viaGraphQL.body.errors?.[0]).toMatchObject({ extensions: { code: 'ORGANIZATION_TOKEN_REQUIRED' } });
    expect(viaGraphQL.body.data).toBeNull();
    // The organization token still reads it.
    expect((await pageOf(org.token, { p: 'alpha-user-carol' })).edges).toHaveLength(2);
  });

  it('answers the same NOT_FOUND for an unknown person, another organization’s consent, a declined, narrowed, used or expired consent', async () => {
    const org = await createOrganizationFixture(t.em(), { accounts: 0 });
    const other = await createOrganizationFixture(t.em(), { accounts: 0 });
    const notFound = { error: 404, message: 'Consent (complete the consent first: generate-url, then the callback) not found' };
    const expectNotFound = async (token: string, alphaId: string, what: string) => {
      const rest = await listRest(token, { alphaId });
      expect({ what, status: rest.status, body: rest.body }).toEqual({ what, status: 404, body: notFound });
      const viaGraphQL = await accountsOf(token, { p: alphaId });
      expect({ what, errors: viaGraphQL.body.errors }).toEqual({
        what,
        errors: [expect.objectContaining({ message: notFound.message, extensions: expect.objectContaining({ code: 'NOT_FOUND' }) })],
      });
    };

    await expectNotFound(org.token, 'alpha-user-nobody', 'an unknown person');
    await runConsent(t.url, org.token, { person: 'alpha-user-carol', state: 'mine' });
    await expectNotFound(other.token, 'alpha-user-carol', 'another organization’s consent');
    await runConsent(t.url, other.token, { person: 'alpha-user-bob', state: 'declined', decline: true });
    await expectNotFound(other.token, 'alpha-user-bob', 'a declined consent');
    const narrowed = await runConsent(t.url, other.token, { person: 'alpha-user-alice', state: 'narrow', grant: (scopes) => scopes.filter((scope) => !scope.includes('business')) });
    expect(narrowed.landed.get('error')).toBe('invalid_grant');
    await expectNotFound(other.token, 'alpha-user-alice', 'a consent without the business permission');

    // Used by a connect: the consent is spent, for the list as for connect.
    const alice = await runConsent(t.url, org.token, { person: 'alpha-user-alice', state: 'used' });
    expect((await pageOf(org.token, { p: 'alpha-user-alice' })).edges.map((edge) => edge.node.id)).toEqual(['1001']);
    expect(new URL((await connect(t.url, org.token, alice.landed, '1001')).body.url).searchParams.get('status')).toBe('success');
    await expectNotFound(org.token, 'alpha-user-alice', 'a used consent');

    // Carol's consent of `org` is still there, until its 15 minutes after the callback have passed.
    clock.hold();
    expect((await pageOf(org.token, { p: 'alpha-user-carol' })).edges).toHaveLength(2);
    clock.advance(15 * 60 * 1000 + 1000);
    await expectNotFound(org.token, 'alpha-user-carol', 'an expired consent');
  });

  it('answers a consent the provider no longer accepts as an unknown one', async () => {
    const org = await createOrganizationFixture(t.em(), { accounts: 0 });
    await runConsent(t.url, org.token, { person: 'alpha-user-carol', state: 'revoked' });
    // The provider forgets every grant: the person's access token is refused.
    await sandboxOf(t.url).reset();
    const rest = await listRest(org.token, { alphaId: 'alpha-user-carol' });
    expect([rest.status, rest.body]).toEqual([404, { error: 404, message: 'Consent (complete the consent first: generate-url, then the callback) not found' }]);
  });
});

describe('pages over the provider’s pages', () => {
  /** Dana has 45 accounts: the provider serves them 20 to a page, so three pages (20, 20, 5). */
  const DANA = 'alpha-user-dana';
  let danaIds: string[];

  beforeEach(async () => {
    const added = await sandboxOf(t.url).addIdentity({
      sub: DANA,
      email: 'dana@sandbox.example',
      name: 'Dana Example',
      accounts: Array.from({ length: 45 }, (_, index) => ({
        accountId: String(5000 + index),
        accountName: `Dana Shop ${index + 1}`,
        type: index === 0 ? ('PERSONAL' as const) : ('LOCATION_GROUP' as const),
      })),
    });
    danaIds = added.accounts.map((account) => account.name.split('/')[1]!);
    expect(danaIds).toHaveLength(45);
  });

  it('follows first/after through every account once, in the provider’s order, with the total over all pages', async () => {
    const org = await createOrganizationFixture(t.em(), { accounts: 0 });
    await runConsent(t.url, org.token, { person: DANA, state: 'dana' });

    const seen: string[] = [];
    let after: string | null = null;
    const pages: Page[] = [];
    do {
      const page = await pageOf(org.token, { p: DANA, first: 15, after });
      pages.push(page);
      seen.push(...page.edges.map((edge) => edge.node.id));
      after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
    } while (after);
    expect(seen).toEqual(danaIds);
    expect(pages.map((page) => page.edges.length)).toEqual([15, 15, 15]);
    expect(pages.map((page) => [page.pageInfo.hasPreviousPage, page.pageInfo.hasNextPage])).toEqual([[false, true], [true, true], [true, false]]);
    expect(pages.map((page) => page.totalCount)).toEqual([45, 45, 45]);
    expect(pages[0]!.edges[0]!.node).toEqual({ id: '5000', name: 'Dana Shop 1', type: 'PERSONAL', connected: false, accountId: null });

    // Any edge's cursor goes on right after it: the 20th (the last of the provider's first page) and the 7th.
    const whole = await pageOf(org.token, { p: DANA, first: 30 });
    expect(whole.edges.map((edge) => edge.node.id)).toEqual(danaIds.slice(0, 30));
    expect((await pageOf(org.token, { p: DANA, first: 3, after: whole.edges[19]!.cursor })).edges.map((edge) => edge.node.id)).toEqual(danaIds.slice(20, 23));
    expect((await pageOf(org.token, { p: DANA, first: 3, after: whole.edges[6]!.cursor })).edges.map((edge) => edge.node.id)).toEqual(danaIds.slice(7, 10));
    // The last edge's cursor: nothing after it.
    const end = await pageOf(org.token, { p: DANA, first: 5, after: pages[2]!.pageInfo.endCursor });
    expect([end.edges, end.pageInfo.hasNextPage, end.totalCount]).toEqual([[], false, 45]);

    // REST pages the same way.
    const restFirst = await listRest(org.token, { alphaId: DANA, first: '40' });
    expect(restFirst.body.data.map((account: { id: string }) => account.id)).toEqual(danaIds.slice(0, 40));
    expect(restFirst.body.page_info.has_next_page).toBe(true);
    const restRest = await listRest(org.token, { alphaId: DANA, first: '40', after: restFirst.body.page_info.end_cursor });
    expect(restRest.body.data.map((account: { id: string }) => account.id)).toEqual(danaIds.slice(40));
    expect(restRest.body.page_info.has_next_page).toBe(false);
  });

  it('reads only the provider pages a page needs; totalCount, when selected, reads the rest', async () => {
    const org = await createOrganizationFixture(t.em(), { accounts: 0 });
    await runConsent(t.url, org.token, { person: DANA, state: 'calls' });
    const callsOf = async (document: string, variables: Record<string, unknown>) => {
      const before = await accountListCalls();
      const answer = await accountsOf(org.token, variables, document);
      expect(answer.body.errors).toBeUndefined();
      return (await accountListCalls()) - before;
    };
    expect(await callsOf(PAGE_ONLY, { p: DANA, first: 5 })).toBe(1);
    expect(await callsOf(PAGE_ONLY, { p: DANA, first: 25 })).toBe(2);
    // The whole list: three pages, whether totalCount is selected or not.
    expect(await callsOf(PAGE_ONLY, { p: DANA, first: 45 })).toBe(3);
    expect(await callsOf(ACCOUNTS, { p: DANA, first: 45 })).toBe(3);
    // totalCount on the first page reads the two pages after it.
    expect(await callsOf(ACCOUNTS, { p: DANA, first: 5 })).toBe(3);
  });

  it('refuses a cursor that is not one of this list’s, and a page size out of bounds', async () => {
    const org = await createOrganizationFixture(t.em(), { accounts: 0 });
    await runConsent(t.url, org.token, { person: DANA, state: 'cursors' });
    await runConsent(t.url, org.token, { person: 'alpha-user-carol', state: 'carol' });
    const danaCursor = (await pageOf(org.token, { p: DANA, first: 2 })).pageInfo.endCursor!;
    const carolCursor = (await pageOf(org.token, { p: 'alpha-user-carol', first: 1 })).pageInfo.endCursor!;
    const tampered = `${danaCursor.slice(0, -2)}${danaCursor.endsWith('AA') ? 'BB' : 'AA'}`;
    for (const after of [carolCursor, tampered, 'not-a-cursor', Buffer.from('{"token":null,"skip":0,"offset":0}').toString('base64url')]) {
      const answer = await accountsOf(org.token, { p: DANA, after });
      expect({ after, errors: answer.body.errors }).toEqual({ after, errors: [expect.objectContaining({ message: expect.stringMatching(/^after: /), extensions: expect.objectContaining({ code: 'BAD_USER_INPUT' }) })] });
    }
    const rest = await listRest(org.token, { alphaId: DANA, after: carolCursor });
    expect([rest.status, rest.body]).toEqual([400, { error: 400, message: expect.stringMatching(/^after: /) }]);
    // Another organization cannot read Dana's list with a cursor of it.
    const other = await createOrganizationFixture(t.em(), { accounts: 0 });
    await runConsent(t.url, other.token, { person: DANA, state: 'other' });
    expect((await accountsOf(other.token, { p: DANA, after: danaCursor })).body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    for (const first of [0, 101, -1]) {
      expect((await accountsOf(org.token, { p: DANA, first })).body.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    }
    expect((await listRest(org.token, { alphaId: DANA, first: '0' })).status).toBe(400);
  });
});

describe('a provider that fails', () => {
  it('answers 503 with its own or a fixed text and Retry-After; the next try reads the list', async () => {
    const org = await createOrganizationFixture(t.em(), { accounts: 0 });
    await runConsent(t.url, org.token, { person: 'alpha-user-carol', state: 'failing' });
    const sandbox = sandboxOf(t.url);

    await sandbox.fail({ count: 1, status: 503, pathContains: '/v4/accounts' });
    const unavailable = await listRest(org.token, { alphaId: 'alpha-user-carol' });
    expect(unavailable.status).toBe(503);
    expect(unavailable.headers.get('retry-after')).toEqual(expect.stringMatching(/^\d+$/));
    expect(unavailable.body).toEqual({ error: 503, message: expect.stringMatching(/^The alpha provider could not list the accounts now; try again/) });

    await sandbox.fail({ count: 1, status: 0, pathContains: '/v4/accounts' });
    const dropped = await accountsOf(org.token, { p: 'alpha-user-carol' });
    expect(dropped.body.errors?.[0]).toMatchObject({ extensions: { code: 'SERVICE_UNAVAILABLE' }, message: expect.stringMatching(/could not be reached/) });
    expect(JSON.stringify(dropped.body)).not.toMatch(/fetch failed|UND_ERR|ECONN|socket/i);

    // The consent is untouched: the list is there, and connect still takes it.
    expect((await pageOf(org.token, { p: 'alpha-user-carol' })).edges).toHaveLength(2);
  });
});
