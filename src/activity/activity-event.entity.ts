import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, ID, ObjectType } from 'type-graphql';
import { EventRecordTypeEnum, EventTypeEnum, type EventRecordTypeName, type EventTypeName } from './activity.enums';

/**
 * One state change of a record (docs/activity-log.md): written by `recordEvent` in the transaction of the change
 * (src/activity/record-event.ts), read by the activity log, kept for EVENT_RETENTION_DAYS. Its record is the ORM
 * snapshot of the entity as committed by that change (src/db/entity-codec.ts); each surface shows it in its
 * own names (GraphQL's types, REST's records). Never updated: the row is the history.
 */
@ObjectType('Event', { description: 'A state change of a record of the organization, as the activity log keeps it.' })
@Entity({ tableName: 'activity_event' })
@Index({ properties: ['organizationId', 'id'] })
@Index({ properties: ['organizationId', 'accountId', 'id'] })
@Index({ properties: ['organizationId', 'recordId', 'id'] })
@Index({ properties: ['organizationId', 'type', 'id'] })
@Index({ properties: ['occurredAt'] })
export class ActivityEvent {
  /** A UUID v7, stable: what a client deduplicates by; newest-first lists are ordered by it. */
  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id!: string;

  // The modules' types (src/activity/activity.enums.ts): an open list, so the column has no check.
  @Field(() => EventTypeEnum.type)
  @Property({ type: 'text' })
  type!: EventTypeName;

  @Field({ description: 'When the change was made (the service clock).' })
  @Property({ type: 'timestamptz' })
  occurredAt!: Date;

  // No foreign keys: the history outlives the account it is about (a disconnect removes it); the organization's
  // events go with it through the retention sweep.
  @Field(() => ID)
  @Property({ type: 'uuid' })
  organizationId!: string;

  @Field(() => ID, { nullable: true, description: 'Null for a record of the whole organization (a beta brand).' })
  @Property({ type: 'uuid', nullable: true })
  accountId!: string | null;

  @Field(() => EventRecordTypeEnum.type)
  @Property({ type: 'text' })
  recordType!: EventRecordTypeName;

  @Field(() => ID)
  @Property({ type: 'uuid' })
  recordId!: string;

  /**
   * The order of the events of one record: a number from one sequence, taken while the change holds the record's
   * row lock, so a later change of a record always has a larger one (what a delivery orders a record's events by).
   */
  @Field(() => String, { description: 'Orders the events of one record: compare as integers (a 64-bit number, as text).' })
  @Property({ type: 'bigint', autoincrement: true })
  sequence!: string;

  /** The entity's snapshot as committed by the change; shown through the `record` field. */
  @Property({ type: 'json', lazy: false })
  record!: Record<string, unknown>;
}
