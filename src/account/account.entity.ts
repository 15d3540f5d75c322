import { Entity, Index, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Field, ID, ObjectType } from 'type-graphql';
import { Organization } from '../organization/organization.entity';
import { newId } from '../shared/ids';

/**
 * An alpha-provider business account of an organization. Both documented REST shapes (business-profile and
 * organization-list) are presented from this one entity.
 */
@ObjectType({ description: 'An alpha-provider business account connected to the organization.' })
@Entity({ tableName: 'account' })
@Unique({ properties: ['organization', 'referenceId'] })
export class Account {
  [OptionalProps]?: 'id' | 'referenceId' | 'alphaState' | 'countryCodes' | 'createdAt' | 'alphaAccountId';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @Index()
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field()
  @Property({ type: 'text' })
  name!: string;

  @Field(() => String, { nullable: true, description: "The caller's external reference, unique in the organization." })
  @Property({ type: 'text', nullable: true })
  referenceId: string | null = null;

  @Field({ description: 'Verification state at the alpha provider; VERIFIED once connected.' })
  @Property({ type: 'text' })
  alphaState: string = 'VERIFIED';

  /** The account's id at the alpha provider: its locations are created under it. Null until it is connected. */
  @Property({ type: 'text', nullable: true })
  alphaAccountId: string | null = null;

  @Field(() => [String], { description: 'ISO 3166-1 alpha-2 codes of the countries of its locations.' })
  @Property({ type: 'text[]' })
  countryCodes: string[] = [];

  @Field()
  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
