import { Entity, Enum, Index, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, ID, Int, ObjectType } from 'type-graphql';
import { newId } from '../shared/ids';
import { WebhookDeliveryStatus } from './webhook.enums';
import { WebhookEndpoint } from './webhook-endpoint.entity';

/**
 * One event to one endpoint, and the log of sending it (docs/webhooks.md). The row holds its own next attempt time
 * (the service clock): the dispatcher hands due ones to the `webhook-deliver` queue in order per endpoint and record.
 */
@ObjectType({ description: 'One event sent (or to be sent) to one endpoint: its status and its latest attempt.' })
@Entity({ tableName: 'webhook_delivery' })
@Index({ properties: ['endpoint', 'id'] })
@Index({
  name: 'webhook_delivery_open_index',
  expression: `create index "webhook_delivery_open_index" on "webhook_delivery" ("endpoint_id", "record_key", "sequence") where "status" in ('PENDING', 'SENDING')`,
})
export class WebhookDelivery {
  [OptionalProps]?: 'id' | 'redelivery' | 'attempts' | 'nextAttemptAt' | 'lastAttemptAt' | 'lastStatusCode' | 'lastLatencyMs' | 'lastResponseExcerpt' | 'lastError' | 'createdAt' | 'deliveredAt';

  /** A UUID v7: the delivery log is newest first by it. */
  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @ManyToOne(() => WebhookEndpoint, { deleteRule: 'cascade' })
  endpoint!: WebhookEndpoint;

  @Index()
  @Property({ type: 'uuid' })
  organizationId!: string;

  @Field(() => ID, { description: 'The event’s id: the `Listings-Event-Id` header and the body’s `id`; the same on a redelivery.' })
  @Property({ type: 'uuid' })
  eventId!: string;

  @Field({ description: 'The event’s type (`post.state_changed`), or `ping`.' })
  @Property({ type: 'text' })
  eventType!: string;

  /** Deliveries of one key are sent one at a time in `sequence` order: the event's record; a ping's or redelivery's own id. */
  @Property({ type: 'text' })
  recordKey!: string;

  @Property({ type: 'bigint' })
  sequence!: string;

  /** The exact bytes sent (and signed). */
  @Property({ type: 'text', lazy: true })
  body!: string;

  @Field({ description: 'Asked for by redeliverWebhookEvent (POST /webhooks/:id/redeliver); there is no bulk replay yet.' })
  @Property({ type: 'boolean' })
  redelivery: boolean = false;

  @Field(() => WebhookDeliveryStatus)
  @Enum({ items: () => WebhookDeliveryStatus, type: 'text' })
  status!: WebhookDeliveryStatus;

  @Field(() => Int)
  @Property({ type: 'integer' })
  attempts: number = 0;

  @Field(() => Date, { nullable: true, description: 'When it is sent next (PENDING).' })
  @Property({ type: 'timestamptz', nullable: true })
  nextAttemptAt: Date | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ type: 'timestamptz', nullable: true })
  lastAttemptAt: Date | null = null;

  @Field(() => Int, { nullable: true, description: 'The HTTP status the receiver answered last; null when none came.' })
  @Property({ type: 'integer', nullable: true })
  lastStatusCode: number | null = null;

  @Field(() => Int, { nullable: true, description: 'Milliseconds from sending to the answer’s end (or the failure).' })
  @Property({ type: 'integer', nullable: true })
  lastLatencyMs: number | null = null;

  @Field(() => String, { nullable: true, description: 'The first 1 KiB of the receiver’s last answer.' })
  @Property({ type: 'text', nullable: true })
  lastResponseExcerpt: string | null = null;

  @Field(() => String, { nullable: true, description: 'Why the last attempt failed (no answer, time-out, refused address, status).' })
  @Property({ type: 'text', nullable: true })
  lastError: string | null = null;

  @Field()
  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();

  @Field(() => Date, { nullable: true })
  @Property({ type: 'timestamptz', nullable: true })
  deliveredAt: Date | null = null;
}
