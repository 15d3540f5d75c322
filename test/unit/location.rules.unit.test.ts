import type { Location } from '../../src/location/location.entity';
import { LocationUpdateField } from '../../src/location/location.enums';
import {
  applyLocationChanges,
  prepareLocationUpdate,
  prepareNewLocation,
  sameValue,
  serviceItems,
  type LocationDraft,
  type LocationPatch,
} from '../../src/location/location.rules';
import { badInput } from './refusal';

/** The smallest location a create accepts: a name, a category, a country, and a place customers go to. */
const draft = (fields: Partial<LocationDraft> = {}): LocationDraft => ({
  name: 'Bakery',
  categoryId: 'gcid:bakery',
  countryCode: 'FR',
  address: '1 Rue de Rivoli',
  city: 'Paris',
  postal: '75001',
  ...fields,
});

/** A stored location as the update rules see it (only the fields they read). */
const stored = (fields: Partial<Location> = {}): Location =>
  ({
    name: 'Bakery',
    address: '1 Rue de Rivoli',
    postal: '75001',
    city: 'Paris',
    countryCode: 'FR',
    administrativeArea: null,
    description: null,
    phoneNumber: '+33 1 23 45 67 89',
    additionalPhoneNumbers: [],
    websiteUri: null,
    regularHours: [],
    specialHours: [],
    moreHours: [],
    categories: { primaryCategory: { name: 'gcid:bakery', displayName: 'Bakery' }, additionalCategories: [] },
    serviceItems: [],
    serviceArea: null,
    categoryId: 'gcid:bakery',
    additionalCategoryIds: [],
    ...fields,
  }) as unknown as Location;

const update = (patch: LocationPatch, location = stored(), combineServiceItems = false) =>
  prepareLocationUpdate(location, patch, { combineServiceItems });

const text = (length: number) => 'x'.repeat(length);
const period = (open: { hours: string; minutes?: string | null }, close: { hours: string; minutes?: string | null }) => ({
  openDay: 'MONDAY',
  openTime: open,
  closeDay: 'MONDAY',
  closeTime: close,
});

describe('a new location', () => {
  it('is stored trimmed and normalized', () => {
    const fields = prepareNewLocation(
      draft({ name: '  Bakery  ', countryCode: ' fr ', administrativeArea: '   ', description: '  Fresh bread  ', websiteUri: ' https://bakery.example/ ' }),
    );
    expect(fields).toMatchObject({
      name: 'Bakery',
      countryCode: 'FR',
      // Blank optional text is no value at all.
      administrativeArea: null,
      description: 'Fresh bread',
      websiteUri: 'https://bakery.example/',
      phoneNumber: null,
      additionalPhoneNumbers: [],
      serviceArea: null,
    });
  });

  it.each([
    ['name', { name: '   ' }, 'name must not be empty'],
    ['name', { name: text(101) }, 'name must be at most 100 characters'],
    ['reference_id', { referenceId: text(65) }, 'reference_id must be at most 64 characters'],
    ['category_id', { categoryId: '' }, 'category_id must not be empty'],
    ['category_id', { categoryId: text(101) }, 'category_id must be at most 100 characters'],
    ['address', { address: text(256) }, 'address must be at most 255 characters'],
    ['postal', { postal: text(21) }, 'postal must be at most 20 characters'],
    ['city', { city: text(101) }, 'city must be at most 100 characters'],
    ['administrative_area', { administrativeArea: text(101) }, 'administrative_area must be at most 100 characters'],
    ['country_code', { countryCode: 'FRA' }, 'country_code must be an ISO 3166-1 alpha-2 code (two letters)'],
    ['country_code', { countryCode: 'F1' }, 'country_code must be an ISO 3166-1 alpha-2 code (two letters)'],
    ['additional_address_lines', { additionalAddressLines: ['a', 'b', 'c', 'd', 'e'] }, 'additional_address_lines may hold at most 4 items'],
    ['additional_address_lines', { additionalAddressLines: ['Floor 2', ' '] }, 'additional_address_lines[1] must not be empty'],
    ['additional_category_ids', { additionalCategoryIds: Array.from({ length: 10 }, (_, i) => `gcid:${i}`) }, 'additional_category_ids may hold at most 9 items'],
  ])('refuses a bad %s: %j', (_field, fields, message) => {
    expect(() => prepareNewLocation(draft(fields))).toThrow(badInput(message));
  });

  it('accepts text at its limits', () => {
    const fields = prepareNewLocation(
      draft({ name: text(100), referenceId: text(64), postal: text(20), additionalAddressLines: ['a', 'b', 'c', 'd'], additionalCategoryIds: Array.from({ length: 9 }, (_, i) => `gcid:${i}`) }),
    );
    expect(fields.name).toHaveLength(100);
    expect(fields.referenceId).toHaveLength(64);
    expect(fields.additionalAddressLines).toHaveLength(4);
    expect(fields.additionalCategoryIds).toHaveLength(9);
  });

  describe('description', () => {
    it('holds 750 characters as a person counts them', () => {
      // 750 emoji are 1500 UTF-16 units: still 750 characters.
      expect([...prepareNewLocation(draft({ description: '🥐'.repeat(750) })).description!]).toHaveLength(750);
      expect(() => prepareNewLocation(draft({ description: '🥐'.repeat(751) }))).toThrow(badInput('description must be at most 750 characters'));
    });

    it('is counted after trimming, and blank is none', () => {
      expect(prepareNewLocation(draft({ description: ` ${text(750)} ` })).description).toHaveLength(750);
      expect(prepareNewLocation(draft({ description: '   ' })).description).toBeNull();
    });
  });

  describe('phone numbers', () => {
    const phoneRule = (field: string) => `${field} must be a phone number (digits, spaces, + ( ) - .), 4 to 30 characters`;

    it.each(['1234', '+33 1 23 45 67 89', '01 (23) 45-67', '01.23.45.67.89', '1'.repeat(30)])('accepts %s', (phoneNumber) => {
      expect(prepareNewLocation(draft({ phoneNumber })).phoneNumber).toBe(phoneNumber);
    });

    it.each(['123', '1'.repeat(31), '555-CALL-NOW', '-1234', '1234-'])('refuses %s', (phoneNumber) => {
      expect(() => prepareNewLocation(draft({ phoneNumber }))).toThrow(badInput(phoneRule('phone_number')));
    });

    it('takes up to two additional numbers, each checked under its own name, and only beside a primary one', () => {
      expect(prepareNewLocation(draft({ phoneNumber: '0123 4567', additionalPhoneNumbers: [' 0111 1111 ', '0222 2222'] }))).toMatchObject({
        phoneNumber: '0123 4567',
        additionalPhoneNumbers: ['0111 1111', '0222 2222'],
      });
      expect(() => prepareNewLocation(draft({ phoneNumber: '0123 4567', additionalPhoneNumbers: ['0111 1111', '0222 2222', '0333 3333'] }))).toThrow(
        badInput('additional_phone_numbers may hold at most 2 numbers'),
      );
      expect(() => prepareNewLocation(draft({ phoneNumber: '0123 4567', additionalPhoneNumbers: ['0111 1111', 'call us'] }))).toThrow(
        badInput(phoneRule('additional_phone_numbers[1]')),
      );
      expect(() => prepareNewLocation(draft({ phoneNumber: '  ', additionalPhoneNumbers: ['0111 1111'] }))).toThrow(
        badInput('additional_phone_numbers need a phone_number'),
      );
    });
  });

  describe('URLs', () => {
    it.each([
      ['websiteUri', 'website_uri'],
      ['profileLogoUrl', 'profile_logo_url'],
      ['coverUrl', 'cover_url'],
    ] as const)('%s is an http(s) URL of at most 2048 characters', (property, field) => {
      const base = 'https://bakery.example/';
      const longest = base + text(2048 - base.length);
      expect(prepareNewLocation(draft({ [property]: longest }))[property]).toBe(longest);
      expect(prepareNewLocation(draft({ [property]: 'http://bakery.example' }))[property]).toBe('http://bakery.example');
      expect(prepareNewLocation(draft({ [property]: '' }))[property]).toBeNull();
      for (const [bad, problem] of [
        [`${longest}x`, 'must be at most 2048 characters'],
        ['ftp://bakery.example/', 'scheme must be http or https, not ftp'],
        ['bakery.example', 'must be an absolute http(s) URL, such as https://example.com/path'],
        ['javascript:alert(1)', 'must be an absolute http(s) URL, such as https://example.com/path'],
      ]) {
        expect(() => prepareNewLocation(draft({ [property]: bad }))).toThrow(badInput(`${field} ${problem}`));
      }
    });
  });

  describe('coordinates', () => {
    it('accept the poles and the antimeridian', () => {
      expect(prepareNewLocation(draft({ latitude: -90, longitude: 180 }))).toMatchObject({ latitude: -90, longitude: 180 });
      expect(prepareNewLocation(draft({ latitude: 90, longitude: -180 }))).toMatchObject({ latitude: 90, longitude: -180 });
    });

    it.each([
      [{ latitude: 90.000001, longitude: 0 }, 'latitude must be between -90 and 90'],
      [{ latitude: -91, longitude: 0 }, 'latitude must be between -90 and 90'],
      [{ latitude: Number.NaN, longitude: 0 }, 'latitude must be between -90 and 90'],
      [{ latitude: 0, longitude: 180.5 }, 'longitude must be between -180 and 180'],
      [{ latitude: 0, longitude: Number.POSITIVE_INFINITY }, 'longitude must be between -180 and 180'],
      [{ latitude: 48.86 }, 'latitude and longitude go together'],
      [{ longitude: 2.35, latitude: null }, 'latitude and longitude go together'],
    ])('refuse %j', (fields, message) => {
      expect(() => prepareNewLocation(draft(fields))).toThrow(badInput(message));
    });
  });

  describe('place', () => {
    const noAddress = { address: null, city: null, postal: null };

    it('is an address, city and postal, or a service area', () => {
      const message = 'A location needs address, city and postal, or a service area (service_area_place_ids)';
      expect(() => prepareNewLocation(draft(noAddress))).toThrow(badInput(message));
      expect(() => prepareNewLocation(draft({ postal: '  ' }))).toThrow(badInput(message));
      expect(prepareNewLocation(draft({ ...noAddress, serviceAreaPlaceIds: ['place-1'] })).serviceArea).not.toBeNull();
    });

    it('serves customers where they are, named by id unless names are given', () => {
      expect(prepareNewLocation(draft({ ...noAddress, serviceAreaPlaceIds: ['place-1', 'place-2'] }))).toMatchObject({
        serviceArea: {
          businessType: 'CUSTOMER_LOCATION_ONLY',
          places: { placeInfos: [{ placeId: 'place-1', placeName: 'place-1' }, { placeId: 'place-2', placeName: 'place-2' }] },
        },
        serviceAreaPlaceIds: ['place-1', 'place-2'],
      });
      // With an address, customers also come to the business.
      expect(prepareNewLocation(draft({ serviceAreaPlaceIds: ['place-1'], serviceAreaPlaceNames: ['Paris 1er'] })).serviceArea).toEqual({
        businessType: 'CUSTOMER_AND_BUSINESS_LOCATION',
        places: { placeInfos: [{ placeId: 'place-1', placeName: 'Paris 1er' }] },
      });
    });

    it('holds at most 20 places, each named when names are given', () => {
      const ids = (count: number) => Array.from({ length: count }, (_, i) => `place-${i}`);
      expect(prepareNewLocation(draft({ serviceAreaPlaceIds: ids(20) })).serviceAreaPlaceIds).toHaveLength(20);
      expect(() => prepareNewLocation(draft({ serviceAreaPlaceIds: ids(21) }))).toThrow(badInput('service_area_place_ids may hold at most 20 items'));
      expect(() => prepareNewLocation(draft({ serviceAreaPlaceIds: ids(2), serviceAreaPlaceNames: ['Only one'] }))).toThrow(
        badInput('service_area_place_names must name each of service_area_place_ids, in the same order'),
      );
    });
  });

  describe('regular hours', () => {
    it('are stored with upper-case days and two-digit times', () => {
      const [stored] = prepareNewLocation(
        draft({ regularHours: [{ openDay: ' monday ', openTime: { hours: '9', minutes: '5' }, closeDay: 'Monday', closeTime: { hours: '24', minutes: null } }] }),
      ).regularHours!;
      expect(stored).toEqual({ openDay: 'MONDAY', openTime: { hours: '09', minutes: '05' }, closeDay: 'MONDAY', closeTime: { hours: '24', minutes: null } });
    });

    it('end at 24:00 at the latest', () => {
      expect(prepareNewLocation(draft({ regularHours: [period({ hours: '00', minutes: '00' }, { hours: '24', minutes: '00' })] })).regularHours).toHaveLength(1);
      expect(() => prepareNewLocation(draft({ regularHours: [period({ hours: '00' }, { hours: '24', minutes: '01' })] }))).toThrow(
        badInput('regular_hours[0].close_time must not be after 24:00'),
      );
    });

    it.each([
      [period({ hours: '25' }, { hours: '18' }), 'regular_hours[0].open_time.hours must be 00 to 24'],
      [period({ hours: '9am' }, { hours: '18' }), 'regular_hours[0].open_time.hours must be 00 to 24'],
      [period({ hours: '09', minutes: '60' }, { hours: '18' }), 'regular_hours[0].open_time.minutes must be 00 to 59'],
      [{ ...period({ hours: '09' }, { hours: '18' }), closeTime: null }, 'regular_hours[0].close_time is required'],
      [{ ...period({ hours: '09' }, { hours: '18' }), openDay: 'FUNDAY' }, 'regular_hours[0].open_day must be one of MONDAY, TUESDAY, WEDNESDAY, THURSDAY, FRIDAY, SATURDAY, SUNDAY'],
    ])('refuse %j', (bad, message) => {
      expect(() => prepareNewLocation(draft({ regularHours: [bad] }))).toThrow(badInput(message));
    });

    it('hold at most 100 periods', () => {
      const periods = (count: number) => Array.from({ length: count }, () => period({ hours: '09' }, { hours: '18' }));
      expect(prepareNewLocation(draft({ regularHours: periods(100) })).regularHours).toHaveLength(100);
      expect(() => prepareNewLocation(draft({ regularHours: periods(101) }))).toThrow(badInput('regular_hours may hold at most 100 periods'));
    });
  });

  describe('special hours', () => {
    it('need times unless the location is closed that day', () => {
      expect(prepareNewLocation(draft({ specialHours: [{ openDate: '2024-12-25', isClosed: true }] })).specialHours).toEqual([
        { openDate: '2024-12-25', closeDate: null, isClosed: true, openTime: null, closeTime: null },
      ]);
      expect(() => prepareNewLocation(draft({ specialHours: [{ openDate: '2024-12-24', closeTime: { hours: '12' } }] }))).toThrow(
        badInput('special_hours[0].open_time is required'),
      );
    });

    it.each([
      [{ openDate: '2023-02-29', isClosed: true }, 'special_hours[0].open_date must be a date YYYY-MM-DD'],
      [{ openDate: '24-12-2024', isClosed: true }, 'special_hours[0].open_date must be a date YYYY-MM-DD'],
      [{ openDate: '2024-12-24', closeDate: '2024-12-32', isClosed: true }, 'special_hours[0].close_date must be a date YYYY-MM-DD'],
      [{ openDate: '2024-12-24', closeDate: '2024-12-23', isClosed: true }, 'special_hours[0].close_date must not be before open_date'],
    ])('refuse %j', (bad, message) => {
      expect(() => prepareNewLocation(draft({ specialHours: [bad] }))).toThrow(badInput(message));
    });

    it('may close on the day they open', () => {
      expect(prepareNewLocation(draft({ specialHours: [{ openDate: '2024-02-29', closeDate: '2024-02-29', isClosed: true }] })).specialHours).toHaveLength(1);
    });
  });
});

describe('service items', () => {
  const freeForm = (displayName: string) => ({ freeFormServiceItem: { category: 'gcid:bakery', label: { displayName } } });
  const structured = (serviceTypeId: string) => ({ structuredServiceItem: { serviceTypeId } });

  it('are kept in the provider shape', () => {
    const items = [freeForm('Wedding cakes'), { ...structured('job_type_id:delivery'), price: { currencyCode: 'EUR', units: '5' } }];
    expect(serviceItems(items)).toEqual(items);
    expect(serviceItems(null)).toEqual([]);
  });

  it('name each service once, whatever the case', () => {
    expect(() => serviceItems([freeForm('Wedding cakes'), freeForm(' wedding CAKES ')])).toThrow(
      badInput('Duplicate service items: display name wedding CAKES appears more than once (each service needs a unique display name or service type id)'),
    );
    expect(() => serviceItems([structured('job_type_id:delivery'), structured('JOB_TYPE_ID:DELIVERY')])).toThrow(
      badInput('Duplicate service items: service type id JOB_TYPE_ID:DELIVERY appears more than once (each service needs a unique display name or service type id)'),
    );
    // A structured item and a free-form one are different services even with the same words.
    expect(serviceItems([structured('delivery'), freeForm('delivery')])).toHaveLength(2);
  });

  it('are one kind or the other, named by where they are wrong', () => {
    expect(() => serviceItems([freeForm('Cakes'), {}])).toThrow(badInput('service_items[1]: must have exactly one of structuredServiceItem and freeFormServiceItem'));
    expect(() => serviceItems([{ ...freeForm('Cakes'), ...structured('delivery') }])).toThrow(
      badInput('service_items[0]: must have exactly one of structuredServiceItem and freeFormServiceItem'),
    );
    // The wording after the path is the schema library's; the path is ours.
    expect(() => serviceItems([{ ...freeForm('Cakes'), price: { currencyCode: 'euro' } }])).toThrow(
      badInput(/^service_items\[0\]\.price\.currencyCode: /),
    );
  });

  it('are at most 100', () => {
    const items = (count: number) => Array.from({ length: count }, (_, i) => freeForm(`Service ${i}`));
    expect(serviceItems(items(100))).toHaveLength(100);
    expect(() => serviceItems(items(101))).toThrow(badInput('service_items may hold at most 100 items'));
  });
});

describe('an update', () => {
  it('keeps only what differs from the stored values', () => {
    expect(update({ name: ' Bakery ', city: 'Lyon' })).toEqual({ fields: [LocationUpdateField.CITY], changes: { city: 'Lyon' } });
  });

  it('with nothing different is refused', () => {
    const message = 'Nothing to update: every field sent has its current value (send only the fields to change)';
    // `fr` is stored as `FR`; hours compare as stored values.
    expect(() => update({ countryCode: 'fr', regularHours: [] })).toThrow(badInput(message));
    expect(() => update({})).toThrow(badInput(message));
  });

  it('changes phone numbers only as a pair', () => {
    const message = 'phone_number and additional_phone_numbers must be updated together';
    expect(() => update({ phoneNumber: '0123 4567' })).toThrow(badInput(message));
    expect(() => update({ additionalPhoneNumbers: [] })).toThrow(badInput(message));
    expect(update({ phoneNumber: '0123 4567', additionalPhoneNumbers: ['0111 1111'] }).changes).toEqual({
      phoneNumber: '0123 4567',
      additionalPhoneNumbers: ['0111 1111'],
    });
    expect(update({ phoneNumber: null, additionalPhoneNumbers: null }).changes).toEqual({ phoneNumber: null });
  });

  it.each([
    [{ name: null }, 'name must not be null'],
    [{ countryCode: null }, 'country_code must not be null'],
    [{ categories: null }, 'categories must not be null: a location has a primary category'],
  ])('may not clear a required field: %j', (patch, message) => {
    expect(() => update(patch)).toThrow(badInput(message));
  });

  it('checks each field by the same rules as a create', () => {
    expect(() => update({ name: text(101) })).toThrow(badInput('name must be at most 100 characters'));
    expect(() => update({ description: text(751) })).toThrow(badInput('description must be at most 750 characters'));
    expect(() => update({ websiteUri: 'ftp://bakery.example' })).toThrow(badInput('website_uri scheme must be http or https, not ftp'));
    expect(() => update({ regularHours: [period({ hours: '09' }, { hours: '25' })] })).toThrow(badInput('regular_hours[0].close_time.hours must be 00 to 24'));
  });

  describe('of categories', () => {
    const category = (name: string) => ({ name, displayName: name.toUpperCase() });

    it('keeps the category ids in step', () => {
      const { fields, changes } = update({ categories: { primaryCategory: category('gcid:cafe'), additionalCategories: [category('gcid:bakery')] } });
      expect(fields).toEqual([LocationUpdateField.CATEGORIES]);
      expect(changes).toMatchObject({ categoryId: 'gcid:cafe', additionalCategoryIds: ['gcid:bakery'] });
    });

    it.each([
      [{ primaryCategory: null }, 'categories.primaryCategory is required'],
      [{ primaryCategory: { name: 'gcid:cafe', displayName: ' ' } }, 'categories.primaryCategory.displayName must not be empty'],
      [{ primaryCategory: category('gcid:cafe'), additionalCategories: [category('gcid:a'), { name: '', displayName: 'B' }] }, 'categories.additionalCategories[1].name must not be empty'],
      [
        { primaryCategory: category('gcid:cafe'), additionalCategories: Array.from({ length: 10 }, (_, i) => category(`gcid:${i}`)) },
        'categories.additionalCategories may hold at most 9 items',
      ],
    ])('refuses %j', (categories, message) => {
      expect(() => update({ categories })).toThrow(badInput(message));
    });
  });

  describe('of more hours', () => {
    it('stores the hours type in upper case', () => {
      expect(update({ moreHours: [{ hoursTypeId: 'delivery', periods: [period({ hours: '11' }, { hours: '14' })] }] }).changes.moreHours![0]!.hoursTypeId).toBe('DELIVERY');
    });

    it('holds at most 20 kinds, whose periods follow the period rules', () => {
      const kinds = Array.from({ length: 21 }, (_, i) => ({ hoursTypeId: `kind-${i}`, periods: [] }));
      expect(() => update({ moreHours: kinds })).toThrow(badInput('more_hours may hold at most 20 items'));
      expect(() => update({ moreHours: [{ hoursTypeId: 'DELIVERY', periods: [period({ hours: '11', minutes: '75' }, { hours: '14' })] }] })).toThrow(
        badInput('more_hours[0].periods[0].open_time.minutes must be 00 to 59'),
      );
    });
  });

  describe('of service items', () => {
    const cakes = { freeFormServiceItem: { category: 'gcid:bakery', label: { displayName: 'Cakes' } } };
    const bread = { freeFormServiceItem: { category: 'gcid:bakery', label: { displayName: 'Bread' } } };

    it('replaces the stored items, or adds to them when asked', () => {
      const location = stored({ serviceItems: [cakes] });
      expect(update({ serviceItems: [bread] }, location).changes.serviceItems).toEqual([bread]);
      expect(update({ serviceItems: [bread] }, location, true).changes.serviceItems).toEqual([cakes, bread]);
    });

    it('adds no service the location already has', () => {
      const location = stored({ serviceItems: [cakes] });
      expect(() => update({ serviceItems: [{ freeFormServiceItem: { category: 'gcid:other', label: { displayName: 'CAKES' } } }] }, location, true)).toThrow(
        badInput('Duplicate service items: display name CAKES appears more than once (each service needs a unique display name or service type id)'),
      );
    });
  });

  describe('of the place', () => {
    const placeInfos = [{ placeId: 'place-1', placeName: 'Paris 1er' }];

    it('leaves a place customers can find', () => {
      const message = 'A location needs address, city and postal, or a service area (service_area_place_ids)';
      expect(() => update({ address: '  ' })).toThrow(badInput(message));
      expect(() => update({ postal: null })).toThrow(badInput(message));
      // A service area is a place: the address may go once there is one.
      const serving = stored({ serviceArea: { businessType: 'CUSTOMER_AND_BUSINESS_LOCATION', places: { placeInfos } } });
      expect(update({ address: null }, serving).changes).toEqual({ address: null });
      // Clearing the area of a location with an address leaves the address.
      expect(update({ serviceArea: null }, serving).changes).toEqual({ serviceArea: null });
    });

    it('is judged only when the update moves it', () => {
      const nowhere = stored({ address: null, city: null, postal: null });
      expect(update({ description: 'Fresh bread' }, nowhere).fields).toEqual([LocationUpdateField.DESCRIPTION]);
    });

    it('takes a service area in the provider shape', () => {
      expect(update({ serviceArea: { businessType: 'CUSTOMER_LOCATION_ONLY', places: { placeInfos }, regionCode: 'FR' } }).changes.serviceArea).toEqual({
        businessType: 'CUSTOMER_LOCATION_ONLY',
        places: { placeInfos },
        regionCode: 'FR',
      });
      expect(() => update({ serviceArea: { businessType: 'EVERYWHERE' } })).toThrow(
        badInput(/^service_area\.businessType: /),
      );
      expect(() => update({ serviceArea: { businessType: 'CUSTOMER_LOCATION_ONLY', places: { placeInfos: [{ placeId: '', placeName: 'x' }] } } })).toThrow(
        badInput(/^service_area\.places\.placeInfos\[0\]\.placeId: /),
      );
    });
  });

  it('is applied to the stored location as accepted', () => {
    const location = stored();
    const { changes } = update({ city: 'Lyon', postal: '69001' });
    applyLocationChanges(location, changes);
    expect(location).toMatchObject({ city: 'Lyon', postal: '69001', address: '1 Rue de Rivoli' });
  });
});

describe('stored values compare', () => {
  it.each([
    [{ a: 1, b: [1, 2] }, { b: [1, 2], a: 1 }, true],
    [{ a: 1, b: null }, { a: 1 }, true],
    [null, undefined, true],
    [[1, 2], [2, 1], false],
    [[], {}, false],
    [{ a: { b: 1 } }, { a: { b: '1' } }, false],
    [[{ a: 1 }], [{ a: 1, b: 2 }], false],
  ])('%j and %j: %s', (a, b, same) => {
    expect(sameValue(a, b)).toBe(same);
    expect(sameValue(b, a)).toBe(same);
  });
});
