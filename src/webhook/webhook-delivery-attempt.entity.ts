import { Entity, Index, ManyToOne, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, Int, ObjectType } from 'type-graphql';
import { WebhookDelivery } from './webhook-delivery.entity';

@ObjectType({ description: 'A header of a delivery request, as sent.' })
export class WebhookRequestHeader {
  @Field()
  name!: string;

  @Field()
  value!: string;
}

/**
 * One attempt to send a delivery: the request's headers as sent (the body is the delivery's, the same bytes every
 * attempt) and what the receiver answered (docs/webhooks.md, "The delivery log").
 */
@ObjectType({ description: 'One attempt to send a delivery: the request’s headers and the answer’s status and excerpt.' })
@Entity({ tableName: 'webhook_delivery_attempt' })
@Index({ properties: ['delivery', 'number'] })
export class WebhookDeliveryAttempt {
  @PrimaryKey({ type: 'bigint', autoincrement: true })
  id!: string;

  @ManyToOne(() => WebhookDelivery, { deleteRule: 'cascade' })
  delivery!: WebhookDelivery;

  @Field(() => Int, { description: 'From 1.' })
  @Property({ type: 'integer' })
  number!: number;

  @Field()
  @Property({ type: 'timestamptz' })
  attemptedAt!: Date;

  /** The headers sent, in order ([name, value] pairs): the signature included, never the secret. */
  @Property({ type: 'json' })
  requestHeaders!: [string, string][];

  @Field(() => Int, { nullable: true, description: 'The HTTP status the receiver answered; null when none came.' })
  @Property({ type: 'integer', nullable: true })
  statusCode: number | null = null;

  @Field(() => Int, { nullable: true, description: 'Milliseconds from sending to the answer’s end (or the failure).' })
  @Property({ type: 'integer', nullable: true })
  latencyMs: number | null = null;

  @Field(() => String, { nullable: true, description: 'The first 1 KiB of the answer.' })
  @Property({ type: 'text', nullable: true })
  responseExcerpt: string | null = null;

  @Field(() => String, { nullable: true, description: 'Why it failed (no answer, time-out, refused address, status); null when it succeeded.' })
  @Property({ type: 'text', nullable: true })
  error: string | null = null;
}
