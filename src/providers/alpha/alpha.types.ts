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

/** The OAuth scopes the gateway asks for when it connects an account (the provider's own scope strings). */
export const ALPHA_SCOPE_OPENID = 'openid';
export const ALPHA_SCOPE_EMAIL = 'email';
export const ALPHA_SCOPE_PROFILE = 'profile';
export const ALPHA_SCOPE_BUSINESS_MANAGE = 'https://www.googleapis.com/auth/business.manage';
/** All four, in the order a consent screen lists them. */
export const ALPHA_CONNECT_SCOPES = [
  ALPHA_SCOPE_OPENID,
  ALPHA_SCOPE_EMAIL,
  ALPHA_SCOPE_PROFILE,
  ALPHA_SCOPE_BUSINESS_MANAGE,
] as const;
export type AlphaScope = (typeof ALPHA_CONNECT_SCOPES)[number];

/** The token endpoint's answer, as the provider spells it. `scope` lists the granted scopes, space-separated. */
export interface AlphaOAuthTokenAnswer {
  access_token: string;
  /** Seconds from the answer. */
  expires_in: number;
  token_type: 'Bearer';
  /** Only from a code exchange that asked for offline access; a refresh keeps the refresh token it was given. */
  refresh_token?: string;
  scope: string;
  /** A JWT, when the openid scope was granted. */
  id_token?: string;
}

/** The userinfo endpoint's answer: `email`, `email_verified` with the email scope; `name`, `picture` with profile. */
export interface AlphaUserInfo {
  sub: string;
  email?: string;
  email_verified?: boolean;
  name?: string;
  picture?: string;
}

export const ALPHA_ACCOUNT_TYPES = ['PERSONAL', 'LOCATION_GROUP', 'USER_GROUP', 'ORGANIZATION'] as const;
export type AlphaAccountType = (typeof ALPHA_ACCOUNT_TYPES)[number];

export const ALPHA_VERIFICATION_STATES = ['VERIFIED', 'UNVERIFIED', 'VERIFICATION_REQUESTED'] as const;
export type AlphaVerificationState = (typeof ALPHA_VERIFICATION_STATES)[number];

export const ALPHA_ACCOUNT_ROLES = ['PRIMARY_OWNER', 'OWNER', 'MANAGER', 'SITE_MANAGER'] as const;
export type AlphaAccountRole = (typeof ALPHA_ACCOUNT_ROLES)[number];

/** A business account: the caller's `role` in it, and whether the provider has verified it. */
export interface AlphaAccount {
  /** `accounts/{a}` */
  name: string;
  accountName: string;
  type: AlphaAccountType;
  verificationState: AlphaVerificationState;
  role: AlphaAccountRole;
}

export const ALPHA_STAR_RATINGS = ['ONE', 'TWO', 'THREE', 'FOUR', 'FIVE'] as const;
export type AlphaStarRating = (typeof ALPHA_STAR_RATINGS)[number];

/** A reply is PENDING while the provider moderates it, then APPROVED (shown) or REJECTED. */
export const ALPHA_REVIEW_REPLY_STATES = ['PENDING', 'APPROVED', 'REJECTED'] as const;
export type AlphaReviewReplyState = (typeof ALPHA_REVIEW_REPLY_STATES)[number];

/** The provider refuses a reply comment outside 1 to this many bytes of UTF-8. */
export const ALPHA_REVIEW_REPLY_MAX_BYTES = 4096;

export interface AlphaReviewReply {
  comment: string;
  /** RFC 3339 */
  updateTime: string;
  state: AlphaReviewReplyState;
}

export interface AlphaReviewer {
  displayName: string;
  profilePhotoUrl?: string;
  isAnonymous: boolean;
}

export interface AlphaReview {
  /** `accounts/{a}/locations/{l}/reviews/{r}` */
  name: string;
  reviewId: string;
  reviewer: AlphaReviewer;
  starRating: AlphaStarRating;
  /** Absent for a rating without words. */
  comment?: string;
  /** RFC 3339 */
  createTime: string;
  /** RFC 3339 */
  updateTime: string;
  reviewReply?: AlphaReviewReply;
}

/** One page of a location's reviews, newest first; the average and count cover all of them, not the page. */
export interface AlphaReviewPage {
  reviews: AlphaReview[];
  averageRating: number;
  totalReviewCount: number;
  nextPageToken?: string;
}

/** The places API's bounds: the provider refuses a search outside them with 400 naming the field. */
export const ALPHA_PLACES_TEXT_QUERY_MAX_LENGTH = 200;
export const ALPHA_PLACES_RADIUS_MAX_METERS = 50_000;
export const ALPHA_PLACES_PAGE_SIZE_MAX = 20;

export const ALPHA_BUSINESS_STATUSES = ['OPERATIONAL', 'CLOSED_TEMPORARILY', 'CLOSED_PERMANENTLY'] as const;
export type AlphaBusinessStatus = (typeof ALPHA_BUSINESS_STATUSES)[number];

/** A nearby text search: the places within `radiusMeters` (1 to 50000) of the point that match `textQuery`. */
export interface AlphaPlaceSearch {
  /** 1 to 200 characters, not blank, e.g. "coffee shop". */
  textQuery: string;
  latitude: number;
  longitude: number;
  radiusMeters: number;
  /** 1 to 20; default 20. */
  pageSize?: number;
}

/**
 * A place as the places API answers it. `id` is the place ID: for a business-profile location, its
 * `metadata.placeId`. The provider leaves out what it does not know; the counts then read as 0.
 */
export interface AlphaPlace {
  id: string;
  /** `text` is empty when the provider gave no name. */
  displayName: { text: string; languageCode?: string };
  formattedAddress?: string;
  types: string[];
  primaryType?: string;
  /** 1.0 to 5.0, one decimal; 0 for a place nobody has rated. */
  rating: number;
  userRatingCount: number;
  websiteUri?: string;
  location: { latitude: number; longitude: number };
  photoCount: number;
  /** Whether the owner has a local post live on the profile. */
  hasOwnerPosts: boolean;
  businessStatus?: AlphaBusinessStatus;
}
