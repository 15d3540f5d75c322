import { Account } from '../src/account/account.entity';
import { expectSucceeded, waitForWork, workProbe } from './support/async-work';
import { createOrganizationFixture, type OrganizationFixture } from './support/fixtures';
import { graphql, http } from './support/http';
import { eventually, sandboxOf } from './support/posts';
import { startTestStack, type TestStack } from './support/stack';
import { subscribe } from './support/ws';

/**
 * Competitor scans run end to end over HTTP: a location created and published to the sandbox, a market of
 * businesses around it set in the sandbox, a scan started in GraphQL and run by its job, and GET /competitor-scan
 * checked field by field. The one-dot case is small enough to work out by hand from the sandbox's ranking
 * (docs/alpha-sandbox.md): score = rating × ln(1 + reviews) ÷ (1 + km from the dot), within the search radius.
 */

let t: TestStack;
let org: OrganizationFixture;
let accountId: string;
let locationId: string;
let alphaLocationName: string;

/** Far from the sandbox's seeded shops (Berlin), so the market around it is the test's alone. */
const CENTER = { lat: 48.85, lng: 2.35 };
/** Degrees per kilometre here: north-south, and east-west at this latitude. */
const LAT_PER_KM = 1 / 111.195;
const LNG_PER_KM = 1 / (111.195 * Math.cos((CENTER.lat * Math.PI) / 180));

beforeAll(async () => {
  t = await startTestStack({ LOCATION_READ_RATE_LIMIT_PER_MINUTE: '100000' });
  org = await createOrganizationFixture(t.em(), { accounts: 1 });
  accountId = org.accounts[0]!.account.id;
  const em = t.em();
  const account = await em.findOneOrFail(Account, accountId);
  account.alphaAccountId = 'alpha-scans';
  await em.flush();
  const created = await http(t.url, 'POST', `/location?account_id=${accountId}`, {
    token: org.token,
    body: {
      name: 'Client Coffee',
      category_id: 'gcid:coffee_shop',
      country_code: 'FR',
      address: '1 Rue de Rivoli',
      city: 'Paris',
      postal: '75001',
      latitude: CENTER.lat,
      longitude: CENTER.lng,
      website_uri: 'https://client-coffee.example',
    },
  });
  locationId = created.body.payload.location_id;
  const connected = await eventually(async () => {
    const list = await http(t.url, 'GET', `/location?account_id=${accountId}&include_fields=connected,alpha_location_name`, { token: org.token });
    const location = list.body.data.find((item: { id: string; connected: boolean }) => item.id === locationId && item.connected);
    return location ?? undefined;
  }, 30000, 'the location to be published');
  alphaLocationName = connected.alpha_location_name;
  // The client's own rating at the provider: two reviews, five and three stars (4.0 from 2).
  await sandboxOf(t.url).addReviews(alphaLocationName, [
    { starRating: 'FIVE', reviewer: { displayName: 'A' }, comment: 'Great' },
    { starRating: 'THREE', reviewer: { displayName: 'B' }, comment: 'Fine' },
  ]);
});
afterAll(() => t?.close());

async function runScan(variables: Record<string, unknown>) {
  const started = await graphql(
    t.url,
    `mutation ($a: ID, $l: ID!, $text: String!, $radius: Float!, $rings: Int!) {
      runCompetitorScan(accountId: $a, locationId: $l, text: $text, radiusKm: $radius, rings: $rings) { id status placeId text radius rings }
    }`,
    { token: org.token, variables: { a: accountId, l: locationId, text: 'coffee shop', radius: 2, rings: 0, ...variables } },
  );
  expect(started.body.errors).toBeUndefined();
  const scan = started.body.data.runCompetitorScan;
  expect(scan.status).toBe('QUEUED');
  await eventually(async () => {
    const answer = await graphql(t.url, `query ($a: ID, $id: ID) { competitorScan(accountId: $a, scanId: $id) { status error } }`, {
      token: org.token,
      variables: { a: accountId, id: scan.id },
    });
    const { status, error } = answer.body.data.competitorScan;
    if (status === 'FAILED') throw new Error(`the scan failed: ${error}`);
    return status === 'COMPLETED' ? true : undefined;
  }, 30000, 'the scan to complete');
  return scan.id as string;
}

describe('a competitor scan', () => {
  it('of one dot: the ranks, the competitors, the client’s figures and the strategy, worked out by hand', async () => {
    // Around the client (rating 4.0 from 2 reviews, at the centre: score 4.0 × ln 3 = 4.39):
    //   A at the centre:      4.8 × ln 201 ÷ 1   = 25.45  -> 1st
    //   B 0.5 km north:       4.5 × ln 121 ÷ 1.5 = 14.39  -> 2nd
    //   D 1 km east:          4.9 × ln 41  ÷ 2   =  9.10  -> 3rd
    //   the client:                                4.39  -> 4th
    //   E 3 km south: outside the 2 km search radius, never shown
    //   a tea shop at the centre: does not match "coffee shop"
    await sandboxOf(t.url).setMarket({
      synthetic: false,
      businesses: [
        { id: 'place-a', name: 'Alpha Coffee', latitude: CENTER.lat, longitude: CENTER.lng, rating: 4.8, userRatingCount: 200, photoCount: 30, types: ['coffee_shop'], websiteUri: 'https://a.example' },
        { id: 'place-b', name: 'Bravo Coffee Shop', latitude: CENTER.lat + 0.5 * LAT_PER_KM, longitude: CENTER.lng, rating: 4.5, userRatingCount: 120, photoCount: 10, types: ['cafe'] },
        { id: 'place-d', name: 'Delta Coffee', latitude: CENTER.lat, longitude: CENTER.lng + 1 * LNG_PER_KM, rating: 4.9, userRatingCount: 40, photoCount: 5, types: ['coffee_shop'] },
        { id: 'place-e', name: 'Echo Coffee', latitude: CENTER.lat - 3 * LAT_PER_KM, longitude: CENTER.lng, rating: 5.0, userRatingCount: 999, photoCount: 50, types: ['coffee_shop'] },
        { id: 'place-t', name: 'Tango Tea', latitude: CENTER.lat, longitude: CENTER.lng, rating: 5.0, userRatingCount: 500, types: ['tea_house'] },
      ],
    });
    const scanId = await runScan({ rings: 0 });
    const answer = await http(t.url, 'GET', `/competitor-scan?account_id=${accountId}&scanId=${scanId}`, { token: org.token });
    expect(answer.status).toBe(200);
    const scan = answer.body.payload;
    const placeId = scan.placeId as string;

    // The document's fields, each: top level.
    expect(Object.keys(scan).sort()).toEqual(
      ['id', 'placeId', 'radius', 'text', 'createdAt', 'created_by', 'type', 'account_id', 'origin', 'competitors', 'center', 'client', 'strategy', 'dots', 'number_of_competitors', 'finishedAt', 'status'].sort(),
    );
    expect(scan).toMatchObject({
      id: scanId,
      placeId: expect.stringMatching(/^ChIJ/),
      radius: 2,
      text: 'coffee shop',
      createdAt: expect.any(Number),
      created_by: expect.any(String),
      type: 'geo_grid',
      account_id: accountId,
      origin: 'app',
      center: { lat: CENTER.lat, lng: CENTER.lng },
      number_of_competitors: 3,
      finishedAt: { _seconds: expect.any(Number), _nanoseconds: expect.any(Number) },
      status: 'completed',
    });
    expect(scan.finishedAt._seconds * 1000).toBeGreaterThanOrEqual(Math.floor(scan.createdAt / 1000) * 1000);

    expect(scan.competitors.map((item: { placeId: string; rank: string }) => [item.placeId, item.rank])).toEqual([
      ['place-a', '1'],
      ['place-b', '2'],
      ['place-d', '3'],
    ]);
    expect(scan.competitors[0]).toEqual({
      rank: '1',
      name: 'Alpha Coffee',
      address: expect.any(String),
      categories: ['coffee_shop'],
      reviews: 200,
      avgRating: 4.8,
      placeId: 'place-a',
      website: 'https://a.example',
      gac: true,
      lng: String(CENTER.lng),
      lat: String(CENTER.lat),
      appearances: 1,
      top3appearances: 1,
      top5appearances: 1,
      top10appearances: 1,
    });
    // B's primary type is cafe, not the coffee shop searched for.
    expect(scan.competitors[1].gac).toBe(false);
    // What is not known is null, never left out: the document lists every key, and clients generated from it expect them.
    expect(scan.competitors[1]).toMatchObject({ placeId: 'place-b', website: null });
    expect(scan.client).toMatchObject({ description: null, postDate: null });

    expect(scan.client).toMatchObject({
      rank: 4,
      name: 'Client Coffee',
      categories: ['coffee_shop'],
      reviews: 2,
      avgRating: 4,
      placeId,
      website: 'https://client-coffee.example',
      gac: true,
      lng: String(CENTER.lng),
      lat: String(CENTER.lat),
      hasQA: false,
      appearances: 1,
      top3appearances: 0,
      top5appearances: 1,
      top10appearances: 1,
      hasPosts: false,
      locationImages: [],
      numberOfImages: 0,
      dots: { dot1: 0, dot2: 0, dot3: 0, dot4: 1, dot5: 0 },
    });
    // To the top 1: one review more than A's 200 (199 more than its 2), and A's 30 photos; to the top 3: D's 40 + 1;
    // it is in the top 5 already.
    expect(scan.strategy).toEqual({
      reviews_to_top1: 199,
      reviews_to_top3: 39,
      reviews_to_top5: 0,
      images_to_top1: 30,
      images_to_top3: 5,
      images_to_top5: 0,
      reviews_strategy: expect.stringContaining('top 3'),
    });
    expect(scan.dots).toEqual([{ rank: '4', lat: CENTER.lat, lng: CENTER.lng, ring: 0, dotId: 'dot-0' }]);

    // The scan's job is listed as one unit of work about the scan, of its account, finished.
    const work = await waitForWork(t.url, org.token, 'COMPETITOR_SCAN', scanId);
    expect(work).toHaveLength(1);
    expect(work[0]).toMatchObject({ kind: 'COMPETITOR_SCAN', subjectId: scanId, accountId, organizationId: org.organization.id, retryable: false });
    expectSucceeded(work[0]!);
    // Its one dot searched: the whole way.
    expect(work[0]!.progress).toBe(1);
  });

  it('of one ring: nine dots on a square around the centre, each searching within 0.75 of the spacing', async () => {
    // Dots 2 km apart, searches of 1.5 km: A (at the centre) shows at the centre only, N (2 km north) at the north
    // dot only, and the client (at the centre) at the centre only, behind A.
    await sandboxOf(t.url).setMarket({
      synthetic: false,
      businesses: [
        { id: 'place-a', name: 'Alpha Coffee', latitude: CENTER.lat, longitude: CENTER.lng, rating: 4.8, userRatingCount: 200, types: ['coffee_shop'] },
        { id: 'place-n', name: 'North Coffee', latitude: CENTER.lat + 2 * LAT_PER_KM, longitude: CENTER.lng, rating: 3.0, userRatingCount: 5, types: ['coffee_shop'] },
      ],
    });
    // A dashboard follows the scans' work: its progress grows a ninth with each dot searched.
    const progress = await subscribe<{ asyncWorkUpdated: { id: string; subjectId: string; status: string; progress: number | null; version: number } }>(
      t.url,
      org.token,
      'subscription ($k: [AsyncWorkKind!]) { asyncWorkUpdated(kinds: $k) { id subjectId status progress version } }',
      { k: ['COMPETITOR_SCAN'] },
      workProbe(t.stack.runtime.events, { organizationId: org.organization.id, accountIds: [accountId], kind: 'COMPETITOR_SCAN' }),
    );
    const scanId = await runScan({ rings: 1, radius: 2 });
    const heard = async () => progress.events.map((event) => event.asyncWorkUpdated).filter((work) => work.subjectId === scanId);
    await eventually(async () => ((await heard()).some((work) => work.status === 'SUCCEEDED') ? true : undefined), 20000, 'the scan’s work to succeed');
    await progress.close();
    const changes = await heard();
    expect(changes.map((work) => [work.status, work.progress === null ? null : Math.round(work.progress * 9)])).toEqual([
      ['QUEUED', null],
      ['RUNNING', null],
      ...Array.from({ length: 9 }, (_, index) => ['RUNNING', index + 1]),
      ['SUCCEEDED', 9],
    ]);
    expect(changes.map((work) => work.version)).toEqual(changes.map((_, index) => index + 1));
    const answer = await http(t.url, 'GET', `/competitor-scan?account_id=${accountId}&scanId=${scanId}`, { token: org.token });
    const { dots, client, competitors } = answer.body.payload;
    expect(dots.map((dot: { dotId: string; ring: number; rank: string }) => [dot.dotId, dot.ring, dot.rank])).toEqual([
      ['dot-0', 0, '2'],
      ...Array.from({ length: 8 }, (_, index) => [`dot-${index + 1}`, 1, '20+']),
    ]);
    // The ring is a square 2 km from the centre, clockwise from its north-west corner.
    const [nw, north, ne] = [dots[1], dots[2], dots[3]];
    expect([nw.lat, nw.lng]).toEqual([expect.closeTo(CENTER.lat + 2 * LAT_PER_KM, 4), expect.closeTo(CENTER.lng - 2 * LNG_PER_KM, 4)]);
    expect([north.lat, north.lng]).toEqual([expect.closeTo(CENTER.lat + 2 * LAT_PER_KM, 4), expect.closeTo(CENTER.lng, 4)]);
    expect([ne.lat, ne.lng]).toEqual([expect.closeTo(CENTER.lat + 2 * LAT_PER_KM, 4), expect.closeTo(CENTER.lng + 2 * LNG_PER_KM, 4)]);
    expect(client).toMatchObject({ rank: 2, appearances: 1, top3appearances: 1, dots: { dot1: 0, dot2: 1, dot3: 0, dot4: 0, dot5: 0 } });
    expect(competitors.map((item: { placeId: string; rank: string; appearances: number; top3appearances: number }) => [item.placeId, item.rank, item.appearances, item.top3appearances])).toEqual([
      ['place-a', '1', 1, 1],
      ['place-n', '20+', 1, 1],
    ]);
    // Already in the top 3 and 5; one review more than A's 200 for the top 1.
    expect(answer.body.payload.strategy).toMatchObject({ reviews_to_top1: 199, reviews_to_top3: 0, reviews_to_top5: 0 });
  });

  it('is documented with every key of its parts required, the unknown ones nullable', async () => {
    const document = (await http(t.url, 'GET', '/openapi.json')).body;
    const resolve = (schema: any): any => (schema?.$ref ? resolve(document.components.schemas[schema.$ref.split('/').pop()]) : schema);
    const payload = resolve(resolve(document.paths['/competitor-scan'].get.responses['200'].content['application/json'].schema).properties.payload);
    const client = resolve(payload.properties.client);
    const competitor = resolve(resolve(payload.properties.competitors).items);
    for (const [part, field] of [[client, 'website'], [client, 'description'], [client, 'postDate'], [competitor, 'website']] as const) {
      expect([field, part.required]).toEqual([field, expect.arrayContaining([field])]);
      expect([field, JSON.stringify(part.properties[field])]).toEqual([field, expect.stringContaining('null')]);
    }
  });

  it('answers the latest scan of the location, 404 when there is none, and refuses bad requests', async () => {
    const latest = await http(t.url, 'GET', `/competitor-scan?account_id=${accountId}&location_id=${locationId}`, { token: org.token });
    expect(latest.status).toBe(200);
    const byPlace = await http(t.url, 'GET', `/competitor-scan?account_id=${accountId}&placeId=${latest.body.payload.placeId}`, { token: org.token });
    expect(byPlace.body.payload.id).toBe(latest.body.payload.id);
    const other = await createOrganizationFixture(t.em(), { accounts: 1 });
    const none = await http(t.url, 'GET', `/competitor-scan?account_id=${other.accounts[0]!.account.id}`, { token: other.token });
    expect(none.status).toBe(404);
    expect(none.body).toEqual({ error: 404, message: 'Competitor scan not found' });
    // Another organization's scan is not found either.
    const stolen = await http(t.url, 'GET', `/competitor-scan?account_id=${other.accounts[0]!.account.id}&scanId=${latest.body.payload.id}`, { token: other.token });
    expect(stolen.status).toBe(404);

    const run = (variables: Record<string, unknown>) =>
      graphql(t.url, `mutation ($l: ID!, $r: Float!, $n: Int!, $text: String!) { runCompetitorScan(accountId: "${accountId}", locationId: $l, text: $text, radiusKm: $r, rings: $n) { id } }`, {
        token: org.token,
        variables: { l: locationId, r: 2, n: 1, text: 'coffee', ...variables },
      });
    expect((await run({ r: 0 })).body.errors?.[0]?.message).toBe('radiusKm must be from 0.1 to 50');
    expect((await run({ n: 4 })).body.errors?.[0]?.message).toBe('rings must be 0 to 3');
    expect((await run({ text: '  ' })).body.errors?.[0]?.message).toBe('text must not be empty');
  });
});
