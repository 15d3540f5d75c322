import { Entity, Enum, Index, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { Account } from '../account/account.entity';
import { Location, ProviderFailure } from '../location/location.entity';
import { Organization } from '../organization/organization.entity';
import { newId } from '../shared/ids';
import { ReviewReplyState } from './review.enums';

/**
 * A review of a location at the alpha provider, imported and re-synced, with our reply and where the provider's
 * moderation has it. `name` is the provider's resource name, the document's review_id.
 */
@ObjectType({ description: 'A review of a location, with its reply.', simpleResolvers: true })
@Entity({ tableName: 'review' })
@Index({ properties: ['location', 'createTime'] })
// Two organizations may connect the same provider account: each keeps its own copy of its reviews.
@Unique({ properties: ['account', 'name'] })
export class Review {
  [OptionalProps]?:
    | 'id' | 'reviewerName' | 'reviewerPhotoUrl' | 'reviewerAnonymous' | 'comment' | 'replyComment' | 'replyUpdateTime'
    | 'replyState' | 'replyError' | 'deletedAt' | 'version';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @ManyToOne(() => Account, { deleteRule: 'cascade' })
  account!: Account;

  @ManyToOne(() => Location, { deleteRule: 'cascade' })
  location!: Location;

  @Field({ description: 'accounts/<account>/locations/<location>/reviews/<review>: the review_id of POST /review/answer.' })
  @Property({ type: 'text' })
  name!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  reviewerName: string | null = null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  reviewerPhotoUrl: string | null = null;

  @Field()
  @Property({ type: 'boolean' })
  reviewerAnonymous: boolean = false;

  @Field(() => Int, { description: '1 to 5 stars.' })
  @Property({ type: 'smallint' })
  starRating!: number;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  comment: string | null = null;

  @Field()
  @Property({ type: 'timestamptz' })
  createTime!: Date;

  @Field()
  @Property({ type: 'timestamptz' })
  updateTime!: Date;

  @Field(() => String, { nullable: true, description: 'The reply, as sent.' })
  @Property({ type: 'text', nullable: true })
  replyComment: string | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ type: 'timestamptz', nullable: true })
  replyUpdateTime: Date | null = null;

  @Field(() => ReviewReplyState, { nullable: true, name: 'reviewReplyState', simple: false, description: 'Null until replied.' })
  @Enum({ items: () => ReviewReplyState, type: 'text', nullable: true })
  replyState: ReviewReplyState | null = null;

  @Field(() => ProviderFailure, { nullable: true, description: 'With reviewReplyState FAILED: why.' })
  @Property({ type: 'json', nullable: true })
  replyError: ProviderFailure | null = null;

  @Field(() => Date, { nullable: true, description: 'When the provider no longer had it.' })
  @Property({ type: 'timestamptz', nullable: true })
  deletedAt: Date | null = null;

  @Field(() => Int, { description: 'Incremented at every change.' })
  @Property({ type: 'integer', version: true })
  version: number = 1;
}
