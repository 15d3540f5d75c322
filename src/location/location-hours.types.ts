import { Field, InputType, ObjectType } from 'type-graphql';

/**
 * The typed JSON parts of a location, as the interface document describes them, one class each for input and
 * output. Stored as jsonb with these camelCase keys; REST reads and writes the document's names (snake_case for
 * hours, the camelCase it shows for categories and more-hours type ids). Their rules: src/location/location.rules.ts.
 */
@ObjectType({ description: 'A time of day as the alpha provider writes it: two-digit hour and minute strings.', simpleResolvers: true })
@InputType('TimeOfDayInput')
export class TimeOfDay {
  @Field({ description: '00 to 24 (24:00 is the end of the day).' })
  hours!: string;

  @Field(() => String, { nullable: true, description: '00 to 59; null is 00.' })
  minutes?: string | null;
}

@ObjectType({ description: 'An opening period; a close time of 00:00 to 03:00 on the same day means after midnight.', simpleResolvers: true })
@InputType('HoursPeriodInput')
export class HoursPeriod {
  @Field(() => String, { nullable: true, description: 'Upper-case day of week, e.g. MONDAY; absent: every day.' })
  openDay?: string | null;

  @Field(() => TimeOfDay, { nullable: true })
  openTime?: TimeOfDay | null;

  @Field(() => String, { nullable: true, description: 'Upper-case day of week; absent: the open day.' })
  closeDay?: string | null;

  @Field(() => TimeOfDay, { nullable: true })
  closeTime?: TimeOfDay | null;
}

@ObjectType({ simpleResolvers: true })
export class SpecialHours {
  @Field({ description: 'YYYY-MM-DD' })
  openDate!: string;

  @Field(() => String, { nullable: true, description: 'YYYY-MM-DD; absent: the open date.' })
  closeDate?: string | null;

  @Field()
  isClosed!: boolean;

  @Field(() => TimeOfDay, { nullable: true })
  openTime?: TimeOfDay | null;

  @Field(() => TimeOfDay, { nullable: true })
  closeTime?: TimeOfDay | null;
}

/** As SpecialHours, with `isClosed` optional (false) on the way in. */
@InputType()
export class SpecialHoursInput {
  @Field({ description: 'YYYY-MM-DD' })
  openDate!: string;

  @Field(() => String, { nullable: true, description: 'YYYY-MM-DD; absent: the open date.' })
  closeDate?: string | null;

  @Field(() => Boolean, { nullable: true, description: 'Default false.' })
  isClosed?: boolean | null;

  @Field(() => TimeOfDay, { nullable: true })
  openTime?: TimeOfDay | null;

  @Field(() => TimeOfDay, { nullable: true })
  closeTime?: TimeOfDay | null;
}

@ObjectType({ simpleResolvers: true })
@InputType('MoreHoursInput')
export class MoreHours {
  @Field({ description: 'ACCESS, BREAKFAST, DELIVERY, TAKEOUT, DRIVE_THROUGH, ...' })
  hoursTypeId!: string;

  @Field(() => [HoursPeriod])
  periods!: HoursPeriod[];
}

@ObjectType({ simpleResolvers: true })
@InputType('CategoryInput')
export class Category {
  @Field({ description: 'The category id, e.g. gcid:coffee_shop.' })
  name!: string;

  @Field({ description: 'The name shown for it.' })
  displayName!: string;
}

@ObjectType({ simpleResolvers: true })
@InputType('CategoriesInput')
export class Categories {
  @Field(() => Category, { nullable: true })
  primaryCategory?: Category | null;

  @Field(() => [Category], { nullable: true })
  additionalCategories?: Category[] | null;
}
