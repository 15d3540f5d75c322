import { Field, InputType, Int, ObjectType } from 'type-graphql';
import { z } from 'zod';
import { ArgumentRules, integer, list, nested, text } from '../graphql/argument-rules';
import { httpUrl } from '../shared/value-rules';
import { ActionType, TopicType } from './post.enums';

/**
 * The post content: the alpha provider's local-post body, typed once for input and output. Stored as jsonb in
 * exactly this shape and sent to the provider as is. Each input class declares the rules of its fields
 * (`@ArgumentRules`, src/graphql/argument-rules.ts), nesting those of the classes it holds. Output fields are plain
 * properties: graphql-js's default resolver reads them (`simpleResolvers`), without type-graphql's per-field wrapper.
 */
@ObjectType('PostDate', { simpleResolvers: true })
@InputType('PostDateInput')
@ArgumentRules({ year: integer({ min: 1, max: 9999 }), month: integer({ min: 1, max: 12 }), day: integer({ min: 1, max: 31 }) })
export class PostDate {
  @Field(() => Int) year!: number;
  @Field(() => Int) month!: number;
  @Field(() => Int) day!: number;
}

@ObjectType('PostTimeOfDay', { simpleResolvers: true })
@InputType('PostTimeOfDayInput')
@ArgumentRules({ hours: integer({ min: 0, max: 23 }), minutes: integer({ min: 0, max: 59 }), seconds: integer({ min: 0, max: 59 }) })
export class PostTimeOfDay {
  @Field(() => Int) hours!: number;
  @Field(() => Int, { nullable: true }) minutes?: number | null;
  @Field(() => Int, { nullable: true }) seconds?: number | null;
}

@ObjectType('PostEventSchedule', { simpleResolvers: true })
@InputType('PostEventScheduleInput')
@ArgumentRules({
  startDate: nested(PostDate),
  endDate: nested(PostDate),
  startTime: nested(PostTimeOfDay),
  endTime: nested(PostTimeOfDay),
})
export class PostEventSchedule {
  @Field(() => PostDate) startDate!: PostDate;
  @Field(() => PostDate) endDate!: PostDate;
  @Field(() => PostTimeOfDay, { nullable: true }) startTime?: PostTimeOfDay | null;
  @Field(() => PostTimeOfDay, { nullable: true }) endTime?: PostTimeOfDay | null;
}

@ObjectType('PostEvent', { simpleResolvers: true })
@InputType('PostEventInput')
@ArgumentRules({ title: text({ min: 1, max: 58 }), schedule: nested(PostEventSchedule) })
export class PostEvent {
  @Field(() => String, { nullable: true }) title?: string | null;
  @Field(() => PostEventSchedule, { nullable: true }) schedule?: PostEventSchedule | null;
}

@ObjectType('PostOffer', { simpleResolvers: true })
@InputType('PostOfferInput')
@ArgumentRules({
  couponCode: text({ min: 1, max: 58 }),
  redeemOnlineUrl: httpUrl().nullish(),
  termsConditions: text({ min: 1, max: 5000 }),
})
export class PostOffer {
  @Field(() => String, { nullable: true }) couponCode?: string | null;
  @Field(() => String, { nullable: true }) redeemOnlineUrl?: string | null;
  @Field(() => String, { nullable: true }) termsConditions?: string | null;
}

@ObjectType('PostCallToAction', { simpleResolvers: true })
@InputType('PostCallToActionInput')
@ArgumentRules({ url: httpUrl().nullish() })
export class PostCallToAction {
  @Field(() => ActionType) actionType!: ActionType;
  @Field(() => String, { nullable: true }) url?: string | null;
}

@ObjectType('PostMedia', { simpleResolvers: true })
@InputType('PostMediaInput')
@ArgumentRules({
  mediaFormat: z.enum(['PHOTO', 'VIDEO'], { message: 'media.mediaFormat must be PHOTO or VIDEO' }).nullish(),
  sourceUrl: httpUrl().nullish(),
})
export class PostMedia {
  @Field() mediaFormat!: string;
  @Field() sourceUrl!: string;
}

@ObjectType('PostParams', { simpleResolvers: true })
@InputType('PostParamsInput')
@ArgumentRules({
  languageCode: text({ min: 2, max: 10 }),
  summary: text({ max: 1500 }),
  callToAction: nested(PostCallToAction),
  media: list(nested(PostMedia), { max: 10 }),
  event: nested(PostEvent),
  offer: nested(PostOffer),
})
export class PostParams {
  @Field(() => String, { nullable: true }) languageCode?: string | null;
  @Field(() => String, { nullable: true, description: 'May contain {placeholder} tokens, see parameterMask.' })
  summary?: string | null;
  @Field(() => TopicType, { nullable: true, defaultValue: TopicType.STANDARD }) topicType?: TopicType | null;
  @Field(() => PostCallToAction, { nullable: true }) callToAction?: PostCallToAction | null;
  @Field(() => [PostMedia], { nullable: true }) media?: PostMedia[] | null;
  @Field(() => PostEvent, { nullable: true }) event?: PostEvent | null;
  @Field(() => PostOffer, { nullable: true }) offer?: PostOffer | null;
  @Field(() => String, { nullable: true, description: 'RFC 3339; must be in the future. Schedules the post with the provider.' })
  scheduledTime?: string | null;
  @Field(() => String, { nullable: true, description: 'Required for ALERT posts (e.g. COVID_19, ALERT_TYPE_UNSPECIFIED).' })
  alertType?: string | null;
}
