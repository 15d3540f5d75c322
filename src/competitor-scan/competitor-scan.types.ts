import { Field, Float, Int, ObjectType } from 'type-graphql';

/**
 * The parts of a competitor scan, named as the interface document shows them (its mixed camelCase), stored as jsonb
 * in these shapes. REST writes them as they are; GraphQL shows the same names.
 */

@ObjectType({ description: 'A point on the map.', simpleResolvers: true })
export class ScanPoint {
  @Field(() => Float)
  lat!: number;

  @Field(() => Float)
  lng!: number;
}

@ObjectType({ description: 'A time as the document writes finishedAt: whole seconds and nanoseconds since the epoch.', simpleResolvers: true })
export class ScanTimestamp {
  @Field(() => Int)
  _seconds!: number;

  @Field(() => Int)
  _nanoseconds!: number;
}

@ObjectType({ description: 'One dot of the grid and the client’s rank there.', simpleResolvers: true })
export class ScanDot {
  @Field({ description: 'The client’s rank at this dot, as text; "20+" when the search did not show it.' })
  rank!: string;

  @Field(() => Float)
  lat!: number;

  @Field(() => Float)
  lng!: number;

  @Field(() => Int, { description: '0 for the centre.' })
  ring!: number;

  @Field()
  dotId!: string;
}

/**
 * What a scan shows of any business it saw: the client's and each competitor's figures share these. No field
 * returns it, so the schema has no such type: its fields are inherited by the two that are.
 */
@ObjectType({ simpleResolvers: true })
abstract class ScanBusiness {
  @Field()
  name!: string;

  @Field()
  address!: string;

  @Field(() => [String])
  categories!: string[];

  @Field(() => Int)
  reviews!: number;

  @Field(() => Float)
  avgRating!: number;

  @Field()
  placeId!: string;

  @Field(() => String, { nullable: true })
  website!: string | null;

  @Field({ description: 'Whether its primary category is the one searched for.' })
  gac!: boolean;

  @Field()
  lng!: string;

  @Field()
  lat!: string;

  @Field(() => Int, { description: 'Dots whose search showed it.' })
  appearances!: number;

  @Field(() => Int)
  top3appearances!: number;

  @Field(() => Int)
  top5appearances!: number;

  @Field(() => Int)
  top10appearances!: number;
}

@ObjectType({ description: 'A business seen in the scan’s searches, other than the client.', simpleResolvers: true })
export class ScanCompetitor extends ScanBusiness {
  @Field({ description: 'Its rank at the centre, as text; "20+" when the centre’s search did not show it.' })
  rank!: string;
}

@ObjectType({ description: 'How many dots the client ranks 1st, 2nd, … 5th at.', simpleResolvers: true })
export class ScanClientDots {
  @Field(() => Int) dot1!: number;
  @Field(() => Int) dot2!: number;
  @Field(() => Int) dot3!: number;
  @Field(() => Int) dot4!: number;
  @Field(() => Int) dot5!: number;
}

@ObjectType({ description: 'The scanned location’s own figures.', simpleResolvers: true })
export class ScanClient extends ScanBusiness {
  @Field(() => Int, { description: 'Its rank at the centre; 0 when the centre’s search did not show it.' })
  rank!: number;

  @Field(() => [String])
  locationImages!: string[];

  @Field(() => Int)
  numberOfImages!: number;

  @Field(() => String, { nullable: true })
  description!: string | null;

  @Field({ description: 'Whether the profile has questions and answers (not known to the provider’s API: false).' })
  hasQA!: boolean;

  @Field()
  hasPosts!: boolean;

  @Field(() => String, { nullable: true, description: 'ISO 8601 time of its latest live post.' })
  postDate!: string | null;

  @Field(() => String, { nullable: true })
  profileUrl!: string | null;

  @Field(() => ScanClientDots)
  dots!: ScanClientDots;
}

@ObjectType({ description: 'What the client would need to reach the top 1, 3 and 5 at the centre.', simpleResolvers: true })
export class ScanStrategy {
  @Field(() => Int) reviewsToTop1!: number;
  @Field(() => Int) reviewsToTop3!: number;
  @Field(() => Int) reviewsToTop5!: number;
  @Field(() => Int) imagesToTop1!: number;
  @Field(() => Int) imagesToTop3!: number;
  @Field(() => Int) imagesToTop5!: number;

  @Field(() => String, { nullable: true, description: 'The advice in words; null when the client already ranks first.' })
  reviewsStrategy!: string | null;
}
