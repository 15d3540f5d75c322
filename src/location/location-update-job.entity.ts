import { Entity, Enum, Index, ManyToOne, OptionalProps, PrimaryKey, Property, Unique } from '@mikro-orm/core';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { Account } from '../account/account.entity';
import { Organization } from '../organization/organization.entity';
import { newId } from '../shared/ids';
import { Location, ProviderFailure } from './location.entity';
import { LocationUpdateField, LocationUpdateStatus } from './location.enums';
import type { LocationChanges } from './location.rules';

/**
 * One accepted update of a location: the changed fields and their new values, sent to the alpha provider by a
 * job (QUEUED -> RUNNING -> SUCCEEDED | FAILED), or applied at once (SUCCEEDED) when the provider does not know
 * the location yet. At most one is QUEUED or RUNNING per location (a partial unique index, see the migration).
 */
@ObjectType({ description: 'An update of a location and how it went.', simpleResolvers: true })
@Entity({ tableName: 'location_update_job' })
@Index({ properties: ['account', 'createdAt'] })
@Index({ properties: ['location', 'createdAt'] })
@Unique({
  name: 'location_update_job_one_unfinished',
  expression: `create unique index "location_update_job_one_unfinished" on "location_update_job" ("location_id") where "status" in ('QUEUED', 'RUNNING')`,
})
export class LocationUpdateJob {
  [OptionalProps]?: 'id' | 'status' | 'error' | 'createdAt' | 'startedAt' | 'finishedAt' | 'version';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @ManyToOne(() => Account, { deleteRule: 'cascade' })
  account!: Account;

  @ManyToOne(() => Location, { deleteRule: 'cascade' })
  location!: Location;

  @Field(() => LocationUpdateStatus)
  @Enum({ items: () => LocationUpdateStatus, type: 'text' })
  status: LocationUpdateStatus = LocationUpdateStatus.QUEUED;

  @Field(() => [LocationUpdateField], { description: 'The fields this update changes.' })
  @Enum({ items: () => LocationUpdateField, type: 'text', array: true })
  fields!: LocationUpdateField[];

  /** The new values, by the location's property names; applied to the location when the provider took them. */
  @Property({ type: 'json' })
  changes!: LocationChanges;

  @Field(() => ProviderFailure, { nullable: true, description: 'The latest provider failure; on FAILED, why it failed.' })
  @Property({ type: 'json', nullable: true })
  error: ProviderFailure | null = null;

  @Field()
  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();

  @Field(() => Date, { nullable: true })
  @Property({ type: 'timestamptz', nullable: true })
  startedAt: Date | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ type: 'timestamptz', nullable: true })
  finishedAt: Date | null = null;

  /** Incremented at every change; events carry it so subscribers can order what they receive. */
  @Field(() => Int, { description: 'Incremented at every change.' })
  @Property({ type: 'integer', version: true })
  version: number = 1;
}
