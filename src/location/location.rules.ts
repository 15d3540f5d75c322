import { z } from 'zod';
import { DomainError } from '../errors/domain-error';
import { ALPHA_DAYS, type AlphaServiceArea, type AlphaServiceItem } from '../providers/alpha/alpha.types';
import { trimmedText } from '../shared/text';
import type { Categories, HoursPeriod, MoreHours, SpecialHours, TimeOfDay } from './location-hours.types';
import type { Location } from './location.entity';
import { LocationUpdateField } from './location.enums';
import { isIsoDate } from '../shared/calendar';
import { countryCode as countryCodeRule, optionalHttpUrl, ruled } from '../shared/value-rules';

/**
 * The rules of a location's fields, for a create and for an update alike: the document's limits (description 750
 * characters, two additional phone numbers), the provider's (what it would refuse later, refused now with the
 * field's name), and the shapes of hours. Messages name fields as the document does. Each rule exists once, here.
 */

export const DESCRIPTION_MAX = 750;
export const ADDITIONAL_PHONES_MAX = 2;
/** The provider's own limits. */
const ADDITIONAL_CATEGORIES_MAX = 9;
const STORE_CODE_MAX = 64;
const TITLE_MAX = 100;
const SERVICE_ITEMS_MAX = 100;

/** The fields an update may change, by property name; `LocationUpdateField` lists them by their document names. */
export type LocationChanges = Partial<
  Pick<
    Location,
    | 'name' | 'address' | 'postal' | 'city' | 'countryCode' | 'administrativeArea' | 'description' | 'phoneNumber'
    | 'additionalPhoneNumbers' | 'websiteUri' | 'regularHours' | 'specialHours' | 'moreHours' | 'categories'
    | 'serviceItems' | 'serviceArea' | 'categoryId' | 'additionalCategoryIds'
  >
>;

/** Which property each update field is; categories also keep `categoryId` and `additionalCategoryIds` in step. */
export const UPDATE_FIELD_PROPERTY = {
  [LocationUpdateField.NAME]: 'name',
  [LocationUpdateField.ADDRESS]: 'address',
  [LocationUpdateField.POSTAL]: 'postal',
  [LocationUpdateField.CITY]: 'city',
  [LocationUpdateField.COUNTRY_CODE]: 'countryCode',
  [LocationUpdateField.ADMINISTRATIVE_AREA]: 'administrativeArea',
  [LocationUpdateField.DESCRIPTION]: 'description',
  [LocationUpdateField.PHONE_NUMBER]: 'phoneNumber',
  [LocationUpdateField.ADDITIONAL_PHONE_NUMBERS]: 'additionalPhoneNumbers',
  [LocationUpdateField.WEBSITE_URI]: 'websiteUri',
  [LocationUpdateField.REGULAR_HOURS]: 'regularHours',
  [LocationUpdateField.SPECIAL_HOURS]: 'specialHours',
  [LocationUpdateField.MORE_HOURS]: 'moreHours',
  [LocationUpdateField.CATEGORIES]: 'categories',
  [LocationUpdateField.SERVICE_ITEMS]: 'serviceItems',
  [LocationUpdateField.SERVICE_AREA]: 'serviceArea',
} as const satisfies Record<LocationUpdateField, keyof LocationChanges>;

export type UpdatableProperty = (typeof UPDATE_FIELD_PROPERTY)[LocationUpdateField];

// ---- single values --------------------------------------------------------------------------------------------

function optionalText(value: string | null | undefined, field: string, max: number): string | null {
  if (value === null || value === undefined) return null;
  return trimmedText(value, field, { min: 0, max }) || null;
}

function countryCode(value: string): string {
  return ruled(countryCodeRule('country_code must be an ISO 3166-1 alpha-2 code (two letters)'), value);
}

function httpUrl(value: string | null | undefined, field: string): string | null {
  return ruled(optionalHttpUrl(field), value);
}

function description(value: string | null | undefined): string | null {
  if (value === null || value === undefined) return null;
  const text = value.trim();
  // Characters as a person counts them (code points), not UTF-16 units.
  if ([...text].length > DESCRIPTION_MAX) throw DomainError.badInput(`description must be at most ${DESCRIPTION_MAX} characters`);
  return text || null;
}

const PHONE = /^\+?[0-9][0-9 ()\-.]{2,28}[0-9]$/;

function phone(value: string, field: string): string {
  const text = value.trim();
  if (!PHONE.test(text)) throw DomainError.badInput(`${field} must be a phone number (digits, spaces, + ( ) - .), 4 to 30 characters`);
  return text;
}

function phones(primary: string | null | undefined, additional: string[] | null | undefined): { phoneNumber: string | null; additionalPhoneNumbers: string[] } {
  const list = additional ?? [];
  if (list.length > ADDITIONAL_PHONES_MAX) {
    throw DomainError.badInput(`additional_phone_numbers may hold at most ${ADDITIONAL_PHONES_MAX} numbers`);
  }
  const phoneNumber = primary === null || primary === undefined || primary.trim() === '' ? null : phone(primary, 'phone_number');
  const additionalPhoneNumbers = list.map((item, index) => phone(item, `additional_phone_numbers[${index}]`));
  if (!phoneNumber && additionalPhoneNumbers.length > 0) throw DomainError.badInput('additional_phone_numbers need a phone_number');
  return { phoneNumber, additionalPhoneNumbers };
}

function coordinate(value: number | null | undefined, field: 'latitude' | 'longitude'): number | null {
  if (value === null || value === undefined) return null;
  const bound = field === 'latitude' ? 90 : 180;
  if (!Number.isFinite(value) || Math.abs(value) > bound) throw DomainError.badInput(`${field} must be between -${bound} and ${bound}`);
  return value;
}

function textList(values: string[] | null | undefined, field: string, rule: { maxItems: number; max: number }): string[] {
  const list = values ?? [];
  if (list.length > rule.maxItems) throw DomainError.badInput(`${field} may hold at most ${rule.maxItems} items`);
  return list.map((value, index) => trimmedText(value, `${field}[${index}]`, { min: 1, max: rule.max }));
}

// ---- hours ----------------------------------------------------------------------------------------------------

const DAYS: readonly string[] = ALPHA_DAYS;

function day(value: string | null | undefined, field: string): string | null {
  if (value === null || value === undefined) return null;
  const name = value.trim().toUpperCase();
  if (!DAYS.includes(name)) throw DomainError.badInput(`${field} must be one of ${DAYS.join(', ')}`);
  return name;
}

function timeOfDay(value: TimeOfDay | null | undefined, field: string, required: boolean): TimeOfDay | null {
  if (value === null || value === undefined) {
    if (required) throw DomainError.badInput(`${field} is required`);
    return null;
  }
  const hours = value.hours.trim();
  const minutes = value.minutes === null || value.minutes === undefined ? null : value.minutes.trim();
  if (!/^\d{1,2}$/.test(hours) || Number(hours) > 24) throw DomainError.badInput(`${field}.hours must be 00 to 24`);
  if (minutes !== null && (!/^\d{1,2}$/.test(minutes) || Number(minutes) > 59)) throw DomainError.badInput(`${field}.minutes must be 00 to 59`);
  if (Number(hours) === 24 && minutes !== null && Number(minutes) !== 0) throw DomainError.badInput(`${field} must not be after 24:00`);
  return { hours: hours.padStart(2, '0'), minutes: minutes === null ? null : minutes.padStart(2, '0') };
}

function hoursPeriods(values: HoursPeriod[] | null | undefined, field: string): HoursPeriod[] {
  const list = values ?? [];
  if (list.length > 100) throw DomainError.badInput(`${field} may hold at most 100 periods`);
  return list.map((period, index) => {
    const where = `${field}[${index}]`;
    return {
      openDay: day(period.openDay, `${where}.open_day`),
      openTime: timeOfDay(period.openTime, `${where}.open_time`, true),
      closeDay: day(period.closeDay, `${where}.close_day`),
      closeTime: timeOfDay(period.closeTime, `${where}.close_time`, true),
    };
  });
}

/** A calendar date `YYYY-MM-DD` that exists (src/shared/calendar.ts). */
function isoDate(value: string, field: string): string {
  const text = value.trim();
  if (!isIsoDate(text)) throw DomainError.badInput(`${field} must be a date YYYY-MM-DD`);
  return text;
}

function specialHours(values: (Omit<SpecialHours, 'isClosed'> & { isClosed?: boolean | null })[] | null | undefined): SpecialHours[] {
  const list = values ?? [];
  if (list.length > 100) throw DomainError.badInput('special_hours may hold at most 100 items');
  return list.map((item, index) => {
    const where = `special_hours[${index}]`;
    const openDate = isoDate(item.openDate, `${where}.open_date`);
    const closeDate = item.closeDate ? isoDate(item.closeDate, `${where}.close_date`) : null;
    if (closeDate && closeDate < openDate) throw DomainError.badInput(`${where}.close_date must not be before open_date`);
    const isClosed = item.isClosed ?? false;
    return {
      openDate,
      closeDate,
      isClosed,
      openTime: timeOfDay(item.openTime, `${where}.open_time`, !isClosed),
      closeTime: timeOfDay(item.closeTime, `${where}.close_time`, !isClosed),
    };
  });
}

function moreHours(values: MoreHours[] | null | undefined): MoreHours[] {
  const list = values ?? [];
  if (list.length > 20) throw DomainError.badInput('more_hours may hold at most 20 items');
  return list.map((item, index) => ({
    hoursTypeId: trimmedText(item.hoursTypeId, `more_hours[${index}].hoursTypeId`, { min: 1, max: 64 }).toUpperCase(),
    periods: hoursPeriods(item.periods, `more_hours[${index}].periods`),
  }));
}

function categories(value: Categories): Categories {
  if (!value.primaryCategory) throw DomainError.badInput('categories.primaryCategory is required');
  const category = (item: { name: string; displayName: string }, field: string) => ({
    name: trimmedText(item.name, `${field}.name`, { min: 1, max: 100 }),
    displayName: trimmedText(item.displayName, `${field}.displayName`, { min: 1, max: 100 }),
  });
  const additional = value.additionalCategories ?? [];
  if (additional.length > ADDITIONAL_CATEGORIES_MAX) {
    throw DomainError.badInput(`categories.additionalCategories may hold at most ${ADDITIONAL_CATEGORIES_MAX} items`);
  }
  return {
    primaryCategory: category(value.primaryCategory, 'categories.primaryCategory'),
    additionalCategories: additional.map((item, index) => category(item, `categories.additionalCategories[${index}]`)),
  };
}

// ---- service items and area (the provider's shapes) ----------------------------------------------------------

const money = z.strictObject({ currencyCode: z.string().regex(/^[A-Z]{3}$/), units: z.string().regex(/^-?\d{1,18}$/).optional(), nanos: z.number().int().optional() });
const serviceItemSchema = z
  .strictObject({
    structuredServiceItem: z.strictObject({ serviceTypeId: z.string().trim().min(1).max(100), description: z.string().max(300).optional() }).optional(),
    freeFormServiceItem: z
      .strictObject({
        category: z.string().trim().min(1).max(100),
        label: z.strictObject({ displayName: z.string().trim().min(1).max(140), description: z.string().max(250).optional(), languageCode: z.string().max(10).optional() }),
      })
      .optional(),
    price: money.optional(),
  })
  .refine((item) => Boolean(item.structuredServiceItem) !== Boolean(item.freeFormServiceItem), 'must have exactly one of structuredServiceItem and freeFormServiceItem');
const serviceAreaSchema = z.strictObject({
  businessType: z.enum(['CUSTOMER_LOCATION_ONLY', 'CUSTOMER_AND_BUSINESS_LOCATION']),
  places: z.strictObject({ placeInfos: z.array(z.strictObject({ placeName: z.string().trim().min(1).max(200), placeId: z.string().trim().min(1).max(200) })).max(20) }).optional(),
  regionCode: z.string().regex(/^[A-Z]{2}$/).optional(),
});

function firstIssue(error: z.ZodError, field: string): string {
  // zod reports at least one issue on a failed parse.
  const issue = error.issues[0]!;
  const path = issue.path.reduce<string>((name, part) => (typeof part === 'number' ? `${name}[${part}]` : `${name}.${String(part)}`), field);
  return `${path}: ${issue.message}`;
}

/** What makes two service items the same service: its type id, or its name (case does not matter). */
function serviceKey(item: AlphaServiceItem): string {
  return item.structuredServiceItem
    ? `type:${item.structuredServiceItem.serviceTypeId.trim().toLowerCase()}`
    : `name:${item.freeFormServiceItem!.label.displayName.trim().toLowerCase()}`;
}

/** Items in the provider's shape, each service once (400 naming the duplicate otherwise). */
export function serviceItems(values: unknown[] | null | undefined): AlphaServiceItem[] {
  // Counted before anything is parsed: the size of a request bounds nothing else.
  if ((values ?? []).length > SERVICE_ITEMS_MAX) throw DomainError.badInput(`service_items may hold at most ${SERVICE_ITEMS_MAX} items`);
  const parsed = z.array(serviceItemSchema).safeParse(values ?? []);
  if (!parsed.success) throw DomainError.badInput(firstIssue(parsed.error, 'service_items'));
  const items: AlphaServiceItem[] = parsed.data;
  const seen = new Set<string>();
  for (const item of items) {
    const key = serviceKey(item);
    if (seen.has(key)) {
      const what = item.structuredServiceItem ? `service type id ${item.structuredServiceItem.serviceTypeId}` : `display name ${item.freeFormServiceItem!.label.displayName}`;
      throw DomainError.badInput(`Duplicate service items: ${what} appears more than once (each service needs a unique display name or service type id)`);
    }
    seen.add(key);
  }
  return items;
}

function serviceArea(value: unknown): AlphaServiceArea | null {
  if (value === null || value === undefined) return null;
  const parsed = serviceAreaSchema.safeParse(value);
  if (!parsed.success) throw DomainError.badInput(firstIssue(parsed.error, 'service_area'));
  return parsed.data;
}

// ---- a whole location ------------------------------------------------------------------------------------------

/** Where customers go, or where the business goes to them: one of the two is required. */
function requirePlace(location: Pick<Location, 'address' | 'city' | 'postal' | 'serviceArea'>): void {
  const hasAddress = Boolean(location.address && location.city && location.postal);
  const servesArea = Boolean(location.serviceArea?.places?.placeInfos.length);
  if (!hasAddress && !servesArea) {
    throw DomainError.badInput('A location needs address, city and postal, or a service area (service_area_place_ids)');
  }
}

/** What a create may carry, in GraphQL's names (src/location/location.inputs.ts). */
export interface LocationDraft {
  name: string;
  referenceId?: string | null;
  categoryId: string;
  address?: string | null;
  postal?: string | null;
  city?: string | null;
  countryCode: string;
  administrativeArea?: string | null;
  additionalAddressLines?: string[] | null;
  description?: string | null;
  phoneNumber?: string | null;
  additionalPhoneNumbers?: string[] | null;
  websiteUri?: string | null;
  latitude?: number | null;
  longitude?: number | null;
  profileLogoUrl?: string | null;
  coverUrl?: string | null;
  additionalCategoryIds?: string[] | null;
  serviceAreaPlaceIds?: string[] | null;
  serviceAreaPlaceNames?: string[] | null;
  placeId?: string | null;
  regularHours?: HoursPeriod[] | null;
  specialHours?: (Omit<SpecialHours, 'isClosed'> & { isClosed?: boolean | null })[] | null;
}

/** The stored fields of a new location, checked and normalized. */
export function prepareNewLocation(draft: LocationDraft): Pick<Location, 'name' | 'countryCode'> & Partial<Location> {
  const latitude = coordinate(draft.latitude, 'latitude');
  const longitude = coordinate(draft.longitude, 'longitude');
  if ((latitude === null) !== (longitude === null)) throw DomainError.badInput('latitude and longitude go together');
  const placeIds = textList(draft.serviceAreaPlaceIds, 'service_area_place_ids', { maxItems: 20, max: 200 });
  const placeNames = textList(draft.serviceAreaPlaceNames, 'service_area_place_names', { maxItems: 20, max: 200 });
  if (placeNames.length > 0 && placeNames.length !== placeIds.length) {
    throw DomainError.badInput('service_area_place_names must name each of service_area_place_ids, in the same order');
  }
  const address = optionalText(draft.address, 'address', 255);
  const fields = {
    name: trimmedText(draft.name, 'name', { min: 1, max: TITLE_MAX }),
    referenceId: optionalText(draft.referenceId, 'reference_id', STORE_CODE_MAX),
    categoryId: trimmedText(draft.categoryId, 'category_id', { min: 1, max: 100 }),
    address,
    postal: optionalText(draft.postal, 'postal', 20),
    city: optionalText(draft.city, 'city', 100),
    countryCode: countryCode(draft.countryCode),
    administrativeArea: optionalText(draft.administrativeArea, 'administrative_area', 100),
    additionalAddressLines: textList(draft.additionalAddressLines, 'additional_address_lines', { maxItems: 4, max: 255 }),
    description: description(draft.description),
    ...phones(draft.phoneNumber, draft.additionalPhoneNumbers),
    websiteUri: httpUrl(draft.websiteUri, 'website_uri'),
    latitude,
    longitude,
    profileLogoUrl: httpUrl(draft.profileLogoUrl, 'profile_logo_url'),
    coverUrl: httpUrl(draft.coverUrl, 'cover_url'),
    additionalCategoryIds: textList(draft.additionalCategoryIds, 'additional_category_ids', { maxItems: ADDITIONAL_CATEGORIES_MAX, max: 100 }),
    placeId: optionalText(draft.placeId, 'placeId', 255),
    regularHours: hoursPeriods(draft.regularHours, 'regular_hours'),
    specialHours: specialHours(draft.specialHours),
    // The service area the provider gets, from the places named (it is what an update then changes).
    serviceArea:
      placeIds.length === 0
        ? null
        : {
            businessType: address ? ('CUSTOMER_AND_BUSINESS_LOCATION' as const) : ('CUSTOMER_LOCATION_ONLY' as const),
            places: { placeInfos: placeIds.map((placeId, index) => ({ placeId, placeName: placeNames[index] ?? placeId })) },
          },
    serviceAreaPlaceIds: placeIds,
    serviceAreaPlaceNames: placeNames,
  };
  requirePlace(fields);
  return fields;
}

/** What an update may carry, in GraphQL's names; absent (undefined) leaves a field as it is, null clears it. */
export interface LocationPatch {
  name?: string | null;
  address?: string | null;
  postal?: string | null;
  city?: string | null;
  countryCode?: string | null;
  administrativeArea?: string | null;
  description?: string | null;
  phoneNumber?: string | null;
  additionalPhoneNumbers?: string[] | null;
  websiteUri?: string | null;
  regularHours?: HoursPeriod[] | null;
  specialHours?: (Omit<SpecialHours, 'isClosed'> & { isClosed?: boolean | null })[] | null;
  moreHours?: MoreHours[] | null;
  categories?: Categories | null;
  serviceItems?: unknown[] | null;
  serviceArea?: unknown;
}

/** Equal as stored values: key order and absent-versus-null do not matter (jsonb reorders keys). */
export function sameValue(a: unknown, b: unknown): boolean {
  if (a === undefined) a = null;
  if (b === undefined) b = null;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) return a.length === (b as unknown[]).length && a.every((item, index) => sameValue(item, (b as unknown[])[index]));
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((key) => sameValue((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key]));
}

export interface PreparedUpdate {
  /** The fields that change, in the document's names (the job's `fields`). */
  fields: LocationUpdateField[];
  /** Their new values, by property name. */
  changes: LocationChanges;
}

/**
 * An update checked against the location as stored: each field by the rules above, phone numbers only as a pair,
 * service items combined with the stored ones when asked (each service once either way), and the result still a
 * place customers can find. Only what differs from the stored values is kept; nothing left is a 400.
 */
export function prepareLocationUpdate(location: Location, patch: LocationPatch, options: { combineServiceItems: boolean }): PreparedUpdate {
  const given = (key: keyof LocationPatch) => patch[key] !== undefined;
  if (given('phoneNumber') !== given('additionalPhoneNumbers')) {
    throw DomainError.badInput('phone_number and additional_phone_numbers must be updated together');
  }
  const proposed: LocationChanges = {};
  if (given('name')) {
    if (patch.name === null) throw DomainError.badInput('name must not be null');
    proposed.name = trimmedText(patch.name!, 'name', { min: 1, max: TITLE_MAX });
  }
  if (given('address')) proposed.address = optionalText(patch.address, 'address', 255);
  if (given('postal')) proposed.postal = optionalText(patch.postal, 'postal', 20);
  if (given('city')) proposed.city = optionalText(patch.city, 'city', 100);
  if (given('countryCode')) {
    if (patch.countryCode === null) throw DomainError.badInput('country_code must not be null');
    proposed.countryCode = countryCode(patch.countryCode!);
  }
  if (given('administrativeArea')) proposed.administrativeArea = optionalText(patch.administrativeArea, 'administrative_area', 100);
  if (given('description')) proposed.description = description(patch.description);
  if (given('phoneNumber')) Object.assign(proposed, phones(patch.phoneNumber, patch.additionalPhoneNumbers));
  if (given('websiteUri')) proposed.websiteUri = httpUrl(patch.websiteUri, 'website_uri');
  if (given('regularHours')) proposed.regularHours = hoursPeriods(patch.regularHours, 'regular_hours');
  if (given('specialHours')) proposed.specialHours = specialHours(patch.specialHours);
  if (given('moreHours')) proposed.moreHours = moreHours(patch.moreHours);
  if (given('categories')) {
    if (patch.categories === null) throw DomainError.badInput('categories must not be null: a location has a primary category');
    proposed.categories = categories(patch.categories!);
  }
  if (given('serviceItems')) {
    const sent = serviceItems(patch.serviceItems);
    proposed.serviceItems = options.combineServiceItems ? serviceItems([...location.serviceItems, ...sent]) : sent;
  }
  if (given('serviceArea')) proposed.serviceArea = serviceArea(patch.serviceArea);

  const fields = (Object.keys(UPDATE_FIELD_PROPERTY) as LocationUpdateField[]).filter((field) => {
    const property = UPDATE_FIELD_PROPERTY[field];
    return property in proposed && !sameValue(proposed[property], location[property]);
  });
  if (fields.length === 0) throw DomainError.badInput('Nothing to update: every field sent has its current value (send only the fields to change)');
  const changes: LocationChanges = Object.fromEntries(fields.map((field) => [UPDATE_FIELD_PROPERTY[field], proposed[UPDATE_FIELD_PROPERTY[field]]]));
  // The category id and its additional ids are the categories' names: kept in step with them.
  if (changes.categories) {
    changes.categoryId = changes.categories.primaryCategory!.name;
    changes.additionalCategoryIds = (changes.categories.additionalCategories ?? []).map((category) => category.name);
  }
  // Judged when the update moves the place: a location stored without one is not refused other changes.
  if (['address', 'city', 'postal', 'serviceArea'].some((property) => property in changes)) requirePlace({ ...location, ...changes });
  return { fields, changes };
}

export function applyLocationChanges(location: Location, changes: LocationChanges): void {
  Object.assign(location, changes);
}
