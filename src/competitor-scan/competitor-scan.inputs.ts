import { ArgsType, Field, Float, ID, Int } from 'type-graphql';
import { withConnectionArgs } from '../graphql/relay-connection';
import type { RunScanArgs, ScanLookup } from './competitor-scan.service';

@ArgsType()
export class CompetitorScanArgs implements ScanLookup {
  @Field(() => ID, { nullable: true, description: 'Required with an organization token; ignored with an account token.' })
  accountId?: string | null;

  @Field(() => ID, { nullable: true, description: 'This scan; otherwise the latest one.' })
  scanId?: string | null;

  @Field(() => ID, { nullable: true, description: 'The latest scan of this location.' })
  locationId?: string | null;

  @Field(() => String, { nullable: true, description: 'The latest scan of the location with this place id.' })
  placeId?: string | null;
}

@ArgsType()
class CompetitorScanFilterArgs {
  @Field(() => ID, { nullable: true, description: 'Required with an organization token; ignored with an account token.' })
  accountId?: string | null;

  @Field(() => ID, { nullable: true })
  locationId?: string | null;
}

@ArgsType()
export class CompetitorScansArgs extends withConnectionArgs(CompetitorScanFilterArgs) {}

@ArgsType()
export class RunCompetitorScanArgs implements RunScanArgs {
  @Field(() => ID, { nullable: true, description: 'Required with an organization token; ignored with an account token.' })
  accountId?: string | null;

  @Field(() => ID)
  locationId!: string;

  @Field({ description: 'What a customer would search for, e.g. "coffee shop".' })
  text!: string;

  @Field(() => Float, { description: 'Kilometres from the centre to the outer ring, 0.1 to 50.' })
  radiusKm!: number;

  @Field(() => Int, { defaultValue: 1, description: 'Rings of dots around the centre, 0 to 3 (ring k has 8k dots).' })
  rings: number = 1;
}
