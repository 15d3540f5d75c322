import {
  ALPHA_DAYS,
  ALPHA_LOCATION_UPDATE_PATHS,
  type AlphaCategory,
  type AlphaDate,
  type AlphaHoursTime,
  type AlphaLocation,
  type AlphaLocationUpdatePath,
  type AlphaPostalAddress,
  type AlphaServiceArea,
  type AlphaServiceItem,
  type AlphaSpecialHourPeriod,
  type AlphaTimePeriod,
} from '../../src/providers/alpha/alpha.types';
import {
  FieldViolation,
  type JsonObject,
  dateAt,
  enumAt,
  httpUrlAt,
  integerAt,
  isObject,
  nonEmptyStringAt,
  objectAt,
  onlyKnown,
  optionalStringAt,
  stringAt,
} from './alpha-sandbox.validation';

/**
 * The provider's location rules, as the sandbox enforces them on create and on the result of every update, and the
 * rules of an update's field mask.
 */

export const TITLE_MAX_LENGTH = 100;
export const STORE_CODE_MAX_LENGTH = 64;
export const ADDITIONAL_CATEGORIES_MAX = 9;
export const ADDITIONAL_PHONES_MAX = 2;
export const DESCRIPTION_MAX_LENGTH = 750;

/** Fields the provider fills in; a client may send them back and they are ignored, as the provider does. */
const OUTPUT_ONLY_FIELDS = ['name', 'metadata'];
const LOCATION_FIELDS = [
  'title',
  'storeCode',
  'languageCode',
  'phoneNumbers',
  'categories',
  'storefrontAddress',
  'websiteUri',
  'regularHours',
  'specialHours',
  'moreHours',
  'serviceArea',
  'serviceItems',
  'profile',
  'latlng',
  ...OUTPUT_ONLY_FIELDS,
];

const BUSINESS_TYPES = ['CUSTOMER_LOCATION_ONLY', 'CUSTOMER_AND_BUSINESS_LOCATION'] as const;
const CATEGORY_NAME = /^(?:categories\/(?:gcid:)?|gcid:)[A-Za-z0-9_]+$/;
const REGION_CODE = /^[A-Z]{2}$/;
const LANGUAGE_CODE = /^[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*$/;
const CURRENCY_CODE = /^[A-Z]{3}$/;

function arrayAt(value: unknown, field: string): unknown[] {
  if (!Array.isArray(value)) throw new FieldViolation(field, 'must be an array');
  return value;
}

function maxLength(text: string, max: number, field: string): string {
  if (text.length > max) throw new FieldViolation(field, `must be at most ${max} characters`);
  return text;
}

function languageCodeAt(value: unknown, field: string): string {
  const text = stringAt(value, field);
  if (!LANGUAGE_CODE.test(text)) throw new FieldViolation(field, 'must be a BCP 47 language code such as en or pt-BR');
  return text;
}

function regionCodeAt(value: unknown, field: string): string {
  const text = stringAt(value, field);
  if (!REGION_CODE.test(text)) throw new FieldViolation(field, 'must be a two-letter upper-case region code such as GB');
  return text;
}

function numberAt(value: unknown, field: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < min || value > max) {
    throw new FieldViolation(field, `must be a number from ${min} to ${max}`);
  }
  return value;
}

/** Zero fields are left out, as the provider's own JSON leaves them out. */
function hoursTimeAt(value: unknown, field: string): AlphaHoursTime {
  const time = objectAt(value, field);
  onlyKnown(time, ['hours', 'minutes'], `${field}.`);
  const hours = integerAt(time.hours ?? 0, `${field}.hours`, 0, 24);
  const minutes = integerAt(time.minutes ?? 0, `${field}.minutes`, 0, 59);
  if (hours === 24 && minutes !== 0) {
    throw new FieldViolation(`${field}.minutes`, 'must be 0 when hours is 24 (the end of the day)');
  }
  return { ...(hours !== 0 ? { hours } : {}), ...(minutes !== 0 ? { minutes } : {}) };
}

function timePeriodsAt(value: unknown, field: string): AlphaTimePeriod[] {
  return arrayAt(value, field).map((entry, index) => {
    const at = `${field}[${index}]`;
    const period = objectAt(entry, at);
    onlyKnown(period, ['openDay', 'openTime', 'closeDay', 'closeTime'], `${at}.`);
    if (period.openTime === undefined) throw new FieldViolation(`${at}.openTime`, 'is required');
    if (period.closeTime === undefined) throw new FieldViolation(`${at}.closeTime`, 'is required');
    return {
      openDay: enumAt(period.openDay, ALPHA_DAYS, `${at}.openDay`),
      openTime: hoursTimeAt(period.openTime, `${at}.openTime`),
      closeDay: enumAt(period.closeDay, ALPHA_DAYS, `${at}.closeDay`),
      closeTime: hoursTimeAt(period.closeTime, `${at}.closeTime`),
    };
  });
}

function dateValue(date: AlphaDate): number {
  return Date.UTC(date.year, date.month - 1, date.day);
}

function specialHourPeriodsAt(value: unknown, field: string): AlphaSpecialHourPeriod[] {
  return arrayAt(value, field).map((entry, index) => {
    const at = `${field}[${index}]`;
    const period = objectAt(entry, at);
    onlyKnown(period, ['startDate', 'endDate', 'openTime', 'closeTime', 'closed'], `${at}.`);
    const result: AlphaSpecialHourPeriod = { startDate: dateAt(period.startDate, `${at}.startDate`) };
    if (period.endDate !== undefined) {
      result.endDate = dateAt(period.endDate, `${at}.endDate`);
      if (dateValue(result.endDate) < dateValue(result.startDate)) {
        throw new FieldViolation(`${at}.endDate`, 'must not be before startDate');
      }
    }
    if (period.closed !== undefined && typeof period.closed !== 'boolean') {
      throw new FieldViolation(`${at}.closed`, 'must be a boolean');
    }
    // A closed day has no hours; an open one means nothing without them.
    if (period.closed === true) {
      for (const time of ['openTime', 'closeTime'] as const) {
        if (period[time] !== undefined) throw new FieldViolation(`${at}.${time}`, 'must be absent when closed is true');
      }
      result.closed = true;
    } else {
      for (const time of ['openTime', 'closeTime'] as const) {
        if (period[time] === undefined) throw new FieldViolation(`${at}.${time}`, 'is required unless closed is true');
        result[time] = hoursTimeAt(period[time], `${at}.${time}`);
      }
      if (period.closed === false) result.closed = false;
    }
    return result;
  });
}

function categoryAt(value: unknown, field: string): AlphaCategory {
  const category = objectAt(value, field);
  onlyKnown(category, ['name', 'displayName'], `${field}.`);
  const name = stringAt(category.name, `${field}.name`);
  if (!CATEGORY_NAME.test(name)) throw new FieldViolation(`${field}.name`, 'must be categories/{id} or gcid:{id}');
  const displayName = optionalStringAt(category.displayName, `${field}.displayName`);
  return displayName === undefined ? { name } : { name, displayName };
}

function categoriesAt(value: unknown): NonNullable<AlphaLocation['categories']> {
  const categories = objectAt(value, 'categories');
  onlyKnown(categories, ['primaryCategory', 'additionalCategories'], 'categories.');
  if (categories.primaryCategory === undefined) throw new FieldViolation('categories.primaryCategory', 'is required');
  const result: NonNullable<AlphaLocation['categories']> = {
    primaryCategory: categoryAt(categories.primaryCategory, 'categories.primaryCategory'),
  };
  if (categories.additionalCategories !== undefined) {
    const additional = arrayAt(categories.additionalCategories, 'categories.additionalCategories');
    if (additional.length > ADDITIONAL_CATEGORIES_MAX) {
      throw new FieldViolation('categories.additionalCategories', `must have at most ${ADDITIONAL_CATEGORIES_MAX} entries`);
    }
    result.additionalCategories = additional.map((entry, index) =>
      categoryAt(entry, `categories.additionalCategories[${index}]`),
    );
  }
  return result;
}

function phoneNumbersAt(value: unknown): NonNullable<AlphaLocation['phoneNumbers']> {
  const phones = objectAt(value, 'phoneNumbers');
  onlyKnown(phones, ['primaryPhone', 'additionalPhones'], 'phoneNumbers.');
  const result: NonNullable<AlphaLocation['phoneNumbers']> = {};
  if (phones.primaryPhone !== undefined) result.primaryPhone = nonEmptyStringAt(phones.primaryPhone, 'phoneNumbers.primaryPhone');
  if (phones.additionalPhones !== undefined) {
    const additional = arrayAt(phones.additionalPhones, 'phoneNumbers.additionalPhones');
    if (additional.length > ADDITIONAL_PHONES_MAX) {
      throw new FieldViolation('phoneNumbers.additionalPhones', `must have at most ${ADDITIONAL_PHONES_MAX} entries`);
    }
    result.additionalPhones = additional.map((entry, index) =>
      nonEmptyStringAt(entry, `phoneNumbers.additionalPhones[${index}]`),
    );
  }
  return result;
}

function postalAddressAt(value: unknown): AlphaPostalAddress {
  const address = objectAt(value, 'storefrontAddress');
  onlyKnown(address, ['regionCode', 'postalCode', 'administrativeArea', 'locality', 'addressLines'], 'storefrontAddress.');
  if (address.regionCode === undefined) throw new FieldViolation('storefrontAddress.regionCode', 'is required');
  const result: AlphaPostalAddress = { regionCode: regionCodeAt(address.regionCode, 'storefrontAddress.regionCode') };
  for (const key of ['postalCode', 'administrativeArea', 'locality'] as const) {
    const text = optionalStringAt(address[key], `storefrontAddress.${key}`);
    if (text !== undefined) result[key] = text;
  }
  if (address.addressLines !== undefined) {
    result.addressLines = arrayAt(address.addressLines, 'storefrontAddress.addressLines').map((line, index) =>
      stringAt(line, `storefrontAddress.addressLines[${index}]`),
    );
  }
  return result;
}

function moreHoursAt(value: unknown): NonNullable<AlphaLocation['moreHours']> {
  return arrayAt(value, 'moreHours').map((entry, index) => {
    const at = `moreHours[${index}]`;
    const hours = objectAt(entry, at);
    onlyKnown(hours, ['hoursTypeId', 'periods'], `${at}.`);
    return {
      hoursTypeId: nonEmptyStringAt(hours.hoursTypeId, `${at}.hoursTypeId`),
      periods: timePeriodsAt(hours.periods, `${at}.periods`),
    };
  });
}

function serviceAreaAt(value: unknown): AlphaServiceArea {
  const area = objectAt(value, 'serviceArea');
  onlyKnown(area, ['businessType', 'places', 'regionCode'], 'serviceArea.');
  const result: AlphaServiceArea = { businessType: enumAt(area.businessType, BUSINESS_TYPES, 'serviceArea.businessType') };
  if (area.places !== undefined) {
    const places = objectAt(area.places, 'serviceArea.places');
    onlyKnown(places, ['placeInfos'], 'serviceArea.places.');
    const placeInfos = arrayAt(places.placeInfos, 'serviceArea.places.placeInfos').map((entry, index) => {
      const at = `serviceArea.places.placeInfos[${index}]`;
      const place = objectAt(entry, at);
      onlyKnown(place, ['placeName', 'placeId'], `${at}.`);
      return {
        placeName: nonEmptyStringAt(place.placeName, `${at}.placeName`),
        placeId: nonEmptyStringAt(place.placeId, `${at}.placeId`),
      };
    });
    result.places = { placeInfos };
  }
  if (area.regionCode !== undefined) result.regionCode = regionCodeAt(area.regionCode, 'serviceArea.regionCode');
  return result;
}

function serviceItemAt(value: unknown, at: string): AlphaServiceItem {
  const item = objectAt(value, at);
  onlyKnown(item, ['structuredServiceItem', 'freeFormServiceItem', 'price'], `${at}.`);
  if ((item.structuredServiceItem === undefined) === (item.freeFormServiceItem === undefined)) {
    throw new FieldViolation(at, 'must have exactly one of structuredServiceItem, freeFormServiceItem');
  }
  const result: AlphaServiceItem = {};
  if (item.structuredServiceItem !== undefined) {
    const field = `${at}.structuredServiceItem`;
    const structured = objectAt(item.structuredServiceItem, field);
    onlyKnown(structured, ['serviceTypeId', 'description'], `${field}.`);
    const description = optionalStringAt(structured.description, `${field}.description`);
    result.structuredServiceItem = {
      serviceTypeId: nonEmptyStringAt(structured.serviceTypeId, `${field}.serviceTypeId`),
      ...(description !== undefined ? { description } : {}),
    };
  } else {
    const field = `${at}.freeFormServiceItem`;
    const freeForm = objectAt(item.freeFormServiceItem, field);
    onlyKnown(freeForm, ['category', 'label'], `${field}.`);
    const category = nonEmptyStringAt(freeForm.category, `${field}.category`);
    const label = objectAt(freeForm.label, `${field}.label`);
    onlyKnown(label, ['displayName', 'description', 'languageCode'], `${field}.label.`);
    const displayName = nonEmptyStringAt(label.displayName, `${field}.label.displayName`);
    const description = optionalStringAt(label.description, `${field}.label.description`);
    const languageCode =
      label.languageCode === undefined ? undefined : languageCodeAt(label.languageCode, `${field}.label.languageCode`);
    result.freeFormServiceItem = {
      category,
      label: {
        displayName,
        ...(description !== undefined ? { description } : {}),
        ...(languageCode !== undefined ? { languageCode } : {}),
      },
    };
  }
  if (item.price !== undefined) {
    const field = `${at}.price`;
    const price = objectAt(item.price, field);
    onlyKnown(price, ['currencyCode', 'units', 'nanos'], `${field}.`);
    const currencyCode = stringAt(price.currencyCode, `${field}.currencyCode`);
    if (!CURRENCY_CODE.test(currencyCode)) {
      throw new FieldViolation(`${field}.currencyCode`, 'must be an ISO 4217 code such as EUR');
    }
    result.price = { currencyCode };
    if (price.units !== undefined) {
      // The provider's int64 travels as a decimal string.
      const units = stringAt(price.units, `${field}.units`);
      if (!/^-?\d{1,18}$/.test(units)) throw new FieldViolation(`${field}.units`, 'must be a whole number as a string');
      result.price.units = units;
    }
    if (price.nanos !== undefined) result.price.nanos = integerAt(price.nanos, `${field}.nanos`, -999_999_999, 999_999_999);
  }
  return result;
}

/** Two items for one service would be shown twice: a structured type, or a free-form name regardless of case. */
function serviceItemsAt(value: unknown): AlphaServiceItem[] {
  const structured = new Map<string, number>();
  const freeForm = new Map<string, number>();
  return arrayAt(value, 'serviceItems').map((entry, index) => {
    const at = `serviceItems[${index}]`;
    const item = serviceItemAt(entry, at);
    const [seen, key, field] = item.structuredServiceItem
      ? [structured, item.structuredServiceItem.serviceTypeId, `${at}.structuredServiceItem.serviceTypeId`]
      : [freeForm, item.freeFormServiceItem!.label.displayName.toLowerCase(), `${at}.freeFormServiceItem.label.displayName`];
    const earlier = seen.get(key);
    if (earlier !== undefined) throw new FieldViolation(field, `duplicates serviceItems[${earlier}]`);
    seen.set(key, index);
    return item;
  });
}

function profileAt(value: unknown): { description: string } {
  const profile = objectAt(value, 'profile');
  onlyKnown(profile, ['description'], 'profile.');
  if (profile.description === undefined) throw new FieldViolation('profile.description', 'is required');
  const description = stringAt(profile.description, 'profile.description');
  return { description: maxLength(description, DESCRIPTION_MAX_LENGTH, 'profile.description') };
}

function latlngAt(value: unknown): { latitude: number; longitude: number } {
  const latlng = objectAt(value, 'latlng');
  onlyKnown(latlng, ['latitude', 'longitude'], 'latlng.');
  return {
    latitude: numberAt(latlng.latitude, 'latlng.latitude', -90, 90),
    longitude: numberAt(latlng.longitude, 'latlng.longitude', -180, 180),
  };
}

/** The location as stored: only known input fields (output-only ones dropped), hours times without zero fields. */
export function validateLocation(body: unknown): AlphaLocation {
  if (!isObject(body)) throw new FieldViolation('location', 'the request body must be a JSON object');
  onlyKnown(body, LOCATION_FIELDS, '');
  const location: AlphaLocation = {};

  if (body.title === undefined) throw new FieldViolation('title', 'is required');
  location.title = maxLength(nonEmptyStringAt(body.title, 'title'), TITLE_MAX_LENGTH, 'title');
  if (body.storeCode !== undefined) {
    location.storeCode = maxLength(stringAt(body.storeCode, 'storeCode'), STORE_CODE_MAX_LENGTH, 'storeCode');
  }
  if (body.languageCode !== undefined) location.languageCode = languageCodeAt(body.languageCode, 'languageCode');
  if (body.phoneNumbers !== undefined) location.phoneNumbers = phoneNumbersAt(body.phoneNumbers);
  if (body.categories === undefined) throw new FieldViolation('categories.primaryCategory', 'is required');
  location.categories = categoriesAt(body.categories);
  if (body.storefrontAddress !== undefined) location.storefrontAddress = postalAddressAt(body.storefrontAddress);
  if (body.websiteUri !== undefined) location.websiteUri = httpUrlAt(body.websiteUri, 'websiteUri');
  if (body.regularHours !== undefined) {
    const hours = objectAt(body.regularHours, 'regularHours');
    onlyKnown(hours, ['periods'], 'regularHours.');
    location.regularHours = { periods: timePeriodsAt(hours.periods, 'regularHours.periods') };
  }
  if (body.specialHours !== undefined) {
    const hours = objectAt(body.specialHours, 'specialHours');
    onlyKnown(hours, ['specialHourPeriods'], 'specialHours.');
    const specialHourPeriods = specialHourPeriodsAt(hours.specialHourPeriods, 'specialHours.specialHourPeriods');
    location.specialHours = { specialHourPeriods };
  }
  if (body.moreHours !== undefined) location.moreHours = moreHoursAt(body.moreHours);
  if (body.serviceArea !== undefined) location.serviceArea = serviceAreaAt(body.serviceArea);
  // A business is somewhere: a storefront customers visit, or an area it serves.
  if (location.storefrontAddress === undefined && location.serviceArea === undefined) {
    throw new FieldViolation('storefrontAddress', 'storefrontAddress or serviceArea is required');
  }
  if (body.serviceItems !== undefined) location.serviceItems = serviceItemsAt(body.serviceItems);
  if (body.profile !== undefined) location.profile = profileAt(body.profile);
  if (body.latlng !== undefined) location.latlng = latlngAt(body.latlng);
  return location;
}

/** Mask paths whose halves the provider stores as one list: half of one cannot be replaced alone. */
const PAIRED_PATHS: readonly [AlphaLocationUpdatePath, AlphaLocationUpdatePath, AlphaLocationUpdatePath][] = [
  ['phoneNumbers', 'phoneNumbers.primaryPhone', 'phoneNumbers.additionalPhones'],
  ['categories', 'categories.primaryCategory', 'categories.additionalCategories'],
];

function isUpdatePath(path: string): path is AlphaLocationUpdatePath {
  return (ALPHA_LOCATION_UPDATE_PATHS as readonly string[]).includes(path);
}

/** The `updateMask` query parameter: comma-separated paths of ALPHA_LOCATION_UPDATE_PATHS, without repeats. */
export function parseUpdateMask(text: string | undefined): AlphaLocationUpdatePath[] {
  if (text === undefined || text.trim() === '') {
    throw new FieldViolation('updateMask', 'is required: name the fields to change');
  }
  const paths = new Set<AlphaLocationUpdatePath>();
  for (const raw of text.split(',')) {
    const path = raw.trim();
    if (!isUpdatePath(path)) {
      throw new FieldViolation('updateMask', `${JSON.stringify(path)} is not a field path that can be updated`);
    }
    paths.add(path);
  }
  for (const [whole, first, second] of PAIRED_PATHS) {
    if (paths.has(whole)) continue;
    for (const [named, missing] of [[first, second], [second, first]] as const) {
      if (paths.has(named) && !paths.has(missing)) {
        throw new FieldViolation('updateMask', `${missing} must be in the mask with ${named} (or name ${whole})`);
      }
    }
  }
  return [...paths];
}

/**
 * `current` with the masked fields taken from `body` (a masked field the body leaves out is cleared), checked by
 * the create rules. Unmasked fields of the body are ignored, as the provider ignores them.
 */
export function applyLocationUpdate(
  current: AlphaLocation,
  body: unknown,
  mask: readonly AlphaLocationUpdatePath[],
): AlphaLocation {
  if (!isObject(body)) throw new FieldViolation('location', 'the request body must be a JSON object');
  onlyKnown(body, LOCATION_FIELDS, '');
  const merged: JsonObject = structuredClone({ ...current });
  for (const path of mask) {
    const [top, sub] = path.split('.') as [keyof AlphaLocation, string | undefined];
    if (sub === undefined) {
      if (body[top] === undefined) delete merged[top];
      else merged[top] = body[top];
      continue;
    }
    const from = body[top] === undefined ? {} : objectAt(body[top], top);
    const into: JsonObject = isObject(merged[top]) ? { ...merged[top] } : {};
    if (from[sub] === undefined) delete into[sub];
    else into[sub] = from[sub];
    // Clearing the last field of an object clears the object.
    if (Object.keys(into).length === 0) delete merged[top];
    else merged[top] = into;
  }
  return validateLocation(merged);
}
