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
}
