import { z } from 'zod';
import {
  BETA_BRAND_STATES,
  BETA_OWNERSHIP_TYPES,
  BETA_URL_TYPES,
  type BetaBrand,
  type BetaBrandDetails,
  type BetaOAuthAppTokenAnswer,
  type BetaOAuthTokenAnswer,
} from './beta.types';

/**
 * Checks of what the provider answers. Unknown fields are dropped, so what reaches our code is exactly the shape of
 * beta.types.ts; a missing or mistyped field we rely on fails the call as BAD_RESPONSE.
 */

export const brandDetailsSchema = z.object({
  displayNames: z.array(z.object({ name: z.string(), locale: z.string(), primary: z.boolean() })),
  countryCodes: z.array(z.string()),
  categories: z.object({ primary: z.string(), additional: z.array(z.string()).optional() }),
  urls: z.array(z.object({ url: z.string(), type: z.enum(BETA_URL_TYPES) })).optional(),
  ownershipType: z.enum(BETA_OWNERSHIP_TYPES),
}) satisfies z.ZodType<BetaBrandDetails>;

/** Without its id, etag and state a brand cannot be addressed, replaced or followed. */
export const brandSchema = z.object({
  id: z.string().min(1),
  companyId: z.string().min(1),
  createdDate: z.string(),
  updatedDate: z.string(),
  etag: z.string().min(1),
  state: z.enum(BETA_BRAND_STATES),
  brandDetails: brandDetailsSchema,
  validationReports: z.array(z.object({ field: z.string(), code: z.string(), message: z.string() })).optional(),
}) satisfies z.ZodType<BetaBrand>;

export const brandListSchema = z.object({
  data: z.array(brandSchema),
  pagination: z
    .object({
      cursors: z.object({ after: z.string().optional() }).optional(),
    })
    .optional(),
});

export const errorBodySchema = z.object({
  code: z.string().min(1),
  message: z.string().optional(),
  context: z.string().nullable().optional(),
  details: z.array(z.unknown()).optional(),
});

// RFC 6749 compares the token type case-insensitively.
const bearerSchema = z
  .string()
  .refine((type) => type.toLowerCase() === 'bearer', 'must be Bearer')
  .transform((): 'Bearer' => 'Bearer');

export const oauthTokenAnswerSchema = z.object({
  access_token: z.string().min(1),
  token_type: bearerSchema,
  expires_in: z.number().int().positive(),
  refresh_token: z.string().min(1),
  scope: z.string(),
  company_id: z.string().min(1).optional(),
}) satisfies z.ZodType<BetaOAuthTokenAnswer, unknown>;

export const oauthAppTokenAnswerSchema = z.object({
  access_token: z.string().min(1),
  token_type: bearerSchema,
  expires_in: z.number().int().positive(),
}) satisfies z.ZodType<BetaOAuthAppTokenAnswer, unknown>;
