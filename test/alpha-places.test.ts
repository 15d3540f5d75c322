import { readFile, writeFile } from 'node:fs/promises';
import { createAlphaClient, type AlphaClient } from '../src/providers/alpha/alpha.client';
import { AlphaProviderError } from '../src/providers/alpha/alpha.errors';
import type { AlphaPlace, AlphaPlaceSearch } from '../src/providers/alpha/alpha.types';
import { ALPHA_SANDBOX_SEED, type AlphaSandboxMarketBusinessInput } from '../sandboxes/alpha/alpha-sandbox';
import { createAlphaSandboxControl, type AlphaSandboxControl } from '../sandboxes/alpha/alpha-sandbox.control';
import { sandboxRestarts } from './support/sandbox-restarts';
import { startAlphaSandbox, type AlphaSandboxServer } from '../sandboxes/alpha/main';
import { failure } from './support/failure';

/**
 * The alpha client's nearby text search against the alpha sandbox, both real, over HTTP: the synthetic market, an
 * explicit market ranked by hand from the formula in docs/alpha-sandbox.md, the sandbox's own locations with their
 * reviews and posts, refusals, scripted failures and the market in a state file.
 */

const START = Date.parse('2031-03-01T10:00:00.000Z');
let now = START;
let sandbox: AlphaSandboxServer;
let control: AlphaSandboxControl;
let client: AlphaClient;

const { alice, carol } = ALPHA_SANDBOX_SEED;
const LONDON = { latitude: 51.5074, longitude: -0.1278 };
const PARIS = { latitude: 48.8566, longitude: 2.3522 };
const CAROL_NORTH = { latitude: 52.5386, longitude: 13.4097 };
const ALICE_KREUZBERG = { latitude: 52.5016, longitude: 13.4187 };
const NULL_ISLAND = { latitude: 0, longitude: 0 };

/** The ranking of docs/alpha-sandbox.md, written out here without the sandbox's code. */
const EARTH_RADIUS_METERS = 6371008.8;
function distanceMeters(from: { latitude: number; longitude: number }, to: { latitude: number; longitude: number }) {
  const radians = (degrees: number) => (degrees * Math.PI) / 180;
  const a =
    Math.sin(radians(to.latitude - from.latitude) / 2) ** 2 +
    Math.cos(radians(from.latitude)) * Math.cos(radians(to.latitude)) * Math.sin(radians(to.longitude - from.longitude) / 2) ** 2;
  return 2 * EARTH_RADIUS_METERS * Math.asin(Math.sqrt(a));
}
function score(place: { rating: number; userRatingCount: number }, meters: number): number {
  return (place.rating * Math.log(1 + place.userRatingCount)) / (1 + meters / 1000);
}

function search(at: { latitude: number; longitude: number }, textQuery: string, radiusMeters: number, pageSize?: number) {
  const input: AlphaPlaceSearch = { textQuery, ...at, radiusMeters, ...(pageSize === undefined ? {} : { pageSize }) };
  return client.searchPlaces(input);
}

const ids = (places: AlphaPlace[]) => places.map((place) => place.id);

/** The AlphaProviderError a call fails with (and a test failure if it succeeds or fails otherwise). */
const providerError = (call: Promise<unknown>): Promise<AlphaProviderError> => failure(call, AlphaProviderError);

/** A 400 INVALID_ARGUMENT naming `field` in its message and in its one field violation. */
function expectFieldRefusal(error: AlphaProviderError, field: string): void {
  expect(error).toMatchObject({ status: 400, reason: 'INVALID_ARGUMENT', retryable: false });
  expect(error.message).toContain(field);
  expect(error.details).toEqual([
    {
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: [{ field, description: expect.any(String) }],
    },
  ]);
}

/** A business of an explicit market; `at` is [latitude, longitude]. */
function business(
  id: string,
  name: string,
  at: [latitude: number, longitude: number],
  rating: number,
  userRatingCount: number,
  extra: Partial<AlphaSandboxMarketBusinessInput> = {},
): AlphaSandboxMarketBusinessInput {
  return { id, name, latitude: at[0], longitude: at[1], rating, userRatingCount, ...extra };
}

beforeAll(async () => {
  sandbox = await startAlphaSandbox({ port: 0, clock: () => now });
  control = createAlphaSandboxControl(sandbox.url);
  client = createAlphaClient({ baseUrl: sandbox.url, accessToken: () => 'sandbox-access-token' });
});
afterAll(() => sandbox?.close());
beforeEach(async () => {
  now = START;
  await control.reset();
});

describe('the synthetic market', () => {
  it('answers the same places for the same search, again and after a restart', async () => {
    const first = await search(LONDON, 'coffee shop', 3000);
    expect(first).toHaveLength(20);
    expect(await search(LONDON, 'coffee shop', 3000)).toEqual(first);
    // The query is taken trimmed, lower-cased, its spaces collapsed.
    expect(await search(LONDON, '  Coffee   SHOP ', 3000)).toEqual(first);

    const restarted = await startAlphaSandbox({ port: 0, clock: () => now + 86_400_000 });
    try {
      const again = createAlphaClient({ baseUrl: restarted.url, accessToken: () => 't' });
      expect(await again.searchPlaces({ textQuery: 'coffee shop', ...LONDON, radiusMeters: 3000 })).toEqual(first);
    } finally {
      await restarted.close();
    }
  });

  it('makes plausible businesses inside their cells, within the radius, best first', async () => {
    const radiusMeters = 4000;
    const places = await search(LONDON, 'coffee shop', radiusMeters);
    expect(places).toHaveLength(20);
    const scores = places.map((place) => score(place, distanceMeters(LONDON, place.location)));
    for (const [index, place] of places.entries()) {
      const [, latCell, lngCell, n] = /^synthetic-(-?\d+)-(-?\d+)-(\d+)$/.exec(place.id) ?? [];
      expect(Number(n)).toBeLessThanOrEqual(2);
      expect(place.location.latitude).toBeGreaterThanOrEqual(Number(latCell) / 100);
      expect(place.location.latitude).toBeLessThan((Number(latCell) + 1) / 100);
      expect(place.location.longitude).toBeGreaterThanOrEqual(Number(lngCell) / 100);
      expect(place.location.longitude).toBeLessThan((Number(lngCell) + 1) / 100);
      expect(distanceMeters(LONDON, place.location)).toBeLessThanOrEqual(radiusMeters);
      expect(place).toEqual({
        id: place.id,
        displayName: {
          text: expect.stringMatching(
            /^(North|South|East|West|Central|Old Town|Riverside|Corner|Park|Market|Golden|Little) Coffee Shop \d{1,2}$/,
          ),
          languageCode: 'en',
        },
        formattedAddress: expect.stringMatching(/^\d{1,3} [A-Z][a-z]+ [A-Z][a-z]+$/),
        types: ['coffee_shop'],
        primaryType: 'coffee_shop',
        rating: expect.any(Number),
        userRatingCount: expect.any(Number),
        ...(place.websiteUri === undefined ? {} : { websiteUri: `https://places.alpha.example/${place.id}` }),
        location: place.location,
        photoCount: expect.any(Number),
        hasOwnerPosts: expect.any(Boolean),
        businessStatus: 'OPERATIONAL',
      });
      expect(Number.isInteger(place.rating * 10) && place.rating >= 3 && place.rating <= 5).toBe(true);
      expect(Number.isInteger(place.userRatingCount) && place.userRatingCount <= 500).toBe(true);
      expect(Number.isInteger(place.photoCount) && place.photoCount <= 80).toBe(true);
      if (index > 0) {
        const previous = scores[index - 1]!;
        expect(previous > scores[index]! || (previous === scores[index] && places[index - 1]!.id < place.id)).toBe(true);
      }
    }
    // Some have websites and owner posts, some not.
    expect(new Set(places.map((place) => place.websiteUri === undefined)).size).toBe(2);
  });

  it('differs by query and by place', async () => {
    const coffee = await search(LONDON, 'coffee shop', 3000);
    const bakery = await search(LONDON, 'bakery', 3000);
    expect(bakery.every((place) => place.types[0] === 'bakery' && / Bakery \d+$/.test(place.displayName.text))).toBe(true);
    expect(ids(bakery)).not.toEqual(ids(coffee));
    expect(bakery.map((place) => place.location)).not.toEqual(coffee.map((place) => place.location));

    const paris = await search(PARIS, 'coffee shop', 3000);
    expect(paris).toHaveLength(20);
    expect(ids(paris).filter((id) => ids(coffee).includes(id))).toEqual([]);
  });

  it('goes on across the antimeridian', async () => {
    const places = await search({ latitude: 0, longitude: 179.995 }, 'coffee shop', 2000);
    expect(places.some((place) => place.location.longitude < -179.9)).toBe(true);
    expect(places.some((place) => place.location.longitude > 179.9)).toBe(true);
    for (const place of places) {
      expect(distanceMeters({ latitude: 0, longitude: 179.995 }, place.location)).toBeLessThanOrEqual(2000);
    }
  });

  it('answers pageSize places, 20 by default, the best first', async () => {
    const all = await search(PARIS, 'florist', 3000);
    expect(all).toHaveLength(20);
    expect(await search(PARIS, 'florist', 3000, 5)).toEqual(all.slice(0, 5));
    expect(await search(PARIS, 'florist', 3000, 1)).toEqual(all.slice(0, 1));
    expect(await search(PARIS, 'florist', 3000, 20)).toEqual(all);
  });
});

describe('an explicit market', () => {
  it('ranks by rating · ln(1 + count) / (1 + km), ties by id, within the radius only', async () => {
    const businesses = [
      business('outside', 'Best Bike Repair', [0, 0.05], 5, 1000),
      business('far-many', 'Big Bike Repair Store', [0, -0.02], 4, 400),
      business('tie-b', 'Corner Bike Repair', [-0.01, 0], 5, 50),
      business('unrated', 'New Bike Repair', [0, 0], 0, 0),
      business('other-trade', 'Coffee Corner', [0, 0.001], 4.9, 900, { types: ['cafe'] }),
      business('tie-a', 'Bike Repair Corner', [0.01, 0], 5, 50),
      business('types-only', 'Spoke Works', [0.005, 0.005], 3.8, 20, { types: ['bicycle_repair', 'bike_shop'] }),
      business('near-good', 'Alpha Bike Repair', [0, 0.01], 4.5, 100, {
        photoCount: 12,
        websiteUri: 'https://alpha-bikes.example/',
        hasOwnerPosts: true,
        types: ['bicycle_repair'],
      }),
    ];
    await control.setMarket({ businesses, synthetic: false });

    // By hand, from the centre (0, 0), radius 5000 m:
    //   near-good   1111.95 m  4.5 · ln 101 / 2.11195 = 9.8336
    //   tie-a       1111.95 m  5.0 · ln 51  / 2.11195 = 9.3085   (tie-a before tie-b: same score, ids ascending)
    //   tie-b       1111.95 m  5.0 · ln 51  / 2.11195 = 9.3085
    //   far-many    2223.90 m  4.0 · ln 401 / 3.22390 = 7.4369
    //   types-only   786.27 m  3.8 · ln 21  / 1.78627 = 6.4767   (matches through its types alone)
    //   unrated        0.00 m  0.0 · ln 1   / 1       = 0
    //   outside     5559.75 m: beyond the radius; other-trade: no "bike" in its name or types.
    const expected = ['near-good', 'tie-a', 'tie-b', 'far-many', 'types-only', 'unrated'];
    const places = await search(NULL_ISLAND, 'bike repair', 5000);
    expect(ids(places)).toEqual(expected);

    // The same order from the formula, so the hand-written one above is the documented rule's.
    const ranked = businesses
      .filter((entry) => !['outside', 'other-trade'].includes(entry.id))
      .map((entry) => ({
        id: entry.id,
        score: score(entry, distanceMeters(NULL_ISLAND, { latitude: entry.latitude, longitude: entry.longitude })),
      }))
      .sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
    expect(ranked.map((entry) => entry.id)).toEqual(expected);
    expect(ranked[1]!.score).toBe(ranked[2]!.score);
    expect(distanceMeters(NULL_ISLAND, { latitude: 0, longitude: 0.05 })).toBeGreaterThan(5000);

    expect(places[0]).toEqual({
      id: 'near-good',
      displayName: { text: 'Alpha Bike Repair', languageCode: 'en' },
      formattedAddress: '0.00000, 0.01000',
      types: ['bicycle_repair'],
      primaryType: 'bicycle_repair',
      rating: 4.5,
      userRatingCount: 100,
      websiteUri: 'https://alpha-bikes.example/',
      location: { latitude: 0, longitude: 0.01 },
      photoCount: 12,
      hasOwnerPosts: true,
      businessStatus: 'OPERATIONAL',
    });
    expect(places[5]).toEqual({
      id: 'unrated',
      displayName: { text: 'New Bike Repair', languageCode: 'en' },
      formattedAddress: '0.00000, 0.00000',
      types: [],
      rating: 0,
      userRatingCount: 0,
      location: { latitude: 0, longitude: 0 },
      photoCount: 0,
      hasOwnerPosts: false,
      businessStatus: 'OPERATIONAL',
    });

    // A wider circle takes in the one outside, which then ranks by its score (5.2660) like any other.
    expect(ids(await search(NULL_ISLAND, 'bike repair', 6000))).toEqual([
      'near-good', 'tie-a', 'tie-b', 'far-many', 'types-only', 'outside', 'unrated',
    ]);
  });

  it('rounds nothing: 1 m nearer ranks first though the scores agree to two decimals', async () => {
    // z-nearer 1000.76 m: 4.79398; a-farther 1001.87 m: 4.79132. Rounded to 4.79 both, the ids would decide.
    await control.setMarket({
      businesses: [business('a-farther', 'Farther Bakery', [0, 0.00901], 4, 10), business('z-nearer', 'Nearer Bakery', [0, 0.009], 4, 10)],
      synthetic: false,
    });
    expect(ids(await search(NULL_ISLAND, 'bakery', 2000))).toEqual(['z-nearer', 'a-farther']);
  });

  it('matches when every word of the query is in the name or in the types, ignoring case', async () => {
    await control.setMarket({
      businesses: [
        business('name-only', "Joe's Bike Repair", [0, 0.001], 4, 10),
        business('types-only', 'Spoke Works', [0, 0.002], 4, 10, { types: ['bike_repair'] }),
        business('split', 'Bike Heaven', [0, 0.003], 4, 10, { types: ['repair_shop'] }),
        business('half', 'Bike Shop', [0, 0.004], 4, 10, { types: ['bicycle_store'] }),
        business('substring', 'Motorbike Repairs', [0, 0.005], 4, 10),
      ],
      synthetic: false,
    });
    const matching = async (query: string) => ids(await search(NULL_ISLAND, query, 2000)).sort();
    expect(await matching('bike repair')).toEqual(['name-only', 'split', 'substring', 'types-only']);
    expect(await matching(' REPAIR   Bike')).toEqual(['name-only', 'split', 'substring', 'types-only']);
    expect(await matching('bike repairs')).toEqual(['substring']);
    expect(await matching('shop')).toEqual(['half', 'split']);
    expect(await matching('bike_repair')).toEqual(['types-only']);
    expect(await matching('bike repair heaven')).toEqual(['split']);
    expect(await matching('pizza')).toEqual([]);
  });

  it('answers at most pageSize of them, 20 by default', async () => {
    const many = Array.from({ length: 25 }, (_, index) =>
      business(`shop-${String(index).padStart(2, '0')}`, `Tea Shop ${index}`, [0, 0.001 * (index + 1)], 4, 10),
    );
    await control.setMarket({ businesses: many, synthetic: false });
    const all = await search(NULL_ISLAND, 'tea', 10_000);
    // Same rating and count: the nearer, the better.
    expect(ids(all)).toEqual(many.slice(0, 20).map((entry) => entry.id));
    expect(await search(NULL_ISLAND, 'tea', 10_000, 3)).toEqual(all.slice(0, 3));
  });

  it('adds the synthetic businesses when they are on', async () => {
    await control.setMarket({ businesses: [business('star', 'Star Coffee Shop', [51.5075, -0.1278], 5, 5000)], synthetic: true });
    const places = await search(LONDON, 'coffee shop', 3000);
    expect(places[0]?.id).toBe('star');
    expect(places.slice(1).every((place) => place.id.startsWith('synthetic-'))).toBe(true);
    expect(places).toHaveLength(20);
  });
});

describe("the sandbox's own locations", () => {
  beforeEach(async () => {
    await control.setMarket({ businesses: [], synthetic: false });
  });

  it('are places with their reviews’ average and count, and whether a post is LIVE', async () => {
    const placeId = (await client.getLocation(carol.locations[0])).metadata?.placeId;
    const expected: AlphaPlace = {
      id: placeId!,
      displayName: { text: 'Carol Coffee Prenzlauer Berg', languageCode: 'de' },
      formattedAddress: 'Kastanienallee 12, 10435 Berlin, DE',
      types: ['coffee_shop', 'cafe'],
      primaryType: 'coffee_shop',
      rating: 5,
      userRatingCount: 1,
      websiteUri: 'https://carol-coffee.example/north',
      location: CAROL_NORTH,
      photoCount: 0,
      hasOwnerPosts: false,
      businessStatus: 'OPERATIONAL',
    };
    expect(placeId).toMatch(/^ChIJ/);
    expect(await search(CAROL_NORTH, 'coffee shop', 1000)).toEqual([expected]);

    // (5 + 2 + 4) / 3 = 3.67, shown with one decimal as the review list shows it.
    await control.addReviews(carol.locations[0], [{ starRating: 'TWO' }, { starRating: 'FOUR' }]);
    expect((await client.listReviews({ accountId: '3003', locationId: '30031' })).averageRating).toBe(3.7);
    expect(await search(CAROL_NORTH, 'coffee shop', 1000)).toEqual([{ ...expected, rating: 3.7, userRatingCount: 3 }]);

    // A post counts once it is LIVE, not while the provider processes it.
    await control.configure({ processingMs: 60_000 });
    await client.createLocalPost({
      accountId: '3003',
      locationId: '30031',
      post: { summary: 'Flat white week' },
      requestId: 'places-post-1',
    });
    expect((await search(CAROL_NORTH, 'coffee shop', 1000))[0]?.hasOwnerPosts).toBe(false);
    now += 60_000;
    expect((await search(CAROL_NORTH, 'coffee shop', 1000))[0]?.hasOwnerPosts).toBe(true);
  });

  it('rank among each other and match their categories', async () => {
    const kreuzberg = (await client.getLocation(alice.locations[0])).metadata!.placeId!;
    const mitte = (await client.getLocation(alice.locations[1])).metadata!.placeId!;
    // Kreuzberg 3.3 · ln 7 / 1 = 6.42; Mitte, 3.28 km away, 4.0 · ln 2 / 4.28 = 0.65.
    const bakeries = await search(ALICE_KREUZBERG, 'bakery', 5000);
    expect(bakeries.map((place) => [place.id, place.rating, place.userRatingCount])).toEqual([
      [kreuzberg, 3.3, 6],
      [mitte, 4, 1],
    ]);
    // Every seeded location is also a café; Carol's northern one is 4.2 km from Kreuzberg.
    expect((await search(ALICE_KREUZBERG, 'cafe', 5000)).map((place) => place.displayName.text).sort()).toEqual([
      'Alice Bakery Kreuzberg',
      'Alice Bakery Mitte',
      'Carol Coffee Neukölln',
      'Carol Coffee Prenzlauer Berg',
    ]);
  });

  it('are in the market once they have coordinates, without reviews at 0, and win over an explicit twin', async () => {
    const at = { latitude: 10, longitude: 10 };
    const created = await client.createLocation({
      accountId: 'acc-places',
      requestId: 'places-loc-1',
      location: {
        title: 'Fresh Wheels',
        categories: { primaryCategory: { name: 'categories/gcid:bike_repair' }, additionalCategories: [{ name: 'gcid:bike_shop' }] },
        serviceArea: { businessType: 'CUSTOMER_LOCATION_ONLY', regionCode: 'GB' },
        latlng: at,
      },
    });
    await client.createLocation({
      accountId: 'acc-places',
      requestId: 'places-loc-2',
      location: { title: 'Nowhere Bike Repair', categories: { primaryCategory: { name: 'gcid:bike_repair' } }, storefrontAddress: { regionCode: 'GB' } },
    });
    const placeId = created.metadata!.placeId!;
    const fresh: AlphaPlace = {
      id: placeId,
      displayName: { text: 'Fresh Wheels', languageCode: 'en' },
      formattedAddress: '10.00000, 10.00000',
      types: ['bike_repair', 'bike_shop'],
      primaryType: 'bike_repair',
      rating: 0,
      userRatingCount: 0,
      location: at,
      photoCount: 0,
      hasOwnerPosts: false,
      businessStatus: 'OPERATIONAL',
    };
    expect(await search(at, 'bike repair', 1000)).toEqual([fresh]);

    await control.setMarket({ businesses: [business(placeId, 'Impostor Bike Repair', [10, 10], 5, 999)], synthetic: false });
    expect(await search(at, 'bike repair', 1000)).toEqual([fresh]);
  });
});

describe('the market controls', () => {
  it('replace the market, and DELETE and reset return to the default', async () => {
    expect((await control.state()).market).toEqual({ businesses: [], synthetic: true });
    const stored = await control.setMarket({ businesses: [business('b1', 'One Bakery', [0, 0], 4, 3)], synthetic: false });
    expect(stored).toEqual({
      businesses: [
        { id: 'b1', name: 'One Bakery', latitude: 0, longitude: 0, rating: 4, userRatingCount: 3, photoCount: 0, types: [], hasOwnerPosts: false },
      ],
      synthetic: false,
    });
    expect((await control.state()).market).toEqual(stored);

    await control.setMarket({ businesses: [business('b2', 'Two Bakery', [0, 0], 4, 3)], synthetic: false });
    expect(ids(await search(NULL_ISLAND, 'bakery', 1000))).toEqual(['b2']);

    expect(await control.resetMarket()).toEqual({ businesses: [], synthetic: true });
    expect(ids(await search(NULL_ISLAND, 'bakery', 1000)).every((id) => id.startsWith('synthetic-'))).toBe(true);

    await control.setMarket({ businesses: [], synthetic: false });
    await control.reset();
    expect((await control.state()).market).toEqual({ businesses: [], synthetic: true });
  });

  it('refuse a market they cannot use, naming the field, and change nothing', async () => {
    const refusals: [unknown, RegExp][] = [
      [{ businesses: [] }, /synthetic/],
      [{ businesses: [business('a', 'A', [0, 0], 4, 1), business('a', 'B', [0, 0], 4, 1)], synthetic: false }, /ids must differ/],
      [{ businesses: [business('synthetic-1-2-0', 'A', [0, 0], 4, 1)], synthetic: false }, /businesses\.0\.id/],
      [{ businesses: [business('a', 'A', [0, 0], 4.55, 1)], synthetic: false }, /businesses\.0\.rating: must have at most one decimal/],
      [{ businesses: [business('a', 'A', [91, 0], 4, 1)], synthetic: false }, /businesses\.0\.latitude/],
      [{ businesses: [business('a', 'A', [0, 0], 4, 1.5)], synthetic: false }, /businesses\.0\.userRatingCount/],
      [{ businesses: [{ ...business('a', 'A', [0, 0], 4, 1), colour: 'red' }], synthetic: false }, /colour/],
    ];
    for (const [body, message] of refusals) {
      const response = await fetch(`${sandbox.url}/_control/market`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(response.status).toBe(400);
      const answer = (await response.json()) as { error: { status: string; message: string } };
      expect(answer.error.status).toBe('INVALID_ARGUMENT');
      expect(answer.error.message).toMatch(message);
    }
    expect((await control.state()).market).toEqual({ businesses: [], synthetic: true });
  });
});

describe('refusals and failures', () => {
  it('refuses a search outside the bounds with 400 naming the field; the bounds themselves are fine', async () => {
    const base = { textQuery: 'coffee shop', ...LONDON, radiusMeters: 1000 };
    const cases: [Partial<AlphaPlaceSearch>, string][] = [
      [{ textQuery: '' }, 'textQuery'],
      [{ textQuery: '   ' }, 'textQuery'],
      [{ textQuery: 'x'.repeat(201) }, 'textQuery'],
      [{ radiusMeters: 0 }, 'locationBias.circle.radius'],
      [{ radiusMeters: 50_001 }, 'locationBias.circle.radius'],
      [{ radiusMeters: Number.NaN }, 'locationBias.circle.radius'],
      [{ latitude: 90.5 }, 'locationBias.circle.center.latitude'],
      [{ longitude: -181 }, 'locationBias.circle.center.longitude'],
      [{ pageSize: 0 }, 'pageSize'],
      [{ pageSize: 21 }, 'pageSize'],
      [{ pageSize: 2.5 }, 'pageSize'],
    ];
    for (const [change, field] of cases) {
      expectFieldRefusal(await providerError(client.searchPlaces({ ...base, ...change })), field);
    }
    expect(await client.searchPlaces({ ...base, textQuery: 'x'.repeat(200) })).toEqual(expect.any(Array));
    expect(await client.searchPlaces({ ...base, radiusMeters: 1, pageSize: 20 })).toEqual(expect.any(Array));
    expect(await client.searchPlaces({ ...base, radiusMeters: 50_000, pageSize: 1 })).toHaveLength(1);
    expect((await control.state()).calls['places-search']).toBe(cases.length + 3);
  });

  it('refuses bodies the client would never send, in the envelope', async () => {
    const post = (body: string, token: string | null = 'sandbox-access-token') =>
      fetch(`${sandbox.url}/v1/places:searchText`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token === null ? {} : { authorization: `Bearer ${token}` }) },
        body,
      });
    const circle = { center: LONDON, radius: 1000 };
    const fieldOf = async (response: Response) => {
      const answer = (await response.json()) as { error: { code: number; details: { fieldViolations: { field: string }[] }[] } };
      return [answer.error.code, answer.error.details[0]?.fieldViolations[0]?.field];
    };
    expect(await fieldOf(await post(JSON.stringify({ textQuery: 'x', locationBias: { circle }, includedType: 'cafe' })))).toEqual([400, 'includedType']);
    expect(await fieldOf(await post(JSON.stringify({ textQuery: 'x' })))).toEqual([400, 'locationBias']);
    expect(await fieldOf(await post(JSON.stringify({ textQuery: 'x', locationBias: { rectangle: {} } })))).toEqual([400, 'locationBias.rectangle']);
    expect(await fieldOf(await post(JSON.stringify({ textQuery: 'x', locationBias: { circle: { radius: 5 } } })))).toEqual([400, 'locationBias.circle.center']);
    expect(await fieldOf(await post(JSON.stringify({ locationBias: { circle } })))).toEqual([400, 'textQuery']);
    expect(await fieldOf(await post(JSON.stringify([1, 2])))).toEqual([400, 'request']);
    expect((await post('{"textQuery":')).status).toBe(400);

    const anonymous = await post(JSON.stringify({ textQuery: 'x', locationBias: { circle } }), null);
    expect(anonymous.status).toBe(401);
    // The business API's authentication: an identity token the identity provider never issued is refused.
    const unknown = createAlphaClient({ baseUrl: sandbox.url, accessToken: () => 'ya29.never-issued' });
    expect(await providerError(unknown.searchPlaces({ textQuery: 'x', ...LONDON, radiusMeters: 10 }))).toMatchObject({
      status: 401,
      reason: 'UNAUTHENTICATED',
    });
  });

  it('fails as scripted, and answers again afterwards', async () => {
    const input = { textQuery: 'coffee shop', ...LONDON, radiusMeters: 1000, pageSize: 3 };
    const expected = await client.searchPlaces(input);

    await control.fail({ count: 1, status: 503, pathContains: 'places:searchText' });
    expect(await providerError(client.searchPlaces(input))).toMatchObject({ status: 503, reason: 'UNAVAILABLE', retryable: true });
    await control.fail({ count: 1, status: 429, method: 'POST' });
    expect(await providerError(client.searchPlaces(input))).toMatchObject({
      status: 429,
      reason: 'RESOURCE_EXHAUSTED',
      retryable: true,
      retryAfterSeconds: 1,
    });
    await control.fail({ count: 1, status: 0, pathContains: '/v1/' });
    expect(await providerError(client.searchPlaces(input))).toMatchObject({ status: 0, reason: 'NETWORK_ERROR', retryable: true });
    await control.fail({ count: 1, status: 500, when: 'after', pathContains: 'places' });
    expect(await providerError(client.searchPlaces(input))).toMatchObject({ status: 500, reason: 'INTERNAL' });
    // A failure aimed at the business API leaves the search alone.
    await control.fail({ count: 1, status: 503, pathContains: '/v4/' });
    expect(await client.searchPlaces(input)).toEqual(expected);
    expect((await control.state()).failures).toEqual([{ count: 1, status: 503, pathContains: '/v4/', when: 'before' }]);
    expect((await control.state()).calls['places-search']).toBe(6);
  });

  it('reads a place the provider describes sparsely, and refuses one without an id or a location', async () => {
    // A stand-in provider that answers what the sandbox never would.
    const { createServer } = await import('node:http');
    const answers: unknown[] = [
      { places: [{ id: 'p1', location: { latitude: 1, longitude: 2 } }] },
      {},
      { places: [{ location: { latitude: 1, longitude: 2 } }] },
      { places: [{ id: 'p2' }] },
    ];
    const server = createServer((request, response) => {
      request.resume();
      request.on('end', () => response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(answers.shift())));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as { port: number };
      const stub = createAlphaClient({ baseUrl: `http://127.0.0.1:${port}`, accessToken: () => 't' });
      const input = { textQuery: 'x', ...LONDON, radiusMeters: 10 };
      expect(await stub.searchPlaces(input)).toEqual([
        {
          id: 'p1',
          displayName: { text: '' },
          types: [],
          rating: 0,
          userRatingCount: 0,
          location: { latitude: 1, longitude: 2 },
          photoCount: 0,
          hasOwnerPosts: false,
        },
      ]);
      expect(await stub.searchPlaces(input)).toEqual([]);
      expect(await providerError(stub.searchPlaces(input))).toMatchObject({ reason: 'BAD_RESPONSE', message: expect.stringContaining('places.0.id') });
      expect(await providerError(stub.searchPlaces(input))).toMatchObject({ reason: 'BAD_RESPONSE', message: expect.stringContaining('places.0.location') });
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('persistence in a state file', () => {
  type Logger = { level: string; stream: { write(line: string): void } };
  const restarts = sandboxRestarts('alpha-sandbox-places-', (stateFile, logger?: Logger) => startAlphaSandbox({ port: 0, clock: () => now, stateFile, ...(logger ? { logger } : {}) }));

  async function start(stateFile: string, logger?: Logger) {
    const started = await restarts.start(stateFile, logger);
    return {
      close: () => started.close(),
      client: createAlphaClient({ baseUrl: started.url, accessToken: () => 't' }),
      control: createAlphaSandboxControl(started.url),
    };
  }

  it('keeps the explicit market across a close and a new start, and its return to the default', async () => {
    const stateFile = restarts.file('market.json');
    const input = { textQuery: 'bike repair', ...NULL_ISLAND, radiusMeters: 5000 };
    const first = await start(stateFile);
    const market = await first.control.setMarket({
      businesses: [
        business('kept-1', 'Kept Bike Repair', [0, 0.01], 4.5, 100, { websiteUri: 'https://kept.example/' }),
        business('kept-2', 'Other Bike Repair', [0.02, 0], 3, 7),
      ],
      synthetic: false,
    });
    const before = await first.client.searchPlaces(input);
    expect(ids(before)).toEqual(['kept-1', 'kept-2']);
    await first.close();
    const saved = JSON.parse(await readFile(stateFile, 'utf8')) as { version: number; market: unknown };
    expect(saved).toMatchObject({ version: 3, market });

    const second = await start(stateFile);
    expect((await second.control.state()).market).toEqual(market);
    expect(await second.client.searchPlaces(input)).toEqual(before);
    await second.control.resetMarket();
    await second.close();

    const third = await start(stateFile);
    expect((await third.control.state()).market).toEqual({ businesses: [], synthetic: true });
    await third.close();
  });

  it('reads a file from before the market with the default one, and sets aside one with a market it would refuse', async () => {
    const empty = {
      nextSeq: 1,
      posts: [],
      locations: [],
      identities: [],
      accounts: [],
      reviews: [],
      oauth: { codes: [], refreshTokens: [], accessTokens: [] },
    };
    const older = restarts.file('version-2.json');
    await writeFile(older, JSON.stringify({ version: 2, ...empty }));
    const lines: string[] = [];
    const logger = { level: 'warn', stream: { write: (line: string) => void lines.push(line) } };
    const fromOlder = await start(older, logger);
    expect((await fromOlder.control.state()).market).toEqual({ businesses: [], synthetic: true });
    expect((await fromOlder.control.state()).identities).toEqual([]);
    await fromOlder.close();
    expect(lines).toEqual([]);

    const refused = restarts.file('refused-market.json');
    const badMarket = { businesses: [business('x', 'X', [0, 0], 7, 1)], synthetic: false };
    await writeFile(refused, JSON.stringify({ version: 3, ...empty, market: badMarket }));
    const fresh = await start(refused, logger);
    expect((await fresh.control.state()).market).toEqual({ businesses: [], synthetic: true });
    expect((await fresh.control.state()).identities).toHaveLength(3);
    expect(lines.map((line) => JSON.parse(line) as { msg: string })).toEqual([
      expect.objectContaining({ msg: expect.stringContaining('malformed') }),
    ]);
    await fresh.close();
  });
});
