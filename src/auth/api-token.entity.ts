import { Entity, Index, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { Account } from '../account/account.entity';
import { Organization } from '../organization/organization.entity';
import { Field, ID, ObjectType } from 'type-graphql';
import { newId } from '../shared/ids';

/** A bearer token. Only its SHA-256 hash is stored; the secret is shown once, when created. */
@ObjectType({ description: 'A bearer token; its secret is shown only once, when created.' })
@Entity({ tableName: 'api_token' })
export class ApiToken {
  [OptionalProps]?: 'id' | 'account' | 'label' | 'createdAt' | 'revokedAt';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @Index()
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  /** Set for account tokens; null for organization tokens. */
  @ManyToOne(() => Account, { nullable: true, deleteRule: 'cascade' })
  account: Account | null = null;

  @Property({ type: 'text', unique: true })
  tokenHash!: string;

  /** The first characters of the secret, enough to tell tokens apart in a list. */
  @Field({ description: 'The first characters of the secret.' })
  @Property({ type: 'text' })
  prefix!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  label: string | null = null;

  @Field()
  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();

  @Field(() => Date, { nullable: true })
  @Property({ type: 'timestamptz', nullable: true })
  revokedAt: Date | null = null;
}
