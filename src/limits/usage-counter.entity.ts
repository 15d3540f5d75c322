import { Entity, PrimaryKey, Property } from '@mikro-orm/core';

/**
 * How much of a periodic quota is used: one row per counted thing and period (e.g. an organization's posts in
 * one calendar month), incremented in one short statement that refuses past the quota (src/limits/rate-limiter.ts).
 */
@Entity({ tableName: 'usage_counter' })
export class UsageCounter {
  /** What is counted, e.g. `posts:<organization id>`. */
  @PrimaryKey({ type: 'text' })
  bucket!: string;

  /** The first day of the period (UTC). */
  @PrimaryKey({ type: 'date' })
  period!: string;

  @Property({ type: 'integer' })
  used!: number;
}
