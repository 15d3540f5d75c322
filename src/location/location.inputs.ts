import { GraphQLJSON } from 'graphql-scalars';
import { ArgsType, Field, Float, ID, InputType, Int } from 'type-graphql';
import { ArgumentRules, integer, text } from '../graphql/argument-rules';
import { withConnectionArgs } from '../graphql/relay-connection';
import { withPageArgs } from '../graphql/page';
import { Categories, HoursPeriod, MoreHours, SpecialHoursInput } from './location-hours.types';
import { LocationUpdateStatus } from './location.enums';
import type { LocationDraft, LocationPatch } from './location.rules';

/** A new location: the create fields of the document (POST /location). Rules: src/location/location.rules.ts. */
@InputType()
export class CreateLocationInput implements LocationDraft {
  @Field()
  name!: string;

  @Field(() => String, { nullable: true, description: 'Your reference; the store code at the provider, unique in the account.' })
  referenceId?: string | null;

  @Field()
  categoryId!: string;

  @Field(() => String, { nullable: true, description: 'Street address. With city and postal, or a service area.' })
  address?: string | null;

  @Field(() => String, { nullable: true })
  postal?: string | null;

  @Field(() => String, { nullable: true })
  city?: string | null;

  @Field({ description: 'ISO 3166-1 alpha-2.' })
  countryCode!: string;

  @Field(() => String, { nullable: true })
  administrativeArea?: string | null;

  @Field(() => [String], { nullable: true })
  additionalAddressLines?: string[] | null;

  @Field(() => String, { nullable: true, description: 'At most 750 characters.' })
  description?: string | null;

  @Field(() => String, { nullable: true })
  phoneNumber?: string | null;

  @Field(() => [String], { nullable: true, description: 'At most 2.' })
  additionalPhoneNumbers?: string[] | null;

  @Field(() => String, { nullable: true })
  websiteUri?: string | null;

  @Field(() => Float, { nullable: true })
  latitude?: number | null;

  @Field(() => Float, { nullable: true })
  longitude?: number | null;

  @Field(() => String, { nullable: true })
  profileLogoUrl?: string | null;

  @Field(() => String, { nullable: true })
  coverUrl?: string | null;

  @Field(() => [String], { nullable: true })
  additionalCategoryIds?: string[] | null;

  @Field(() => [String], { nullable: true, description: 'Where the business serves its customers.' })
  serviceAreaPlaceIds?: string[] | null;

  @Field(() => [String], { nullable: true, description: 'Names of serviceAreaPlaceIds, in the same order.' })
  serviceAreaPlaceNames?: string[] | null;

  @Field(() => String, { nullable: true })
  placeId?: string | null;

  @Field(() => [HoursPeriod], { nullable: true, description: 'A period without days applies to every day.' })
  regularHours?: HoursPeriod[] | null;

  @Field(() => [SpecialHoursInput], { nullable: true })
  specialHours?: SpecialHoursInput[] | null;
}

/** The fields an update may change (PATCH /location/update). Absent: unchanged; null: cleared. */
@InputType()
export class UpdateLocationInput implements LocationPatch {
  @Field(() => String, { nullable: true })
  name?: string | null;

  @Field(() => String, { nullable: true })
  address?: string | null;

  @Field(() => String, { nullable: true })
  postal?: string | null;

  @Field(() => String, { nullable: true })
  city?: string | null;

  @Field(() => String, { nullable: true })
  countryCode?: string | null;

  @Field(() => String, { nullable: true })
  administrativeArea?: string | null;

  @Field(() => String, { nullable: true, description: 'At most 750 characters.' })
  description?: string | null;

  @Field(() => String, { nullable: true, description: 'Only together with additionalPhoneNumbers.' })
  phoneNumber?: string | null;

  @Field(() => [String], { nullable: true, description: 'At most 2; only together with phoneNumber.' })
  additionalPhoneNumbers?: string[] | null;

  @Field(() => String, { nullable: true })
  websiteUri?: string | null;

  @Field(() => [HoursPeriod], { nullable: true })
  regularHours?: HoursPeriod[] | null;

  @Field(() => [SpecialHoursInput], { nullable: true })
  specialHours?: SpecialHoursInput[] | null;

  @Field(() => [MoreHours], { nullable: true })
  moreHours?: MoreHours[] | null;

  @Field(() => Categories, { nullable: true, description: 'primaryCategory is required.' })
  categories?: Categories | null;

  @Field(() => [GraphQLJSON], { nullable: true, description: "The provider's service items; each service once." })
  serviceItems?: unknown[] | null;

  @Field(() => GraphQLJSON, { nullable: true, description: "The provider's service area." })
  serviceArea?: unknown;
}

/** The filters of GET /location and the `locations` queries. */
@ArgsType()
@ArgumentRules({ storeCode: text({ max: 255 }) })
export class LocationFilterArgs {
  @Field(() => ID, { nullable: true, description: 'Required with an organization token; ignored with an account token.' })
  accountId?: string | null;

  @Field(() => String, { nullable: true, description: 'Only the location with this store code (reference id).' })
  storeCode?: string | null;
}

@ArgsType()
export class LocationsArgs extends withConnectionArgs(LocationFilterArgs) {}

@ArgsType()
@ArgumentRules({ skip: integer({ min: 0 }) })
export class LocationsPageArgs extends withPageArgs(LocationFilterArgs, { default: 10, max: 250 }) {
  @Field(() => Int, {
    defaultValue: 0,
    description: 'Records of the page to leave out: the nextSkip of an answer whose page ended early (docs/locations.md).',
  })
  skip: number = 0;
}

@ArgsType()
export class LocationRefArgs {
  @Field(() => ID, { nullable: true, description: 'Required with an organization token; ignored with an account token.' })
  accountId?: string | null;

  @Field(() => ID)
  id!: string;
}

@ArgsType()
export class UpdateLocationArgs {
  @Field(() => ID, { nullable: true, description: 'Required with an organization token; ignored with an account token.' })
  accountId?: string | null;

  @Field(() => ID)
  locationId!: string;

  @Field(() => Boolean, { nullable: true, description: 'true: new service items join the stored ones; false (default): they replace them.' })
  serviceItemsCombination?: boolean | null;

  @Field(() => UpdateLocationInput)
  input!: UpdateLocationInput;
}

/** The filters of GET /location/updates and `locationUpdateJobs`. */
@ArgsType()
class LocationUpdateJobFilterArgs {
  @Field(() => ID, { nullable: true, description: 'Required with an organization token; ignored with an account token.' })
  accountId?: string | null;

  @Field(() => ID, { nullable: true })
  locationId?: string | null;

  @Field(() => ID, { nullable: true, description: 'One update, by its id.' })
  id?: string | null;

  @Field(() => LocationUpdateStatus, { nullable: true })
  status?: LocationUpdateStatus | null;
}

@ArgsType()
export class LocationUpdateJobsArgs extends withPageArgs(LocationUpdateJobFilterArgs, { default: 20, max: 100 }) {}

@ArgsType()
export class CreateLocationArgs {
  @Field(() => ID, { nullable: true, description: 'The account the location belongs to (organization tokens name it).' })
  accountId?: string | null;

  @Field(() => CreateLocationInput)
  input!: CreateLocationInput;
}
