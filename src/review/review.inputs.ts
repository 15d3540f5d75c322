import { ArgsType, Field, ID, Int } from 'type-graphql';
import { withConnectionArgs } from '../graphql/relay-connection';
import { ReviewReplyState } from './review.enums';
import type { ReviewFilter } from './review.service';

@ArgsType()
class ReviewFilterArgs implements ReviewFilter {
  @Field(() => ID, { nullable: true, description: 'Required with an organization token; ignored with an account token.' })
  accountId?: string | null;

  @Field(() => ID)
  locationId!: string;

  @Field(() => Int, { nullable: true, description: '1 to 5.' })
  starRating?: number | null;

  @Field(() => Boolean, { nullable: true, description: 'true: only reviews with a reply; false: only those without.' })
  replied?: boolean | null;

  @Field(() => ReviewReplyState, { nullable: true })
  replyState?: ReviewReplyState | null;
}

@ArgsType()
export class ReviewsArgs extends withConnectionArgs(ReviewFilterArgs) {}

@ArgsType()
export class ReviewRefArgs {
  @Field(() => ID, { nullable: true, description: 'Required with an organization token; ignored with an account token.' })
  accountId?: string | null;

  @Field(() => ID, { description: 'Our id, or the provider’s resource name (accounts/…/locations/…/reviews/…).' })
  id!: string;
}

@ArgsType()
export class AnswerReviewArgs {
  @Field(() => ID, { nullable: true, description: 'Required with an organization token; ignored with an account token.' })
  accountId?: string | null;

  @Field({ description: 'The review’s resource name: accounts/<account>/locations/<location>/reviews/<review>.' })
  reviewId!: string;

  @Field({ description: '1 to 4096 bytes.' })
  answer!: string;
}
