import { z } from 'zod';
import {
  ALPHA_ACCOUNT_ROLES,
  ALPHA_ACCOUNT_TYPES,
  ALPHA_ACTION_TYPES,
  ALPHA_BUSINESS_STATUSES,
  ALPHA_DAYS,
  ALPHA_POST_STATES,
  ALPHA_REVIEW_REPLY_STATES,
  ALPHA_STAR_RATINGS,
  ALPHA_TOPIC_TYPES,
  ALPHA_VERIFICATION_STATES,
  type AlphaAccount,
  type AlphaLocalPost,
  type AlphaLocation,
  type AlphaOAuthTokenAnswer,
  type AlphaPlace,
  type AlphaReview,
  type AlphaReviewReply,
  type AlphaUserInfo,
} from './alpha.types';

/**
 * Checks of what the provider answers. Unknown fields are dropped, so what reaches our code is exactly the shape
 * of alpha.types.ts; a missing or mistyped field we rely on fails the call as BAD_RESPONSE.
 */

export const LOCAL_POST_NAME = /^accounts\/[^/]+\/locations\/[^/]+\/localPosts\/[^/]+$/;
export const LOCATION_NAME = /^accounts\/[^/]+\/locations\/[^/]+$/;
export const ACCOUNT_NAME = /^accounts\/[^/]+$/;
export const REVIEW_NAME = /^accounts\/[^/]+\/locations\/[^/]+\/reviews\/[^/]+$/;

const dateSchema = z.object({ year: z.number().int(), month: z.number().int(), day: z.number().int() });

// The provider's JSON omits zero-valued fields, so 09:00 arrives as { hours: 9 }.
const timeOfDaySchema = z.object({
  hours: z.number().int().default(0),
  minutes: z.number().int().default(0),
  seconds: z.number().int().default(0),
});

const localPostShape = {
  name: z.string().optional(),
  languageCode: z.string().optional(),
  summary: z.string().optional(),
  topicType: z.enum(ALPHA_TOPIC_TYPES).optional(),
  callToAction: z.object({ actionType: z.enum(ALPHA_ACTION_TYPES), url: z.string().optional() }).optional(),
  media: z.array(z.object({ mediaFormat: z.string(), sourceUrl: z.string() })).optional(),
  event: z
    .object({
      title: z.string().optional(),
      schedule: z
        .object({
          startDate: dateSchema,
          endDate: dateSchema,
          startTime: timeOfDaySchema.optional(),
          endTime: timeOfDaySchema.optional(),
        })
        .optional(),
    })
    .optional(),
  offer: z
    .object({
      couponCode: z.string().optional(),
      redeemOnlineUrl: z.string().optional(),
      termsConditions: z.string().optional(),
    })
    .optional(),
  alertType: z.string().optional(),
  scheduledTime: z.string().optional(),
  state: z.enum(ALPHA_POST_STATES).optional(),
  searchUrl: z.string().optional(),
  createTime: z.string().optional(),
  updateTime: z.string().optional(),
};

/** A post as the provider serves it: it always has its resource name and a state, or it is not a post we can track. */
export const servedLocalPostSchema = z.object({
  ...localPostShape,
  name: z.string().regex(LOCAL_POST_NAME, 'must be accounts/{a}/locations/{l}/localPosts/{p}'),
  state: z.enum(ALPHA_POST_STATES),
}) satisfies z.ZodType<AlphaLocalPost>;

export const localPostListSchema = z.object({
  // The provider omits an empty list entirely.
  localPosts: z.array(servedLocalPostSchema).default([]),
  nextPageToken: z
    .string()
    .optional()
    .transform((token) => token || undefined),
});

// Hours times keep the provider's omissions: an absent field is zero, and { hours: 24 } is the end of the day.
const hoursTimeSchema = z.object({ hours: z.number().int().optional(), minutes: z.number().int().optional() });

const timePeriodSchema = z.object({
  openDay: z.enum(ALPHA_DAYS),
  // Midnight is all zeros, which the provider may leave out entirely.
  openTime: hoursTimeSchema.default({}),
  closeDay: z.enum(ALPHA_DAYS),
  closeTime: hoursTimeSchema.default({}),
});

const categorySchema = z.object({ name: z.string(), displayName: z.string().optional() });

const locationShape = {
  name: z.string().optional(),
  title: z.string().optional(),
  storeCode: z.string().optional(),
  languageCode: z.string().optional(),
  phoneNumbers: z
    .object({ primaryPhone: z.string().optional(), additionalPhones: z.array(z.string()).optional() })
    .optional(),
  categories: z
    .object({ primaryCategory: categorySchema.optional(), additionalCategories: z.array(categorySchema).optional() })
    .optional(),
  storefrontAddress: z
    .object({
      regionCode: z.string(),
      postalCode: z.string().optional(),
      administrativeArea: z.string().optional(),
      locality: z.string().optional(),
      addressLines: z.array(z.string()).optional(),
    })
    .optional(),
  websiteUri: z.string().optional(),
  regularHours: z.object({ periods: z.array(timePeriodSchema).default([]) }).optional(),
  specialHours: z
    .object({
      specialHourPeriods: z
        .array(
          z.object({
            startDate: dateSchema,
            endDate: dateSchema.optional(),
            openTime: hoursTimeSchema.optional(),
            closeTime: hoursTimeSchema.optional(),
            closed: z.boolean().optional(),
          }),
        )
        .default([]),
    })
    .optional(),
  moreHours: z.array(z.object({ hoursTypeId: z.string(), periods: z.array(timePeriodSchema).default([]) })).optional(),
  serviceArea: z
    .object({
      businessType: z.enum(['CUSTOMER_LOCATION_ONLY', 'CUSTOMER_AND_BUSINESS_LOCATION']),
      places: z
        .object({ placeInfos: z.array(z.object({ placeName: z.string(), placeId: z.string() })).default([]) })
        .optional(),
      regionCode: z.string().optional(),
    })
    .optional(),
  serviceItems: z
    .array(
      z.object({
        structuredServiceItem: z.object({ serviceTypeId: z.string(), description: z.string().optional() }).optional(),
        freeFormServiceItem: z
          .object({
            category: z.string(),
            label: z.object({
              displayName: z.string(),
              description: z.string().optional(),
              languageCode: z.string().optional(),
            }),
          })
          .optional(),
        price: z
          .object({ currencyCode: z.string(), units: z.string().optional(), nanos: z.number().int().optional() })
          .optional(),
      }),
    )
    .optional(),
  profile: z.object({ description: z.string() }).optional(),
  latlng: z.object({ latitude: z.number(), longitude: z.number() }).optional(),
  metadata: z
    .object({ placeId: z.string().optional(), mapsUri: z.string().optional(), newReviewUri: z.string().optional() })
    .optional(),
};

/** A location as the provider serves it: without its resource name it is not a location we can address again. */
export const servedLocationSchema = z.object({
  ...locationShape,
  name: z.string().regex(LOCATION_NAME, 'must be accounts/{a}/locations/{l}'),
}) satisfies z.ZodType<AlphaLocation>;

export const locationListSchema = z.object({
  // The provider omits an empty list entirely.
  locations: z.array(servedLocationSchema).default([]),
  nextPageToken: z
    .string()
    .optional()
    .transform((token) => token || undefined),
});

export const errorEnvelopeSchema = z.object({
  error: z.object({
    code: z.number().int().optional(),
    message: z.string().optional(),
    status: z.string().optional(),
    details: z.array(z.unknown()).optional(),
  }),
});

export const accountSchema = z.object({
  name: z.string().regex(ACCOUNT_NAME, 'must be accounts/{a}'),
  accountName: z.string(),
  type: z.enum(ALPHA_ACCOUNT_TYPES),
  verificationState: z.enum(ALPHA_VERIFICATION_STATES),
  role: z.enum(ALPHA_ACCOUNT_ROLES),
}) satisfies z.ZodType<AlphaAccount>;

export const accountListSchema = z.object({
  accounts: z.array(accountSchema).default([]),
  nextPageToken: z
    .string()
    .optional()
    .transform((token) => token || undefined),
});

export const reviewReplySchema = z.object({
  comment: z.string(),
  updateTime: z.string(),
  state: z.enum(ALPHA_REVIEW_REPLY_STATES),
}) satisfies z.ZodType<AlphaReviewReply>;

export const reviewSchema = z.object({
  name: z.string().regex(REVIEW_NAME, 'must be accounts/{a}/locations/{l}/reviews/{r}'),
  reviewId: z.string(),
  reviewer: z.object({
    displayName: z.string(),
    profilePhotoUrl: z.string().optional(),
    // The provider's JSON leaves out false.
    isAnonymous: z.boolean().default(false),
  }),
  starRating: z.enum(ALPHA_STAR_RATINGS),
  comment: z.string().optional(),
  createTime: z.string(),
  updateTime: z.string(),
  reviewReply: reviewReplySchema.optional(),
}) satisfies z.ZodType<AlphaReview>;

export const reviewListSchema = z.object({
  reviews: z.array(reviewSchema).default([]),
  // Zero values are left out: a location without reviews answers {}.
  averageRating: z.number().default(0),
  totalReviewCount: z.number().int().default(0),
  nextPageToken: z
    .string()
    .optional()
    .transform((token) => token || undefined),
});

/** A place must say which place it is and where: without either it cannot be ranked against others. */
export const placeSchema = z.object({
  id: z.string().min(1),
  // Only the id and the location are essential: a place without a name reads as an empty one, not a failed search.
  displayName: z.object({ text: z.string(), languageCode: z.string().optional() }).default({ text: '' }),
  formattedAddress: z.string().optional(),
  types: z.array(z.string()).default([]),
  primaryType: z.string().optional(),
  // Zero values may be left out, as elsewhere in the provider's JSON.
  rating: z.number().min(0).max(5).default(0),
  userRatingCount: z.number().int().min(0).default(0),
  websiteUri: z.string().optional(),
  location: z.object({ latitude: z.number().min(-90).max(90), longitude: z.number().min(-180).max(180) }),
  photoCount: z.number().int().min(0).default(0),
  hasOwnerPosts: z.boolean().default(false),
  businessStatus: z.enum(ALPHA_BUSINESS_STATUSES).optional(),
}) satisfies z.ZodType<AlphaPlace>;

export const placeListSchema = z.object({
  // No match answers {}.
  places: z.array(placeSchema).default([]),
});

export const oauthTokenAnswerSchema = z.object({
  access_token: z.string().min(1),
  expires_in: z.number().int().positive(),
  // RFC 6749 compares the type case-insensitively.
  token_type: z
    .string()
    .refine((type) => type.toLowerCase() === 'bearer', 'must be Bearer')
    .transform((): 'Bearer' => 'Bearer'),
  refresh_token: z.string().min(1).optional(),
  scope: z.string(),
  id_token: z.string().optional(),
}) satisfies z.ZodType<AlphaOAuthTokenAnswer, unknown>;

export const userInfoSchema = z.object({
  sub: z.string().min(1),
  email: z.string().optional(),
  email_verified: z.boolean().optional(),
  name: z.string().optional(),
  picture: z.string().optional(),
}) satisfies z.ZodType<AlphaUserInfo>;
