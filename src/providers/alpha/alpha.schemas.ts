import { z } from 'zod';
import { ALPHA_ACTION_TYPES, ALPHA_POST_STATES, ALPHA_TOPIC_TYPES, type AlphaLocalPost } from './alpha.types';

/**
 * Checks of what the provider answers. Unknown fields are dropped, so what reaches our code is exactly the shape
 * of alpha.types.ts; a missing or mistyped field we rely on fails the call as BAD_RESPONSE.
 */

export const LOCAL_POST_NAME = /^accounts\/[^/]+\/locations\/[^/]+\/localPosts\/[^/]+$/;

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

export const errorEnvelopeSchema = z.object({
  error: z.object({
    code: z.number().int().optional(),
    message: z.string().optional(),
    status: z.string().optional(),
    details: z.array(z.unknown()).optional(),
  }),
});
