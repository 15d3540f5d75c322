import { serverLog } from './support/server-log';
import { connect, connectAlice, importEnded, runConsent } from './support/consent';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { eventually, pollPost, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';

/**
 * Where failures meet clients: the consent flows, a synchronous provider call, and the records jobs write. Every
 * failure is logged once with its cause; what clients read is the provider's own text or a fixed one, never the
 * transport's (`fetch failed`, `UND_ERR_SOCKET`, `ECONNRESET`) nor an error of ours.
 */


const WARN = 40;
const ERROR = 50;
/** What a client must never read: the network stack's and the runtime's own words. */
const INTERNALS = /fetch failed|UND_ERR|ECONN|EPIPE|socket|TypeError|at \w+ \(|SqlError|insert into|select /i;


const captured = serverLog();
let t: TestStack;
let org: OrganizationFixture;
let mark = 0;
const logged = (level: number) => captured.lines.slice(mark).filter((line) => line.level === level);

beforeAll(async () => {
  t = await startTestStack({ JOB_RETRY_LIMIT: '1', JOB_RETRY_DELAY_SECONDS: '1' }, { log: { destination: captured.destination } });
  org = await createOrganizationFixture(t.em(), { accounts: 0 });
});
beforeEach(async () => {
  mark = captured.lines.length;
  await sandboxOf(t.url).reset();
});
afterAll(() => t?.close());

const query = (url: string) => new URL(url).searchParams;

describe('the consent flows', () => {
  it('a provider that drops the token call during reconnect: error_message is a fixed text, the cause is in the log', async () => {
    const accountId = await connectAlice(t.url, org.token);
    await sandboxOf(t.url).fail({ count: 1, status: 0, pathContains: '/oauth/token' });
    const answer = await http(t.url, 'POST', `/reconnect/account?${new URLSearchParams({ alphaId: 'alpha-user-alice', id: accountId, external_api: 'true', state: 's1' })}`, {
      token: org.token,
    });
    expect(answer.status).toBe(200);
    const outcome = query(answer.body.url);
    expect(outcome.get('status')).toBe('error');
    expect(outcome.get('error_message')).toMatch(/could not be reached/);
    expect(outcome.get('error_message')).not.toMatch(INTERNALS);
    const line = logged(WARN).find((entry) => entry.step === 'reconnect');
    expect(line?.err?.stack).toEqual(expect.any(String));
    expect(logged(ERROR)).toEqual([]);
    await importEnded(t.url, org.token, accountId);
  });

  it('a failed revocation at disconnect is logged, and the disconnect still succeeds', async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 0 });
    const accountId = await connectAlice(t.url, fixture.token);
    await sandboxOf(t.url).fail({ count: 1, status: 0, pathContains: '/oauth/revoke' });
    const answer = await http(t.url, 'DELETE', `/disconnect/account?${new URLSearchParams({ alphaId: accountId, external_api: 'true', state: 'd' })}`, {
      token: fixture.token,
    });
    expect(query(answer.body.url).get('status')).toBe('success_disconnect');
    expect(logged(WARN).some((entry) => entry.msg?.includes('revoking the tokens'))).toBe(true);
  });

  it('every callback outcome leaves a log line: a success, a person who declined', async () => {
    await runConsent(t.url, org.token, { state: 'fine' });
    await runConsent(t.url, org.token, { state: 'no', decline: true });
    const outcomes = captured.lines.slice(mark).filter((line) => line.msg === 'alpha consent callback');
    expect(outcomes.map((line) => (line as { outcome?: string }).outcome)).toEqual(['success', 'access_denied']);
  });
});

describe('a wrong client secret', () => {
  const ours = serverLog();
  let wrong: TestStack;
  beforeAll(async () => {
    wrong = await startTestStack({ ALPHA_CLIENT_SECRET: 'not-the-sandbox-secret' }, { log: { destination: ours.destination } });
  });
  afterAll(() => wrong?.close());

  it('is oauth_error for the person and an error an operator can act on in the log, not a declined consent', async () => {
    const fixture = await createOrganizationFixture(wrong.em(), { accounts: 0 });
    const consent = await runConsent(wrong.url, fixture.token, { state: 'secret' });
    expect(Object.fromEntries(consent.landed)).toEqual({ error: 'oauth_error', state: 'secret' });
    const errors = ours.lines.filter((line) => line.level === ERROR);
    expect(errors).toEqual([expect.objectContaining({ reason: 'invalid_client', msg: expect.stringContaining('client configuration') })]);
    // And nothing can be connected with it: the consent never completed.
    const connected = await connect(wrong.url, fixture.token, new URLSearchParams({ alphaId: 'alpha-user-alice', billing_id: fixture.organization.id }), '1001');
    expect([connected.status, connected.body]).toEqual([404, { error: 404, message: expect.stringMatching(/^Consent/) }]);
  });
});

describe('a synchronous provider call', () => {
  it('POST /review/answer while the provider drops the connection: 503 with a fixed text and Retry-After', async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 0 });
    const accountId = await connectAlice(t.url, fixture.token);
    const reviews = await graphql(t.url, 'query ($a: ID, $l: ID!) { reviews(accountId: $a, locationId: $l) { edges { node { name } } } }', {
      token: fixture.token,
      variables: { a: accountId, l: (await http(t.url, 'GET', `/location?account_id=${accountId}&store_code=alice-1`, { token: fixture.token })).body.data[0].id },
    });
    expect(reviews.body.errors).toBeUndefined();
    const name = reviews.body.data.reviews.edges[0].node.name as string;
    await sandboxOf(t.url).fail({ count: 1, status: 0, pathContains: '/reviews/' });
    const answer = await http(t.url, 'POST', `/review/answer?account_id=${accountId}`, { token: fixture.token, body: { review_id: name, answer: 'Thanks' } });
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('5');
    expect(answer.body).toEqual({ error: 503, message: expect.stringMatching(/could not be reached/) });
    expect(answer.body.message).not.toMatch(INTERNALS);
    expect(logged(ERROR)).toEqual([]);
  });
});

describe('records that jobs write', () => {
  it('a post whose provider stays unreachable ends ERROR with a fixed text in last_error', async () => {
    const fixture = await createOrganizationFixture(t.em(), { accounts: 1, locationsEach: 1, connected: true });
    const account = fixture.accounts[0]!;
    await sandboxOf(t.url).fail({ count: 10, status: 0, method: 'POST', pathContains: '/localPosts' });
    const created = await http(t.url, 'POST', `/post?account_id=${account.account.id}`, {
      token: fixture.token,
      body: { location_id: account.locations[0]!.id, params: { topicType: 'STANDARD', languageCode: 'en', summary: 'Open late today' } },
    });
    expect(created.status).toBe(202);
    const failed = await pollPost(t.url, fixture.token, account.account.id, created.body.payload.id, (post) => post.state === 'ERROR', 40000);
    expect(failed.last_error).toMatchObject({ status: 0, reason: 'NETWORK_ERROR', message: expect.stringMatching(/could not be reached/) });
    expect(failed.last_error.message).not.toMatch(INTERNALS);
    // Dead-lettered, and settled: the record keeps what its last attempt recorded.
    await eventually(async () => {
      const rows = await t.em().getConnection().execute<{ state: string }[]>(`select state from pgboss.job where name = 'post-publish-dead' and data->>'postId' = ?`, [failed.id]);
      return rows.some((row) => row.state === 'completed') ? true : undefined;
    }, 20000, 'the settled dead letter');
    expect((await pollPost(t.url, fixture.token, account.account.id, failed.id)).last_error.reason).toBe('NETWORK_ERROR');
  });
});
