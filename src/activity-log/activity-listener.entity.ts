import { Entity, PrimaryKey, Property } from '@mikro-orm/core';

/**
 * An organization some `eventStream` listens to, until `listeningUntil` (the database's clock): while it is in the
 * future, a trigger announces the organization's activity events on the event bus (migrations/…_EventStreams.ts).
 * The streams of every process refresh it while they run; a process that dies leaves it to expire.
 */
@Entity({ tableName: 'activity_listener' })
export class ActivityListener {
  @PrimaryKey({ type: 'uuid' })
  organizationId!: string;

  @Property({ type: 'timestamptz' })
  listeningUntil!: Date;
}
