import { Entity, Index, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { GraphQLJSON } from 'graphql-scalars';
import { Field, Float, ID, ObjectType } from 'type-graphql';
import { Account } from '../account/account.entity';
import { newId } from '../shared/ids';
import { Categories, HoursPeriod, MoreHours, SpecialHours } from './location-hours.types';

type Defaulted =
  | 'id' | 'referenceId' | 'categoryId' | 'address' | 'postal' | 'city' | 'countryCode' | 'administrativeArea'
  | 'additionalAddressLines' | 'description' | 'phoneNumber' | 'additionalPhoneNumbers' | 'websiteUri'
  | 'latitude' | 'longitude' | 'profileLogoUrl' | 'coverUrl' | 'additionalCategoryIds' | 'serviceAreaPlaceIds'
  | 'serviceAreaPlaceNames' | 'placeId' | 'regularHours' | 'specialHours' | 'moreHours' | 'categories'
  | 'serviceItems' | 'serviceArea' | 'citationsStatus' | 'connected' | 'alphaLocationName' | 'createdAt'
  | 'updatedAt';

/** A business location of an account, with every field of the interface document. */
@ObjectType({ description: 'A business location managed on the alpha provider.' })
@Entity({ tableName: 'location' })
@Index({ properties: ['account', 'referenceId'] })
export class Location {
  [OptionalProps]?: Defaulted;

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @Index()
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

  @Field(() => [GraphQLJSON], { description: 'Service items; their inner structure follows the alpha provider.' })
  @Property({ type: 'json' })
  serviceItems: Record<string, unknown>[] = [];

  @Field(() => GraphQLJSON, { nullable: true, description: 'Service area; structure follows the alpha provider.' })
  @Property({ type: 'json', nullable: true })
  serviceArea: Record<string, unknown> | null = null;

  @Field({ description: 'ACTIVE, DISABLING or DISABLED.' })
  @Property({ type: 'text' })
  citationsStatus: string = 'ACTIVE';

  @Field({ description: 'Whether the alpha provider knows this location.' })
  @Property({ type: 'boolean' })
  connected: boolean = false;

  @Field(() => String, { nullable: true, description: 'Resource name at the alpha provider, once connected.' })
  @Property({ type: 'text', nullable: true })
  alphaLocationName: string | null = null;

  @Field()
  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();

  @Field()
  @Property({ type: 'timestamptz', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
