import { IsOptional, Matches, MaxLength, ArrayMaxSize, ArrayMinSize, ValidateNested, Max, Min } from 'class-validator';
import { GraphQLJSON } from 'graphql-scalars';
import { ArgsType, Field, ID, InputType, Int } from 'type-graphql';
import { withConnectionArgs } from '../graphql/connection';
import { withPageArgs } from '../graphql/page';
import { PostParams } from './post-params.types';
import { PostSource, PostState } from './post.enums';

/** What a post is made of, for one location or a campaign. */
@InputType('PostContentInput')
abstract class PostContentInput {
  @Field(() => PostParams)
  @ValidateNested()
  params!: PostParams;

  @Field(() => Boolean, { nullable: true, description: "Take the call-to-action URL from the location's website." })
  useLocationWebsiteUrl?: boolean | null;

  @Field(() => String, { nullable: true, description: 'Comma-separated placeholder names replaced in params.summary.' })
  @IsOptional()
  @MaxLength(2000, { message: 'parameterMask must be at most 2000 characters' })
  @Matches(/^\s*[A-Za-z0-9_]+(\s*,\s*[A-Za-z0-9_]+)*\s*$/, { message: 'parameterMask must be comma-separated placeholder names' })
  parameterMask?: string | null;

  @Field(() => GraphQLJSON, { nullable: true, description: 'Values of the placeholders named in parameterMask.' })
  parameters?: Record<string, unknown> | null;
}

@InputType()
export class CreatePostInput extends PostContentInput {
  @Field(() => ID)
  locationId!: string;
}

@InputType()
export class CreatePostCampaignInput extends PostContentInput {
  @Field(() => [ID])
  @ArrayMinSize(1, { message: 'locationIds must name at least one location' })
  @ArrayMaxSize(100, { message: 'locationIds may name at most 100 locations' })
  locationIds!: string[];
}

@ArgsType()
export class CreatePostArgs {
  @Field(() => ID, { nullable: true, description: 'Required with an organization token; ignored with an account token.' })
  accountId?: string | null;

  @Field(() => String, { nullable: true, description: 'Same key and same input within 24 h: the original post again.' })
  @IsOptional()
  @MaxLength(255, { message: 'Idempotency-Key must be at most 255 characters' })
  idempotencyKey?: string | null;

  @Field(() => CreatePostInput)
  @ValidateNested()
  input!: CreatePostInput;
}

@ArgsType()
export class PostRefArgs {
  @Field(() => ID, { nullable: true, description: 'Required with an organization token; ignored with an account token.' })
  accountId?: string | null;

  @Field(() => ID)
  id!: string;
}

/** The filters of GET /post and the `posts` query. */
@ArgsType()
export class PostFilterArgs {
  @Field(() => ID, { nullable: true, description: 'Required with an organization token; ignored with an account token.' })
  accountId?: string | null;

  @Field(() => ID, { nullable: true })
  locationId?: string | null;

  @Field(() => PostState, { nullable: true, description: 'DELETED posts are listed only when asked for.' })
  state?: PostState | null;

  @Field(() => PostSource, { nullable: true })
  source?: PostSource | null;

  @Field(() => String, { nullable: true, description: 'Full-text search over the summary.' })
  @IsOptional()
  @MaxLength(200, { message: 'q must be at most 200 characters' })
  q?: string | null;
}

@ArgsType()
export class PostsArgs extends withConnectionArgs(PostFilterArgs) {
  @Field(() => ID, { nullable: true, description: 'Posts of this campaign (campaign posts are hidden otherwise).' })
  campaignId?: string | null;
}

@ArgsType()
export class PostsPageArgs extends withPageArgs(PostFilterArgs, { default: 20, max: 100 }) {}
