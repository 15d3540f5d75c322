import { Client } from 'pg';
import { startWireCounter, type WireCounter, type WireCounts } from '../dev/pg-wire-counter';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { http } from './support/http';
import { minimalLocationBody } from './support/locations';
import { eventually } from './support/posts';
import { createTestDatabase, startTestStack, type TestStack } from './support/stack';

/*
 * What an asynchronous command costs on the wire, every connection counted (the ORM's, pg-boss's, the event bus's)
 * by a protocol proxy between the service and PostgreSQL (dev/pg-wire-counter.ts), the workers in the same process.
 * docs/write-path.md lists what each statement is.
 */

let database: Awaited<ReturnType<typeof createTestDatabase>>;
let counter: WireCounter;
let stack: TestStack;
let org: OrganizationFixture;
let direct: Client;

beforeAll(async () => {
  database = await createTestDatabase();
  const url = new URL(database.url);
  counter = await startWireCounter({ host: url.hostname, port: Number(url.port) });
  stack = await startTestStack(
    { POST_RATE_LIMIT_PER_MINUTE: '1000', LOCATION_UPDATE_RATE_LIMIT_PER_HOUR: '1000', LOCATION_CREATE_RATE_LIMIT_PER_MINUTE: '1000' },
    { sharedDatabaseUrl: counter.urlFor(database.url) },
  );
  org = await createOrganizationFixture(stack.em(), { accounts: 1, locationsEach: 1, connected: true, alphaAccounts: true });
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
const succeededCount = async () => Number((await direct.query(`select count(*) from location_update_job where status = 'SUCCEEDED'`)).rows[0].count);

/** The window's counts per unit of work, printed with the statements' shapes. */
function report(what: string, units: number): WireCounts {
  const counts = counter.counts();
  const per = (n: number) => (n / units).toFixed(2);
  console.log(
    `${what}, per unit: ${per(counts.statements)} statements, ${per(counts.roundTrips)} round trips, ${per(counts.notifies)} NOTIFYs, ${per(counts.begins)} transactions\n` +
      Object.entries(counts.shapes)
        .sort((a, b) => b[1] - a[1])
        .map(([shape, n]) => `${per(n)}  ${shape.slice(0, 140)}`)
        .join('\n'),
  );
  return counts;
}

/**
 * Transactions of the write path: every BEGIN but pg-boss's housekeeping, which takes its advisory lock in a
 * transaction of its own on its own schedule (a maintenance run may fall into the window or not).
 */
function writeTransactions(counts: WireCounts): number {
  const housekeeping = Object.entries(counts.shapes)
    .filter(([shape]) => shape.startsWith('BEGIN; SET LOCAL lock_timeout') && shape.includes('pg_advisory_xact_lock'))
    .reduce((sum, [, n]) => sum + n, 0);
  return counts.begins - housekeeping;
}

/** 40 posts created 10 at a time, from POST /post to LIVE. */
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
  const counts = report('POST /post to LIVE', posts);
  // docs/write-path.md: 6 statements of the post's own and its NOTIFYs, batched across concurrent changes.
  expect(counts.statements / posts).toBeLessThanOrEqual(9);
  expect(counts.roundTrips / posts).toBeLessThanOrEqual(9);
  expect(writeTransactions(counts)).toBe(0);
}, 60000);

/** 20 of those LIVE posts deleted, 10 at a time, from DELETE /post/{id} to DELETED. */
it('takes a post from DELETE to DELETED in few statements, counted on the wire', async () => {
  const { rows } = await direct.query(`select id from post where state = 'LIVE' order by id limit 20`);
  const ids = rows.map((row: { id: string }) => row.id);
  expect(ids).toHaveLength(20);
  counter.reset();
  for (let i = 0; i < ids.length; i += 10) {
    const answers = await Promise.all(ids.slice(i, i + 10).map((id) => http(stack.url, 'DELETE', `/post/${id}?account_id=${accountId()}`, { token: org.token })));
    for (const answer of answers) expect(answer.status).toBe(202);
  }
  const deleted = async () => Number((await direct.query(`select count(*) from post where state = 'DELETED' and id = any($1)`, [ids])).rows[0].count);
  await eventually(async () => ((await deleted()) === ids.length ? true : undefined));
  const counts = report('DELETE /post/{id} to DELETED', ids.length);
  // The request reads the post and changes it with its event, job and work in one statement; the job reads with its
  // work RUNNING and ends DELETED with its event, completion and work in one statement (docs/write-path.md).
  expect(counts.statements / ids.length).toBeLessThanOrEqual(7);
  expect(counts.roundTrips / ids.length).toBeLessThanOrEqual(7);
  expect(writeTransactions(counts)).toBe(0);
}, 60000);

/** 20 location updates (one per location: one at a time each), 10 at a time, from PATCH to SUCCEEDED. */
it('takes a location update from PATCH to SUCCEEDED in few statements, counted on the wire', async () => {
  // Locations the provider knows: created through POST /location and connected by their publish jobs.
  const locations: string[] = [];
  for (let i = 0; i < 21; i += 1) {
    const answer = await http(stack.url, 'POST', `/location?account_id=${accountId()}`, {
      token: org.token,
      body: minimalLocationBody({ name: `Wire Bakery ${i}`, reference_id: `wire-${i}`, category_id: 'gcid:bakery' }),
    });
    expect(answer.status).toBe(200);
    locations.push(answer.body.payload.location_id as string);
  }
  const connected = async () => Number((await direct.query('select count(*) from location where connected and id = any($1)', [locations])).rows[0].count);
  await eventually(async () => ((await connected()) === locations.length ? true : undefined), 30000, 'the locations to be connected');
  const patch = (locationId: string, description: string) =>
    http(stack.url, 'PATCH', `/location/update?account_id=${accountId()}&location_id=${locationId}`, { token: org.token, body: { description } });
  expect((await patch(locations[0]!, 'warm-up')).status).toBe(200);
  await eventually(async () => ((await succeededCount()) === 1 ? true : undefined));
  counter.reset();
  const updates = locations.slice(1);
  for (let i = 0; i < updates.length; i += 10) {
    const answers = await Promise.all(updates.slice(i, i + 10).map((id, j) => patch(id, `Update ${i + j}`)));
    for (const answer of answers) expect(answer.status).toBe(200);
  }
  await eventually(async () => ((await succeededCount()) === updates.length + 1 ? true : undefined));
  const counts = report('PATCH /location/update to SUCCEEDED', updates.length);
  // docs/write-path.md: one read, the limit, the job's insert with its event, job and work; its read with its work
  // RUNNING, RUNNING with its event, SUCCEEDED with the location, event, completion and work; and their NOTIFYs.
  expect(counts.statements / updates.length).toBeLessThanOrEqual(10);
  expect(counts.roundTrips / updates.length).toBeLessThanOrEqual(10);
  expect(writeTransactions(counts)).toBe(0);
}, 60000);
