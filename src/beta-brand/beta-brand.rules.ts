import { DomainError } from '../errors/domain-error';
import { trimmedText } from '../shared/text';
import { countryCode as countryCodeRule, optionalHttpUrl, ruled } from '../shared/value-rules';

/**
 * The rules of a beta brand's fields, for a create and for an update alike (docs/beta-and-scans.md). The value
 * rules are those of src/shared/value-rules.ts, refused in this route's documented wording.
 */

/** The beta provider's limit. */
const ADDITIONAL_CATEGORIES_MAX = 19;

export function brandName(value: string): string {
  return trimmedText(value, 'brand_name', { min: 1, max: 100 });
}

/** The brand's name here (defaults to its brand name). */
export function localName(value: string): string {
  return trimmedText(value, 'name', { min: 1, max: 200 });
}

export function countryCode(value: string): string {
  return ruled(countryCodeRule('country_code must be exactly 2 letters (ISO 3166-1 alpha-2)'), value);
}

export function category(value: string, field: string): string {
  return trimmedText(value, field, { min: 1, max: 100 });
}

export function additionalCategories(values: string[]): string[] {
  if (values.length > ADDITIONAL_CATEGORIES_MAX) {
    throw DomainError.badInput(`additional_categories may hold at most ${ADDITIONAL_CATEGORIES_MAX} categories`);
  }
  return values.map((value, index) => category(value, `additional_categories[${index}]`));
}

/** An http(s) URL (trimmed; null or blank clears it). */
export function url(value: string | null | undefined, field: string): string | null {
  return ruled(optionalHttpUrl(field), value);
}
