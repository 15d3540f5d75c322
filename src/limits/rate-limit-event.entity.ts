import { Entity, Index, PrimaryKey, Property } from '@mikro-orm/core';

/** One counted request of a rate-limited operation: a sliding log, so windows are rolling, not fixed. */
@Entity({ tableName: 'rate_limit_event' })
@Index({ properties: ['bucket', 'at'] })
export class RateLimitEvent {
  @PrimaryKey({ type: 'bigint', autoincrement: true })
  id!: string;

  @Property({ type: 'text' })
  bucket!: string;

  @Property({ type: 'timestamptz' })
  at!: Date;

  /** How much of the limit it used: 1, or for a scan the provider searches it makes. */
  @Property({ type: 'int', default: 1 })
  weight: number = 1;
}
