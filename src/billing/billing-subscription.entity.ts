import { Entity, ManyToOne, Property } from '@mikro-orm/core';
import { Organization } from '../organization/organization.entity';

/**
 * The organization's billing subscription: its quantity is the number of its locations connected to the alpha
 * provider, kept up to date when accounts are connected, re-synced and disconnected.
 */
@Entity({ tableName: 'billing_subscription' })
export class BillingSubscription {
  @ManyToOne(() => Organization, { primary: true, deleteRule: 'cascade' })
  organization!: Organization;

  @Property({ type: 'integer' })
  quantity!: number;

  @Property({ type: 'timestamptz' })
  updatedAt!: Date;
}
