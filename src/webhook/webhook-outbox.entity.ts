import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';

/**
 * Activity events not yet turned into deliveries: a row per event, inserted by a trigger on `activity_event` in the
 * transaction recording it (migrations/…_Webhooks.ts), deleted by the dispatcher once the event's deliveries exist.
 * Rows, not a cursor over `sequence`: a transaction committing after one with a larger sequence is not skipped.
 */
@Entity({ tableName: 'webhook_outbox' })
export class WebhookOutbox {
  @PrimaryKey({ type: 'uuid' })
  eventId!: string;

  /** The event's `sequence`: the dispatcher takes rows in this order, so a record's events keep theirs. */
  @Index()
  @Property({ type: 'bigint' })
  sequence!: string;
}
