import { IsIn, IsOptional, IsUrl, Length, Max, Min, ValidateNested, ArrayMaxSize } from 'class-validator';
import { Field, InputType, Int, ObjectType } from 'type-graphql';
import { ActionType, TopicType } from './post.enums';

/**
 * The post content: the alpha provider's local-post body, typed once for input and output. Stored as jsonb in
 * exactly this shape and sent to the provider as is. type-graphql builds nested inputs as these classes, so
 * class-validator's ValidateNested reaches every level. Output fields are plain properties: graphql-js's default
 * resolver reads them (`simpleResolvers`), without type-graphql's per-field wrapper.
 */
@ObjectType('PostDate', { simpleResolvers: true })
@InputType('PostDateInput')
export class PostDate {
  @Field(() => Int) @Min(1) @Max(9999) year!: number;
  @Field(() => Int) @Min(1) @Max(12) month!: number;
  @Field(() => Int) @Min(1) @Max(31) day!: number;
}

@ObjectType('PostTimeOfDay', { simpleResolvers: true })
@InputType('PostTimeOfDayInput')
export class PostTimeOfDay {
  @Field(() => Int) @Min(0) @Max(23) hours!: number;
  @Field(() => Int, { nullable: true }) @IsOptional() @Min(0) @Max(59) minutes?: number | null;
  @Field(() => Int, { nullable: true }) @IsOptional() @Min(0) @Max(59) seconds?: number | null;
}

@ObjectType('PostEventSchedule', { simpleResolvers: true })
@InputType('PostEventScheduleInput')
export class PostEventSchedule {
  @Field(() => PostDate) @ValidateNested() startDate!: PostDate;
  @Field(() => PostDate) @ValidateNested() endDate!: PostDate;
  @Field(() => PostTimeOfDay, { nullable: true }) @IsOptional() @ValidateNested() startTime?: PostTimeOfDay | null;
  @Field(() => PostTimeOfDay, { nullable: true }) @IsOptional() @ValidateNested() endTime?: PostTimeOfDay | null;
}

@ObjectType('PostEvent', { simpleResolvers: true })
@InputType('PostEventInput')
export class PostEvent {
  @Field(() => String, { nullable: true }) @IsOptional() @Length(1, 58) title?: string | null;
  @Field(() => PostEventSchedule, { nullable: true }) @IsOptional() @ValidateNested() schedule?: PostEventSchedule | null;
}

@ObjectType('PostOffer', { simpleResolvers: true })
@InputType('PostOfferInput')
export class PostOffer {
  @Field(() => String, { nullable: true }) @IsOptional() @Length(1, 58) couponCode?: string | null;
  @Field(() => String, { nullable: true }) @IsOptional() @IsUrl({ protocols: ['http', 'https'], require_protocol: true }) redeemOnlineUrl?: string | null;
  @Field(() => String, { nullable: true }) @IsOptional() @Length(1, 5000) termsConditions?: string | null;
}

@ObjectType('PostCallToAction', { simpleResolvers: true })
@InputType('PostCallToActionInput')
export class PostCallToAction {
  @Field(() => ActionType) actionType!: ActionType;
  @Field(() => String, { nullable: true })
  @IsOptional()
  @IsUrl({ protocols: ['http', 'https'], require_protocol: true }, { message: 'callToAction.url must be an http(s) URL' })
  url?: string | null;
}

@ObjectType('PostMedia', { simpleResolvers: true })
@InputType('PostMediaInput')
export class PostMedia {
  @Field() @IsIn(['PHOTO', 'VIDEO'], { message: 'media.mediaFormat must be PHOTO or VIDEO' }) mediaFormat!: string;
  @Field() @IsUrl({ protocols: ['http', 'https'], require_protocol: true }, { message: 'media.sourceUrl must be an http(s) URL' }) sourceUrl!: string;
}

@ObjectType('PostParams', { simpleResolvers: true })
@InputType('PostParamsInput')
export class PostParams {
  @Field(() => String, { nullable: true }) @IsOptional() @Length(2, 10) languageCode?: string | null;
  @Field(() => String, { nullable: true, description: 'May contain {placeholder} tokens, see parameterMask.' })
  @IsOptional()
  @Length(0, 1500, { message: 'summary must be at most 1500 characters' })
  summary?: string | null;
  @Field(() => TopicType, { nullable: true, defaultValue: TopicType.STANDARD }) topicType?: TopicType | null;
  @Field(() => PostCallToAction, { nullable: true }) @IsOptional() @ValidateNested() callToAction?: PostCallToAction | null;
  @Field(() => [PostMedia], { nullable: true }) @IsOptional() @ArrayMaxSize(10) @ValidateNested({ each: true }) media?: PostMedia[] | null;
  @Field(() => PostEvent, { nullable: true }) @IsOptional() @ValidateNested() event?: PostEvent | null;
  @Field(() => PostOffer, { nullable: true }) @IsOptional() @ValidateNested() offer?: PostOffer | null;
  @Field(() => String, { nullable: true, description: 'RFC 3339; must be in the future. Schedules the post with the provider.' })
  @IsOptional()
  scheduledTime?: string | null;
  @Field(() => String, { nullable: true, description: 'Required for ALERT posts (e.g. COVID_19, ALERT_TYPE_UNSPECIFIED).' })
  @IsOptional()
  alertType?: string | null;
}
