import {
  ALPHA_DAYS,
  type AlphaDay,
  type AlphaHoursTime,
  type AlphaLocation,
  type AlphaLocationUpdatePath,
  type AlphaTimePeriod,
} from '../providers/alpha/alpha.types';
import type { HoursPeriod, TimeOfDay } from './location-hours.types';
import type { Location } from './location.entity';
import { LocationUpdateField } from './location.enums';

/**
 * Our location's fields in the alpha provider's shapes and names, and the provider's update mask of a change: the
 * one place where the two vocabularies meet (title for name, storefrontAddress for the address fields, …).
 */

/** The provider paths that carry each of our fields; the pairs it wants masked together are masked whole. */
const UPDATE_PATHS: Record<LocationUpdateField, AlphaLocationUpdatePath> = {
  [LocationUpdateField.NAME]: 'title',
  [LocationUpdateField.ADDRESS]: 'storefrontAddress',
  [LocationUpdateField.POSTAL]: 'storefrontAddress',
  [LocationUpdateField.CITY]: 'storefrontAddress',
  [LocationUpdateField.COUNTRY_CODE]: 'storefrontAddress',
  [LocationUpdateField.ADMINISTRATIVE_AREA]: 'storefrontAddress',
  [LocationUpdateField.DESCRIPTION]: 'profile.description',
  [LocationUpdateField.PHONE_NUMBER]: 'phoneNumbers',
  [LocationUpdateField.ADDITIONAL_PHONE_NUMBERS]: 'phoneNumbers',
  [LocationUpdateField.WEBSITE_URI]: 'websiteUri',
  [LocationUpdateField.REGULAR_HOURS]: 'regularHours',
  [LocationUpdateField.SPECIAL_HOURS]: 'specialHours',
  [LocationUpdateField.MORE_HOURS]: 'moreHours',
  [LocationUpdateField.CATEGORIES]: 'categories',
  [LocationUpdateField.SERVICE_ITEMS]: 'serviceItems',
  [LocationUpdateField.SERVICE_AREA]: 'serviceArea',
};

/** Every path a full re-send names (after a change made while the location was being created). */
const ALL_PATHS: readonly AlphaLocationUpdatePath[] = [...new Set([...Object.values(UPDATE_PATHS), 'storeCode' as const, 'latlng' as const])];

/** `{hours: '09', minutes: '30'}` -> `{hours: 9, minutes: 30}`; the provider leaves zero fields out. */
function alphaTime(time: TimeOfDay | null | undefined): AlphaHoursTime {
  const hours = Number(time?.hours ?? 0);
  const minutes = Number(time?.minutes ?? 0);
  return { ...(hours ? { hours } : {}), ...(minutes ? { minutes } : {}) };
}

/** Our days are the provider's names (the rules admit no other, src/location/location.rules.ts). */
function alphaDay(day: string): AlphaDay {
  const known = ALPHA_DAYS.find((name) => name === day);
  if (!known) throw new Error(`Not a day of the week: ${day}`);
  return known;
}

/** A period without days is every day's (the document's create samples carry only times). */
function alphaPeriods(periods: readonly HoursPeriod[]): AlphaTimePeriod[] {
  return periods.flatMap((period) => {
    const days: readonly AlphaDay[] = period.openDay ? [alphaDay(period.openDay)] : ALPHA_DAYS;
    return days.map((openDay) => ({
      openDay,
      openTime: alphaTime(period.openTime),
      closeDay: period.openDay ? alphaDay(period.closeDay ?? period.openDay) : openDay,
      closeTime: alphaTime(period.closeTime),
    }));
  });
}

function alphaDate(date: string): { year: number; month: number; day: number } {
  const [year, month, day] = date.split('-').map(Number) as [number, number, number];
  return { year, month, day };
}

/** Category ids go to the provider as its category names. */
function categoryName(id: string): string {
  return id.startsWith('categories/') || id.startsWith('gcid:') ? id : `categories/${id}`;
}

type LocationFields = Omit<Location, 'account' | 'version'>;

/** The whole location as the provider takes it. */
export function alphaLocationOf(location: LocationFields): AlphaLocation {
  const addressLines = [location.address, ...location.additionalAddressLines].filter((line): line is string => Boolean(line));
  const primaryCategory = location.categories?.primaryCategory ?? { name: location.categoryId ?? '', displayName: undefined };
  const additionalCategories =
    location.categories?.additionalCategories ?? location.additionalCategoryIds.map((id) => ({ name: id, displayName: undefined }));
  const category = (item: { name: string; displayName?: string | null }) => ({
    name: categoryName(item.name),
    ...(item.displayName ? { displayName: item.displayName } : {}),
  });
  return {
    title: location.name,
    ...(location.referenceId ? { storeCode: location.referenceId } : {}),
    ...(location.phoneNumber ? { phoneNumbers: { primaryPhone: location.phoneNumber, additionalPhones: [...location.additionalPhoneNumbers] } } : {}),
    categories: { primaryCategory: category(primaryCategory), additionalCategories: additionalCategories.map(category) },
    ...(location.countryCode && (addressLines.length > 0 || location.city || location.postal)
      ? {
          storefrontAddress: {
            regionCode: location.countryCode,
            ...(location.postal ? { postalCode: location.postal } : {}),
            ...(location.administrativeArea ? { administrativeArea: location.administrativeArea } : {}),
            ...(location.city ? { locality: location.city } : {}),
            addressLines,
          },
        }
      : {}),
    ...(location.websiteUri ? { websiteUri: location.websiteUri } : {}),
    regularHours: { periods: alphaPeriods(location.regularHours) },
    specialHours: {
      specialHourPeriods: location.specialHours.map((item) => ({
        startDate: alphaDate(item.openDate),
        ...(item.closeDate ? { endDate: alphaDate(item.closeDate) } : {}),
        ...(item.isClosed ? { closed: true } : { openTime: alphaTime(item.openTime), closeTime: alphaTime(item.closeTime) }),
      })),
    },
    moreHours: location.moreHours.map((item) => ({ hoursTypeId: item.hoursTypeId, periods: alphaPeriods(item.periods) })),
    ...(location.serviceArea ? { serviceArea: location.serviceArea } : {}),
    serviceItems: location.serviceItems,
    ...(location.description ? { profile: { description: location.description } } : {}),
    ...(location.latitude !== null && location.longitude !== null ? { latlng: { latitude: location.latitude, longitude: location.longitude } } : {}),
  };
}

/**
 * The provider's PATCH of a change: the location as it is after the change, and the mask of the paths that carry
 * the changed fields (all of them for `'all'`). Fields masked but cleared are absent from the body, which the
 * provider reads as "clear".
 */
export function alphaUpdateOf(location: LocationFields, fields: readonly LocationUpdateField[] | 'all'): { location: AlphaLocation; updateMask: AlphaLocationUpdatePath[] } {
  const updateMask = fields === 'all' ? [...ALL_PATHS] : [...new Set(fields.map((field) => UPDATE_PATHS[field]))];
  return { location: alphaLocationOf(location), updateMask };
}

/** `{hours: 9}` -> `{hours: '09', minutes: '00'}`. */
function ourTime(time: AlphaHoursTime | undefined): TimeOfDay {
  return { hours: String(time?.hours ?? 0).padStart(2, '0'), minutes: String(time?.minutes ?? 0).padStart(2, '0') };
}

function ourPeriods(periods: readonly AlphaTimePeriod[] | undefined): HoursPeriod[] {
  return (periods ?? []).map((period) => ({
    openDay: period.openDay,
    openTime: ourTime(period.openTime),
    closeDay: period.closeDay,
    closeTime: ourTime(period.closeTime),
  }));
}

const ourDate = (date: { year: number; month: number; day: number }) =>
  `${String(date.year).padStart(4, '0')}-${String(date.month).padStart(2, '0')}-${String(date.day).padStart(2, '0')}`;

/** A category name of the provider as our category id (`categories/gcid:x` -> `gcid:x`). */
const categoryId = (name: string) => (name.startsWith('categories/') ? name.slice('categories/'.length) : name);

/** Our fields of a location the provider has (an import, or a re-sync): the reverse of alphaLocationOf. */
export function locationFieldsOf(remote: AlphaLocation): Partial<Location> {
  const [address, ...additionalAddressLines] = remote.storefrontAddress?.addressLines ?? [];
  const primary = remote.categories?.primaryCategory;
  const additional = remote.categories?.additionalCategories ?? [];
  return {
    name: remote.title ?? remote.name ?? 'Unnamed location',
    referenceId: remote.storeCode ?? null,
    categoryId: primary ? categoryId(primary.name) : null,
    additionalCategoryIds: additional.map((category) => categoryId(category.name)),
    categories: primary
      ? {
          primaryCategory: { name: categoryId(primary.name), displayName: primary.displayName ?? categoryId(primary.name) },
          additionalCategories: additional.map((category) => ({ name: categoryId(category.name), displayName: category.displayName ?? categoryId(category.name) })),
        }
      : null,
    address: address ?? null,
    additionalAddressLines,
    postal: remote.storefrontAddress?.postalCode ?? null,
    city: remote.storefrontAddress?.locality ?? null,
    countryCode: remote.storefrontAddress?.regionCode ?? remote.serviceArea?.regionCode ?? null,
    administrativeArea: remote.storefrontAddress?.administrativeArea ?? null,
    description: remote.profile?.description ?? null,
    phoneNumber: remote.phoneNumbers?.primaryPhone ?? null,
    additionalPhoneNumbers: remote.phoneNumbers?.additionalPhones ?? [],
    websiteUri: remote.websiteUri ?? null,
    latitude: remote.latlng?.latitude ?? null,
    longitude: remote.latlng?.longitude ?? null,
    regularHours: ourPeriods(remote.regularHours?.periods),
    specialHours: (remote.specialHours?.specialHourPeriods ?? []).map((item) => ({
      openDate: ourDate(item.startDate),
      closeDate: item.endDate ? ourDate(item.endDate) : null,
      isClosed: item.closed ?? false,
      openTime: item.closed ? null : ourTime(item.openTime),
      closeTime: item.closed ? null : ourTime(item.closeTime),
    })),
    moreHours: (remote.moreHours ?? []).map((item) => ({ hoursTypeId: item.hoursTypeId, periods: ourPeriods(item.periods) })),
    serviceItems: remote.serviceItems ?? [],
    serviceArea: remote.serviceArea ?? null,
    placeId: remote.metadata?.placeId ?? null,
    serviceAreaPlaceIds: (remote.serviceArea?.places?.placeInfos ?? []).map((place) => place.placeId),
    serviceAreaPlaceNames: (remote.serviceArea?.places?.placeInfos ?? []).map((place) => place.placeName),
  };
}
