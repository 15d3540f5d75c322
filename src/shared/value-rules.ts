import { z } from 'zod';
import { DomainError } from '../errors/domain-error';

/**
 * The rules of single values that several resources take (a country code, a URL): each defined once, here, as a
 * zod schema. A resource names the field and keeps the refusal wording its route documents; the rule itself (what
 * is accepted, how it is normalised, its limits) is the same everywhere.
 */

/** Longer URLs are refused by browsers and by the providers alike. */
export const URL_MAX = 2048;

const COUNTRY_CODE = /^[A-Z]{2}$/;

/** An http or https URL as the WHATWG parser reads it, at most URL_MAX characters, without surrounding spaces. */
export function isHttpUrl(text: string): boolean {
  if (text.length > URL_MAX || text !== text.trim()) return false;
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** A URL that must be an http(s) URL exactly as sent. */
export function httpUrl(message: string) {
  return z.string().refine(isHttpUrl, { message });
}

/** An optional URL as a caller sends it: trimmed; null, absent or blank is none (null). */
export function optionalHttpUrl(message: string) {
  return z
    .string()
    .nullish()
    .transform((value) => value?.trim() || null)
    .refine((url) => url === null || isHttpUrl(url), { message });
}

/** ISO 3166-1 alpha-2, stored upper case: two letters once trimmed. */
export function countryCode(message: string) {
  return z
    .string()
    .transform((value) => value.trim().toUpperCase())
    .refine((code) => COUNTRY_CODE.test(code), { message });
}

/** The value a rule makes of `value`, or a BAD_USER_INPUT error with the rule's message. */
export function ruled<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success) throw DomainError.badInput(result.error.issues[0]!.message);
  return result.data;
}
