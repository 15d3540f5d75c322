import {
  BETA_BRAND_LIMITS,
  BETA_CATEGORIES,
  BETA_OWNERSHIP_TYPES,
  BETA_URL_TYPES,
  type BetaBrandCategories,
  type BetaBrandDetails,
  type BetaBrandUrl,
  type BetaDisplayName,
  type BetaOwnershipType,
  type BetaValidationReport,
} from '../../src/providers/beta/beta.types';

/**
 * The provider's rules for a brand body, as the sandbox enforces them on create and replace, and the asynchronous
 * validation that publishes or rejects a submitted brand. Written independently of the client's response checks,
 * so a client that sends what the provider refuses is caught by tests.
 */

/** One refused field: rendered as a 400 VALIDATION_ERROR whose `context` is the field's path. */
export class BetaFieldViolation extends Error {
  constructor(
    readonly field: string,
    readonly description: string,
  ) {
    super(`${field}: ${description}`);
  }
}

type JsonObject = Record<string, unknown>;

/** Fields the provider fills in; a replace may send them back (as read) and they are ignored. */
const OUTPUT_ONLY_FIELDS = ['id', 'companyId', 'createdDate', 'updatedDate', 'etag', 'state', 'validationReports'];
const DETAILS_FIELDS = ['displayNames', 'countryCodes', 'categories', 'urls', 'ownershipType'];
const LOCALE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;
const COUNTRY_CODE = /^[A-Z]{2}$/;
const CATEGORY_MAX_LENGTH = 100;
const URL_MAX_LENGTH = 2048;
// Text the provider cannot show: control characters and halves of a surrogate pair.
// eslint-disable-next-line no-control-regex -- finding control characters is what this does
const UNSHOWABLE = /[\u0000-\u001f\u007f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function objectAt(value: unknown, field: string, known: readonly string[]): JsonObject {
  if (!isObject(value)) throw new BetaFieldViolation(field, 'must be an object');
  for (const key of Object.keys(value)) {
    // The body's own fields are named as they are; nested ones by their path.
    if (!known.includes(key))
      throw new BetaFieldViolation(field === 'body' ? key : `${field}.${key}`, 'is not a known field');
  }
  return value;
}

function arrayAt(value: unknown, field: string, limits: { min?: number; max: number }): unknown[] {
  if (!Array.isArray(value)) throw new BetaFieldViolation(field, 'must be an array');
  const min = limits.min ?? 0;
  if (value.length < min || value.length > limits.max) {
    throw new BetaFieldViolation(
      field,
      min > 0 ? `must have ${min} to ${limits.max} items` : `must have at most ${limits.max} items`,
    );
  }
  return value;
}

function stringAt(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new BetaFieldViolation(field, 'must be a string');
  if (UNSHOWABLE.test(value))
    throw new BetaFieldViolation(field, 'must not contain control characters or lone surrogates');
  return value;
}

/** The body of a create: `{ brandDetails }` and nothing else. */
export function validateCreateBody(body: unknown): BetaBrandDetails {
  const object = objectAt(body, 'body', ['brandDetails']);
  return validateBrandDetails(object.brandDetails);
}

/**
 * The body of a replace: the whole brand, `brandDetails` required. A brand as read may be sent back: its output-only
 * fields are ignored, but `id` and `companyId`, when present, must be the path's.
 */
export function validateReplaceBody(body: unknown, path: { brandId: string; companyId: string }): BetaBrandDetails {
  const object = objectAt(body, 'body', ['brandDetails', ...OUTPUT_ONLY_FIELDS]);
  if (object.id !== undefined && object.id !== path.brandId) {
    throw new BetaFieldViolation('id', 'must be the id of the brand in the path');
  }
  if (object.companyId !== undefined && object.companyId !== path.companyId) {
    throw new BetaFieldViolation('companyId', 'cannot change: it must be the orgId of the path');
  }
  return validateBrandDetails(object.brandDetails);
}

/** The details, checked field by field in the order they are documented; the first refusal is the answer. */
export function validateBrandDetails(value: unknown, field = 'brandDetails'): BetaBrandDetails {
  if (value === undefined) throw new BetaFieldViolation(field, 'is required');
  const details = objectAt(value, field, DETAILS_FIELDS);
  const displayNames = validateDisplayNames(details.displayNames, `${field}.displayNames`);
  const countryCodes = validateCountryCodes(details.countryCodes, `${field}.countryCodes`);
  const categories = validateCategories(details.categories, `${field}.categories`);
  const urls = details.urls === undefined ? undefined : validateUrls(details.urls, `${field}.urls`);
  const ownershipType = validateOwnershipType(details.ownershipType, `${field}.ownershipType`);
  return { displayNames, countryCodes, categories, ...(urls === undefined ? {} : { urls }), ownershipType };
}

function validateDisplayNames(value: unknown, field: string): BetaDisplayName[] {
  if (value === undefined) throw new BetaFieldViolation(field, 'is required');
  const items = arrayAt(value, field, BETA_BRAND_LIMITS.displayNames);
  const names = items.map((item, index): BetaDisplayName => {
    const at = `${field}[${index}]`;
    const entry = objectAt(item, at, ['name', 'locale', 'primary']);
    if (entry.name === undefined) throw new BetaFieldViolation(`${at}.name`, 'is required');
    const name = stringAt(entry.name, `${at}.name`);
    const length = [...name].length;
    const { min, max } = BETA_BRAND_LIMITS.displayNameLength;
    if (length < min || length > max) throw new BetaFieldViolation(`${at}.name`, `must be ${min} to ${max} characters`);
    if (name.trim() === '') throw new BetaFieldViolation(`${at}.name`, 'must not be blank');
    if (entry.locale === undefined) throw new BetaFieldViolation(`${at}.locale`, 'is required');
    const locale = stringAt(entry.locale, `${at}.locale`);
    if (!LOCALE.test(locale))
      throw new BetaFieldViolation(`${at}.locale`, 'must be a BCP 47 language tag such as en-US');
    if (typeof entry.primary !== 'boolean') throw new BetaFieldViolation(`${at}.primary`, 'must be true or false');
    return { name, locale, primary: entry.primary };
  });
  const primaries = names.filter((name) => name.primary).length;
  if (primaries !== 1) throw new BetaFieldViolation(field, `exactly one must be primary (found ${primaries})`);
  return names;
}

function validateCountryCodes(value: unknown, field: string): string[] {
  if (value === undefined) throw new BetaFieldViolation(field, 'is required');
  const items = arrayAt(value, field, BETA_BRAND_LIMITS.countryCodes);
  const seen = new Set<string>();
  return items.map((item, index) => {
    const at = `${field}[${index}]`;
    const code = stringAt(item, at);
    if (!COUNTRY_CODE.test(code)) throw new BetaFieldViolation(at, 'must be an ISO 3166-1 alpha-2 code in upper case');
    if (seen.has(code)) throw new BetaFieldViolation(at, `repeats ${code}`);
    seen.add(code);
    return code;
  });
}

function validateCategory(value: unknown, field: string): string {
  const category = stringAt(value, field);
  if (category.trim() === '') throw new BetaFieldViolation(field, 'must not be blank');
  if (category.length > CATEGORY_MAX_LENGTH) {
    throw new BetaFieldViolation(field, `must be at most ${CATEGORY_MAX_LENGTH} characters`);
  }
  return category;
}

function validateCategories(value: unknown, field: string): BetaBrandCategories {
  if (value === undefined) throw new BetaFieldViolation(field, 'is required');
  const categories = objectAt(value, field, ['primary', 'additional']);
  if (categories.primary === undefined) throw new BetaFieldViolation(`${field}.primary`, 'is required');
  const primary = validateCategory(categories.primary, `${field}.primary`);
  if (categories.additional === undefined) return { primary };
  const items = arrayAt(categories.additional, `${field}.additional`, BETA_BRAND_LIMITS.additionalCategories);
  const seen = new Set([primary]);
  const additional = items.map((item, index) => {
    const at = `${field}.additional[${index}]`;
    const category = validateCategory(item, at);
    if (seen.has(category)) throw new BetaFieldViolation(at, `repeats ${category}`);
    seen.add(category);
    return category;
  });
  return { primary, additional };
}

function validateUrls(value: unknown, field: string): BetaBrandUrl[] {
  const items = arrayAt(value, field, BETA_BRAND_LIMITS.urls);
  return items.map((item, index) => {
    const at = `${field}[${index}]`;
    const entry = objectAt(item, at, ['url', 'type']);
    if (entry.url === undefined) throw new BetaFieldViolation(`${at}.url`, 'is required');
    const url = stringAt(entry.url, `${at}.url`);
    if (url.length > URL_MAX_LENGTH || !isHttpUrl(url)) {
      throw new BetaFieldViolation(
        `${at}.url`,
        `must be an absolute http or https URL of at most ${URL_MAX_LENGTH} characters`,
      );
    }
    if (!isOneOf(BETA_URL_TYPES, entry.type)) {
      throw new BetaFieldViolation(`${at}.type`, `must be one of ${BETA_URL_TYPES.join(', ')}`);
    }
    return { url, type: entry.type };
  });
}

function validateOwnershipType(value: unknown, field: string): BetaOwnershipType {
  if (value === undefined) throw new BetaFieldViolation(field, 'is required');
  if (!isOneOf(BETA_OWNERSHIP_TYPES, value)) {
    throw new BetaFieldViolation(field, `must be one of ${BETA_OWNERSHIP_TYPES.join(', ')}`);
  }
  return value;
}

function isOneOf<T extends string>(values: readonly T[], value: unknown): value is T {
  return typeof value === 'string' && (values as readonly string[]).includes(value);
}

function isHttpUrl(text: string): boolean {
  try {
    const url = new URL(text);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

export const REPORT_CODES = {
  contentPolicy: 'CONTENT_POLICY_VIOLATION',
  unknownCategory: 'UNKNOWN_CATEGORY',
} as const;

/**
 * What the provider's validation will find in submitted details: nothing (it publishes the brand), or the reasons it
 * rejects it. A display name containing `rejectMarker` breaks the content policy; a category outside BETA_CATEGORIES
 * is unknown.
 */
export function validationReports(details: BetaBrandDetails, rejectMarker: string | null): BetaValidationReport[] {
  const reports: BetaValidationReport[] = [];
  if (rejectMarker !== null) {
    details.displayNames.forEach((displayName, index) => {
      if (displayName.name.includes(rejectMarker)) {
        reports.push({
          field: `brandDetails.displayNames[${index}].name`,
          code: REPORT_CODES.contentPolicy,
          message: 'The display name does not meet the content policy.',
        });
      }
    });
  }
  const known = BETA_CATEGORIES as readonly string[];
  const unknownCategory = (field: string, category: string): BetaValidationReport => ({
    field,
    code: REPORT_CODES.unknownCategory,
    message: `${category} is not a category of the provider.`,
  });
  if (!known.includes(details.categories.primary)) {
    reports.push(unknownCategory('brandDetails.categories.primary', details.categories.primary));
  }
  (details.categories.additional ?? []).forEach((category, index) => {
    if (!known.includes(category))
      reports.push(unknownCategory(`brandDetails.categories.additional[${index}]`, category));
  });
  return reports;
}
