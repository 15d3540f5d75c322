import { Arg, Args, Ctx, Field, FieldResolver, ID, Mutation, ObjectType, Query, Resolver, Root, Subscription } from 'type-graphql';
import { requirePrincipal } from '../access/guards';
import { ConnectionType, sliceRequestOf, toConnection, type Connection } from '../graphql/relay-connection';
import { defineNode } from '../graphql/node';
import { PageType, type Page } from '../graphql/page';
import { withLimitHeaders, type Context } from '../graphql/context';
import { recordChangeFilter } from '../graphql/record-change-filter';
import type { TopicPayloads } from '../events/topics';
import { CreatePostArgs, CreatePostCampaignInput, PostRefArgs, PostsArgs, PostsPageArgs } from './post.inputs';
import { Post } from './post.entity';
import { PostState } from './post.enums';
import {
  createPost,
  createPostCampaign,
  deletePost,
  getPost,
  listPosts,
  listPostsPage,
  type DeletePostResult,
} from './post.service';
import { loadPostForEvent } from './post.events';

export const PostConnection = ConnectionType(Post, 'Post');

export const PostPage = PageType(Post, 'PostPage', 'posts');

/** A post's key is its account and its id: what `post(accountId:, id:)` takes. */
export const postNode = defineNode({
  name: 'Post',
  types: [Post],
  key: ['accountId', 'id'],
  keyOf: (post: Post) => ({ accountId: post.account.id, id: post.id }),
  read: (ctx, key) => getPost(ctx, key),
});

@ObjectType()
export class CreatePostPayload {
  @Field(() => Post)
  post!: Post;

  @Field({ description: 'True when an earlier request with the same Idempotency-Key made this post.' })
  replayed!: boolean;
}

@ObjectType()
export class PostCampaign {
  @Field(() => ID)
  campaignId!: string;

  @Field(() => [Post])
  posts!: Post[];
}

@ObjectType()
export class DeletePostPayload implements DeletePostResult {
  @Field(() => ID)
  id!: string;

  @Field(() => String, { nullable: true, description: "The provider's resource name, if it was published." })
  postId!: string | null;

  @Field(() => PostState)
  state!: PostState;

  @Field()
  message!: string;
}

@Resolver(() => Post)
export class PostResolver {
  @Query(() => Post, { description: 'One post of the account.' })
  post(@Args() args: PostRefArgs, @Ctx() ctx: Context): Promise<Post> {
    return getPost(ctx, args);
  }

  @Query(() => PostConnection, { description: 'Posts of the account, newest first. Campaign posts only with campaignId.' })
  async posts(@Args() args: PostsArgs, @Ctx() ctx: Context): Promise<Connection<Post>> {
    return toConnection(await listPosts(ctx, args, sliceRequestOf(args)), args.after);
  }

  @Query(() => PostPage, { description: 'Posts of the account by page number, newest first (the GET /post list).' })
  postsPage(@Args() args: PostsPageArgs, @Ctx() ctx: Context): Promise<Page<'posts', Post>> {
    return listPostsPage(ctx, args);
  }

  @Mutation(() => CreatePostPayload, { description: 'Creates a post in SENDING; it is published by a job.' })
  async createPost(@Args() args: CreatePostArgs, @Ctx() ctx: Context): Promise<CreatePostPayload> {
    const outcome = await createPost(ctx, args);
    if (outcome.replayed) ctx.responseHeaders.set('Idempotent-Replayed', 'true');
    return withLimitHeaders(ctx, { result: outcome, rateLimit: outcome.rateLimit });
  }

  @Mutation(() => PostCampaign, { description: 'One post per location under one campaign id.' })
  async createPostCampaign(
    @Arg('input', () => CreatePostCampaignInput) input: CreatePostCampaignInput,
    @Arg('accountId', () => ID, { nullable: true }) accountId: string | null,
    @Ctx() ctx: Context,
  ): Promise<PostCampaign> {
    const outcome = await createPostCampaign(ctx, { accountId, input });
    return withLimitHeaders(ctx, { result: outcome, rateLimit: outcome.rateLimit });
  }

  @Mutation(() => DeletePostPayload, { description: 'Deletes a post: at once, or queued when it is at the provider.' })
  deletePost(@Args() args: PostRefArgs, @Ctx() ctx: Context): Promise<DeletePostPayload> {
    return deletePost(ctx, args);
  }

  @Subscription(() => Post, {
    topics: 'post.updated',
    description: "The whole post after each change, for the subscriber's own organization (and account, for account tokens).",
    filter: recordChangeFilter('post.updated', { idArg: 'postId' }),
  })
  async postUpdated(
    @Root() payload: TopicPayloads['post.updated'],
    @Arg('postId', () => ID, { nullable: true }) _postId: string | null,
    @Arg('locationId', () => ID, { nullable: true }) _locationId: string | null,
    @Ctx() ctx: Context,
  ): Promise<Post> {
    requirePrincipal(ctx);
    return loadPostForEvent(ctx.runtime, payload);
  }

  @FieldResolver(() => String, { nullable: true, description: 'The provider resource name; null until published.' })
  postId(@Root() post: Post): string | null {
    return post.providerName;
  }

  @FieldResolver(() => ID)
  locationId(@Root() post: Post): string {
    return post.location.id;
  }

  @FieldResolver(() => ID)
  accountId(@Root() post: Post): string {
    return post.account.id;
  }
}
