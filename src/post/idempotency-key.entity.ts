import { Entity, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Account } from '../account/account.entity';
import { newId } from '../shared/ids';
import { Post } from './post.entity';

/** An Idempotency-Key of post creation, scoped to its account and kept 24 hours. */
@Entity({ tableName: 'idempotency_key' })
@Unique({ properties: ['account', 'key'] })
export class IdempotencyKey {
  [OptionalProps]?: 'id' | 'createdAt';

  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne(() => Account, { deleteRule: 'cascade' })
  account!: Account;

  @Property({ type: 'text' })
  key!: string;

  /** SHA-256 of the canonical request: the same key with another body is refused. */
  @Property({ type: 'text' })
  requestHash!: string;

  @ManyToOne(() => Post, { deleteRule: 'cascade' })
  post!: Post;

  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();

  @Property({ type: 'timestamptz' })
  expiresAt!: Date;
}
