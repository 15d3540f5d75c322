import { Entity, Enum, Index, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { Organization } from '../organization/organization.entity';
import { newId } from '../shared/ids';
import { AccountSyncStatus } from './account.enums';
import { AlphaIdentity } from './alpha-identity.entity';

/** How far an import from the provider got. */
@ObjectType({ description: 'What an import from the alpha provider has brought in so far.', simpleResolvers: true })
export class AccountSyncProgress {
  @Field(() => Int, { description: 'Locations imported.' })
  locations!: number;

  @Field(() => Int, { description: 'Reviews imported.' })
  reviews!: number;
}

/**
 * An alpha-provider business account of an organization. Both documented REST shapes (business-profile and
 * organization-list) are presented from this one entity.
 */
@ObjectType({ description: 'An alpha-provider business account connected to the organization.' })
@Entity({ tableName: 'account' })
@Unique({ properties: ['organization', 'referenceId'] })
// One account of the provider is connected once per organization.
@Unique({ properties: ['organization', 'alphaAccountId'] })
export class Account {
  [OptionalProps]?:
    | 'id' | 'referenceId' | 'alphaState' | 'countryCodes' | 'createdAt' | 'alphaAccountId' | 'alphaIdentity' | 'syncStatus'
    | 'syncProgress' | 'syncError' | 'lastSyncedAt';

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

  /** The consent it was connected through, whose tokens its provider calls use; null: the service's own token. */
  @ManyToOne(() => AlphaIdentity, { nullable: true, deleteRule: 'set null' })
  alphaIdentity: AlphaIdentity | null = null;

  @Field(() => AccountSyncStatus, { description: 'The import of its locations and reviews from the alpha provider.' })
  @Enum({ items: () => AccountSyncStatus, type: 'text' })
  syncStatus: AccountSyncStatus = AccountSyncStatus.NONE;

  @Field(() => AccountSyncProgress, { nullable: true })
  @Property({ type: 'json', nullable: true })
  syncProgress: AccountSyncProgress | null = null;

  @Field(() => String, { nullable: true, description: 'Why the latest import failed.' })
  @Property({ type: 'text', nullable: true })
  syncError: string | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ type: 'timestamptz', nullable: true })
  lastSyncedAt: Date | null = null;

  @Field(() => [String], { description: 'ISO 3166-1 alpha-2 codes of the countries of its locations.' })
  @Property({ type: 'text[]' })
  countryCodes: string[] = [];

  @Field()
  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();
}
