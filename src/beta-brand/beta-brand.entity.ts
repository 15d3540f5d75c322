import { Entity, Enum, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, ObjectType } from 'type-graphql';
import { Organization } from '../organization/organization.entity';
import { newId } from '../shared/ids';
import { BetaSyncStatus, OwnershipType } from './beta-brand.enums';

/**
 * A brand of the organization on the beta provider (the document's "Beta brand"). `segmentId` (brand-<uuid>) is
 * its id here; `betaBrandId` and `betaEtag` are the provider's, once it has it. Changes are pushed by a job.
 */
@ObjectType({ description: 'A brand on the beta provider’s maps.', simpleResolvers: true })
@Entity({ tableName: 'beta_brand' })
export class BetaBrand {
  [OptionalProps]?:
    | 'id' | 'betaBrandId' | 'betaEtag' | 'betaState' | 'betaSyncStatus' | 'syncError' | 'additionalCategories' | 'betaCategories'
    | 'websiteUrl' | 'appStoreUrl' | 'useLocationName' | 'sendActionLinks' | 'locations' | 'deletedAt' | 'version';

  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @Field({ description: 'brand-<uuid>: the id in /beta/brands/{segment_id}.' })
  @Property({ type: 'text', unique: true })
  segmentId!: string;

  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field({ description: 'The beta company it belongs to (from the beta consent); it cannot change.' })
  @Property({ type: 'text' })
  betaCompanyId!: string;

  @Field(() => String, { nullable: true, description: 'The provider’s id of the brand, once created there.' })
  @Property({ type: 'text', nullable: true })
  betaBrandId: string | null = null;

  @Property({ type: 'text', nullable: true })
  betaEtag: string | null = null;

  @Field(() => String, { nullable: true, description: 'The provider’s validation: SUBMITTED, PUBLISHED or REJECTED.' })
  @Property({ type: 'text', nullable: true })
  betaState: string | null = null;

  @Field(() => BetaSyncStatus)
  @Enum({ items: () => BetaSyncStatus, type: 'text' })
  betaSyncStatus: BetaSyncStatus = BetaSyncStatus.PENDING;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  syncError: string | null = null;

  @Field({ description: 'The name shown on the maps.' })
  @Property({ type: 'text' })
  brandName!: string;

  @Field({ description: 'Its name here.' })
  @Property({ type: 'text' })
  name!: string;

  @Field({ description: 'ISO 3166-1 alpha-2.' })
  @Property({ type: 'text' })
  countryCode!: string;

  @Field()
  @Property({ type: 'text' })
  primaryCategory!: string;

  @Field(() => [String], { description: 'At most 19.' })
  @Property({ type: 'text[]' })
  additionalCategories: string[] = [];

  @Field(() => [String], { description: 'The categories as the provider has them.' })
  @Property({ type: 'text[]' })
  betaCategories: string[] = [];

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  websiteUrl: string | null = null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  appStoreUrl: string | null = null;

  @Field(() => OwnershipType)
  @Enum({ items: () => OwnershipType, type: 'text' })
  ownershipType!: OwnershipType;

  @Field({ description: 'false: locations show the brand name on the maps; true: they keep their own.' })
  @Property({ type: 'boolean' })
  useLocationName: boolean = false;

  @Field({ description: 'Whether preferred action links are pushed as quicklinks the next time a location is added.' })
  @Property({ type: 'boolean' })
  sendActionLinks: boolean = false;

  @Field(() => [String], { description: 'Ids of the locations attached to it.' })
  @Property({ type: 'text[]' })
  locations: string[] = [];

  @Field({ description: 'external_api (REST) or app (GraphQL).' })
  @Property({ type: 'text' })
  provisionSource!: string;

  @Field()
  @Property({ type: 'timestamptz' })
  createdAt!: Date;

  @Field()
  @Property({ type: 'timestamptz' })
  updatedAt!: Date;

  /** Set when deleted here; the provider's copy is deleted by the job, then the row. */
  @Property({ type: 'timestamptz', nullable: true })
  deletedAt: Date | null = null;

  @Property({ type: 'integer', version: true })
  version: number = 1;
}
