/**
 * The alpha provider's own shapes (its location and local-post resources, modelled on a business-profile API),
 * spelled as the provider spells them. Our post records keep these as `params`; nothing here is our interface.
 */

export const ALPHA_TOPIC_TYPES = ['STANDARD', 'EVENT', 'OFFER', 'ALERT'] as const;
export type AlphaTopicType = (typeof ALPHA_TOPIC_TYPES)[number];

export const ALPHA_ACTION_TYPES = ['BOOK', 'ORDER', 'SHOP', 'LEARN_MORE', 'SIGN_UP', 'CALL'] as const;
export type AlphaActionType = (typeof ALPHA_ACTION_TYPES)[number];

export const ALPHA_POST_STATES = ['LIVE', 'PROCESSING', 'REJECTED'] as const;
export type AlphaPostState = (typeof ALPHA_POST_STATES)[number];

/** A calendar date without a time zone. */
export interface AlphaDate {
  year: number;
  /** 1-12 */
  month: number;
  /** 1-31 */
  day: number;
}

/** A time of day without a time zone. */
export interface AlphaTimeOfDay {
  hours: number;
  minutes: number;
  seconds: number;
}

export interface AlphaCallToAction {
  actionType: AlphaActionType;
  /** Absent for CALL (the profile's phone number is used); an http(s) URL otherwise. */
  url?: string;
}

export interface AlphaMediaItem {
  /** PHOTO or VIDEO. */
  mediaFormat: string;
  sourceUrl: string;
}

export interface AlphaEventSchedule {
  startDate: AlphaDate;
  endDate: AlphaDate;
  startTime?: AlphaTimeOfDay;
  endTime?: AlphaTimeOfDay;
}

export interface AlphaEvent {
  title?: string;
  schedule?: AlphaEventSchedule;
}

export interface AlphaOffer {
  couponCode?: string;
  redeemOnlineUrl?: string;
  termsConditions?: string;
}

/** A local post. The output-only fields (name, state, searchUrl, createTime, updateTime) are ignored on create. */
export interface AlphaLocalPost {
  /** `accounts/{a}/locations/{l}/localPosts/{p}` */
  name?: string;
  languageCode?: string;
  summary?: string;
  topicType?: AlphaTopicType;
  callToAction?: AlphaCallToAction;
  media?: AlphaMediaItem[];
  event?: AlphaEvent;
  offer?: AlphaOffer;
  /** ALERT posts only, e.g. ALERT_TYPE_UNSPECIFIED. */
  alertType?: string;
  /** RFC 3339; a future time publishes the post then. */
  scheduledTime?: string;
  state?: AlphaPostState;
  searchUrl?: string;
  /** RFC 3339 */
  createTime?: string;
  /** RFC 3339 */
  updateTime?: string;
}

export const ALPHA_DAYS = ['MONDAY', 'TUESDAY', 'WEDNESDAY', 'THURSDAY', 'FRIDAY', 'SATURDAY', 'SUNDAY'] as const;
export type AlphaDay = (typeof ALPHA_DAYS)[number];

/** A time of day in hours periods; the provider omits zero fields; hours 24 means the end of the day. */
export interface AlphaHoursTime { hours?: number; minutes?: number }

export interface AlphaTimePeriod { openDay: AlphaDay; openTime: AlphaHoursTime; closeDay: AlphaDay; closeTime: AlphaHoursTime }

/** One date or a run of dates with other hours than usual; `closed` periods carry no times. */
export interface AlphaSpecialHourPeriod {
  startDate: AlphaDate;
  /** Absent: startDate only. */
  endDate?: AlphaDate;
  openTime?: AlphaHoursTime;
  closeTime?: AlphaHoursTime;
  closed?: boolean;
}

/** `name` is `categories/{id}` or `gcid:{id}`. */
export interface AlphaCategory { name: string; displayName?: string }

export interface AlphaPostalAddress {
  /** CLDR region code, e.g. GB. */
  regionCode: string;
  postalCode?: string;
  administrativeArea?: string;
  locality?: string;
  addressLines?: string[];
}

/** Exactly one of the two kinds of item; `price` is a money amount (units as a decimal string, plus nanos). */
export interface AlphaServiceItem {
  structuredServiceItem?: { serviceTypeId: string; description?: string };
  freeFormServiceItem?: { category: string; label: { displayName: string; description?: string; languageCode?: string } };
  price?: { currencyCode: string; units?: string; nanos?: number };
}

export interface AlphaServiceArea {
  businessType: 'CUSTOMER_LOCATION_ONLY' | 'CUSTOMER_AND_BUSINESS_LOCATION';
  places?: { placeInfos: { placeName: string; placeId: string }[] };
  regionCode?: string;
}

/** A business location. The output-only fields (name, metadata) are ignored on create and update. */
export interface AlphaLocation {
  /** `accounts/{a}/locations/{l}`; output only. */
  name?: string;
  title?: string;
  storeCode?: string;
  languageCode?: string;
  phoneNumbers?: { primaryPhone?: string; additionalPhones?: string[] };
  categories?: { primaryCategory?: AlphaCategory; additionalCategories?: AlphaCategory[] };
  storefrontAddress?: AlphaPostalAddress;
  websiteUri?: string;
  regularHours?: { periods: AlphaTimePeriod[] };
  specialHours?: { specialHourPeriods: AlphaSpecialHourPeriod[] };
  moreHours?: { hoursTypeId: string; periods: AlphaTimePeriod[] }[];
  serviceArea?: AlphaServiceArea;
  serviceItems?: AlphaServiceItem[];
  profile?: { description: string };
  latlng?: { latitude: number; longitude: number };
  /** Output only: what the provider knows of the place. */
  metadata?: { placeId?: string; mapsUri?: string; newReviewUri?: string };
}

/** Field paths a location PATCH may name in its updateMask (the provider refuses any other). */
export const ALPHA_LOCATION_UPDATE_PATHS = [
  'title', 'storeCode', 'languageCode', 'phoneNumbers', 'phoneNumbers.primaryPhone', 'phoneNumbers.additionalPhones',
  'categories', 'categories.primaryCategory', 'categories.additionalCategories', 'storefrontAddress', 'websiteUri',
  'regularHours', 'specialHours', 'moreHours', 'serviceArea', 'serviceItems', 'profile', 'profile.description', 'latlng',
] as const;
export type AlphaLocationUpdatePath = (typeof ALPHA_LOCATION_UPDATE_PATHS)[number];

/** The provider's error envelope: `{ error: { code, message, status, details } }`. */
export interface AlphaErrorEnvelope {
  error: {
    /** The HTTP status, repeated. */
    code: number;
    message: string;
    /** A canonical reason such as RESOURCE_EXHAUSTED or INVALID_ARGUMENT. */
    status: string;
    details: unknown[];
  };
}
