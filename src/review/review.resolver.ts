import { Args, Ctx, Field, FieldResolver, ID, Mutation, ObjectType, Query, Resolver, Root } from 'type-graphql';
import { ConnectionType, sliceRequestOf, toConnection, type Connection } from '../graphql/relay-connection';
import type { Context } from '../graphql/context';
import { defineNode } from '../graphql/node';
import { Review } from './review.entity';
import { AnswerReviewArgs, ReviewRefArgs, ReviewsArgs } from './review.inputs';
import { answerReview, getReview, listReviews } from './review.service';

export const ReviewConnection = ConnectionType(Review, 'Review');

/** A review's key is its account and our id of it: what `review(accountId:, id:)` takes. */
export const reviewNode = defineNode({
  name: 'Review',
  types: [Review],
  key: ['accountId', 'id'],
  keyOf: (review: Review) => ({ accountId: review.account.id, id: review.id }),
  read: (ctx, key) => getReview(ctx, key),
});

@ObjectType()
export class AnswerReviewPayload {
  @Field()
  message!: string;

  @Field(() => Review)
  review!: Review;
}

@Resolver(() => Review)
export class ReviewResolver {
  @Query(() => ReviewConnection, { description: 'Reviews of a location still at the provider, newest first.' })
  async reviews(@Args() args: ReviewsArgs, @Ctx() ctx: Context): Promise<Connection<Review>> {
    return toConnection(await listReviews(ctx, args, sliceRequestOf(args)), args.after);
  }

  @Query(() => Review, { description: 'One review of the account.' })
  review(@Args() args: ReviewRefArgs, @Ctx() ctx: Context): Promise<Review> {
    return getReview(ctx, args);
  }

  @Mutation(() => AnswerReviewPayload, { description: 'Replies to a review; the provider moderates the reply (reviewReplyState).' })
  answerReview(@Args() args: AnswerReviewArgs, @Ctx() ctx: Context): Promise<AnswerReviewPayload> {
    return answerReview(ctx, args);
  }

  @FieldResolver(() => ID)
  locationId(@Root() review: Review): string {
    return review.location.id;
  }

  @FieldResolver(() => ID)
  accountId(@Root() review: Review): string {
    return review.account.id;
  }
}
