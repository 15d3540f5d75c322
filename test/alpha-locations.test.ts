import { readdir, readFile, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createAlphaClient, type AlphaClient } from '../src/providers/alpha/alpha.client';
import { AlphaProviderError } from '../src/providers/alpha/alpha.errors';
import type { AlphaLocation, AlphaLocationUpdatePath } from '../src/providers/alpha/alpha.types';
import { createAlphaSandboxControl, type AlphaSandboxControl } from '../sandboxes/alpha/alpha-sandbox.control';
import { sandboxRestarts } from './support/sandbox-restarts';
import { startAlphaSandbox, type AlphaSandboxServer } from '../sandboxes/alpha/main';
import { failure } from './support/failure';

/**
 * The alpha client's location calls against the alpha sandbox, both real, over HTTP. The sandbox runs on a clock
 * this file moves, so the edit quota's rolling minute is checked by moving time, never by waiting.
 */

const START = Date.parse('2031-03-01T10:00:00.000Z');
let now = START;
let sandbox: AlphaSandboxServer;
let control: AlphaSandboxControl;
let client: AlphaClient;

const ACCOUNT = 'acc-1';
let requestCounter = 0;
const newRequestId = () => `loc-req-${++requestCounter}`;

/** A location with every field the provider takes, each set. */
const bakery: AlphaLocation = {
  title: 'Crumb & Co',
  storeCode: 'LDN-001',
  languageCode: 'en-GB',
  phoneNumbers: { primaryPhone: '+44 20 7946 0000', additionalPhones: ['+44 20 7946 0001'] },
  categories: {
    primaryCategory: { name: 'categories/gcid:bakery', displayName: 'Bakery' },
    additionalCategories: [{ name: 'gcid:cafe' }],
  },
  storefrontAddress: { regionCode: 'GB', postalCode: 'EC1A 1BB', locality: 'London', addressLines: ['1 High Street'] },
  websiteUri: 'https://crumb.example',
  regularHours: {
    periods: [{ openDay: 'MONDAY', openTime: { hours: 8 }, closeDay: 'MONDAY', closeTime: { hours: 17, minutes: 30 } }],
  },
  specialHours: { specialHourPeriods: [{ startDate: { year: 2031, month: 12, day: 25 }, closed: true }] },
  moreHours: [
    { hoursTypeId: 'DELIVERY', periods: [{ openDay: 'FRIDAY', openTime: { hours: 18 }, closeDay: 'FRIDAY', closeTime: { hours: 24 } }] },
  ],
  serviceArea: {
    businessType: 'CUSTOMER_AND_BUSINESS_LOCATION',
    places: { placeInfos: [{ placeName: 'Islington', placeId: 'ChIJislington' }] },
    regionCode: 'GB',
  },
  serviceItems: [
    { structuredServiceItem: { serviceTypeId: 'job_type_id:bread' } },
    {
      freeFormServiceItem: { category: 'categories/gcid:bakery', label: { displayName: 'Wedding cakes' } },
      price: { currencyCode: 'GBP', units: '120' },
    },
  ],
  profile: { description: 'Sourdough since 2009.' },
  latlng: { latitude: 51.52, longitude: -0.1 },
};

/** A different value for every field of `bakery`, so a field that changes when it should not shows. */
const other: AlphaLocation = {
  title: 'Crumb & Co (Angel)',
  storeCode: 'LDN-002',
  languageCode: 'fr',
  phoneNumbers: { primaryPhone: '+44 20 7946 0999', additionalPhones: ['+44 20 7946 0998', '+44 20 7946 0997'] },
  categories: { primaryCategory: { name: 'gcid:patisserie' }, additionalCategories: [{ name: 'categories/123' }] },
  storefrontAddress: { regionCode: 'GB', locality: 'Islington', addressLines: ['2 Upper Street'] },
  websiteUri: 'http://angel.crumb.example/',
  regularHours: {
    periods: [{ openDay: 'SATURDAY', openTime: { hours: 9, minutes: 15 }, closeDay: 'SUNDAY', closeTime: { hours: 1 } }],
  },
  specialHours: {
    specialHourPeriods: [
      {
        startDate: { year: 2031, month: 12, day: 24 },
        endDate: { year: 2031, month: 12, day: 31 },
        openTime: { hours: 10 },
        closeTime: { hours: 14 },
      },
    ],
  },
  moreHours: [{ hoursTypeId: 'BRUNCH', periods: [{ openDay: 'SUNDAY', openTime: {}, closeDay: 'SUNDAY', closeTime: { hours: 12 } }] }],
  serviceArea: { businessType: 'CUSTOMER_LOCATION_ONLY', regionCode: 'IE' },
  serviceItems: [{ freeFormServiceItem: { category: 'categories/gcid:cafe', label: { displayName: 'Coffee', languageCode: 'en' } } }],
  profile: { description: 'Now in Angel.' },
  latlng: { latitude: -33.9, longitude: 151.2 },
};

/** The least the provider takes. */
const minimal: AlphaLocation = {
  title: 'Kiosk',
  categories: { primaryCategory: { name: 'gcid:kiosk' } },
  storefrontAddress: { regionCode: 'DE' },
};

function create(location: AlphaLocation, requestId = newRequestId(), accountId = ACCOUNT): Promise<AlphaLocation> {
  return client.createLocation({ accountId, location, requestId });
}

function update(name: string, location: AlphaLocation, updateMask: readonly AlphaLocationUpdatePath[]): Promise<AlphaLocation> {
  return client.updateLocation({ name, location, updateMask });
}

/** The AlphaProviderError a call fails with (and a test failure if it succeeds or fails otherwise). */
const providerError = (call: Promise<unknown>): Promise<AlphaProviderError> => failure(call, AlphaProviderError);

/** A 400 INVALID_ARGUMENT naming `field` in its message and in its one field violation. */
function expectFieldRefusal(error: AlphaProviderError, field: string): void {
  expect(error).toMatchObject({ status: 400, code: 400, reason: 'INVALID_ARGUMENT', retryable: false });
  expect(error.message).toContain(field);
  expect(error.details).toEqual([
    {
      '@type': 'type.googleapis.com/google.rpc.BadRequest',
      fieldViolations: [{ field, description: expect.any(String) }],
    },
  ]);
}

function nameOf(location: AlphaLocation): string {
  if (!location.name) throw new Error('location without a name');
  return location.name;
}

/** What the provider adds to a location it serves. */
function served(content: AlphaLocation, name: string): AlphaLocation {
  return {
    name,
    ...content,
    metadata: { placeId: expect.stringMatching(/^ChIJ[A-Za-z0-9_-]{23}$/), mapsUri: `https://maps.alpha.example/?cid=${name.split('/').pop()}` },
  };
}

beforeAll(async () => {
  // Without the seeded identities' locations: these tests count every location the sandbox holds.
  sandbox = await startAlphaSandbox({ port: 0, clock: () => now, seed: false });
  control = createAlphaSandboxControl(sandbox.url);
  client = createAlphaClient({ baseUrl: sandbox.url, accessToken: () => 'sandbox-token' });
});
afterAll(() => sandbox?.close());
beforeEach(async () => {
  now = START;
  await control.reset();
});

describe('create and get', () => {
  it('creates a location and serves it with its name and what the provider knows of the place', async () => {
    const requestId = newRequestId();
    const created = await create(bakery, requestId);
    expect(created).toEqual(served(bakery, nameOf(created)));
    expect(nameOf(created)).toMatch(/^accounts\/acc-1\/locations\/\d+$/);

    expect(await client.getLocation(nameOf(created))).toEqual(created);
    const state = await control.state();
    expect(state.locations).toEqual([{ ...created, accountId: ACCOUNT, requestId, edits: 0 }]);
    expect(state.calls).toMatchObject({ 'location-create': 1, 'location-get': 1, create: 0 });
    expect(state.posts).toEqual([]);
  });

  it('answers a repeated requestId with the location already created, per account', async () => {
    const requestId = newRequestId();
    const first = await create(bakery, requestId);
    const repeated = await create({ ...minimal, title: 'a retry may even differ' }, requestId);
    expect(repeated).toEqual(first);
    expect((await control.state()).locations.map((location) => location.name)).toEqual([nameOf(first)]);

    const elsewhere = await create(bakery, requestId, 'acc-2');
    expect(nameOf(elsewhere)).not.toBe(nameOf(first));
    expect(elsewhere.metadata?.placeId).not.toBe(first.metadata?.placeId);
    const state = await control.state();
    expect(state.locations).toHaveLength(2);
    expect(state.calls['location-create']).toBe(3);
  });

  it('ignores the output-only name and metadata, and leaves zero hours fields out as the provider does', async () => {
    const created = await create({
      ...minimal,
      name: 'accounts/someone/locations/else',
      metadata: { placeId: 'ChIJmine', mapsUri: 'https://elsewhere.example' },
      regularHours: {
        periods: [{ openDay: 'TUESDAY', openTime: { hours: 9, minutes: 0 }, closeDay: 'TUESDAY', closeTime: { hours: 24, minutes: 0 } }],
      },
    });
    expect(nameOf(created)).toMatch(/^accounts\/acc-1\/locations\/\d+$/);
    expect(created.metadata?.placeId).not.toBe('ChIJmine');
    expect(created.regularHours).toEqual({
      periods: [{ openDay: 'TUESDAY', openTime: { hours: 9 }, closeDay: 'TUESDAY', closeTime: { hours: 24 } }],
    });
  });

  it('answers 404 NOT_FOUND for an unknown location, and refuses a malformed name without calling', async () => {
    const missing = await providerError(client.getLocation('accounts/acc-1/locations/404404'));
    expect(missing).toMatchObject({ status: 404, code: 404, reason: 'NOT_FOUND', retryable: false });

    const malformed = await providerError(client.getLocation('accounts/acc-1/locations/1/localPosts/2'));
    expect(malformed).toMatchObject({ status: 0, reason: 'INVALID_ARGUMENT', retryable: false });
    expect(await providerError(update('accounts/acc-1/../_control/reset', minimal, ['title']))).toMatchObject({ status: 0 });
    expect((await control.state()).calls).toMatchObject({ 'location-get': 1 });
    expect((await control.state()).calls['location-update']).toBeUndefined();
  });
});

describe('validation of a create', () => {
  const refused: [string, unknown, string][] = [
    ['no title', { ...minimal, title: undefined }, 'title'],
    ['a blank title', { ...minimal, title: '  ' }, 'title'],
    ['a title over 100 characters', { ...minimal, title: 'x'.repeat(101) }, 'title'],
    ['a storeCode over 64 characters', { ...minimal, storeCode: 's'.repeat(65) }, 'storeCode'],
    ['a languageCode that is not one', { ...minimal, languageCode: 'english please' }, 'languageCode'],
    ['no categories', { ...minimal, categories: undefined }, 'categories.primaryCategory'],
    ['no primary category', { ...minimal, categories: { additionalCategories: [{ name: 'gcid:cafe' }] } }, 'categories.primaryCategory'],
    ['a category name of neither form', { ...minimal, categories: { primaryCategory: { name: 'bakery' } } }, 'categories.primaryCategory.name'],
    [
      'ten additional categories',
      { ...minimal, categories: { primaryCategory: { name: 'gcid:a' }, additionalCategories: Array.from({ length: 10 }, (_, i) => ({ name: `gcid:c${i}` })) } },
      'categories.additionalCategories',
    ],
    ['neither a storefront address nor a service area', { ...minimal, storefrontAddress: undefined }, 'storefrontAddress'],
    ['a lower-case regionCode', { ...minimal, storefrontAddress: { regionCode: 'gb' } }, 'storefrontAddress.regionCode'],
    ['a three-letter regionCode', { ...minimal, storefrontAddress: { regionCode: 'GBR' } }, 'storefrontAddress.regionCode'],
    ['an address without a regionCode', { ...minimal, storefrontAddress: { locality: 'Bonn' } }, 'storefrontAddress.regionCode'],
    ['three additional phones', { ...minimal, phoneNumbers: { additionalPhones: ['1', '2', '3'] } }, 'phoneNumbers.additionalPhones'],
    ['a websiteUri that is not http(s)', { ...minimal, websiteUri: 'ftp://crumb.example' }, 'websiteUri'],
    ['a websiteUri that is not a URL', { ...minimal, websiteUri: 'crumb dot example' }, 'websiteUri'],
    ['a description over 750 characters', { ...minimal, profile: { description: 'd'.repeat(751) } }, 'profile.description'],
    [
      'an unknown day',
      { ...minimal, regularHours: { periods: [{ openDay: 'FUNDAY', openTime: {}, closeDay: 'MONDAY', closeTime: { hours: 5 } }] } },
      'regularHours.periods[0].openDay',
    ],
    [
      'hours over 24',
      { ...minimal, regularHours: { periods: [{ openDay: 'MONDAY', openTime: {}, closeDay: 'MONDAY', closeTime: { hours: 25 } }] } },
      'regularHours.periods[0].closeTime.hours',
    ],
    [
      'minutes over 59',
      { ...minimal, regularHours: { periods: [{ openDay: 'MONDAY', openTime: { hours: 9, minutes: 60 }, closeDay: 'MONDAY', closeTime: { hours: 17 } }] } },
      'regularHours.periods[0].openTime.minutes',
    ],
    [
      'minutes after 24:00',
      { ...minimal, regularHours: { periods: [{ openDay: 'MONDAY', openTime: {}, closeDay: 'MONDAY', closeTime: { hours: 24, minutes: 30 } }] } },
      'regularHours.periods[0].closeTime.minutes',
    ],
    [
      'a more-hours period with an unknown day',
      { ...minimal, moreHours: [{ hoursTypeId: 'DELIVERY', periods: [{ openDay: 'MONDAY', openTime: {}, closeDay: 'monday', closeTime: {} }] }] },
      'moreHours[0].periods[0].closeDay',
    ],
    [
      'a special date that is not on the calendar',
      { ...minimal, specialHours: { specialHourPeriods: [{ startDate: { year: 2031, month: 2, day: 30 }, closed: true }] } },
      'specialHours.specialHourPeriods[0].startDate',
    ],
    [
      'a special date in month 13',
      { ...minimal, specialHours: { specialHourPeriods: [{ startDate: { year: 2031, month: 13, day: 1 }, closed: true }] } },
      'specialHours.specialHourPeriods[0].startDate.month',
    ],
    [
      'a special period ending before it starts',
      {
        ...minimal,
        specialHours: { specialHourPeriods: [{ startDate: { year: 2031, month: 5, day: 2 }, endDate: { year: 2031, month: 5, day: 1 }, closed: true }] },
      },
      'specialHours.specialHourPeriods[0].endDate',
    ],
    [
      'two structured service items of one type',
      { ...minimal, serviceItems: [{ structuredServiceItem: { serviceTypeId: 'job:bread' } }, { structuredServiceItem: { serviceTypeId: 'job:bread' } }] },
      'serviceItems[1].structuredServiceItem.serviceTypeId',
    ],
    [
      'two free-form service items of one name, whatever the case',
      {
        ...minimal,
        serviceItems: [
          { freeFormServiceItem: { category: 'gcid:bakery', label: { displayName: 'Wedding Cakes' } } },
          { structuredServiceItem: { serviceTypeId: 'job:bread' } },
          { freeFormServiceItem: { category: 'gcid:cafe', label: { displayName: 'wedding cakes' } } },
        ],
      },
      'serviceItems[2].freeFormServiceItem.label.displayName',
    ],
    ['a latitude out of range', { ...minimal, latlng: { latitude: 90.5, longitude: 0 } }, 'latlng.latitude'],
    ['a longitude out of range', { ...minimal, latlng: { latitude: 0, longitude: -180.5 } }, 'latlng.longitude'],
    ['an unknown businessType', { ...minimal, serviceArea: { businessType: 'EVERYWHERE' } }, 'serviceArea.businessType'],
    ['an unknown field', { ...minimal, titel: 'typo' }, 'titel'],
    ['an unknown nested field', { ...minimal, storefrontAddress: { regionCode: 'DE', street: 'Hauptstr. 1' } }, 'storefrontAddress.street'],
  ];

  it.each(refused)('refuses %s', async (_rule, location, field) => {
    const error = await providerError(create(location as AlphaLocation));
    expectFieldRefusal(error, field);
    expect((await control.state()).locations).toEqual([]);
  });

  const accepted: [string, AlphaLocation][] = [
    ['a category named categories/{id}', { ...minimal, categories: { primaryCategory: { name: 'categories/12345' } } }],
    ['a category named gcid:{id}', { ...minimal, categories: { primaryCategory: { name: 'gcid:bakery' } } }],
    ['a service area without a storefront', { title: 'Mobile baker', categories: minimal.categories, serviceArea: { businessType: 'CUSTOMER_LOCATION_ONLY' } }],
    [
      'nine additional categories and two additional phones',
      {
        ...minimal,
        categories: { primaryCategory: { name: 'gcid:a' }, additionalCategories: Array.from({ length: 9 }, (_, i) => ({ name: `gcid:c${i}` })) },
        phoneNumbers: { primaryPhone: '+49 228 0', additionalPhones: ['+49 228 1', '+49 228 2'] },
      },
    ],
    ['100-character title, 64-character storeCode, 750-character description', { ...minimal, title: 't'.repeat(100), storeCode: 's'.repeat(64), profile: { description: 'd'.repeat(750) } }],
    ['a structured and a free-form item of the same words', {
      ...minimal,
      serviceItems: [{ structuredServiceItem: { serviceTypeId: 'bread' } }, { freeFormServiceItem: { category: 'gcid:bakery', label: { displayName: 'bread' } } }],
    }],
    ['the edges of the globe', { ...minimal, latlng: { latitude: -90, longitude: 180 } }],
  ];

  it.each(accepted)('accepts %s', async (_rule, location) => {
    const created = await create(location);
    expect(created).toEqual(served(location, nameOf(created)));
  });
});

describe('update', () => {
  /** Each mask, and the top-level fields it replaces. */
  const masks: AlphaLocationUpdatePath[][] = [
    ['title'],
    ['storeCode'],
    ['languageCode'],
    ['phoneNumbers'],
    ['phoneNumbers.primaryPhone', 'phoneNumbers.additionalPhones'],
    ['categories'],
    ['categories.primaryCategory', 'categories.additionalCategories'],
    ['storefrontAddress'],
    ['websiteUri'],
    ['regularHours'],
    ['specialHours'],
    ['moreHours'],
    ['serviceArea'],
    ['serviceItems'],
    ['profile'],
    ['profile.description'],
    ['latlng'],
    ['title', 'websiteUri', 'latlng'],
  ];

  it.each(masks.map((mask) => [mask.join(','), mask] as const))('changes exactly %s', async (_label, mask) => {
    const created = await create(bakery);
    // The body carries a new value for every field: only the masked ones may be taken.
    const updated = await update(nameOf(created), { ...other, name: 'accounts/x/locations/y' }, mask);
    const changed = Object.fromEntries(mask.map((path) => path.split('.')[0]!).map((field) => [field, other[field as keyof AlphaLocation]]));
    expect(updated).toEqual({ ...created, ...changed });
    expect(await client.getLocation(nameOf(created))).toEqual(updated);
    expect((await control.state()).locations).toEqual([expect.objectContaining({ name: nameOf(created), edits: 1 })]);
  });

  it('takes the updateMask comma-separated in the query, as the provider documents it', async () => {
    const created = await create(bakery);
    const response = await fetch(`${sandbox.url}/v4/${nameOf(created)}?updateMask=title,websiteUri`, {
      method: 'PATCH',
      headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'Renamed', websiteUri: 'https://renamed.example', storeCode: 'ignored' }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ ...created, title: 'Renamed', websiteUri: 'https://renamed.example' });
  });

  it('clears a masked field the body leaves out, and a half of a pair left out', async () => {
    const created = await create(bakery);
    const cleared = await update(nameOf(created), {}, ['websiteUri', 'profile.description', 'moreHours']);
    const { websiteUri: _w, profile: _p, moreHours: _m, ...rest } = created;
    expect(cleared).toEqual(rest);

    const primaryOnly = await update(nameOf(created), { phoneNumbers: { primaryPhone: '+44 1' } }, [
      'phoneNumbers.primaryPhone',
      'phoneNumbers.additionalPhones',
    ]);
    expect(primaryOnly.phoneNumbers).toEqual({ primaryPhone: '+44 1' });

    // The storefront may go while a service area remains.
    const areaOnly = await update(nameOf(created), {}, ['storefrontAddress']);
    expect(areaOnly.storefrontAddress).toBeUndefined();
    expect(areaOnly.serviceArea).toEqual(bakery.serviceArea);
    expect((await control.state()).locations[0]?.edits).toBe(3);
  });

  const pairing: [AlphaLocationUpdatePath[], string][] = [
    [['phoneNumbers.primaryPhone'], 'phoneNumbers.additionalPhones'],
    [['phoneNumbers.additionalPhones'], 'phoneNumbers.primaryPhone'],
    [['title', 'categories.primaryCategory'], 'categories.additionalCategories'],
    [['categories.additionalCategories'], 'categories.primaryCategory'],
  ];

  it.each(pairing)('refuses the mask %j without %s', async (mask, missing) => {
    const created = await create(bakery);
    const error = await providerError(update(nameOf(created), other, mask));
    expectFieldRefusal(error, 'updateMask');
    expect(error.message).toContain(missing);
    expect(await client.getLocation(nameOf(created))).toEqual(created);
  });

  it('accepts a half of a pair when the whole is masked too', async () => {
    const created = await create(bakery);
    const updated = await update(nameOf(created), other, ['phoneNumbers', 'phoneNumbers.primaryPhone', 'categories.primaryCategory', 'categories']);
    expect(updated).toEqual({ ...created, phoneNumbers: other.phoneNumbers, categories: other.categories });
  });

  it('refuses a missing, empty or unknown mask path, naming it', async () => {
    const created = await create(bakery);
    expectFieldRefusal(await providerError(update(nameOf(created), other, [])), 'updateMask');

    const missing = await fetch(`${sandbox.url}/v4/${nameOf(created)}`, {
      method: 'PATCH',
      headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'No mask' }),
    });
    expect(missing.status).toBe(400);
    expect(await missing.json()).toMatchObject({ error: { status: 'INVALID_ARGUMENT', message: expect.stringContaining('updateMask') } });

    for (const path of ['metadata', 'name', 'profile.photo', 'Title']) {
      const error = await providerError(update(nameOf(created), other, ['title', path as AlphaLocationUpdatePath]));
      expectFieldRefusal(error, 'updateMask');
      expect(error.message).toContain(`"${path}"`);
    }
    expect(await client.getLocation(nameOf(created))).toEqual(created);
  });

  const refusedResults: [string, AlphaLocation, AlphaLocationUpdatePath[], string][] = [
    ['an invalid new value', { title: 'New title', websiteUri: 'ftp://nope' }, ['title', 'websiteUri'], 'websiteUri'],
    ['a cleared title', {}, ['title'], 'title'],
    ['cleared categories', {}, ['categories'], 'categories.primaryCategory'],
    ['a cleared primary category', { categories: { additionalCategories: [{ name: 'gcid:x' }] } }, ['categories'], 'categories.primaryCategory'],
    ['neither storefront nor service area left', {}, ['storefrontAddress', 'serviceArea'], 'storefrontAddress'],
    ['an unknown field in the body', { title: 'New', tilte: 'typo' } as AlphaLocation, ['title'], 'tilte'],
  ];

  it.each(refusedResults)('refuses %s and changes nothing', async (_rule, body, mask, field) => {
    const created = await create(bakery);
    expectFieldRefusal(await providerError(update(nameOf(created), body, mask)), field);
    expect(await client.getLocation(nameOf(created))).toEqual(created);
    expect((await control.state()).locations[0]?.edits).toBe(0);
  });

  it('answers 404 NOT_FOUND for an unknown location', async () => {
    const error = await providerError(update('accounts/acc-1/locations/404404', other, ['title']));
    expect(error).toMatchObject({ status: 404, reason: 'NOT_FOUND', retryable: false });
  });
});

describe('the edit quota', () => {
  it('allows 10 accepted edits per location per rolling minute, then 429 until the oldest leaves it', async () => {
    const created = await create(bakery);
    const neighbour = await create(minimal);
    // A refused edit does not use the quota.
    await providerError(update(nameOf(created), {}, ['title']));
    for (let edit = 1; edit <= 10; edit += 1) {
      expect((await update(nameOf(created), { title: `Edit ${edit}` }, ['title'])).title).toBe(`Edit ${edit}`);
    }

    const limited = await providerError(update(nameOf(created), { title: 'Edit 11' }, ['title']));
    expect(limited).toMatchObject({ status: 429, code: 429, reason: 'RESOURCE_EXHAUSTED', retryable: true, retryAfterSeconds: 60 });
    expect(limited.details).toEqual([{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '60s' }]);
    expect((await client.getLocation(nameOf(created))).title).toBe('Edit 10');
    // The quota is per location.
    expect((await update(nameOf(neighbour), { title: 'Kiosk 2' }, ['title'])).title).toBe('Kiosk 2');

    now += 59_999;
    expect(await providerError(update(nameOf(created), { title: 'Edit 11' }, ['title']))).toMatchObject({
      status: 429,
      retryAfterSeconds: 1,
    });
    now += 1;
    expect((await update(nameOf(created), { title: 'Edit 11' }, ['title'])).title).toBe('Edit 11');
    expect((await control.state()).locations.map((location) => location.edits)).toEqual([11, 1]);
    expect((await control.state()).calls['location-update']).toBe(15);
  });

  it('counts the window from the oldest edit in it, under the configured limit', async () => {
    expect(await control.configure({ locationEditsPerMinute: 2 })).toMatchObject({ locationEditsPerMinute: 2 });
    const created = await create(bakery);
    await update(nameOf(created), { title: 'A' }, ['title']);
    now += 20_000;
    await update(nameOf(created), { title: 'B' }, ['title']);
    now += 10_000;
    const raw = await fetch(`${sandbox.url}/v4/${nameOf(created)}?updateMask=title`, {
      method: 'PATCH',
      headers: { authorization: 'Bearer t', 'content-type': 'application/json' },
      body: JSON.stringify({ title: 'C' }),
    });
    expect(raw.status).toBe(429);
    expect(raw.headers.get('retry-after')).toBe('30');
    expect(await raw.json()).toMatchObject({ error: { code: 429, status: 'RESOURCE_EXHAUSTED' } });

    now += 30_000;
    expect((await update(nameOf(created), { title: 'C' }, ['title'])).title).toBe('C');
    expect(await providerError(update(nameOf(created), { title: 'D' }, ['title']))).toMatchObject({ status: 429, retryAfterSeconds: 20 });
  });

  it('refuses a limit below 1 or not whole, and a reset restores 10', async () => {
    await expect(control.configure({ locationEditsPerMinute: 0 })).rejects.toThrow(/HTTP 400/);
    await expect(control.configure({ locationEditsPerMinute: 1.5 })).rejects.toThrow(/HTTP 400/);
    await control.configure({ locationEditsPerMinute: 3 });
    await control.reset();
    expect((await control.state()).config.locationEditsPerMinute).toBe(10);
  });
});

describe('list', () => {
  it('lists one account, oldest first, page by page', async () => {
    const made: AlphaLocation[] = [];
    for (let index = 0; index < 5; index += 1) made.push(await create({ ...minimal, title: `Kiosk ${index}` }));
    await create(minimal, newRequestId(), 'acc-2');
    const names = made.map(nameOf);

    const page1 = await client.listLocations({ accountId: ACCOUNT, pageSize: 2 });
    expect(page1.locations.map(nameOf)).toEqual(names.slice(0, 2));
    expect(page1.nextPageToken).toEqual(expect.any(String));
    const page2 = await client.listLocations({ accountId: ACCOUNT, pageSize: 2, pageToken: page1.nextPageToken });
    expect(page2.locations.map(nameOf)).toEqual(names.slice(2, 4));

    // A location created between pages comes at the end, neither shifting nor repeating the rest.
    const late = await create({ ...minimal, title: 'Late' });
    const page3 = await client.listLocations({ accountId: ACCOUNT, pageSize: 2, pageToken: page2.nextPageToken });
    expect(page3).toEqual({ locations: [made[4], late] });

    expect((await client.listLocations({ accountId: ACCOUNT })).locations).toHaveLength(6);
    expect((await client.listLocations({ accountId: ACCOUNT, pageSize: 0 })).locations).toHaveLength(6);
  });

  it('omits an empty list, and refuses a token it did not issue for this list', async () => {
    expect(await client.listLocations({ accountId: 'nobody' })).toEqual({ locations: [] });
    const raw = await fetch(`${sandbox.url}/v4/accounts/nobody/locations`, { headers: { authorization: 'Bearer t' } });
    expect(await raw.json()).toEqual({});

    const error = await providerError(client.listLocations({ accountId: ACCOUNT, pageToken: 'not-a-token' }));
    expectFieldRefusal(error, 'pageToken');

    // A local-post list's token belongs to another list.
    const postAt = { accountId: ACCOUNT, locationId: 'l1' };
    for (const summary of ['one', 'two']) await client.createLocalPost({ ...postAt, post: { summary }, requestId: newRequestId() });
    const posts = await client.listLocalPosts({ ...postAt, pageSize: 1 });
    expectFieldRefusal(await providerError(client.listLocations({ accountId: ACCOUNT, pageToken: posts.nextPageToken })), 'pageToken');
  });
});

describe('scripted failures and authentication', () => {
  it('a 503 is retryable, and the retried create with its requestId makes one location', async () => {
    await control.fail({ count: 1, status: 503, method: 'POST', pathContains: '/accounts/acc-1/locations' });
    const requestId = newRequestId();
    const error = await providerError(create(bakery, requestId));
    expect(error).toMatchObject({ status: 503, code: 503, reason: 'UNAVAILABLE', retryable: true });
    expect((await control.state()).locations).toEqual([]);

    const created = await create(bakery, requestId);
    const state = await control.state();
    expect(state.locations.map((location) => location.name)).toEqual([nameOf(created)]);
    expect(state.calls['location-create']).toBe(2);
  });

  it('a create whose answer is lost, retried with its requestId, makes one location', async () => {
    await control.fail({ count: 1, status: 0, method: 'POST', when: 'after' });
    const requestId = newRequestId();
    expect(await providerError(create(bakery, requestId))).toMatchObject({ reason: 'NETWORK_ERROR', retryable: true });
    const retried = await create(bakery, requestId);
    expect((await control.state()).locations.map((location) => location.name)).toEqual([nameOf(retried)]);
  });

  it('a scripted 429 on an update is retryable with Retry-After and changes nothing; a 500 on a get too', async () => {
    const created = await create(bakery);
    await control.fail({ count: 1, status: 429, method: 'PATCH' });
    await control.fail({ count: 1, status: 500, method: 'GET' });
    expect(await providerError(update(nameOf(created), other, ['title']))).toMatchObject({
      status: 429,
      reason: 'RESOURCE_EXHAUSTED',
      retryable: true,
      retryAfterSeconds: 1,
    });
    expect(await providerError(client.getLocation(nameOf(created)))).toMatchObject({ status: 500, reason: 'INTERNAL', retryable: true });
    expect(await client.getLocation(nameOf(created))).toEqual(created);
    expect((await control.state()).locations[0]?.edits).toBe(0);
  });

  it('a call without a bearer token is 401 UNAUTHENTICATED', async () => {
    const anonymous = createAlphaClient({ baseUrl: sandbox.url, accessToken: () => '' });
    const error = await providerError(anonymous.createLocation({ accountId: ACCOUNT, location: bakery, requestId: newRequestId() }));
    expect(error).toMatchObject({ status: 401, reason: 'UNAUTHENTICATED', retryable: false });
    expect(await providerError(anonymous.listLocations({ accountId: ACCOUNT }))).toMatchObject({ status: 401 });
    expect((await control.state()).locations).toEqual([]);
  });
});

describe('persistence in a state file', () => {
  type Logger = { level: string; stream: { write(line: string): void } };
  const restarts = sandboxRestarts('alpha-sandbox-state-', (stateFile, logger?: Logger) => startAlphaSandbox({ port: 0, clock: () => now, stateFile, seed: false, ...(logger ? { logger } : {}) }));

  async function start(stateFile: string, logger?: Logger) {
    const started = await restarts.start(stateFile, logger);
    return {
      close: () => started.close(),
      client: createAlphaClient({ baseUrl: started.url, accessToken: () => 't' }),
      control: createAlphaSandboxControl(started.url),
    };
  }

  it('serves the same locations and posts after a close and a new start', async () => {
    const stateFile = restarts.file('nested', 'alpha.json');
    const first = await start(stateFile);
    expect((await first.control.state()).locations).toEqual([]);
    const requestId = newRequestId();
    const location = await first.client.createLocation({ accountId: ACCOUNT, location: bakery, requestId });
    const edited = await first.client.updateLocation({ name: nameOf(location), location: { title: 'Kept' }, updateMask: ['title'] });
    const post = await first.client.createLocalPost({ accountId: ACCOUNT, locationId: 'l1', post: { summary: 'kept' }, requestId: 'p1' });
    await first.control.configure({ locationEditsPerMinute: 1 });
    await first.close();
    expect((await readdir(path.dirname(stateFile))).sort()).toEqual(['alpha.json']);

    const second = await start(stateFile);
    expect(await second.client.getLocation(nameOf(location))).toEqual(edited);
    expect(await second.client.listLocations({ accountId: ACCOUNT })).toEqual({ locations: [edited] });
    expect(await second.client.getLocalPost(post.name!)).toEqual(post);
    const state = await second.control.state();
    expect(state.locations).toEqual([{ ...edited, accountId: ACCOUNT, requestId, edits: 1 }]);
    // Configuration and counters start afresh.
    expect(state.config.locationEditsPerMinute).toBe(10);
    expect(state.publishes).toBe(0);

    // Its requestIds are remembered, and new names do not reuse old ones.
    expect(await second.client.createLocation({ accountId: ACCOUNT, location: minimal, requestId })).toEqual(edited);
    const added = await second.client.createLocation({ accountId: ACCOUNT, location: minimal, requestId: newRequestId() });
    expect(nameOf(added)).not.toBe(nameOf(location));
    expect((await second.client.listLocations({ accountId: ACCOUNT })).locations.map(nameOf)).toEqual([nameOf(location), nameOf(added)]);

    // A reset empties the file too, once closed.
    await second.control.reset();
    await second.close();
    const third = await start(stateFile);
    expect(await third.client.listLocations({ accountId: ACCOUNT })).toEqual({ locations: [] });
    await third.close();
  });

  it('starts empty, with a warning, from a file that is not JSON or not a state file', async () => {
    for (const [fileName, content] of [
      ['garbled.json', '{"version": 1, "posts": ['],
      ['foreign.json', JSON.stringify({ version: 99, nextSeq: 1, posts: [], locations: [] })],
      ['refused.json', JSON.stringify({ version: 1, nextSeq: 2, posts: [], locations: [{ seq: 1, id: '1', accountId: 'a', requestId: null, content: { title: 'No category' }, edits: 0, recentEdits: [] }] })],
    ] as const) {
      const stateFile = restarts.file(fileName);
      await writeFile(stateFile, content);
      const lines: string[] = [];
      const sandboxOnFile = await start(stateFile, { level: 'warn', stream: { write: (line) => void lines.push(line) } });
      expect(await sandboxOnFile.client.listLocations({ accountId: 'a' })).toEqual({ locations: [] });
      expect((await sandboxOnFile.control.state()).posts).toEqual([]);
      expect(lines.map((line) => JSON.parse(line) as { level: number; msg: string })).toEqual([
        expect.objectContaining({ level: 40, msg: expect.stringContaining('malformed') }),
      ]);
      await sandboxOnFile.close();
      // Closing writes a readable file in its place.
      const saved = JSON.parse(await readFile(stateFile, 'utf8')) as { locations: unknown[] };
      expect(saved.locations).toEqual([]);
    }
  });

  it('starts empty and quietly when the file does not exist yet', async () => {
    const lines: string[] = [];
    const fresh = await start(restarts.file('absent.json'), { level: 'warn', stream: { write: (line) => void lines.push(line) } });
    expect((await fresh.control.state()).locations).toEqual([]);
    expect(lines).toEqual([]);
    await fresh.close();
  });
});

describe('what the client sends and accepts', () => {
  // A stand-in for the provider answering canned bodies, to see the requests exactly as sent.
  let server: Server;
  let base: string;
  let answer: { status: number; body: string };
  let received: { method?: string; url?: string; body: string } | undefined;

  beforeAll(async () => {
    server = createServer((request: IncomingMessage, response: ServerResponse) => {
      let body = '';
      request.setEncoding('utf8');
      request.on('data', (chunk: string) => (body += chunk));
      request.on('end', () => {
        received = { method: request.method, url: request.url, body };
        response.writeHead(answer.status, { 'content-type': 'application/json' });
        response.end(answer.body);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  const stubClient = () => createAlphaClient({ baseUrl: base, accessToken: () => 'stub-token' });

  it('sends a PATCH with the mask comma-separated and the location as JSON', async () => {
    answer = { status: 200, body: JSON.stringify({ name: 'accounts/a/locations/1', title: 'T', extra: 'dropped' }) };
    const updated = await stubClient().updateLocation({
      name: 'accounts/a/locations/1',
      location: { title: 'T' },
      updateMask: ['title', 'phoneNumbers.primaryPhone', 'phoneNumbers.additionalPhones'],
    });
    expect(updated).toEqual({ name: 'accounts/a/locations/1', title: 'T' });
    expect(received?.method).toBe('PATCH');
    const url = new URL(received?.url ?? '', base);
    expect(url.pathname).toBe('/v4/accounts/a/locations/1');
    expect(url.searchParams.get('updateMask')).toBe('title,phoneNumbers.primaryPhone,phoneNumbers.additionalPhones');
    expect(JSON.parse(received?.body ?? '')).toEqual({ title: 'T' });
  });

  it('refuses a served location without its name as BAD_RESPONSE', async () => {
    answer = { status: 200, body: JSON.stringify({ title: 'no name' }) };
    const error = await providerError(stubClient().getLocation('accounts/a/locations/1'));
    expect(error).toMatchObject({ status: 200, reason: 'BAD_RESPONSE', retryable: false });
    expect(error.message).toContain('name');

    answer = { status: 200, body: JSON.stringify({ locations: [{ name: 'accounts/a/locations/1/localPosts/2' }] }) };
    expect(await providerError(stubClient().listLocations({ accountId: 'a' }))).toMatchObject({ reason: 'BAD_RESPONSE' });
  });
});
