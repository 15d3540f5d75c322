import { Field, ID, InputType } from 'type-graphql';
import { OwnershipType } from './beta-brand.enums';
import type { CreateBrandInput, UpdateBrandInput } from './beta-brand.service';

@InputType({ description: 'A new beta brand.' })
export class CreateBetaBrandInput implements CreateBrandInput {
  @Field({ description: 'The company_id a completed beta consent gave; it cannot change later.' })
  betaCompanyId!: string;

  @Field({ description: 'The name shown on the maps.' })
  brandName!: string;

  @Field(() => String, { nullable: true, description: 'Its name here; default brandName.' })
  name?: string | null;

  @Field({ description: 'ISO 3166-1 alpha-2: exactly 2 letters.' })
  countryCode!: string;

  @Field()
  primaryCategory!: string;

  @Field(() => [String], { nullable: true, description: 'At most 19.' })
  additionalCategories?: string[] | null;

  @Field(() => String, { nullable: true })
  websiteUrl?: string | null;

  @Field(() => String, { nullable: true })
  appStoreUrl?: string | null;

  @Field(() => OwnershipType)
  ownershipType!: OwnershipType;

  @Field(() => Boolean, { nullable: true })
  useLocationName?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  sendActionLinks?: boolean | null;

  @Field(() => [ID], { nullable: true, description: 'Locations of the organization to attach.' })
  locationIds?: string[] | null;
}

@InputType({ description: 'The fields of a beta brand to change; at least one.' })
export class UpdateBetaBrandInput implements UpdateBrandInput {
  @Field(() => String, { nullable: true })
  brandName?: string | null;

  @Field(() => String, { nullable: true, description: 'Exactly 2 letters.' })
  countryCode?: string | null;

  @Field(() => String, { nullable: true, description: 'Required whenever the categories change.' })
  primaryCategory?: string | null;

  @Field(() => [String], { nullable: true, description: 'At most 19.' })
  additionalCategories?: string[] | null;

  @Field(() => String, { nullable: true })
  websiteUrl?: string | null;

  @Field(() => String, { nullable: true })
  appStoreUrl?: string | null;

  @Field(() => OwnershipType, { nullable: true })
  ownershipType?: OwnershipType | null;

  @Field(() => Boolean, { nullable: true })
  useLocationName?: boolean | null;

  @Field(() => Boolean, { nullable: true })
  sendActionLinks?: boolean | null;

  @Field(() => String, { nullable: true, description: 'Refused: a brand’s company never changes.' })
  betaCompanyId?: string | null;

  @Field(() => String, { nullable: true, description: 'Refused: it is the brand’s id.' })
  segmentId?: string | null;
}
