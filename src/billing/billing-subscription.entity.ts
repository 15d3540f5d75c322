import { Entity, PrimaryKey, Property } from '@mikro-orm/core';

/**
 * The organization's billing subscription: its quantity is the number of its locations connected to the alpha
 * provider, kept up to date when accounts are connected, re-synced and disconnected.
 */
@Entity({ tableName: 'billing_subscription' })
export class BillingSubscription {
  @PrimaryKey({ type: 'uuid' })
  organizationId!: string;

  @Property({ type: 'integer' })
  quantity!: number;

  @Property({ type: 'timestamptz' })
  updatedAt!: Date;
}
