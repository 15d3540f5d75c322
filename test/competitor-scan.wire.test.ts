import type { Client } from 'pg';
import type { WireCounter, WireCounts } from '../dev/pg-wire-counter';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql } from './support/http';
import type { TestStack } from './support/stack';
import { startWireStack, type WireStack } from './support/wire-stack';

/*
 * What a competitor scan's request costs on the wire, from runCompetitorScan to its answer, every connection counted
 * (the ORM's, pg-boss's, the event bus's) by a protocol proxy (dev/pg-wire-counter.ts); and that its limits (two
 * windows and the organization's cap on scans running) admit it or write nothing, under concurrency too. The API
 * alone runs (ROLE=api): no worker takes the jobs, so the scans stay QUEUED and the window holds the request's
 * statements only. docs/write-path.md, "What a competitor scan costs".
 */

let wire: WireStack;
let counter: WireCounter;
let stack: TestStack;
let direct: Client;

const CAP = 3;

beforeAll(async () => {
  wire = await startWireStack({ ROLE: 'api', SCANS_RUNNING_LIMIT: String(CAP), SCAN_START_RATE_LIMIT_PER_HOUR: '1000', SCAN_SEARCH_RATE_LIMIT_PER_HOUR: '10000' });
  ({ counter, stack, direct } = wire);
});
afterAll(async () => {
  await wire?.close();
});

/** An organization with one location a scan can run on (coordinates and a place id). */
async function scanner(name: string): Promise<{ org: OrganizationFixture; accountId: string; locationId: string }> {
  const org = await createOrganizationFixture(stack.em(), { name, accounts: 1, locationsEach: 1 });
  const locationId = org.accounts[0]!.locations[0]!.id;
  await direct.query(`update location set latitude = 48.85, longitude = 2.35, place_id = $2 where id = $1`, [locationId, `place-${name}`]);
  return { org, accountId: org.accounts[0]!.account.id, locationId };
}

type Scanner = Awaited<ReturnType<typeof scanner>>;

const start = (who: Scanner, rings = 0) =>
  graphql(stack.url, 'mutation ($a: ID, $l: ID!, $r: Int!) { runCompetitorScan(accountId: $a, locationId: $l, text: "bakery", radiusKm: 2, rings: $r) { id status rings } }', {
    token: who.org.token,
    variables: { a: who.accountId, l: who.locationId, r: rings },
  });

/** The window's counts, printed with the statements' shapes. */
function report(what: string): WireCounts {
  const counts = counter.counts();
  console.log(
    `${what}: ${counts.statements} statements, ${counts.roundTrips} round trips, ${counts.notifies} NOTIFYs, ${counts.begins} transactions\n` +
      Object.entries(counts.shapes)
        .sort((a, b) => b[1] - a[1])
        .map(([shape, n]) => `${n}  ${shape.slice(0, 160)}`)
        .join('\n'),
  );
  return counts;
}

/** What the organization's scans wrote, counted in every table a start writes to. */
async function written(who: Scanner) {
  const count = async (sql: string, values: unknown[]) => Number((await direct.query(sql, values)).rows[0].count);
  const organizationId = who.org.organization.id;
  return {
    scans: await count(`select count(*) from competitor_scan where organization_id = $1`, [organizationId]),
    events: await count(`select count(*) from activity_event where type = 'competitor_scan.status_changed' and organization_id = $1`, [organizationId]),
    jobs: await count(`select count(*) from pgboss.job j join competitor_scan s on s.id = (j.data->>'scanId')::uuid where j.name = 'competitor-scan' and s.organization_id = $1`, [
      organizationId,
    ]),
    works: await count(`select count(*) from async_work where kind = 'COMPETITOR_SCAN' and status = 'QUEUED' and organization_id = $1`, [organizationId]),
    starts: await count(`select coalesce(sum(weight), 0) as count from rate_limit_event where bucket = $1`, [`scan-starts:${organizationId}`]),
    searches: await count(`select coalesce(sum(weight), 0) as count from rate_limit_event where bucket = $1`, [`scan-searches:${organizationId}`]),
  };
}

it('starts a scan in few statements, counted on the wire, with all that goes with it', async () => {
  const who = await scanner('Wire Scans');
  expect((await start(who)).body.errors).toBeUndefined();
  const before = await written(who);
  counter.reset();
  const answer = await start(who, 1);
  const counts = report('runCompetitorScan, mutation to answer');
  expect(answer.body.errors).toBeUndefined();
  expect(answer.body.data.runCompetitorScan).toMatchObject({ status: 'QUEUED', rings: 1 });
  // docs/write-path.md: the account and the location read; the scan with its event, its job and its work, its two
  // rate limits and the cap on scans running that admit it, one statement.
  expect(counts.statements).toBeLessThanOrEqual(3);
  expect(counts.begins).toBe(0);
  // A scan of one ring makes 9 searches.
  expect(await written(who)).toEqual({ ...before, scans: 2, events: 2, jobs: 2, works: 2, starts: before.starts + 1, searches: before.searches + 9 });
}, 60000);

it('lets exactly the cap of concurrent starts through, and writes nothing of the others, their counts included', async () => {
  const who = await scanner('Wire Concurrent Scans');
  const answers = await Promise.all(Array.from({ length: 3 * CAP }, () => start(who)));
  const refused = answers.filter((answer) => answer.body.errors);
  expect(answers.length - refused.length).toBe(CAP);
  for (const answer of refused) {
    expect(answer.body.errors).toEqual([
      expect.objectContaining({
        message: `${CAP} scans of the organization are queued or running, the most allowed at once (${CAP}): try again when one ends`,
        extensions: { code: 'RATE_LIMIT_EXCEEDED', payload: { allowed: false, limit: CAP, remaining: 0, retryAfter: 30 } },
      }),
    ]);
    expect(answer.headers.get('retry-after')).toBe('30');
  }
  expect(await written(who)).toEqual({ scans: CAP, events: CAP, jobs: CAP, works: CAP, starts: CAP, searches: CAP });
}, 60000);
