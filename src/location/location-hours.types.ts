import { Field, ObjectType } from 'type-graphql';

/**
 * The typed JSON parts of a location, as the interface document describes them. Stored as jsonb with these
 * camelCase keys; the REST presenters write the document's snake_case names for hours.
 */
@ObjectType({ description: 'A time of day as the alpha provider writes it: two-digit hour and minute strings.' })
export class TimeOfDay {
  @Field()
  hours!: string;

  @Field(() => String, { nullable: true })
  minutes!: string | null;
}

@ObjectType({ description: 'An opening period; a close time of 00:00 to 03:00 on the same day means after midnight.' })
export class HoursPeriod {
  @Field(() => String, { nullable: true, description: 'Upper-case day of week, e.g. MONDAY.' })
  openDay?: string | null;

  @Field(() => TimeOfDay, { nullable: true })
  openTime?: TimeOfDay | null;

  @Field(() => String, { nullable: true })
  closeDay?: string | null;

  @Field(() => TimeOfDay, { nullable: true })
  closeTime?: TimeOfDay | null;
}

@ObjectType()
export class SpecialHours {
  @Field({ description: 'YYYY-MM-DD' })
  openDate!: string;

  @Field(() => String, { nullable: true, description: 'YYYY-MM-DD' })
  closeDate?: string | null;

  @Field()
  isClosed!: boolean;

  @Field(() => TimeOfDay, { nullable: true })
  openTime?: TimeOfDay | null;

  @Field(() => TimeOfDay, { nullable: true })
  closeTime?: TimeOfDay | null;
}

@ObjectType()
export class MoreHours {
  @Field({ description: 'ACCESS, BREAKFAST, DELIVERY, TAKEOUT, DRIVE_THROUGH, ...' })
  hoursTypeId!: string;

  @Field(() => [HoursPeriod])
  periods!: HoursPeriod[];
}

@ObjectType()
export class Category {
  @Field()
  name!: string;

  @Field()
  displayName!: string;
}

@ObjectType()
export class Categories {
  @Field(() => Category, { nullable: true })
  primaryCategory?: Category | null;

  @Field(() => [Category], { nullable: true })
  additionalCategories?: Category[] | null;
}
