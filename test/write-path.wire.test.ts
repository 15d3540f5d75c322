import type { Client } from 'pg';
import { Account } from '../src/account/account.entity';
import { Location } from '../src/location/location.entity';
import { Organization } from '../src/organization/organization.entity';
import { reviewFieldsOf } from '../src/review/review.alpha-mapping';
import { Review } from '../src/review/review.entity';
import type { WireCounter, WireCounts } from '../dev/pg-wire-counter';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { betaConsent } from './support/job-faults';
import { minimalLocationBody } from './support/locations';
import { eventually, sandboxOf } from './support/posts';
import type { TestStack } from './support/stack';
import { startWireStack, type WireStack } from './support/wire-stack';

/*
 * What an asynchronous command costs on the wire, every connection counted (the ORM's, pg-boss's, the event bus's)
 * by a protocol proxy between the service and PostgreSQL (dev/pg-wire-counter.ts), the workers in the same process.
 * docs/write-path.md lists what each statement is.
 */

let wire: WireStack;
let counter: WireCounter;
let stack: TestStack;
let org: OrganizationFixture;
let direct: Client;

beforeAll(async () => {
  wire = await startWireStack({
    POST_RATE_LIMIT_PER_MINUTE: '1000',
    LOCATION_UPDATE_RATE_LIMIT_PER_HOUR: '1000',
    LOCATION_CREATE_RATE_LIMIT_PER_MINUTE: '1000',
    SCANS_RUNNING_LIMIT: '100',
    SCAN_START_RATE_LIMIT_PER_HOUR: '1000',
  });
  ({ counter, stack, direct } = wire);
  org = await createOrganizationFixture(stack.em(), { accounts: 1, locationsEach: 1, connected: true, alphaAccounts: true });
});
afterAll(async () => {
  await wire?.close();
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
  // docs/write-path.md: the post's statement (its location as the warm-up read it, checked by the statement) and its
  // LIVE one, and its share of its batch's fetch and read: 2.8 (4.05 to 4.25 with a location read before each post).
  expect(counts.statements / posts).toBeLessThanOrEqual(4);
  expect(counts.roundTrips / posts).toBeLessThanOrEqual(4);
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

/** Locations the provider knows: created through POST /location and connected by their publish jobs. */
const locations: string[] = [];

/** 21 locations of a connected account created, 10 at a time after the first, from POST /location to connected. */
it('takes a location from POST /location to connected in few statements, counted on the wire', async () => {
  const create = async (i: number) => {
    const answer = await http(stack.url, 'POST', `/location?account_id=${accountId()}`, {
      token: org.token,
      body: minimalLocationBody({ name: `Wire Bakery ${i}`, reference_id: `wire-${i}`, category_id: 'gcid:bakery' }),
    });
    expect(answer.status).toBe(200);
    return answer.body.payload.location_id as string;
  };
  const connected = async (ids: string[]) => Number((await direct.query('select count(*) from location where connected and id = any($1)', [ids])).rows[0].count);
  locations.push(await create(0));
  await eventually(async () => ((await connected(locations)) === 1 ? true : undefined), 30000, 'the first location to be connected');
  counter.reset();
  for (let i = 1; i < 21; i += 10) locations.push(...(await Promise.all(Array.from({ length: 10 }, (_, j) => create(i + j)))));
  await eventually(async () => ((await connected(locations)) === locations.length ? true : undefined), 30000, 'the locations to be connected');
  const counts = report('POST /location to connected', locations.length - 1);
  // The request reads the account, then counts it and writes the location, its job and its work in one statement
  // (7 statements and a transaction before); the job reads the location with its work RUNNING and connects it with
  // its event, its completion and its work in one statement guarded by the version read (docs/write-path.md). 18.65
  // statements and 2 transactions before, 12.1 and 1 with the job's side in a transaction under the row lock.
  expect(counts.statements / (locations.length - 1)).toBeLessThanOrEqual(6);
  expect(counts.roundTrips / (locations.length - 1)).toBeLessThanOrEqual(6);
  expect(writeTransactions(counts)).toBe(0);
}, 60000);

/** 20 location updates (one per location: one at a time each), 10 at a time, from PATCH to SUCCEEDED. */
it('takes a location update from PATCH to SUCCEEDED in few statements, counted on the wire', async () => {
  expect(locations).toHaveLength(21);
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
  // docs/write-path.md: one read, the limit, the job's insert with its event, job and work; its read with the job and
  // its work RUNNING and their events, SUCCEEDED with the location, event, completion and work; the fetches (at most
  // one a job); the NOTIFYs in those statements.
  expect(counts.statements / updates.length).toBeLessThanOrEqual(6);
  expect(counts.roundTrips / updates.length).toBeLessThanOrEqual(6);
  expect(writeTransactions(counts)).toBe(0);
}, 60000);

/** 20 replies to reviews, 10 at a time, from POST /review/answer to ACTIVE: the claim, the send job, its check. */
it('takes a review reply from POST /review/answer to ACTIVE in few statements, counted on the wire', async () => {
  // Reviews on a location the provider knows (the previous case's), as its import would have kept them.
  const { rows } = await direct.query(`select id, alpha_location_name from location where connected and name like 'Wire Bakery %' order by id limit 1`);
  expect(rows).toHaveLength(1);
  const { id: locationId, alpha_location_name: locationName } = rows[0] as { id: string; alpha_location_name: string };
  const remote = await sandboxOf(stack.url).addReviews(
    locationName,
    Array.from({ length: 21 }, (_, n) => ({ reviewId: `wire-${n}`, starRating: 'FIVE' as const, reviewer: { displayName: `Guest ${n}` }, comment: 'Lovely' })),
  );
  const em = stack.em();
  for (const review of remote) {
    em.create(Review, {
      ...reviewFieldsOf(review),
      organization: em.getReference(Organization, org.organization.id),
      account: em.getReference(Account, accountId()),
      location: em.getReference(Location, locationId),
    });
  }
  await em.flush();
  const answer = (name: string, text: string) => http(stack.url, 'POST', `/review/answer?account_id=${accountId()}`, { token: org.token, body: { review_id: name, answer: text } });
  const active = async () => Number((await direct.query(`select count(*) from review where reply_state = 'ACTIVE' and location_id = $1`, [locationId])).rows[0].count);
  expect((await answer(remote[0]!.name, 'Thank you')).status).toBe(200);
  await eventually(async () => ((await active()) === 1 ? true : undefined));
  counter.reset();
  const replies = remote.slice(1);
  for (let i = 0; i < replies.length; i += 10) {
    const answers = await Promise.all(replies.slice(i, i + 10).map((review, j) => answer(review.name, `Thank you, guest ${i + j}`)));
    for (const a of answers) expect(a.status).toBe(200);
  }
  await eventually(async () => ((await active()) === replies.length + 1 ? true : undefined));
  const counts = report('POST /review/answer to ACTIVE', replies.length);
  // docs/write-path.md: the review read, the claim with its event, send job and work; the send job's read with its
  // work RUNNING, its end with the check's job and work and its own completion; the check's read, its end with the
  // event and completion; the jobs taken, and the NOTIFYs.
  expect(counts.statements / replies.length).toBeLessThanOrEqual(11);
  expect(counts.roundTrips / replies.length).toBeLessThanOrEqual(11);
  expect(writeTransactions(counts)).toBe(0);
}, 60000);

/** 20 competitor scans of one dot, 10 at a time, from runCompetitorScan to COMPLETED. */
it('takes a competitor scan from its start to COMPLETED in few statements, counted on the wire', async () => {
  // A location the provider knows (the location case's), placed on the map.
  const { rows } = await direct.query(
    `update location set latitude = 52.52, longitude = 13.4, place_id = coalesce(place_id, 'wire-place') where id = (select id from location where connected and name like 'Wire Bakery %' order by id limit 1) returning id`,
  );
  const locationId = (rows[0] as { id: string }).id;
  const start = async () => {
    const answer = await graphql(stack.url, 'mutation ($a: ID, $l: ID!) { runCompetitorScan(accountId: $a, locationId: $l, text: "bakery", radiusKm: 2, rings: 0) { id } }', {
      token: org.token,
      variables: { a: accountId(), l: locationId },
    });
    expect(answer.body.errors).toBeUndefined();
  };
  const completed = async () => Number((await direct.query(`select count(*) from competitor_scan where status = 'completed' and location_id = $1`, [locationId])).rows[0].count);
  await start();
  await eventually(async () => ((await completed()) === 1 ? true : undefined));
  counter.reset();
  const scans = 20;
  for (let i = 0; i < scans; i += 10) await Promise.all(Array.from({ length: 10 }, start));
  await eventually(async () => ((await completed()) === scans + 1 ? true : undefined));
  const counts = report('runCompetitorScan to COMPLETED', scans);
  // docs/write-path.md: the request's two reads, then the scan with its event, its job and its work, its two rate
  // limits and the cap on scans running, one statement; the job's read with its work RUNNING, RUNNING with its
  // event, its one progress, the location and its latest post read, COMPLETED with its event and the job's
  // completion with its work; the jobs taken, and the NOTIFYs.
  expect(counts.statements / scans).toBeLessThanOrEqual(13);
  expect(counts.roundTrips / scans).toBeLessThanOrEqual(13);
  expect(writeTransactions(counts)).toBe(0);
}, 60000);

describe('a beta brand', () => {
  let betaOrg: OrganizationFixture;
  let segments: string[] = [];
  const brands = 20;
  const syncStatus = async (status: string) =>
    Number((await direct.query(`select count(*) from beta_brand where beta_sync_status = $1 and segment_id = any($2)`, [status, segments])).rows[0].count);
  const createBrand = async (n: number) => {
    const answer = await graphql(stack.url, 'mutation ($input: CreateBetaBrandInput!) { createBetaBrand(input: $input) { segmentId } }', {
      token: betaOrg.token,
      variables: { input: { betaCompanyId: 'company-1001', brandName: `Wire Brand ${n}`, countryCode: 'us', primaryCategory: 'coffee_shop', ownershipType: 'BRAND_OWNER' } },
    });
    expect(answer.body.errors).toBeUndefined();
    return answer.body.data.createBetaBrand.segmentId as string;
  };

  beforeAll(async () => {
    betaOrg = await createOrganizationFixture(stack.em(), { name: 'Wire beta org', accounts: 0, betaApi: true });
    await betaConsent(stack.url, betaOrg.token, 'company-1001');
    // A warm-up brand: the first push of its kind prepares statements the others reuse.
    segments = [await createBrand(0)];
    await eventually(async () => ((await syncStatus('SYNCED')) === 1 ? true : undefined));
  });

  /** 20 brands created 10 at a time, from createBetaBrand to SYNCED at the provider. */
  it('takes a brand from its creation to SYNCED in few statements, counted on the wire', async () => {
    counter.reset();
    for (let i = 1; i <= brands; i += 10) segments.push(...(await Promise.all(Array.from({ length: 10 }, (_, j) => createBrand(i + j)))));
    await eventually(async () => ((await syncStatus('SYNCED')) === brands + 1 ? true : undefined));
    const counts = report('createBetaBrand to SYNCED', brands);
    // docs/write-path.md: the company's consent read; the brand with its event, job and work; the job's read with its
    // work RUNNING; SYNCED with its event and the job's completion with its work; the jobs taken, and the NOTIFYs.
    expect(counts.statements / brands).toBeLessThanOrEqual(8);
    expect(counts.roundTrips / brands).toBeLessThanOrEqual(8);
    expect(writeTransactions(counts)).toBe(0);
  }, 60000);

  /** The 20 brands changed 10 at a time, from PATCH /beta/brands/{segment_id} to SYNCED again. */
  it('takes a brand from PATCH to SYNCED in few statements, counted on the wire', async () => {
    const changed = segments.slice(1);
    const patched = async () => Number((await direct.query(`select count(*) from beta_brand where beta_sync_status = 'SYNCED' and brand_name like 'Wire Patched %'`)).rows[0].count);
    counter.reset();
    for (let i = 0; i < changed.length; i += 10) {
      const answers = await Promise.all(
        changed.slice(i, i + 10).map((segmentId, j) => http(stack.url, 'PATCH', `/beta/brands/${segmentId}`, { token: betaOrg.token, body: { brand_name: `Wire Patched ${i + j}` } })),
      );
      for (const answer of answers) expect(answer.status).toBe(200);
    }
    await eventually(async () => ((await patched()) === changed.length ? true : undefined));
    const counts = report('PATCH /beta/brands/{segment_id} to SYNCED', changed.length);
    // The brand read, its change with its event, job and work; then as a creation's push.
    expect(counts.statements / changed.length).toBeLessThanOrEqual(8);
    expect(counts.roundTrips / changed.length).toBeLessThanOrEqual(8);
    expect(writeTransactions(counts)).toBe(0);
  }, 60000);

  /** The 20 brands deleted 10 at a time, from DELETE /beta/brands/{segment_id} to their row gone. */
  it('takes a brand from DELETE to gone in few statements, counted on the wire', async () => {
    const deleted = segments.slice(1);
    const left = async () => Number((await direct.query(`select count(*) from beta_brand where segment_id = any($1)`, [deleted])).rows[0].count);
    counter.reset();
    for (let i = 0; i < deleted.length; i += 10) {
      const answers = await Promise.all(deleted.slice(i, i + 10).map((segmentId) => http(stack.url, 'DELETE', `/beta/brands/${segmentId}`, { token: betaOrg.token })));
      for (const answer of answers) expect(answer.status).toBe(200);
    }
    await eventually(async () => ((await left()) === 0 ? true : undefined));
    const counts = report('DELETE /beta/brands/{segment_id} to gone', deleted.length);
    // The brand read, deletedAt with its event, job and work; the job's read with its work RUNNING; the row deleted
    // with the job's completion and its work; the jobs taken, and the NOTIFYs.
    expect(counts.statements / deleted.length).toBeLessThanOrEqual(8);
    expect(counts.roundTrips / deleted.length).toBeLessThanOrEqual(8);
    expect(writeTransactions(counts)).toBe(0);
  }, 60000);
});

/**
 * An idle process fetches nothing: its loops wait for wake-ups, and what none announces (a job put off to later, a
 * retry's backoff ending) is found by one look at every idle loop's queue per interval (src/jobs/fetch-loop.ts).
 */
it('looks for due jobs in one statement per interval while idle, not a fetch per queue', async () => {
  const looks = (counts: WireCounts) => sumOfShapes(counts, (shape) => shape.startsWith('select q.name from unnest('));
  const fetches = (counts: WireCounts) => sumOfShapes(counts, (shape) => /^WITH next as \( SELECT id, singleton_key, policy FROM pgboss\.job/i.test(shape));
  counter.reset();
  // Three looks: about six seconds, in which the eleven workers' and their dead letters' loops polling each on its
  // own (every two seconds, and at pg-boss's maintenance interval) made 33 fetches or more.
  const counts = await eventually(async () => {
    const now = counter.counts();
    return looks(now) >= 3 ? now : undefined;
  }, 20000, 'three looks for due jobs');
  report('idle, three looks for due jobs', 1);
  // A job an earlier test put off to later may come due in the window: a fetch for it.
  expect(fetches(counts)).toBeLessThanOrEqual(2);
  expect(counts.statements).toBeLessThanOrEqual(looks(counts) + fetches(counts) + 3);
}, 30000);

function sumOfShapes(counts: WireCounts, matches: (shape: string) => boolean): number {
  return Object.entries(counts.shapes)
    .filter(([shape]) => matches(shape))
    .reduce((sum, [, n]) => sum + n, 0);
}
