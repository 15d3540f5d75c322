import { Entity, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { GraphQLJSON } from 'graphql-scalars';
import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { Account } from '../account/account.entity';
import type { AlphaServiceArea, AlphaServiceItem } from '../providers/alpha/alpha.types';
import { newId } from '../shared/ids';
import { Categories, HoursPeriod, MoreHours, SpecialHours } from './location-hours.types';
import { CitationsStatus } from './location.enums';

/** A failure as a record keeps it (src/jobs/failure-policy.ts): the provider's answer, or a fixed text. */
@ObjectType({
  description: 'A failure as recorded on a location, an update job or a review reply: what the provider answered, or (reason INTERNAL or RETRIES_EXHAUSTED) a fixed text when the failure was not the provider\'s.',
  simpleResolvers: true,
})
export class ProviderFailure {
  @Field(() => Int, { description: 'HTTP status from the provider; 0 for a network failure or time-out.' })
  status!: number;

  @Field({ description: 'The provider\'s canonical reason, e.g. INVALID_ARGUMENT; or INTERNAL, RETRIES_EXHAUSTED.' })
  reason!: string;

  @Field()
  message!: string;
}

type Defaulted =
  | 'id' | 'referenceId' | 'categoryId' | 'address' | 'postal' | 'city' | 'countryCode' | 'administrativeArea'
  | 'additionalAddressLines' | 'description' | 'phoneNumber' | 'additionalPhoneNumbers' | 'websiteUri'
  | 'latitude' | 'longitude' | 'profileLogoUrl' | 'coverUrl' | 'additionalCategoryIds' | 'serviceAreaPlaceIds'
  | 'serviceAreaPlaceNames' | 'placeId' | 'regularHours' | 'specialHours' | 'moreHours' | 'categories'
  | 'serviceItems' | 'serviceArea' | 'citationsStatus' | 'connected' | 'alphaLocationName' | 'createdAt'
  | 'updatedAt' | 'version' | 'providerError';

/** A business location of an account, with every field of the interface document. */
@ObjectType({ description: 'A business location managed on the alpha provider.', simpleResolvers: true })
@Entity({ tableName: 'location' })
// The store code identifies a location within its account (GET /location?store_code=).
@Unique({ properties: ['account', 'referenceId'] })
// An account holds each provider location once, however many imports of it run at once.
@Unique({ properties: ['account', 'alphaLocationName'] })
export class Location {
  [OptionalProps]?: Defaulted;

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne(() => Account, { deleteRule: 'cascade' })
  account!: Account;

  @Field(() => String, { nullable: true, description: "The caller's reference; the provider's store code." })
  @Property({ type: 'text', nullable: true })
  referenceId: string | null = null;

  @Field()
  @Property({ type: 'text' })
  name!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  categoryId: string | null = null;

  @Field(() => String, { nullable: true, description: 'Street address.' })
  @Property({ type: 'text', nullable: true })
  address: string | null = null;

  @Field(() => String, { nullable: true, description: 'Postal code.' })
  @Property({ type: 'text', nullable: true })
  postal: string | null = null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  city: string | null = null;

  @Field(() => String, { nullable: true, description: 'ISO 3166-1 alpha-2.' })
  @Property({ type: 'text', nullable: true })
  countryCode: string | null = null;

  @Field(() => String, { nullable: true, description: 'State or province.' })
  @Property({ type: 'text', nullable: true })
  administrativeArea: string | null = null;

  @Field(() => [String])
  @Property({ type: 'text[]' })
  additionalAddressLines: string[] = [];

  @Field(() => String, { nullable: true, description: 'At most 750 characters.' })
  @Property({ type: 'text', nullable: true })
  description: string | null = null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  phoneNumber: string | null = null;

  @Field(() => [String], { description: 'At most 2.' })
  @Property({ type: 'text[]' })
  additionalPhoneNumbers: string[] = [];

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  websiteUri: string | null = null;

  @Field(() => Float, { nullable: true })
  @Property({ type: 'double', nullable: true })
  latitude: number | null = null;

  @Field(() => Float, { nullable: true })
  @Property({ type: 'double', nullable: true })
  longitude: number | null = null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  profileLogoUrl: string | null = null;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  coverUrl: string | null = null;

  @Field(() => [String])
  @Property({ type: 'text[]' })
  additionalCategoryIds: string[] = [];

  @Field(() => [String])
  @Property({ type: 'text[]' })
  serviceAreaPlaceIds: string[] = [];

  @Field(() => [String])
  @Property({ type: 'text[]' })
  serviceAreaPlaceNames: string[] = [];

  @Field(() => String, { nullable: true, description: 'Place identifier at the maps provider.' })
  @Property({ type: 'text', nullable: true })
  placeId: string | null = null;

  @Field(() => [HoursPeriod])
  @Property({ type: 'json' })
  regularHours: HoursPeriod[] = [];

  @Field(() => [SpecialHours])
  @Property({ type: 'json' })
  specialHours: SpecialHours[] = [];

  @Field(() => [MoreHours])
  @Property({ type: 'json' })
  moreHours: MoreHours[] = [];

  @Field(() => Categories, { nullable: true })
  @Property({ type: 'json', nullable: true })
  categories: Categories | null = null;

  @Field(() => [GraphQLJSON], { description: "Service items, in the alpha provider's shape (docs/locations.md)." })
  @Property({ type: 'json' })
  serviceItems: AlphaServiceItem[] = [];

  @Field(() => GraphQLJSON, { nullable: true, description: "Service area, in the alpha provider's shape (docs/locations.md)." })
  @Property({ type: 'json', nullable: true })
  serviceArea: AlphaServiceArea | null = null;

  @Field(() => String, { description: 'ACTIVE, DISABLING or DISABLED.' })
  @Property({ type: 'text' })
  citationsStatus: CitationsStatus = CitationsStatus.ACTIVE;

  @Field({ description: 'Whether the alpha provider knows this location.' })
  @Property({ type: 'boolean' })
  connected: boolean = false;

  @Field(() => String, { nullable: true, description: 'Resource name at the alpha provider, once connected.' })
  @Property({ type: 'text', nullable: true })
  alphaLocationName: string | null = null;

  @Field()
  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();

  /** Stamped by every update from the runtime's clock (src/db/orm.ts). */
  @Field()
  @Property({ type: 'timestamptz' })
  updatedAt: Date = new Date();

  @Field(() => ProviderFailure, { nullable: true, description: 'Why the alpha provider refused to create it; null otherwise.' })
  @Property({ type: 'json', nullable: true })
  providerError: ProviderFailure | null = null;

  /**
   * The size of the row as JSON, measured by PostgreSQL (a trigger) at every write; a page ends at its byte budget by
   * these (docs/locations.md). Never written here, read only by that page query.
   */
  @Property({ type: 'integer', default: 0, lazy: true, hidden: true })
  recordBytes?: number;

  /** The ORM's version: incremented by every update; a publish compares it to see whether it sent the latest. */
  @Property({ type: 'integer', version: true })
  version: number = 1;
}
