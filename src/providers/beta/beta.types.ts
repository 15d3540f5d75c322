/**
 * The beta provider's own shapes (its brand resource, modelled on a maps provider's business API), spelled as the
 * provider spells them. Our beta brand records are built from these; nothing here is our interface.
 */

/** SUBMITTED until the provider's asynchronous validation decides: PUBLISHED, or REJECTED with its reports. */
export const BETA_BRAND_STATES = ['SUBMITTED', 'PUBLISHED', 'REJECTED'] as const;
export type BetaBrandState = (typeof BETA_BRAND_STATES)[number];

export const BETA_OWNERSHIP_TYPES = ['BRAND_OWNER', 'FRANCHISEE'] as const;
export type BetaOwnershipType = (typeof BETA_OWNERSHIP_TYPES)[number];

export const BETA_URL_TYPES = ['HOMEPAGE', 'APP_STORE'] as const;
export type BetaUrlType = (typeof BETA_URL_TYPES)[number];

/**
 * The categories the provider publishes brands under. Any other category is accepted on submission and then
 * rejected by validation (a report naming it), as the provider's catalogue is checked asynchronously.
 */
export const BETA_CATEGORIES = [
  'cafe',
  'coffee_shop',
  'bakery',
  'restaurant',
  'bar',
  'fast_food',
  'grocery',
  'pharmacy',
  'gym',
  'hotel',
  'retail',
  'bank',
] as const;
export type BetaCategory = (typeof BETA_CATEGORIES)[number];

/** The provider's limits on a brand's details; it refuses a body outside them with 400 VALIDATION_ERROR. */
export const BETA_BRAND_LIMITS = {
  displayNames: { min: 1, max: 10 },
  displayNameLength: { min: 1, max: 100 },
  countryCodes: { min: 1, max: 50 },
  additionalCategories: { max: 19 },
  urls: { max: 10 },
} as const;

/** One of the brand's names; exactly one of them is primary. `locale` is a BCP 47 tag such as en-US. */
export interface BetaDisplayName {
  name: string;
  locale: string;
  primary: boolean;
}

export interface BetaBrandCategories {
  primary: string;
  additional?: string[];
}

export interface BetaBrandUrl {
  /** An absolute http(s) URL. */
  url: string;
  type: BetaUrlType;
}

/** What a brand says about itself: the whole of a create or replace body's `brandDetails`. */
export interface BetaBrandDetails {
  displayNames: BetaDisplayName[];
  /** ISO 3166-1 alpha-2, upper case: where the brand operates. */
  countryCodes: string[];
  categories: BetaBrandCategories;
  urls?: BetaBrandUrl[];
  ownershipType: BetaOwnershipType;
}

/** Why validation rejected a brand: `field` is the path in the brand (brandDetails.categories.primary). */
export interface BetaValidationReport {
  field: string;
  code: string;
  message: string;
}

/** A brand as the provider serves it. Output-only fields: all but brandDetails. */
export interface BetaBrand {
  id: string;
  /** The company (the provider's organisation) the brand belongs to; the `orgs/{orgId}` of its path. */
  companyId: string;
  /** ISO 8601 */
  createdDate: string;
  /** ISO 8601 */
  updatedDate: string;
  /** Opaque; changes with every accepted replace. Send it back as If-Match to replace or delete. */
  etag: string;
  state: BetaBrandState;
  brandDetails: BetaBrandDetails;
  /** Present when REJECTED. */
  validationReports?: BetaValidationReport[];
}

/** One page of a company's brands, oldest first; `nextCursor` absent on the last page. */
export interface BetaBrandPage {
  brands: BetaBrand[];
  nextCursor?: string;
}

/** The provider's error codes, one per HTTP status it answers with. */
export const BETA_ERROR_CODES = {
  validation: 'VALIDATION_ERROR',
  unauthorized: 'UNAUTHORIZED',
  forbidden: 'FORBIDDEN',
  notFound: 'NOT_FOUND',
  etagMismatch: 'ETAG_MISMATCH',
  preconditionRequired: 'PRECONDITION_REQUIRED',
  rateLimited: 'RATE_LIMITED',
  internal: 'INTERNAL_ERROR',
  unavailable: 'SERVICE_UNAVAILABLE',
} as const;

/** The provider's error body: `context` names the field, header or resource concerned, or is null. */
export interface BetaErrorBody {
  code: string;
  message: string;
  context: string | null;
  details: unknown[];
}

/** The one OAuth scope of the brand API. */
export const BETA_SCOPE_BUSINESS_CONNECT = 'business_connect';

/**
 * The token endpoint's answer to a person's consent (authorization code) or a refresh, as the provider spells it.
 * `company_id` is the company the person linked; absent when they linked none.
 */
export interface BetaOAuthTokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  /** Seconds from the answer. */
  expires_in: number;
  /** A refresh answers the refresh token it was given: they are not rotated. */
  refresh_token: string;
  scope: string;
  company_id?: string;
}

/** The answer to a client-credentials request: an app token, of no company, that may read but not write. */
export interface BetaOAuthAppTokenAnswer {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
}
