import { GraphQLJSON } from 'graphql-scalars';
import { ArgsType, Field, ID, InputType } from 'type-graphql';
import { ArgumentRules, list, nested, text } from '../graphql/argument-rules';
import { withConnectionArgs } from '../graphql/relay-connection';
import { withPageArgs } from '../graphql/page';
import { PostParams } from './post-params.types';
import { PostSource, PostState } from './post.enums';

/** What a post is made of, for one location or a campaign. */
@InputType('PostContentInput')
@ArgumentRules({
  params: nested(PostParams),
  parameterMask: text({ max: 2000 }, {
    regex: /^\s*[A-Za-z0-9_]+(\s*,\s*[A-Za-z0-9_]+)*\s*$/,
    message: 'must be comma-separated placeholder names',
  }),
})
abstract class PostContentInput {
  @Field(() => PostParams)
  params!: PostParams;

  @Field(() => Boolean, { nullable: true, description: "Take the call-to-action URL from the location's website." })
  useLocationWebsiteUrl?: boolean | null;

  @Field(() => String, { nullable: true, description: 'Comma-separated placeholder names replaced in params.summary.' })
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
@ArgumentRules({
  locationIds: list(undefined, { min: 1, max: 100 }, 'locations'),
})
export class CreatePostCampaignInput extends PostContentInput {
  @Field(() => [ID])
  locationIds!: string[];
}

@ArgsType()
@ArgumentRules({
  idempotencyKey: text({ max: 255 }),
  input: nested(CreatePostInput),
})
export class CreatePostArgs {
  @Field(() => ID, { nullable: true, description: 'Required with an organization token; ignored with an account token.' })
  accountId?: string | null;

  @Field(() => String, { nullable: true, description: 'Same key and same input within 24 h: the original post again.' })
  idempotencyKey?: string | null;

  @Field(() => CreatePostInput)
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
@ArgumentRules({ q: text({ max: 200 }) })
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
  q?: string | null;
}

@ArgsType()
export class PostsArgs extends withConnectionArgs(PostFilterArgs) {
  @Field(() => ID, { nullable: true, description: 'Posts of this campaign (campaign posts are hidden otherwise).' })
  campaignId?: string | null;
}

@ArgsType()
export class PostsPageArgs extends withPageArgs(PostFilterArgs, { default: 20, max: 100 }) {}
