import { Client } from 'pg';
import { startWireCounter, type WireCounter } from '../dev/pg-wire-counter';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { http } from './support/http';
import { eventually } from './support/posts';
import { createTestDatabase, startTestStack, type TestStack } from './support/stack';

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let counter: WireCounter;
let stack: TestStack;
let org: OrganizationFixture;
let direct: Client;

beforeAll(async () => {
  database = await createTestDatabase();
  const url = new URL(database.url);
  counter = await startWireCounter({ host: url.hostname, port: Number(url.port) });
  stack = await startTestStack({ POST_RATE_LIMIT_PER_MINUTE: '1000' }, { sharedDatabaseUrl: counter.urlFor(database.url) });
  org = await createOrganizationFixture(stack.em(), { accounts: 1, locationsEach: 1, connected: true });
  direct = new Client({ connectionString: database.url });
  await direct.connect();
});
afterAll(async () => {
  await direct?.end();
  await stack?.close();
  await counter?.close();
  await database?.drop();
});

const accountId = () => org.accounts[0]!.account.id;
const createPost = (summary: string) =>
  http(stack.url, 'POST', `/post?account_id=${accountId()}`, {
    token: org.token,
    body: { location_id: org.accounts[0]!.locations[0]!.id, params: { summary } },
  });
const liveCount = async () => Number((await direct.query(`select count(*) from post where state = 'LIVE'`)).rows[0].count);

/**
 * What one post costs on the wire from POST /post to LIVE, every connection counted (the ORM's, pg-boss's, the event
 * bus's) by a protocol proxy between the service and PostgreSQL (dev/pg-wire-counter.ts): 40 posts created 10 at a
 * time, the workers in the same process. docs/write-path.md lists what each statement is.
 */
it('takes a post from POST /post to LIVE in few statements, counted on the wire', async () => {
  expect((await createPost('warm-up')).status).toBe(202);
  await eventually(async () => ((await liveCount()) === 1 ? true : undefined));
  counter.reset();
  const posts = 40;
  for (let i = 0; i < posts; i += 10) {
    const answers = await Promise.all(Array.from({ length: 10 }, (_, j) => createPost(`p ${i + j}`)));
    for (const a of answers) expect(a.status).toBe(202);
  }
  await eventually(async () => ((await liveCount()) === posts + 1 ? true : undefined));
  const counts = counter.counts();
  const per = (n: number) => (n / posts).toFixed(2);
  console.log(
    `per post: ${per(counts.statements)} statements, ${per(counts.roundTrips)} round trips, ${per(counts.notifies)} NOTIFYs, ${per(counts.begins)} transactions\n` +
      Object.entries(counts.shapes)
        .sort((a, b) => b[1] - a[1])
        .map(([shape, n]) => `${per(n)}  ${shape.slice(0, 140)}`)
        .join('\n'),
  );
  // docs/write-path.md: 6 statements of the post's own and its NOTIFYs, batched across concurrent changes.
  expect(counts.statements / posts).toBeLessThanOrEqual(9);
  expect(counts.roundTrips / posts).toBeLessThanOrEqual(9);
  expect(counts.begins).toBe(0);
}, 60000);
