import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { http } from './support/http';
import { eventually } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';

/**
 * What a post costs the database: the SQL statements of one create (an API process without workers, so nothing
 * else runs) and of one publish (a worker process on the same database, publishing what the API queued). The
 * figures are printed; the bounds fail the suite when a change adds statements to these paths. pg-boss's own
 * statements (one fetch per batch of jobs) run on its own pool and are not counted here; test/posts.wire.test.ts
 * counts everything on the wire.
 */
let api: TestStack;
let worker: TestStack | undefined;
let org: OrganizationFixture;

beforeAll(async () => {
  api = await startTestStack({ ROLE: 'api', POST_RATE_LIMIT_PER_MINUTE: '1000' });
  org = await createOrganizationFixture(api.em(), { accounts: 1, locationsEach: 1, connected: true });
});
afterAll(async () => {
  await worker?.close();
  await api.close();
});

const accountId = () => org.accounts[0]!.account.id;
const createPost = (summary: string, headers: Record<string, string> = {}) =>
  http(api.url, 'POST', `/post?account_id=${accountId()}`, {
    token: org.token,
    body: { location_id: org.accounts[0]!.locations[0]!.id, params: { summary } },
    headers,
  });

async function statementsOf(action: () => Promise<unknown>, stack: TestStack): Promise<number> {
  const before = stack.statementCount();
  await action();
  return stack.statementCount() - before;
}

describe('SQL statements per post', () => {
  it('creates a post in one statement, and publishes it in at most 3', async () => {
    // The first request warms the token cache and the ORM; the measured ones are steady state.
    expect((await createPost('warm-up')).status).toBe(202);
    const plain: number[] = [];
    for (let i = 0; i < 5; i += 1) plain.push(await statementsOf(async () => expect((await createPost(`plain ${i}`)).status).toBe(202), api));
    const keyed = await statementsOf(async () => expect((await createPost('keyed', { 'Idempotency-Key': 'k-1' })).status).toBe(202), api);
    const replay = await statementsOf(async () => expect((await createPost('keyed', { 'Idempotency-Key': 'k-1' })).status).toBe(202), api);

    // 7 posts queued above; 13 more, so what a worker's start does spreads thin.
    const queued = 20;
    for (let i = 0; i < queued - 7; i += 1) expect((await createPost(`more ${i}`)).status).toBe(202);
    worker = await startTestStack(
      { ROLE: 'worker', ALPHA_API_URL: `${api.url}/sandbox/alpha`, BETA_API_URL: `${api.url}/sandbox/beta`, SANDBOX: 'off' },
      { sharedDatabaseUrl: api.databaseUrl },
    );
    const started = worker.statementCount();
    await eventually(
      async () => {
        const listed = await http(api.url, 'GET', `/post?account_id=${accountId()}&state=LIVE&per_page=100`, { token: org.token });
        return listed.body.payload.found === queued ? true : undefined;
      },
      30000,
      'every queued post to go LIVE',
    );
    const perPublish = (worker.statementCount() - started) / queued;
    console.log(
      `statements: create ${plain.join(', ')} (with an Idempotency-Key ${keyed}, its replay ${replay}); publish ${perPublish.toFixed(1)} per post (pg-boss's own not counted)`,
    );
    // docs/write-path.md: a create counts its limits and writes the post, its event, its job and its work in one
    // statement, which first checks that the location is as this process last read it. A publish: its read with its work RUNNING, and LIVE
    // with its event, the job's completion and its work SUCCEEDED in one. The worker's start (the webhook dispatcher's
    // first look, the retention sweep) may fall in the window: spread over 20 posts. A keyed create first looks for
    // its key's post and reads its location, then writes the key's row with the rest in the same one statement (13
    // statements in a transaction before).
    // A plain create after the first is one statement: the location the warm-up read is checked by the statement
    // itself (docs/write-path.md, "A post's location as last read"). The worst of five may meet a background look.
    expect([...plain].sort((a, b) => a - b)[2]).toBe(1);
    for (const count of plain) expect(count).toBeLessThanOrEqual(2);
    expect(keyed).toBeLessThanOrEqual(4);
    expect(replay).toBeLessThanOrEqual(4);
    expect(perPublish).toBeLessThanOrEqual(3);
  }, 60000);
});
