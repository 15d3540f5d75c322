import { z } from 'zod';
import { DomainError } from '../errors/domain-error';
import { urlProblem } from './url-rule';

/**
 * The rules of single values that several resources take (a country code, a URL): each defined once, as a zod
 * schema here (the URL rule itself is src/shared/url-rule.ts). A resource names the field and keeps the refusal
 * wording its route documents; the rule itself (what is accepted, how it is normalised, its limits) is the same
 * everywhere.
 */

const COUNTRY_CODE = /^[A-Z]{2}$/;

/** A URL as sent, by the URL rule (http or https): the refusal is `$property` and what is wrong with it. */
export function httpUrl() {
  return z.string().superRefine((url, context) => {
    const problem = urlProblem(url);
    if (problem) context.addIssue({ code: 'custom', message: problem });
  });
}

/** An optional URL as a caller sends it: trimmed; null, absent or blank is none (null). Refused as `<field> <problem>`. */
export function optionalHttpUrl(field: string) {
  return z
    .string()
    .nullish()
    .transform((value) => value?.trim() || null)
    .superRefine((url, context) => {
      const problem = url === null ? undefined : urlProblem(url);
      if (problem) context.addIssue({ code: 'custom', message: `${field} ${problem}` });
    });
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
