import { Entity, Index, ManyToOne, OptionalProps, PrimaryKey, Property } from '@mikro-orm/core';
import { Field, ID, ObjectType } from 'type-graphql';
import { SubscribedEventTypeEnum, type SubscribedEventTypeName } from '../activity/activity.enums';
import { Organization } from '../organization/organization.entity';
import { newId } from '../shared/ids';

/**
 * Where an organization wants its events sent (docs/webhooks.md). The signing secret is kept sealed (it must be
 * readable to sign, so it cannot be hashed as API tokens are); it is shown once, when created or rotated.
 */
@ObjectType({ description: 'An https URL the organization’s events are sent to, signed with the endpoint’s secret.' })
@Entity({ tableName: 'webhook_endpoint' })
export class WebhookEndpoint {
  [OptionalProps]?: 'id' | 'description' | 'enabled' | 'disabledReason' | 'disabledAt' | 'failingSince' | 'previousSecret' | 'previousSecretExpiresAt' | 'createdAt' | 'updatedAt';

  @Field(() => ID)
  @PrimaryKey({ type: 'uuid' })
  id: string = newId();

  @Index()
  @ManyToOne(() => Organization, { deleteRule: 'cascade' })
  organization!: Organization;

  @Field()
  @Property({ type: 'text' })
  url!: string;

  @Field(() => String, { nullable: true })
  @Property({ type: 'text', nullable: true })
  description: string | null = null;

  @Field(() => [SubscribedEventTypeEnum.type], { description: 'The event types sent to it; ALL (`*` in REST): every type, present and future.' })
  @Property({ type: 'text[]' })
  eventTypes!: SubscribedEventTypeName[];

  @Field({ description: 'Disabled endpoints are sent nothing; events of that time can be redelivered.' })
  @Property({ type: 'boolean' })
  enabled: boolean = true;

  @Field(() => String, { nullable: true, description: 'Why the service disabled it (a day of failed deliveries); null when enabled or disabled by the organization.' })
  @Property({ type: 'text', nullable: true })
  disabledReason: string | null = null;

  @Field(() => Date, { nullable: true })
  @Property({ type: 'timestamptz', nullable: true })
  disabledAt: Date | null = null;

  @Field(() => Date, { nullable: true, description: 'Since when its deliveries fail without a success between; null when the last one succeeded.' })
  @Property({ type: 'timestamptz', nullable: true })
  failingSince: Date | null = null;

  /** Sealed (src/shared/secret-box.ts); hidden: never in a snapshot or a log. */
  @Property({ type: 'text', hidden: true })
  secret!: string;

  /** The secret before the last rotation, sealed, still signing until `previousSecretExpiresAt`. */
  @Property({ type: 'text', nullable: true, hidden: true })
  previousSecret: string | null = null;

  @Field(() => Date, { nullable: true, description: 'Until when deliveries are also signed with the secret before the last rotation.' })
  @Property({ type: 'timestamptz', nullable: true })
  previousSecretExpiresAt: Date | null = null;

  @Field()
  @Property({ type: 'timestamptz' })
  createdAt: Date = new Date();

  @Field()
  @Property({ type: 'timestamptz', onUpdate: () => new Date() })
  updatedAt: Date = new Date();
}
