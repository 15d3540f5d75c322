import { Entity, Enum, Index, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, Float, ID, Int, ObjectType } from 'type-graphql';
import { Account } from '../account/account.entity';
import { Location } from '../location/location.entity';
import { Organization } from '../organization/organization.entity';
import { newId } from '../shared/ids';
import { CompetitorScanStatus } from './competitor-scan.enums';
import { ScanClient, ScanCompetitor, ScanDot, ScanPoint, ScanStrategy } from './competitor-scan.types';

/**
 * A competitor scan of a location: a grid of dots around it, a search for `text` at each, and what the results say
 * of the location and its competitors (src/competitor-scan/scan.compute.ts). Run by a job; `status` follows it.
 */
@ObjectType({ description: 'A competitor scan of a location.', simpleResolvers: true })
@Entity({ tableName: 'competitor_scan' })
@Index({ properties: ['account', 'location', 'createdAt'] })
// The organization's scans queued or running are counted at each start (SCANS_RUNNING_LIMIT).
@Index({ properties: ['organization', 'status'] })
export class CompetitorScan {
  [OptionalProps]?: 'id' | 'status' | 'type' | 'competitors' | 'client' | 'strategy' | 'dots' | 'numberOfCompetitors' | 'error' | 'finishedAt';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @ManyToOne(() => Account, { deleteRule: 'cascade' })
  account!: Account;

  @ManyToOne(() => Location, { deleteRule: 'cascade' })
  location!: Location;

  @Field({ description: 'The scanned location’s place id at the provider.' })
  @Property({ type: 'text' })
  placeId!: string;

  @Field({ description: 'What was searched for at each dot.' })
  @Property({ type: 'text' })
  text!: string;

  @Field(() => Float, { description: 'Kilometres from the centre to the outer ring.' })
  @Property({ type: 'double' })
  radius!: number;

  @Field(() => Int, { description: 'Rings of dots around the centre.' })
  @Property({ type: 'integer' })
  rings!: number;

  @Field(() => CompetitorScanStatus)
  @Enum({ items: () => CompetitorScanStatus, type: 'text' })
  status: CompetitorScanStatus = CompetitorScanStatus.QUEUED;

  @Field({ description: 'The token that asked for it.' })
  @Property({ type: 'text' })
  createdBy!: string;

  @Field({ description: 'geo_grid.' })
  @Property({ type: 'text' })
  type: string = 'geo_grid';

  @Field({ description: 'external_api (REST) or app (GraphQL).' })
  @Property({ type: 'text' })
  origin!: string;

  @Field(() => ScanPoint)
  @Property({ type: 'json' })
  center!: ScanPoint;

  @Field(() => [ScanCompetitor])
  @Property({ type: 'json' })
  competitors: ScanCompetitor[] = [];

  @Field(() => ScanClient, { nullable: true, description: 'Null until completed.' })
  @Property({ type: 'json', nullable: true })
  client: ScanClient | null = null;

  @Field(() => ScanStrategy, { nullable: true, description: 'Null until completed.' })
  @Property({ type: 'json', nullable: true })
  strategy: ScanStrategy | null = null;

  @Field(() => [ScanDot])
  @Property({ type: 'json' })
  dots: ScanDot[] = [];

  @Field(() => Int)
  @Property({ type: 'integer' })
  numberOfCompetitors: number = 0;

  @Field(() => String, { nullable: true, description: 'Why it failed.' })
  @Property({ type: 'text', nullable: true })
  error: string | null = null;

  @Field()
  @Property({ type: 'timestamptz' })
  createdAt!: Date;

  @Property({ type: 'timestamptz', nullable: true })
  finishedAt: Date | null = null;
}
