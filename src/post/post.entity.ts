import { GraphQLJSON } from 'graphql-scalars';
import { Entity, Enum, Index, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { Account } from '../account/account.entity';
import { Location } from '../location/location.entity';
import { Organization } from '../organization/organization.entity';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { newId } from '../shared/ids';
import { PostParams } from './post-params.types';
import { PostSource, PostState } from './post.enums';

/** The latest provider failure of a post, in the document's `last_error` shape. */
@ObjectType({ description: 'The latest provider failure of a post.', simpleResolvers: true })
export class PostLastError {
  @Field(() => Int, { description: 'HTTP status from the provider; 0 for a network failure or time-out.' })
  status!: number;

  @Field({ description: 'e.g. RESOURCE_EXHAUSTED, INVALID_ARGUMENT, UNAVAILABLE, TIMEOUT.' })
  reason!: string;

  @Field()
  message!: string;

  @Field(() => [GraphQLJSON])
  details!: unknown[];

  @Field(() => Date, { description: 'When it happened.' })
  at!: string;
}

/** What the SENDING state of a post is waiting for. */
export type PendingAction = 'publish' | 'delete';

/**
 * A post for one location. Its id doubles as the request id of the provider create, so a retried publish
 * never creates a second post at the provider.
 */
// Plain fields use graphql-js's default resolver (type-graphql's per-field wrapper costs every list); the two
// renamed ones (createTime, updateTime) keep type-graphql's, which reads the property under its own name.
@ObjectType({ description: 'A post for one location on the alpha provider.', simpleResolvers: true })
@Entity({ tableName: 'post' })
@Index({ properties: ['account', 'createdAt'] })
@Index({ properties: ['organization', 'createdAt'] })
export class Post {
  [OptionalProps]?:
    | 'id' | 'state' | 'campaignId' | 'providerName' | 'searchUrl' | 'lastError' | 'publishedTime' | 'scheduledTime'
    | 'createdAt' | 'updatedAt' | 'pendingAction' | 'version';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @ManyToOne(() => Account, { deleteRule: 'cascade' })
  account!: Account;

  @Index()
  @ManyToOne(() => Location, { deleteRule: 'cascade' })
  location!: Location;

  @Field(() => PostState)
  @Enum({ items: () => PostState, type: 'text' })
  state: PostState = PostState.SENDING;

  @Field(() => PostSource)
  @Enum({ items: () => PostSource, type: 'text' })
  source!: PostSource;

  @Field(() => PostParams, { description: 'The content, as sent to the provider.' })
  @Property({ type: 'json' })
  params!: PostParams;

  /** Set for posts of a bulk campaign; such posts are never listed by default. */
  @Field(() => ID, { nullable: true })
  @Index()
  @Property({ type: 'uuid', nullable: true })
  campaignId: string | null = null;

  /** The provider's resource name (accounts/<a>/locations/<l>/localPosts/<p>); null until published. */
  @Property({ type: 'text', nullable: true })
  providerName: string | null = null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  searchUrl: string | null = null;

  @Field(() => PostLastError, { nullable: true })
  @Property({ type: 'json', nullable: true })
  lastError: PostLastError | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ type: 'timestamptz', nullable: true })
  publishedTime: Date | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ type: 'timestamptz', nullable: true })
  scheduledTime: Date | null = null;

  @Field({ name: 'createTime', simple: false })
  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();

  /** Null until the post changes after its creation; stamped by every update (src/db/orm.ts). */
  @Field(() => Date, { name: 'updateTime', nullable: true, simple: false })
  @Property({ type: 'timestamptz', nullable: true })
  updatedAt: Date | null = null;

  @Property({ type: 'text', nullable: true })
  pendingAction: PendingAction | null = 'publish';

  /** Full-text index of the summary, computed by PostgreSQL; searched by `q`, never read or written here. */
  @Index({ type: 'fulltext' })
  @Property({
    type: 'tsvector',
    columnType: 'tsvector',
    generated: "(to_tsvector('simple', coalesce(params->>'summary', ''))) stored",
    lazy: true,
    hidden: true,
    nullable: true,
  })
  searchVector?: string;

  /** The ORM's version: incremented by every update. Events carry it so subscribers can tell stale snapshots. */
  @Field(() => Int, { description: 'Incremented at every change.' })
  @Property({ type: 'integer', version: true })
  version: number = 1;
}
